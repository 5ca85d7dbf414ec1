/*
 * map.h - one calibration of one GPU: the per-SM L2 latency map.
 *
 * A map is what `nucatrace calibrate` measures and what every other part
 * of nucatrace reads (the store keeps them, the model fits them, reports
 * join traces against them).  It holds:
 *
 *   - the GPU's identity and the conditions of the run (struct nt_gpu),
 *   - the chain map: per-SM L2 hit latency in SM cycles, averaged over a
 *     random chain of lines (chain[sm]),
 *   - optionally the noise floor: per-SM |difference| between two chain
 *     maps taken back to back (noise[sm]),
 *   - optionally the line matrix: SM x line latency of single 128-byte
 *     lines walked as self-loops (line_lat[sm * n_line + line]),
 *   - optionally the first-touch matrices over the same lines: latency of
 *     the first access by an SM after the line was written by the copy
 *     engine (ft_first) and of the accesses right after it (ft_repeat),
 *   - optionally the probe cost: what the interposer's block tracing (the
 *     blocks backend's enter/exit callbacks) adds to a block on each SM,
 *     for a few launch configurations (probe[], probe_cost[]).
 *
 * Lifecycle: nt_map_new() allocates the arrays it is asked for (filled
 * with NAN, meaning "not measured"); nt_map_free() frees everything.
 * An absent part is a NULL pointer.  All latencies are SM clock cycles.
 *
 * Invariants: n_sm > 0; if line_lat or ft_first is present, n_line > 0
 * and line_offset has n_line entries; ft_first and ft_repeat are present
 * together; n_probe is 0 with probe and probe_cost NULL, or
 * 1..NT_MAP_MAX_PROBES with both present.
 */
#ifndef NT_MAP_H
#define NT_MAP_H

#include <stddef.h>
#include <stdint.h>

#define NT_UUID_LEN 48

struct nt_gpu {
	char uuid[NT_UUID_LEN];	/* "GPU-xxxxxxxx-xxxx-...", the store's key */
	char name[96];		/* "NVIDIA H200" */
	int sm_count;		/* multiprocessors the device reports */
	int cc_major, cc_minor;
	int64_t l2_bytes;
	char driver[32];	/* kernel module version, "580.159.04", or "" */
	int cuda_version;	/* cuDriverGetVersion(), e.g. 13000 */
	int clock_khz;		/* the device's nominal SM clock, 0 if unknown */
};

/* How the map was measured: kept with it so that maps can be compared. */
struct nt_map_params {
	int64_t chain_bytes;	/* size of the random chain buffer */
	int chain_loads;	/* timed dependent loads per repetition */
	int chain_reps;		/* timed repetitions; the statistic is over these */
	int line_loads;		/* timed loads per line and repetition */
	int line_reps;
	int64_t footprint_bytes;	/* span the lines are spread over */
	char statistic[8];	/* "min" or "median" */
};

/* One launch configuration of the probe-cost part (calibrate's probe
 * cost stage, docs/calibration.md): a kernel of `threads` threads per
 * block whose body loops `iters` times, over `blocks` blocks, run
 * untraced and then traced with every block recorded.  Each block times
 * its own body with %clock64; the trace record spans it from the first
 * warp's entry callback to the last warp's exit callback on the same
 * clock, so the record's span less the body is what tracing added. */
struct nt_map_probe {
	int threads, iters, blocks;
	double body_native;	/* median body cycles, untraced */
	double body_traced;	/* median body cycles, traced */
};

struct nt_map {
	struct nt_gpu gpu;
	struct nt_map_params params;
	int64_t created_at;	/* unix seconds */
	char tool_version[24];
	char host[64];
	char command[256];
	double sm_clock_mhz;	/* SM clock measured in-kernel during the chain map */

	int n_sm;
	double *chain;		/* [n_sm] cycles */
	double *noise;		/* [n_sm] |chain run 1 - chain run 2|, or NULL */

	int n_line;
	int64_t *line_offset;	/* [n_line] byte offset of each line in the footprint */
	double *line_lat;	/* [n_sm * n_line] or NULL */
	double *ft_first;	/* [n_sm * n_line] or NULL */
	double *ft_repeat;	/* [n_sm * n_line] or NULL */

	int n_probe;			/* 0: no probe part */
	struct nt_map_probe *probe;	/* [n_probe] or NULL */
	double *probe_cost;		/* [n_probe * n_sm]: median cycles tracing added to a
					 * block of configuration p on SM s (probe_cost[p * n_sm
					 * + s]); NAN where no block ran */
};

enum nt_map_parts {
	NT_MAP_NOISE = 1 << 0,
	NT_MAP_LINES = 1 << 1,
	NT_MAP_FIRST_TOUCH = 1 << 2,
	NT_MAP_PROBE = 1 << 3,	/* n_probe > 0; made by nt_map_set_probe() only */
};

