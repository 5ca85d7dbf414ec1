/*
 * sink.h - the trace file: the collector's thread writes every launch,
 * block, kernel, native time and drop here, in batched transactions.
 *
 * Everything here runs on the collector's thread (SQLite, the driver's
 * device queries and the map store are touched there only).  The file is
 * created at the first write, so a process that never launches a kernel
 * leaves no trace behind.  The trace's own meta keys (format, host, pid,
 * cmdline, exe, rank, times) are core/trace's; the sink adds backend and
 * sampling at creation and the run's counts at close (docs/trace-format.md).
 */
#ifndef NT_SINK_H
#define NT_SINK_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "kernels/blockrec.h"
#include "launch.h"
#include "trace/sampling.h"
#include "util/err.h"

/* What the run did, for the meta keys and the summary at close. */
struct nt_run_counts {
	uint64_t launches;			/* all launches of the process */
	struct nt_sampling_stats sampling;	/* blocks mode */
	uint64_t patches, unpatches;
	double patch_s, unpatch_s;		/* time spent switching modules */
	uint64_t settles;			/* waits for the GPU before switches ... */
	double settle_s;			/* ... and their time */
	uint64_t switch_overlaps;		/* launches begun during another thread's switch */
	uint64_t lazy_loads;			/* blocks mode: functions loaded lazily ... */
	uint64_t lazy_into_patched;		/* ... into a module patched then */
	char lazy_into_patched_at[512];		/* ... the first few: "launches-seen sites n call", "; " apart */
	uint64_t lazy_settled;			/* NUCATRACE_LAZY_SETTLE: functions loaded at a launch's entry after a wait */
	uint64_t lazy_settled_kernels;		/* ... of them named by a CUkernel handle */
	uint64_t table_waits;			/* waits at a graph launch to free retired node tables */
	uint64_t table_waits_skipped;		/* ... graph launches that wanted one and could not */
	uint64_t modules;			/* blocks mode: module-load callbacks ... */
	double module_s;			/* ... and the time in them (cubin read, patching) */
	double exit_begin;			/* nt_now_s() when the exit's drain began; 0: none */
	uint64_t callbacks, callback_ns;	/* blocks mode: the backend's callbacks, time in them
						 * (one in 61 timed outside windows, every one
						 * inside; a thread's last < 61 not counted) */
	uint64_t launch_callbacks, launch_callback_ns;	/* ... of which launch begin and end (estimated) */
	uint64_t dark_spans;			/* blocks mode: launch callbacks off between windows ... */
	double dark_s;				/* ... for this long (launches then not counted) */
	int dark_at_exit;			/* ... and still off at exit */
	uint64_t graph_execs;			/* blocks mode: graph execs made ... */
	uint64_t graph_execs_unlisted;		/* ... whose kernels' modules were not all known */
	uint64_t graph_execs_twinned;		/* times an exec was pointed at instrumented twins ... */
	uint64_t graph_execs_shadowed;		/* ... of them by a shadow exec launched in its place */
	uint64_t graph_routed;			/* graph launch lookups routed (graphroute.h) */
	uint64_t twins;				/* instrumented twins loaded */
	uint64_t twin_images;			/* modules whose cubin was kept for a twin ... */
	uint64_t twin_image_bytes, twin_image_kept;	/* ... their bytes, and compressed */
	uint64_t twin_refused;			/* modules a window wanted twins of whose module-scope
						 * variables stopped it ... */
	char twin_refused_names[1024];		/* ... their variables' names, the first few, "; " apart */
	uint64_t kernels_lost;			/* kernels mode: records the file could not keep up with */
	uint64_t drops_lost;			/* ... drop records likewise */
	uint64_t room_waits;			/* blocks mode: launches that waited for record space ... */
	uint64_t room_waits_in_callback;	/* ... of them inside their launch callback */
	double room_wait_s;			/* ... for this long in all */
};

/* Per kernel, what was written (summary.c prints them). */
struct nt_sink_kernel {
	const char *mangled, *demangled;	/* demangled may be NULL */
	uint64_t launches, blocks;
	int64_t ns;				/* summed launch spans */
};

struct nt_sink;

struct nt_sink *nt_sink_new(const struct nt_config *cfg, const char *backend, const char *sampling,
			    struct nt_err *err);

/* Blocks backend: start the threads that pack block records beside the
 * collector's (interposer/packpool.h; NUCATRACE_PACK_THREADS of them),
 * where the collector's thread starts, before it; without them (and in
 * kernels mode) the collector packs alone. */
void nt_sink_start_threads(struct nt_sink *s);

/* A finished traced launch and its n block records; *span_ns its first
 * block's start to its last block's end (entry-only: last start). */
int nt_sink_launch(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l,
		   const volatile struct nt_block_rec *rec, uint32_t n, int64_t *span_ns);

/* A kernels-mode launch, seq-th of the process (in the order CUPTI
 * delivered them; graph replays share a correlation id, so it cannot
 * be the key): no block records. */
int nt_sink_kernel(struct nt_sink *s, uint64_t seq, const struct nt_kernel_record *r);

int nt_sink_native(struct nt_sink *s, const struct nt_native_time *t);

int nt_sink_drop(struct nt_sink *s, uint64_t seq, const char *kernel, const char *reason);

/* Commit when the batch is old. */
void nt_sink_tick(struct nt_sink *s);

/* Commit, write the run's counts, mark the trace complete, print the
 * summary to f (NULL: none) and free everything. */
/* 1 when some write to the trace failed so far. */
int nt_sink_failed(const struct nt_sink *s);
/* Writes the run's counts and the summary (to f, when not NULL) and
 * closes: 1 when some write to the trace failed, else 0. */
int nt_sink_close(struct nt_sink *s, const struct nt_run_counts *run, FILE *f);

#endif
