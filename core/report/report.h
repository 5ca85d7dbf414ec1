/*
 * report.h - what `nucatrace report` computes from trace files: per
 * kernel, how block time depends on the SM's L2 latency (attrib.h), and
 * per launch, a replay of the block dispatch with its counterfactuals
 * (replay.h), summed per kernel and for the program.
 *
 * nt_report_build() reads every trace (read-only), takes each device's
 * map from the trace, else from get_map (the front end's store or
 * --map), and fills a struct nt_report with everything the formats
 * (reports/fmt_*.c) print: the figures, each device's map, each fitted
 * kernel's per-SM medians and the launches' metadata.  The formats never
 * open a trace: the block records, too many to keep, are streamed to
 * them by nt_report_foreach_block(), which reads them again from the
 * traces here.  Nothing here prints.
 *
 * A "kernel" is one kernel at one launch configuration (grid and block
 * dimensions) on one device of one trace: launches of the same code with
 * other shapes behave differently and are kept apart.  Only traced
 * launches (blocks mode) are analysed; kernels-mode traces give launch
 * counts and times but no placement analysis.
 *
 * Bounded memory: blocks are read one launch at a time; a kernel keeps
 * at most NT_REPORT_FIT_BLOCKS blocks for its fit (an even sample over
 * its launches when it has more), and the report keeps none of them.
 */
#ifndef NT_REPORT_H
#define NT_REPORT_H

#include <stdint.h>

#include "report/attrib.h"
#include "util/err.h"
#include "map/map.h"
#include "report/dispatch.h"
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
	char no_map[192];	/* why not, when has_map is 0: the trace's map is damaged, or none */
	int64_t launches;	/* recorded launches (traced or not) */
	int64_t traced;		/* with block records */
	int64_t t_first_ns;	/* earliest GPU start of a traced launch; -1: none */
	size_t first_launch;	/* its launches: r->launches[first_launch ..] */
	size_t n_launches;
	/* Traced launches left out for a bad row of theirs in launches or
	 * blocks (docs/report.md), and the first one's reason, "<table> row
	 * (<key>): <fault>".  A launch left out for a block row is in
	 * launches[], not replayed, with that reason. */
	int64_t skipped;
	char skipped_why[192];
};

/* A device of a trace (its devices table, CUDA ordinals 0..63), with the
 * map the report used for it: the trace's, else get_map's when it has
 * traced launches (a device without any needs no map: get_map is not
 * asked for one). */
struct nt_report_device {
	int trace;		/* index into traces */
	int device;		/* CUDA ordinal */
	char uuid[NT_UUID_LEN];
	char name[96];
	int sm_count;
	struct nt_map *map;	/* NULL: none */
	int map_in_trace;	/* the map came from the trace, not from get_map */
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
	const struct nt_map *map;	/* its device's (r->devices owns it); NULL: none */
	/* With a fit (fit.fitted), per SM s of map (map->n_sm of each):
	 * sm_blocks[s] blocks of the fit's sample ran on s, sm_median_ns[s]
	 * their median duration (NAN when none) - the points the fit's line
	 * goes through, on the SMs with a latency and NT_ATTRIB_MIN_BLOCKS
	 * blocks; lat_median is the median latency of those SMs.  NULL and
	 * NAN without a fit. */
	int *sm_blocks;
	double *sm_median_ns;
	double lat_median;
};

struct nt_report_launch {
	int trace, kernel;	/* indices */
	int64_t launch;		/* its key in the trace */
	int64_t blocks;		/* block records */
	int64_t t_start_ns, t_end_ns;	/* GPU time of the launch; -1: unknown */
	int slots;		/* occupancy used in the replay */
	int slots_observed;	/* 1 when taken from the records, not the trace */
	int ok;			/* replayed */
	char why[192];		/* when not, or why its replay is not credible */
	struct nt_dispatch dispatch;	/* the replay's dispatch model, fitted to the records */
	struct nt_replay_result r;
};

struct nt_report {
	int n_traces, n_kernels, n_devices;
	size_t n_launches;
	struct nt_report_trace *traces;
	struct nt_report_device *devices;	/* trace by trace, in ordinal order */
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

/* One block record, as nt_report_foreach_block() hands it. */
struct nt_report_block {
	size_t launch;		/* index into r->launches */
	int64_t block;		/* linear block id */
	int32_t sm, warps;
	int64_t t_start_ns, t_end_ns;	/* GPU time */
	int64_t cycles;		/* the SM's clock, start to end */
};

/* The block records of r->launches[first .. first + n - 1], launch after
 * launch, each launch's in block-id order, read again from the trace
 * files (each opened once for a run of its launches; they must not have
 * changed since nt_report_build).  A nonzero return from cb stops the
 * walk and is returned; -1 with err set when a trace cannot be read. */
int nt_report_foreach_block(const struct nt_report *r, size_t first, size_t n,
			    int (*cb)(const struct nt_report_block *b, void *arg), void *arg,
			    struct nt_err *err);

/* Why k has no fit, in a few words for a table ("no map", "no blocks",
 * "too few SMs", "no fit": k->fit.reason has the sentence); NULL when it
 * has one. */
const char *nt_report_no_fit(const struct nt_report_kernel *k);

/* Kernels' indices ordered by recoverable time, largest first: a new
 * array of n_kernels ints, or NULL when out of memory. */
int *nt_report_rank_kernels(const struct nt_report *r);

#endif
