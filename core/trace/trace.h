/*
 * trace.h - the per-process trace file: which SM ran each thread block.
 *
 * The interposer writes one trace per process (trace_name.h names it);
 * reports read it.  It is an SQLite file, so `sqlite3 trace.sqlite` can
 * query it too; docs/trace-format.md documents it for that use, with
 * examples.  The file is ours when PRAGMA application_id is
 * NT_TRACE_APP_ID ('NTTR'); PRAGMA user_version is the schema version.
 *
 * Schema (version 4; trace_tables.def has every column and its kind and
 * the version that added it; version 1 to 3 traces read, with the newer
 * columns unknown and the newer tables empty):
 *
 *   meta(key TEXT PRIMARY KEY, value TEXT)    -- text values; keys:
 *       format=nucatrace-trace, version, tool_version, host, pid, ppid,
 *       rank (absent outside MPI/Slurm/torchrun), cmdline, exe,
 *       start_unix_ns, complete (0, 1 after nt_trace_finish), end_unix_ns
 *       (only once finished); set by the caller: backend (blocks|kernels),
 *       sampling (sampling.h's canonical policy)
 *   devices(device PK = CUDA ordinal, uuid, name, sm_count, cc_major,
 *       cc_minor, l2_bytes, clock_khz, max_threads_per_sm,
 *       max_blocks_per_sm, regs_per_sm, smem_per_sm)
 *   maps(uuid PK, json)    -- the device's calibration map (mapio.h JSON)
 *   kernels(kernel PK, mangled, demangled, module, registers, static_smem,
 *       const_bytes, local_bytes, max_threads, UNIQUE(mangled, module))
 *   launches(launch PK = per-process launch sequence number, kernel,
 *       device, context, stream, grid_x/y/z, block_x/y/z, cluster_x/y/z,
 *       dyn_smem, max_blocks_per_sm, traced, blocks, t_start_ns, t_end_ns,
 *       correlation, graph, graph_node, graph_launch (2), entry_only (3))
 *   block_chunks(chunk PK, launch, blocks, data) (4)
 *       -- a launch's block records (struct nt_trace_block: block, sm,
 *       t_start_ns, t_end_ns, c_start, c_end, warps), packed up to
 *       NT_BLOCKPACK_MAX a chunk (blockpack.h), read in chunk order;
 *       `nucatrace export --blocks` writes them as CSV rows.  A launch
 *       with entry_only 1 (entry-only tracing) has no ends: t_end_ns and
 *       c_end are -1 and warps 0 in its records.
 *   blocks(launch, block, sm, t_start_ns, t_end_ns, c_start, c_end, warps,
 *       PRIMARY KEY(launch, block)) WITHOUT ROWID    -- versions 1 to 3
 *       only: a row per block record (41-47 bytes each on disk, where a
 *       packed record takes 2.5-6)
 *   drops(launch, kernel, reason, count)
 *   native(launch PK, kernel, device, grid_x/y/z, block_x/y/z, dyn_smem,
 *       ns) (2)   -- untraced launches timed with events
 *
 * Writing (a struct nt_trace is used by one thread at a time: it is
 * opened without SQLite's own locking; the interposer has one writer
 * thread):
 *
 *	nt_trace_create(path, &t, err)	a new file, never an existing one
 *	nt_trace_set_meta(t, "backend", "blocks", err) ...
 *	nt_trace_begin(t, err)		then many adds in one transaction
 *	nt_trace_add_launch(), nt_trace_add_blocks(), ...
 *	nt_trace_commit(t, err)		and again, batch after batch
 *	nt_trace_finish(t, err)		meta complete=1, end_unix_ns
 *	nt_trace_close(t)
 *
 * After fork() the child must neither use nor close its parent's handle
 * (closing would checkpoint the parent's file): it leaves it be and
 * creates its own trace.
 *
 * The file is in WAL mode with synchronous=NORMAL: a crash (or a close
 * without finish) loses only the batch not yet committed; the rest reads
 * back, with meta complete=0.  An add outside begin/commit is its own
 * transaction (slow for blocks: batch them).
 *
 * Reading: nt_trace_open() opens read-only and checks the file; the
 * nt_trace_foreach_*() walk rows in key order with one SQLite cursor
 * (nothing is loaded whole; blocks one chunk at a time), calling cb per
 * row; a nonzero return from cb
 * stops the walk and is returned.  Strings (const char *) handed to cb
 * live until cb returns.  The readers also work on a writer.
 *
 * Integers: "unknown" is -1 in the I32N/I64N fields marked so below
 * (NULL in the file).  Handles (context, stream, module) are uint64_t,
 * kept bit for bit in SQLite's signed INTEGER.
 */
