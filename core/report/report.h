/*
 * report.h - what `nucatrace report` computes from trace files: per
 * kernel, how block time depends on the SM's L2 latency (attrib.h), and
 * per launch, a replay of the block dispatch with its counterfactuals
 * (replay.h), summed per kernel and for the program.
 *
 * nt_report_build() reads every trace (read-only), takes each device's
 * map from the trace, else from get_map (the front end's store or
 * --map), and fills a struct nt_report; the formats (reports/fmt_*.c)
 * only print it.  Nothing here prints.
 *
 * A "kernel" is one kernel at one launch configuration (grid and block
 * dimensions) on one device of one trace: launches of the same code with
 * other shapes behave differently and are kept apart.  Only traced
 * launches (blocks mode) are analysed; kernels-mode traces give launch
 * counts and times but no placement analysis.
 *
 * Bounded memory: blocks are read one launch at a time; a kernel keeps
 * at most NT_REPORT_FIT_BLOCKS blocks for its fit (an even sample over
 * its launches when it has more).
 */
#ifndef NT_REPORT_H
#define NT_REPORT_H

#include <stdint.h>

#include "report/attrib.h"
#include "util/err.h"
#include "map/map.h"
#include "report/replay.h"

#define NT_REPORT_FIT_BLOCKS (1 << 18)

/* A launch whose measured replay misses its measured makespan by more
 * than this (percent) is not credible: its counterfactuals are left out
 * of the sums, and counted. */
#define NT_REPORT_MAX_REPLAY_ERR 5.0

struct nt_report_trace {
	char *path;
	char backend[16];
	int rank;		/* -1 when the trace has none */
	int n_devices;
	char uuid[NT_UUID_LEN];	/* of the first device */
	char gpu[96];
	int sm_count;
	int has_map;		/* a map for every device that has launches */
	int64_t launches;	/* recorded launches (traced or not) */
	int64_t traced;		/* with block records */
};

struct nt_report_kernel {
	char *name;		/* mangled */
	char *demangled;	/* NULL when unknown */
	int trace, device;
	int32_t grid[3], block[3];
	int launches;		/* traced launches */
	int64_t blocks;
	double time_ns;		/* summed measured makespans of the replayed launches */
	struct nt_kernel_fit fit;
	int fitted;		/* the fit ran (a map was there) */
	int replayed;		/* launches replayed */
	int credible;		/* of those, within NT_REPORT_MAX_REPLAY_ERR */
	double time_ns_credible;	/* their summed makespans */
	double lost_ns, recoverable_ns, tail_ns;	/* over the credible launches */
	double placement_ns;	/* the part of recoverable_ns due to the map (not reordering) */
	/* As a persistent kernel (replay.h), over the credible launches:
	 * persist = hardware - split = quantisation + rebalance. */
	double persist_ns, rebalance_ns, quantisation_ns;
	/* Per SM, the share of a persistent kernel's work that SM should
	 * take (mean 1) by this kernel's fit: 1 / rho[s] normalised; NULL
	 * without a fit.  [n_shares] = the device's SM count. */
	double *shares;
	int n_shares;
	double replay_err_max_pct;	/* largest |error| of the measured replay */
};

struct nt_report_launch {
	int trace, kernel;	/* indices */
	int64_t launch;
	int slots;		/* occupancy used in the replay */
	int slots_observed;	/* 1 when taken from the records, not the trace */
	int ok;			/* replayed */
	char why[96];		/* when not */
	struct nt_replay_result r;
};

struct nt_report {
	int n_traces, n_kernels;
	size_t n_launches;
	struct nt_report_trace *traces;
	struct nt_report_kernel *kernels;
	struct nt_report_launch *launches;
	double time_ns, time_ns_credible, lost_ns, recoverable_ns, placement_ns, tail_ns;
	double persist_ns, rebalance_ns, quantisation_ns;
	double replay_err_max_pct;
	int64_t blocks;
	int replayed, credible;
};

/* Where a map comes from when the trace has none: 0 with *out set, or
 * -1 (no map; not an error). */
typedef int (*nt_report_map_fn)(const char *uuid, struct nt_map **out, void *arg);

int nt_report_build(const char *const *paths, int n, nt_report_map_fn get_map, void *arg,
		    struct nt_report **out, struct nt_err *err);
void nt_report_free(struct nt_report *r);

/* Kernels' indices ordered by recoverable time, largest first: a new
 * array of n_kernels ints, or NULL when out of memory. */
int *nt_report_rank_kernels(const struct nt_report *r);

#endif
