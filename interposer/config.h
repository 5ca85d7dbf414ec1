/*
 * config.h - the interposer's settings, from the environment that
 * `nucatrace run` (or the user) sets.  Every variable is checked: a
 * value that is not valid is named in a warning and its default used.
 *
 *   NUCATRACE_MODE            auto (default: blocks where the Compute
 *                             Sanitizer library is, else kernels), blocks,
 *                             kernels, or off
 *   NUCATRACE_SAMPLE          sampling policy (trace/sampling.h)
 *   NUCATRACE_BLOCKS          blocks mode: full (default: both patch
 *                             sites, each block's start and end measured)
 *                             or entry (the block-entry site alone: each
 *                             block's SM and start; ends are inferred by
 *                             the report, kernels/blockrec.h)
 *   NUCATRACE_OUTPUT_DIR      where trace files go (default: .)
 *   NUCATRACE_OUTPUT_PATTERN  file name pattern (trace/trace_name.h)
 *   NUCATRACE_STORE           map store to copy maps from
 *   NUCATRACE_BUFFER_BLOCKS   block records in a context's first buffer
 *                             (default 262144); more buffers are added
 *                             on demand
 *   NUCATRACE_BUFFER_MAX      block records in all of a context's buffers
 *                             (default 16777216: 1.25 GiB, of which 0.5 GiB
 *                             on the device)
 *   NUCATRACE_WAIT            seconds a launch may wait for buffer space
 *                             before it is dropped (default 30)
 *   NUCATRACE_EXIT_WAIT       seconds exit waits for running kernels (2)
 *   NUCATRACE_GRAPH_TABLES    MiB of device memory for CUDA graph node
 *                             tables (interposer/blocks/san_nodes.c; default 64):
 *                             beyond, nodes of new tables are dropped
 *   NUCATRACE_PACK_THREADS    blocks mode: threads that pack block records
 *                             beside the collector's (interposer/
 *                             packpool.h; 0: the collector packs alone;
 *                             at most 64; default NT_CONFIG_PACK_THREADS
 *                             and no more than half the CPUs)
 *   NUCATRACE_QUIET           no summary or warnings on stderr
 *   NUCATRACE_COUNT_ALL       blocks mode: the launch callbacks stay on
 *                             between sampling windows, so that every
 *                             launch is counted (by default they go off
 *                             while the policy can open no window:
 *                             interposer/blocks/san_dark.c)
 *   NUCATRACE_GRAPH_ROUTE     blocks mode: how a window traces the kernel
 *                             nodes of a graph exec made before it: shadow
 *                             (default; preloaded only, else update: the
 *                             program's graph launches routed through
 *                             libnucatrace, a shadow exec of the twins
 *                             launched in the exec's place; graphroute.h,
 *                             docs/results/2026-12-06-shadow-route.md) or
 *                             update (the exec pointed at instrumented
 *                             twins and back)
 */
#ifndef NT_CONFIG_H
#define NT_CONFIG_H

#include <stdint.h>

#define NT_CONFIG_BUFFER_BLOCKS 262144
#define NT_CONFIG_BUFFER_MAX (16u << 20)
#define NT_CONFIG_WAIT_S 30.0
#define NT_CONFIG_EXIT_WAIT_S 2.0
#define NT_CONFIG_GRAPH_TABLES_MIB 64
/* The triad of 400 launches under --sample all (105M records) on the
 * H200 machine: 8.9 s beyond its kernels with the collector packing
 * alone, 3.0 s with 7 helpers (docs/results/2026-12-03-record-wait.md). */
#define NT_CONFIG_PACK_THREADS 7

/* Blocks mode: which patch sites a traced launch's module gets
 * (docs/interposer.md, "Entry-only tracing").  FULL: entry and exit,
 * every block's start and end measured.  ENTRY: entry only, ends
 * inferred by the report (core/report/infer.h), about 0.1 us a block
 * instead of 5.  MIXED (the default): each window= window traced twice
 * over, its window= launches entry only, then as many full
 * (trace/sampling.h's phases), so a kernel launched in both has inferred
 * block times where it runs in several waves and measured ones where it
 * runs in one; a policy without window= traces full. */
enum nt_blocks_mode { NT_BLOCKS_FULL, NT_BLOCKS_ENTRY, NT_BLOCKS_MIXED };
const char *nt_blocks_mode_name(int mode);

struct nt_config {
	char mode[16];		/* blocks | kernels | auto | off */
	char sampling[512];	/* policy string, trace/sampling.h */
	int blocks;		/* NUCATRACE_BLOCKS: enum nt_blocks_mode */
	const char *output_dir, *output_pattern;	/* NULL: defaults */
	const char *store;	/* map store, NULL: default */
	uint32_t buffer_blocks;	/* first record buffer per context, in blocks */
	uint32_t buffer_max;	/* all record buffers of a context, in blocks */
	double wait_s;		/* how long a launch may wait for buffer space */
	double exit_wait_s;	/* how long exit waits for pending launches */
	uint32_t graph_tables_mib;	/* device memory for graph node tables */
	uint32_t pack_threads;	/* helpers packing block records */
	int quiet;		/* no summary on stderr */
	int count_all;		/* launch callbacks on between windows */
	int graph_shadow;	/* NUCATRACE_GRAPH_ROUTE=shadow */
	/* experiments on issue 33's fault (interposer/blocks/san_modules.c) */
	int load_before_patch;	/* NUCATRACE_LOAD_BEFORE_PATCH=1 */
	int patch_null;		/* NUCATRACE_PATCH_NULL=1 */
	int lazy_settle;	/* NUCATRACE_LAZY_SETTLE=1 */
};

/* Fill *c from get(name) (getenv, or a test's table); each bad value is
 * described in warn (called once per bad variable) and replaced by its
 * default. */
void nt_config_read(struct nt_config *c, const char *(*get)(const char *name),
		    void (*warn)(const char *msg));

#endif
