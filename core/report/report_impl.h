/*
 * report_impl.h - what report.c and report_fit.c share while one trace
 * is read; not for callers.  report.c reads the trace's devices, maps and
 * launches, and replays each launch; report_fit.c samples each kernel's
 * blocks and fits them (attrib.h); report_blocks.c reads a launch's
 * blocks for both; report_rows.c says which rows the report can use.
 */
#ifndef NT_REPORT_IMPL_H
#define NT_REPORT_IMPL_H

#include "report/infer.h"
#include "report/report.h"
#include "trace/trace.h"

#define MAX_DEVICES 64

/* One traced launch as the first pass sees it. */
struct ldesc {
	int64_t launch;
	int64_t blocks;		/* records, from the launch row */
	int64_t t_start_ns, t_end_ns;
	int device, kernel;	/* kernel: index into the report's kernels */
	int32_t max_bps;
	int64_t graph, graph_launch;	/* a graph kernel node's: -1 when none */
	int entry_only;		/* only its blocks' starts were recorded (infer.h) */
};

struct kernel_key;	/* report.c: the trace's kernels by key, a uthash table */

/* A launch configuration, with the kernel's name the key of a kernel. */
struct nt_report_config {
	int32_t device;
	int32_t grid[3], block[3];
};

/* What one trace file needs while it is read.  The report is built in
 * stages (report.c), each trace's on its own thread (util/workers.h):
 * its rows are read into the trace's own shard (its kernels and devices,
 * ts->r = &ts->shard), which is then merged into the report in trace
 * order (ts->r = the report, its kernels r->kernels[k0 .. k0 + n_k - 1]);
 * from then on a trace's thread writes only its own kernels, launches and
 * traces[] row. */
struct tstate {
	struct nt_report *r;
	struct nt_report shard;
	struct nt_trace *t;
	int trace;
	int k0, n_k;
	int dev[MAX_DEVICES];	/* index into r->devices by ordinal; -1: not listed */
	struct ldesc *ld;
	size_t n_ld, cap_ld;
	/* per kernel (index - k0), the blocks kept for its fit */
	struct nt_attrib_block **fb;
	size_t *n_fb, *seen_fb;
	int cap_k;
	struct kernel_key *keys;	/* this trace's kernels, by (device, name, grid, block) */
	char *kbuf;			/* a key being looked up */
	size_t kcap;
	uint64_t rng;
	struct nt_err *err;		/* &own_err */
	struct nt_err own_err;
	int failed;
};

/* report_rows.c: 0 when the row can be used, else -1 and why, "<table>
 * row (<key>): <fault>" (docs/report.md says what is refused).  listed:
 * the launch's device is in the trace's devices table; n_sm: the SM
 * count of the block's device. */
int nt_report_device_ok(const struct nt_trace_device *d, char *why, size_t len);
int nt_report_launch_ok(const struct nt_trace_launch *l, int listed, char *why, size_t len);
int nt_report_block_ok(const struct nt_trace_block *b, int n_sm, int entry_only, char *why, size_t len);

/* report_blocks.c: one launch's block records, in block-id order.
 * nt_report_read_blocks() empties bl and reads launch d into it, every
 * row checked: 0; 1 with bl->why when a row is bad (the whole launch is
 * then left out); -1 with err set when the trace cannot be read or
 * memory runs out.  An entry-only launch's ends are inferred (infer.h)
 * with its occupancy as the slots, or when that is not known the slots
 * its starts show (nt_infer_slots): how[] says per block how its end was
 * obtained (all NT_END_MEASURED otherwise).  nt_report_replay_blocks(): bl
 * as replay input, a new array (NULL when out of memory). */
struct nt_report_blocks {
	size_t n, cap;
	int32_t *sm, *warps;
	int64_t *id;		/* block ids */
	int64_t *t0, *t1;
	int64_t *c0, *c1;	/* the SM's clock at start and end */
	double *cyc;
	unsigned char *how;	/* enum nt_block_end */
	struct nt_infer_stats inferred;	/* an entry-only launch's */
	int entry_only;
	int slots;		/* ... the slots per SM its ends were inferred with */
	int n_sm;		/* the device's, for the row checks */
	int oom;
	char why[160];
};
/* ... the blocks of launch `launch` of trace t (device of n_sm SMs, the
 * occupancy max_bps, entry_only as in its row) without a tstate. */
int nt_report_read_launch_blocks(struct nt_trace *t, int64_t launch, int n_sm, int32_t max_bps, int entry_only,
				 struct nt_report_blocks *bl, struct nt_err *err);
int nt_report_read_blocks(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl,
			  struct nt_err *err);
struct nt_replay_block *nt_report_replay_blocks(const struct nt_report_blocks *bl);
void nt_report_blocks_free(struct nt_report_blocks *bl);

/* *(T **)pp reallocated to n elements of size bytes: 0, or -1 leaving
 * it as it was.  Parallel arrays grow one call each; those already
 * grown when one fails are only larger than their count says. */
int nt_report_resize(void *pp, size_t n, size_t size);

/* The map of a device ordinal of the trace (NULL: none, or the trace
 * does not list the device), and its SM count (0 then). */
struct nt_map *nt_report_map(struct tstate *ts, int ordinal);
int nt_report_sm_count(struct tstate *ts, int ordinal);

/* Slots per SM for a launch's replay: the occupancy calculator's limit
 * (launches.max_blocks_per_sm) or, when smaller, the most blocks the
 * records show running at once on one SM.  *observed: 1 when the
 * records' figure was used. */
int nt_report_launch_slots(const struct ldesc *d, const struct nt_replay_block *rb, size_t n, int *observed);
/* The same from the slots the records show (seen; < 1 when unknown). */
int nt_report_slots_seen(const struct ldesc *d, int seen, int *observed);

/* The map's latencies with unmeasured SMs at the mean, for n_sm SMs: the
 * replay needs a value for every SM.  A new array, NULL when out of
 * memory. */
double *nt_report_replay_lat(const struct nt_map *m, int n_sm);

/* report_fit.c: count every kernel's launches and blocks, read a sample
 * of their blocks and the native times.  0, or -1 with ts->err set. */
int nt_report_fit_samples(struct tstate *ts);

/* report_fit.c: then fit kernel k (0..ts->n_k - 1) of the trace on its
 * sample, with its per-SM medians and the r of those with what else
 * varies by SM (report.h; the common pattern is report_verdict.c's).
 * Touches only that kernel, so kernels may be fitted on several threads.
 * 0, or -1 with *err set. */
int nt_report_fit_kernel(struct tstate *ts, int k, struct nt_err *err);

/* report_fit.c: k's persistent work share per SM (report.h) by its fit,
 * at its slope when it is L2-sensitive, else at slope 0 (equal shares).
 * Left NULL when the fit gives some SM no positive time, or out of
 * memory: the report then has no shares. */
void nt_report_kernel_shares(struct nt_report_kernel *k, int n_sm);

/* report.c: the index of the trace's kernel `name` at configuration c,
 * -1 when there is none, -2 when out of memory. */
int nt_report_lookup_kernel(struct tstate *ts, const struct nt_report_config *c, const char *name);

/* report_native.c: each kernel's native time from the trace's native
 * table, and its probe share (report.h).  0, or -1 with ts->err set. */
int nt_report_read_native(struct tstate *ts);

/* report_verdict.c, once every trace is fitted: each kernel's r with
 * its device's common per-SM pattern, the q-values and the verdicts
 * (report.h).  0, or -1 with err set when out of memory. */
int nt_report_judge(struct nt_report *r, struct nt_err *err);

#endif