#ifndef NT_TRACE_H
#define NT_TRACE_H

#include "util/err.h"
#include "map/map.h"

#include <stddef.h>
#include <stdint.h>

#define NT_TRACE_APP_ID 0x4E545452	/* 'NTTR' */
#define NT_TRACE_SCHEMA 4
#define NT_TRACE_FORMAT "nucatrace-trace"
#define NT_TRACE_UNKNOWN (-1)

struct nt_trace;

struct nt_trace_device {
	int32_t device;			/* CUDA ordinal */
	char uuid[NT_UUID_LEN];		/* "GPU-...", as in the map store */
	char name[96];
	int32_t sm_count, cc_major, cc_minor;
	int64_t l2_bytes;
	int32_t clock_khz;
	int32_t max_threads_per_sm, max_blocks_per_sm, regs_per_sm;
	int64_t smem_per_sm;		/* bytes */
};

struct nt_trace_kernel {
	int64_t kernel;			/* id; chosen by nt_trace_add_kernel */
	const char *mangled;		/* never NULL */
	const char *demangled;		/* NULL when unknown */
	uint64_t module;		/* module handle or load number; 0 if unknown */
	/* from the cubin; NT_TRACE_UNKNOWN when not known */
	int32_t registers;		/* per thread */
	int32_t static_smem, const_bytes, local_bytes;	/* bytes (local: per thread) */
	int32_t max_threads;		/* per block */
};

struct nt_trace_launch {
	int64_t launch;			/* per-process launch sequence number, the key */
	int64_t kernel;			/* kernels.kernel */
	int32_t device;			/* CUDA ordinal */
	uint64_t context, stream;	/* CUcontext, CUstream handles (or ids) */
	int32_t grid_x, grid_y, grid_z;
	int32_t block_x, block_y, block_z;
	int32_t cluster_x, cluster_y, cluster_z;	/* 0 when not a cluster launch */
	int32_t dyn_smem;		/* bytes */
	int32_t max_blocks_per_sm;	/* occupancy; NT_TRACE_UNKNOWN */
	int32_t traced;			/* 1: per-block records were taken */
	int64_t blocks;			/* block records stored */
	int64_t t_start_ns, t_end_ns;	/* GPU time, ns; NT_TRACE_UNKNOWN */
	int64_t correlation;		/* CUPTI correlation id; NT_TRACE_UNKNOWN */
	/* A CUDA graph's kernel node: the graph (exec) and the node (blocks
	 * mode: numbers of the interposer's; kernels mode: CUPTI's ids) and
	 * which launch of the graph exec (blocks mode); NT_TRACE_UNKNOWN */
	int64_t graph, graph_node, graph_launch;
	/* blocks mode: 1 when only its blocks' starts were recorded
	 * (entry-only tracing: the report infers the ends), 0 when their
	 * ends were too (both patch sites); NT_TRACE_UNKNOWN in older traces
	 * and kernels mode (whose traced launches all have their ends) */
	int32_t entry_only;
};

struct nt_trace_block {
	int64_t launch;			/* set by the reader; add_blocks takes it apart */
	int64_t block;			/* linear block id: x + gx * (y + gy * z) */
	int32_t sm;			/* %smid */
	int32_t warps;			/* warps seen */
	int64_t t_start_ns, t_end_ns;	/* %globaltimer, first warp in, last out */
	int64_t c_start, c_end;		/* %clock64 of the SM, cycles */
};

/* An untraced launch of a traced kernel and configuration, timed on its
 * stream with events: the kernel's native time, without instrumentation. */
struct nt_trace_native {
	int64_t launch;			/* per-process launch sequence number */
	int64_t kernel;			/* kernels.kernel */
	int32_t device;
	int32_t grid_x, grid_y, grid_z;
	int32_t block_x, block_y, block_z;
	int32_t dyn_smem;		/* bytes; NT_TRACE_UNKNOWN */
	int64_t ns;
};

struct nt_trace_drop {
	int64_t launch;			/* NT_TRACE_UNKNOWN: not about one launch */
	int64_t kernel;			/* NT_TRACE_UNKNOWN: not about one kernel */
	const char *reason;		/* short word, "no-buffer", "sampled-out" ... */
	int64_t count;
};

/* Make a new trace at path: refuses an existing file or a symlink (it is
 * created O_EXCL|O_NOFOLLOW, mode 0644 less umask).  Fills the meta keys
 * it knows (format ... start_unix_ns, complete=0).  On failure nothing
 * is left at path. */