/* Probe configurations a map may hold; probe_cost cells are NAN or within
 * 0..NT_MAP_MAX_CYCLES like latencies, threads 1..1024, iters and blocks
 * 0..NT_MAP_MAX_PROBE_COUNT, the body medians NAN or 0..NT_MAP_MAX_CYCLES. */
#define NT_MAP_MAX_PROBES 16
#define NT_MAP_MAX_PROBE_COUNT 1000000

/* Give m a probe part of n (1..NT_MAP_MAX_PROBES) configurations, zeroed,
 * the costs NAN, replacing any it had.  0, or -1 (out of memory, bad n). */
int nt_map_set_probe(struct nt_map *m, int n);

/* The probe shape: per SM, the mean over the map's probe configurations
 * of at most max_iters iterations (short bodies: where the callbacks are
 * most of a block) of cost[s] over that configuration's mean cost over
 * SMs, into shape[n_sm] (1: an average SM).  A configuration whose mean
 * (over the SMs with a cost) is not above 0 is left out; NAN cells are
 * left out of their SM's mean, and an SM with no cost at all gets 1.
 * The number of configurations used; 0 (shape untouched) when the map
 * has none. */
int nt_map_probe_shape(const struct nt_map *m, int max_iters, double *shape);

/* What every map reader (JSON, CSV, the store) accepts, so that a damaged
 * or hostile file can neither make nucatrace allocate gigabytes nor put
 * absurd numbers in front of the printers: at most NT_MAP_MAX_SM SMs and
 * NT_MAP_MAX_LINES lines, latencies (chain, noise and the matrices) NAN
 * or within 0..NT_MAP_MAX_CYCLES, created_at within the years 1970..9999. */
#define NT_MAP_MAX_SM 1024
#define NT_MAP_MAX_LINES 4096
#define NT_MAP_MAX_CYCLES 1e6
#define NT_MAP_MAX_TIME 253402300799LL	/* 9999-12-31 23:59:59 UTC */

int nt_map_latency_ok(double v);
int nt_map_time_ok(int64_t t);

/* Also: the GPU's UUID is one (nt_map_uuid_ok: "GPU-" or "MIG-" and then
 * letters, digits and '-', as the driver's; never empty, never a control
 * character or a '/' to land in a file name), the SM clock is NAN or
 * within 0..NT_MAP_MAX_MHZ, and at least one SM has a chain latency. */
#define NT_MAP_MAX_MHZ 1e5
int nt_map_uuid_ok(const char *uuid);

/* Allocate a map of n_sm SMs with the parts in `parts` (nt_map_parts).
 * n_line is needed when LINES or FIRST_TOUCH is asked for; PROBE is
 * ignored (its size is not known here: nt_map_set_probe()).  Returns NULL
 * when out of memory or the sizes are not positive. */
struct nt_map *nt_map_new(int n_sm, int n_line, unsigned parts);
void nt_map_free(struct nt_map *m);

/* Add a part to an existing map (no-op if present; PROBE is ignored, as
 * by nt_map_new()).  0 or -1 on ENOMEM. */
int nt_map_add_parts(struct nt_map *m, int n_line, unsigned parts);

/* Deep copy. */
struct nt_map *nt_map_dup(const struct nt_map *m);

static inline double *nt_map_at(double *mat, const struct nt_map *m, int sm, int line)
{
	return &mat[(size_t)sm * (size_t)m->n_line + (size_t)line];
}

/* Summary statistics of the chain map over the measured SMs. */
struct nt_map_summary {
	int measured;		/* SMs with a value */
	double min, max, mean, median;
	int argmin, argmax;
	double spread_pct;	/* (max - min) / min * 100 */
	double mean_gap;	/* mean over all pairs of SMs i < j of |chain[i] - chain[j]|
				 * (the L40 paper's "mean gap"); NAN below two SMs */
	double noise_median, noise_max;	/* NAN when no noise part */
};
void nt_map_summarize(const struct nt_map *m, struct nt_map_summary *s);

/* Median of n doubles, ignoring NANs (the array is not modified);
 * NAN when none. */
double nt_median(const double *v, int n);

/* The noise floor of SM s when maps a and b are compared (map diff,
 * stability): the larger of their noise at s, never below NT_MAP_MIN_FLOOR;
 * NT_MAP_DEFAULT_FLOOR when neither has a noise value there. */
#define NT_MAP_MIN_FLOOR 0.05		/* cycles */
#define NT_MAP_DEFAULT_FLOOR 0.25	/* cycles */
double nt_map_noise_floor(const struct nt_map *a, const struct nt_map *b, int s);

#endif
