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
 * With several threads, each holds one trace's at a time.
 *
 * The verdict (report_verdict.c).  Each fitted kernel has a shuffle
 * test p-value (attrib.h); across the report's fitted kernels they are
 * made q-values by Benjamini-Hochberg, and a kernel is L2-sensitive only
 * when its q-value is at most NT_REPORT_FDR (the false discovery rate:
 * with every kernel unrelated to its map, the chance that any is called
 * sensitive), its effect is at least NT_ATTRIB_SENSITIVE_PCT of a block,
 * and it is measurable (below).  Otherwise, when its slope is negative
 * or the shuffles explain it, its per-SM medians are set against what
 * else varies by SM (enum nt_report_cov): the one they follow best, at
 * |r| >= NT_REPORT_FOLLOWS_R, is named.  A negative slope is never an
 * L2 effect.  The counterfactuals use the fitted slope only for
 * L2-sensitive kernels (slope 0 otherwise).
 *
 * The probe effect (report_native.c).  Instrumented blocks run longer
 * than native ones.  A trace's native table (docs/trace-format.md) has
 * untraced event times per configuration; the shortest is the kernel's
 * native time N, against T, the shortest traced makespan read for its
 * fit: probe_share = 1 - N / T.  Event times include launch latency, so
 * N is at least the native time and probe_share at most understates the
 * instrumentation's share.  At probe_share >= NT_REPORT_PROBE_MAX the
 * instrumentation dominates its blocks and the kernel is "not measurable
 * here": its per-SM cost (which runs against the L2 map on an H200) is
 * then several percent of a block along the map, more than the effect
 * the verdict needs.  The replay's figures of a launch are scaled to
 * native time by N / its makespan when 0 < N < makespan; the program's
 * sums leave out kernels not measurable.  Without native times (schema 1
 * traces, configurations only ever traced) the probe effect is unknown
 * and the figures stay in traced time.
 *
 * Its per-SM part (report_fit.c's probe_correct).  The cost differs by
 * SM, and in the same way for every kernel: on a PyTorch training step
 * (GPU-42ba7917) the per-SM mean block times of the 45 kernels whose
 * blocks are at least 70% instrumentation correlate with each other at
 * a median r of 0.69 and against the map at -0.24 to -0.42, a slope that
 * runs against L2 latency in whatever kernel carries enough of it.  So
 * each trace's probe shape per device is taken from its own such
 * kernels (probe_share >= NT_REPORT_PROBE_SHAPE_MIN, every SM with at
 * least 3 blocks, at least NT_REPORT_PROBE_SHAPE_KERNELS of them): per SM
 * the blocks-weighted mean of each kernel's per-SM mean block time over
 * the mean of those over SMs.  A measurable kernel with a probe share p >
 * 0 then has p x (its mean block time) x shape[sm] taken off each of its
 * blocks (cycles in proportion) before its fit (probe_corrected), unless
 * that leaves a block no time: the probe's average cost as well as its
 * per-SM part, so its blocks come out at about their native time, and
 * the effect (% of a block) is of a native block.  A trace without such
 * kernels takes the shape from its map's probe cost, when calibrate
 * measured one (map.h: nt_map_probe_shape of the configurations with no
 * body work, where the callbacks are most of a block); a trace with both
 * reports the r between its own shape and the map's.  The verdict's
 * shuffle test is unchanged (the correction does not use the L2 map).
 *
 * Collectives (job.h: NCCL's kernels) are not fitted: their blocks wait
 * for the other ranks, so their times say nothing of their SMs.  They are
 * replayed, and left out of the program's sums (counted).  When the
 * traces hold several ranks of one job, the report lines up their steps
 * at the collectives (job.h).
 */
#ifndef NT_REPORT_H
#define NT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "report/attrib.h"
#include "util/err.h"
#include "map/map.h"
#include "report/dispatch.h"
#include "report/infer.h"
#include "report/job.h"
#include "report/replay.h"

#define NT_REPORT_FIT_BLOCKS (1 << 18)

/* A launch whose measured replay misses its measured makespan by more
 * than this (percent) is not credible: its counterfactuals are left out
 * of the sums, and counted. */
#define NT_REPORT_MAX_REPLAY_ERR 5.0

#define NT_REPORT_FDR 0.01		/* the verdict's false discovery rate */
#define NT_REPORT_FOLLOWS_R 0.3		/* |r| to name what per-SM times follow */
#define NT_REPORT_PROBE_MAX 0.5		/* probe_share from which a kernel is not measurable */
#define NT_REPORT_PROBE_SHAPE_MIN 0.7	/* probe_share of the kernels the probe shape comes from */
#define NT_REPORT_PROBE_SHAPE_KERNELS 3	/* ... at least this many of them */

enum nt_report_verdict {
	NT_VERDICT_NO_FIT,		/* no map, too few SMs...: nt_report_no_fit() */
	NT_VERDICT_SENSITIVE,		/* "L2-sensitive" */
	NT_VERDICT_NO_EFFECT,		/* "no L2 effect detected" */
	NT_VERDICT_OTHER,		/* varies with the SM, not as the map says */
	NT_VERDICT_NOT_MEASURABLE,	/* the instrumentation dominates its blocks */
	NT_VERDICT_COLLECTIVE,		/* a collective (job.h): its blocks wait for other ranks */
};

/* What else varies by SM, for a kernel whose per-SM times the map does
 * not explain.  Per SM, over the blocks of its fit:
 *   PATTERN  the trace's common per-SM pattern: the median over the
 *            device's other fitted kernels of their per-SM median over
 *            their median (what the instrumentation's own per-SM cost
 *            makes on an H200, and anything else every kernel shares);
 *            needs NT_REPORT_PATTERN_MIN such kernels;
 *   CORES    the mean co-residency of its blocks;
 *   POSITION the mean position of its blocks in their grid (0..1);
 *   ORDER    the SM's place in its launches' first-wave dispatch (0..1). */
enum nt_report_cov { NT_COV_PATTERN, NT_COV_CORES, NT_COV_POSITION, NT_COV_ORDER, NT_COV_COUNT };
#define NT_REPORT_PATTERN_MIN 5
const char *nt_report_cov_name(int cov);

#define NT_REPORT_DROP_REASONS 16

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
	/* Launches the trace says were not traced, and why (its drops table:
	 * picked launches dropped, records lost), by reason, most first: the
	 * NT_REPORT_DROP_REASONS most frequent, the rest counted in
	 * dropped_other.  dropped -1: the table could not be read. */
	struct nt_report_drop {
		char *reason;
		int64_t count;
	} *drops;
	int n_drops;
	int64_t dropped, dropped_other;
	/* The process (meta, docs/trace-format.md), to tell jobs apart
	 * (job.h): "" and -1 when absent. */
	char *cmdline, *exe;
	char host[64];
	int64_t pid, start_unix_ns, end_unix_ns;
	int complete;		/* meta complete=1: its process finished writing it */
	int probe_shape_kernels;	/* kernels its probe shape came from (0: none) */
	double *probe_shape;		/* the first device's that has one, [probe_shape_sm]; NULL: none */
	int probe_shape_sm, probe_shape_device;	/* ... its SMs and CUDA ordinal */
	int probe_shape_calibrated;	/* 1: it is the map's probe cost (calibrate), the trace
					 * having too few kernels of its own to give one */
	double probe_shape_r_calib;	/* r of the trace's own shape with the map's; NAN: not
					 * both there */
	/* Its own figures, summed as the program's are (below): its credible
	 * launches of measurable kernels, native time where known. */
	double time_ns_credible, lost_ns, recoverable_ns;
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
	int collective;		/* an NCCL collective (nt_report_is_collective) */
	int launches;		/* traced launches */
	int64_t blocks;
	/* How its block times were obtained: entry_launches of its launches
	 * had only their blocks' starts recorded (entry-only tracing), whose
	 * ends are inferred (infer.h); ends_unknown of those ran in one wave,
	 * where no end can be.  Of the blocks read for its fit, fit_inferred
	 * had an inferred end and fit_censored were left out (censored). */
	int entry_launches, ends_unknown;
	int64_t fit_inferred, fit_censored;
	double time_ns;		/* summed measured makespans of the replayed launches */
	/* time_ns_credible and the figures below are native time where the
	 * kernel has one (scaled, top of this file), else traced time. */
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
	/* The verdict (top of this file). */
	double q_value;		/* NAN without a fit */
	int sensitive;		/* the verdict is NT_VERDICT_SENSITIVE */
	enum nt_report_verdict verdict;
	int follows;		/* enum nt_report_cov the per-SM medians follow best; -1: none */
	double follows_r;	/* their r with it */
	double follows_map_r;	/* its r with the map's latency */
	double cov_r[NT_COV_COUNT];	/* r of the per-SM medians with each (NAN: none) */
	double cov_map_r[NT_COV_COUNT];	/* r of each with the map's latency, over the same SMs */
	/* The probe effect (top of this file). */
	double native_ns;	/* shortest native time of the configuration; -1: none */
	int native_n;		/* native times of it in the trace */
	double traced_min_ns;	/* shortest makespan of the launches read for its fit; -1: none */
	double probe_share;	/* 1 - native / traced; NAN: unknown */
	int probe_corrected;	/* its blocks had the probe shape's cost taken off before the fit */
	double traced_credible_ns;	/* traced makespans of the credible launches */
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
	int32_t max_bps;	/* the trace's occupancy for it; -1: unknown */
	int entry_only;		/* only its blocks' starts were recorded: ends inferred (infer.h) */
	struct nt_infer_stats inferred;	/* ... how */
	int slots_observed;	/* 1 when taken from the records, not the trace */
	int ok;			/* replayed */
	int64_t graph, graph_launch;	/* a CUDA graph kernel node's exec and launch of it; -1: none */
	double scale;		/* native / measured makespan its figures were scaled by (1: none) */
	char why[192];		/* when not, or why its replay is not credible */
	struct nt_dispatch dispatch;	/* the replay's dispatch model, fitted to the records */
	struct nt_replay_result r;
};

/* A CUDA graph exec of a trace, over its traced kernel node launches
 * (report_graphs.c; blocks mode: the trace's graph and graph_launch):
 * the sums are those of the program (below) over its node launches. */
struct nt_report_graph {
	int trace;
	int64_t graph;		/* the trace's number for the exec */
	int launches;		/* launches of it with a traced node */
	int nodes;		/* node launches traced, replayed */
	int credible;		/* ... and credible, of measurable kernels */
	double time_ns;		/* measured makespans of the replayed node launches, summed */
	double span_ns;		/* median over its launches: first node start to last node end */
	double time_ns_credible, lost_ns, recoverable_ns;
};

/* The shuffle check (nt_report_shuffle_check). */
struct nt_report_check {
	int done;		/* 0: not asked for */
	int maps;		/* TPC-shuffled maps of each device */
	uint64_t seed;
	int kernels;		/* fitted kernels judged against each */
	int judged;		/* maps x kernels */
	int significant;	/* verdicts whose shuffle test passed at FDR NT_REPORT_FDR */
	int sensitive;		/* ... and called L2-sensitive (effect, probe) */
	int maps_any;		/* maps on which some kernel was called sensitive */
	int max_per_map;
	double rate;		/* sensitive / judged */
};

struct nt_report {
	int n_traces, n_kernels, n_devices;
	int flags;			/* nt_report_build's */
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
	/* entry-only traced launches, and of them those in one wave, whose
	 * block times cannot be known (infer.h): not replayed */
	int entry_launches, ends_unknown;
	/* The program's sums are over the credible launches of kernels that
	 * are measurable; these are left out for the probe: */
	int probe_left_out;		/* credible launches of kernels not measurable */
	double probe_left_out_ns;	/* their traced makespans */
	double traced_credible_ns;	/* traced makespans of the launches summed */
	int probe_known, probe_unknown;	/* kernels with credible launches, with and without a probe share */
	/* ... and these, as collectives wait for other ranks (job.h): */
	int collective_left_out;	/* credible launches of collective kernels */
	double collective_left_out_ns;	/* their traced makespans */
	int sensitive;			/* L2-sensitive kernels */
	struct nt_report_check check;
	int n_jobs;			/* ranks of one job set side by side (job.h) */
	struct nt_report_job *jobs;
	int n_graphs;			/* CUDA graph execs with traced node launches */
	struct nt_report_graph *graphs;	/* by trace, then graph number */
};

/* Where a map comes from when the trace has none: 0 with *out set, or
 * -1 (no map; not an error). */
typedef int (*nt_report_map_fn)(const char *uuid, struct nt_map **out, void *arg);

/* The report of n traces, built by up to `threads` threads (0: one per
 * CPU), each reading and fitting one trace at a time, then replaying a
 * chunk of consecutive launches at a time, of any trace, through a trace
 * handle of its own (util/workers.h): the same report, byte for byte,
 * whatever their number.  get_map is called from
 * the calling thread only, in trace order.  0 with *out set, or -1 with
 * err set (the first trace, in order, that failed).  flags:
 * NT_REPORT_NO_PROBE_CORRECTION fits the block times as traced (the probe
 * shape's cost not taken off; report --no-probe-correction). */
#define NT_REPORT_NO_PROBE_CORRECTION 1
int nt_report_build(const char *const *paths, int n, int threads, int flags, nt_report_map_fn get_map,
		    void *arg, struct nt_report **out, struct nt_err *err);
void nt_report_free(struct nt_report *r);

/* The graph execs of r's traced launches into r->graphs (report_graphs.c;
 * called by nt_report_build): 0, or -1 with err set (out of memory). */
int nt_report_graphs(struct nt_report *r, struct nt_err *err);

/* The shuffle check: the verdict of every fitted kernel redone (its
 * shuffle test from its per-SM medians, Benjamini-Hochberg across the
 * report's kernels, the effect and the probe: exactly the report's
 * rule) against n_maps copies of each device's map with its TPCs
 * shuffled at random (nt_tpc_shuffle, from seed), which carry no
 * physics: every kernel called L2-sensitive against one is a false
 * positive.  Into r->check.  The fit uses nothing but the per-SM medians
 * (and their SMs do not change under a shuffle), so this is the
 * attribution rerun.  The seeds of the maps are not the shuffle test's
 * own (attrib.h).  0, or -1 with err set when out of memory. */
#define NT_REPORT_CHECK_SEED 0x636865636b6d6170ULL	/* "checkmap" */
int nt_report_shuffle_check(struct nt_report *r, int n_maps, uint64_t seed, struct nt_err *err);

/* One block record, as nt_report_foreach_block() hands it. */
struct nt_report_block {
	size_t launch;		/* index into r->launches */
	int64_t block;		/* linear block id */
	int32_t sm, warps;
	int64_t t_start_ns, t_end_ns;	/* GPU time */
	int64_t cycles;		/* the SM's clock, start to end */
	int end;		/* how its end was obtained: enum nt_block_end (infer.h) */
};

/* The block records of r->launches[first .. first + n - 1], launch after
 * launch, each launch's in block-id order, read again from the trace
 * files (each opened once for a run of its launches; they must not have
 * changed since nt_report_build).  A nonzero return from cb stops the
 * walk and is returned; -1 with err set when a trace cannot be read. */
int nt_report_foreach_block(const struct nt_report *r, size_t first, size_t n,
			    int (*cb)(const struct nt_report_block *b, void *arg), void *arg,
			    struct nt_err *err);

/* The launch was replayed within NT_REPORT_MAX_REPLAY_ERR: its
 * counterfactuals count. */
int nt_report_launch_credible(const struct nt_report_launch *l);

/* How kernel k's block times were obtained: "measured" (at each block's
 * exit), "inferred" (entry-only tracing: from the next start on each SM,
 * infer.h), "unknown" (entry-only, every launch one wave), or "mixed". */
const char *nt_report_block_times(const struct nt_report_kernel *k);
/* A block's end as a word: measured, inferred, censored, unknown. */
const char *nt_report_end_name(int end);

/* The verdict in words: "L2-sensitive", "no L2 effect detected", "not
 * measurable here", "varies with the SM, not with the map", "collective",
 * "no fit". */
const char *nt_report_verdict_name(enum nt_report_verdict v);

/* The verdict as a sentence for people (what the verdict rests on, and
 * what else the kernel's per-SM times follow) into buf. */
void nt_report_verdict_text(const struct nt_report_kernel *k, char *buf, size_t len);

/* Why k has no fit, in a few words for a table ("no map", "no blocks",
 * "too few SMs", "no fit": k->fit.reason has the sentence); NULL when it
 * has one. */
const char *nt_report_no_fit(const struct nt_report_kernel *k);

/* Kernels' indices ordered by recoverable time, largest first: a new
 * array of n_kernels ints, or NULL when out of memory. */
int *nt_report_rank_kernels(const struct nt_report *r);

#endif