int nt_trace_create(const char *path, struct nt_trace **out, struct nt_err *err);

/* Open a trace for reading: -1 with a message naming it when it is not
 * an SQLite file, not a trace, of a newer schema, or damaged.  Never
 * writes to it. */
int nt_trace_open(const char *path, struct nt_trace **out, struct nt_err *err);

/* Writer: meta complete=1 and end_unix_ns, committing any open batch. */
int nt_trace_finish(struct nt_trace *t, struct nt_err *err);

/* Frees t; writes nothing (an open batch is rolled back).  NULL is fine. */
void nt_trace_close(struct nt_trace *t);
const char *nt_trace_path_of(const struct nt_trace *t);

int nt_trace_begin(struct nt_trace *t, struct nt_err *err);
int nt_trace_commit(struct nt_trace *t, struct nt_err *err);

/* Set (or replace) one meta key. */
int nt_trace_set_meta(struct nt_trace *t, const char *key, const char *value, struct nt_err *err);
/* A device, replacing one of the same ordinal. */
int nt_trace_add_device(struct nt_trace *t, const struct nt_trace_device *d, struct nt_err *err);
/* A copy of m (mapio.h JSON), replacing one of the same uuid. */
int nt_trace_add_map(struct nt_trace *t, const struct nt_map *m, struct nt_err *err);
/* The id of kernel (mangled, module) in *id, adding it when new (k->kernel
 * is not read; a known kernel keeps its first attributes). */
int nt_trace_add_kernel(struct nt_trace *t, const struct nt_trace_kernel *k, int64_t *id,
			struct nt_err *err);
int nt_trace_add_launch(struct nt_trace *t, const struct nt_trace_launch *l, struct nt_err *err);
/* A launch added before its occupancy could be known (its device's
 * attributes came later): its max_blocks_per_sm now. */
int nt_trace_set_occupancy(struct nt_trace *t, int64_t launch, int32_t max_blocks_per_sm, struct nt_err *err);
/* n block records of launch (b[i].launch is not read), packed in chunks
 * in block order (a launch's records may come in several calls: they
 * read back call by call).  On failure some of them may already be in the open batch. */
int nt_trace_add_blocks(struct nt_trace *t, int64_t launch, const struct nt_trace_block *b, size_t n,
			struct nt_err *err);
/* A chunk of blocks records of launch that blockpack.h packed (the
 * interposer packs on several threads, then adds here). */
int nt_trace_add_chunk(struct nt_trace *t, int64_t launch, size_t blocks, const void *data, size_t len,
		       struct nt_err *err);
int nt_trace_add_drop(struct nt_trace *t, const struct nt_trace_drop *d, struct nt_err *err);
int nt_trace_add_native(struct nt_trace *t, const struct nt_trace_native *n, struct nt_err *err);

/* Meta value of key into buf: 0, 1 when the key is absent (buf ""), -1
 * on error or when buf is too small. */
int nt_trace_get_meta(struct nt_trace *t, const char *key, char *buf, size_t len, struct nt_err *err);

/* The map of GPU uuid: a new map for the caller to nt_map_free(); -1
 * with "no map for <uuid> in '<path>'" when the trace has none. */
int nt_trace_get_map(struct nt_trace *t, const char *uuid, struct nt_map **out, struct nt_err *err);

/* Walks, in key order.  foreach_launch hands each launch with its kernel
 * (NULL if the kernels table lacks it). */
int nt_trace_foreach_device(struct nt_trace *t, int (*cb)(const struct nt_trace_device *, void *),
			    void *arg, struct nt_err *err);
int nt_trace_foreach_kernel(struct nt_trace *t, int (*cb)(const struct nt_trace_kernel *, void *),
			    void *arg, struct nt_err *err);
int nt_trace_foreach_launch(struct nt_trace *t,
			    int (*cb)(const struct nt_trace_launch *, const struct nt_trace_kernel *, void *),
			    void *arg, struct nt_err *err);
int nt_trace_foreach_block(struct nt_trace *t, int64_t launch,
			   int (*cb)(const struct nt_trace_block *, void *), void *arg, struct nt_err *err);
int nt_trace_foreach_drop(struct nt_trace *t, int (*cb)(const struct nt_trace_drop *, void *),
			  void *arg, struct nt_err *err);
int nt_trace_foreach_native(struct nt_trace *t, int (*cb)(const struct nt_trace_native *, void *),
			    void *arg, struct nt_err *err);

#endif
