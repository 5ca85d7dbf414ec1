/*
 * report_impl.h - what report.c and report_fit.c share while one trace
 * is read; not for callers.  report.c reads the trace's devices, maps and
 * launches, and replays each launch; report_fit.c samples each kernel's
 * blocks and fits them (attrib.h).
 */
#ifndef NT_REPORT_IMPL_H
#define NT_REPORT_IMPL_H

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
};

/* What one trace file needs while it is read. */
struct tstate {
	struct nt_report *r;
	struct nt_trace *t;
	int trace;
	int dev[MAX_DEVICES];	/* index into r->devices by ordinal; -1: not listed */
	struct ldesc *ld;
	size_t n_ld, cap_ld;
	/* per kernel, the blocks kept for its fit */
	struct nt_attrib_block **fb;
	size_t *n_fb, *seen_fb;
	int cap_k;
	uint64_t rng;
	struct nt_err *err;
	int failed;
};

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

/* The map's latencies with unmeasured SMs at the mean, for n_sm SMs: the
 * replay needs a value for every SM.  A new array, NULL when out of
 * memory. */
double *nt_report_replay_lat(const struct nt_map *m, int n_sm);

/* report_fit.c: count every kernel's launches and blocks, then fit the
 * trace's kernels (k0 onwards) on a sample of their blocks, with their
 * persistent shares and per-SM medians (report.h).  0, or -1 with
 * ts->err set. */
int nt_report_fit_kernels(struct tstate *ts, int k0);

#endif
