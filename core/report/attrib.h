/*
 * attrib.h - how one kernel's block time depends on its SM's L2 latency.
 *
 * The question a report asks of a kernel: do its blocks take longer on
 * the SMs the calibration map calls slow, by how much, and how sure are
 * we?  The caller gathers every traced block of one kernel (name and
 * launch configuration; any number of launches) as struct
 * nt_attrib_block, and hands them with the map's chain latencies
 * (map->chain: lat[sm] in SM cycles, NAN when not measured) to
 * nt_attrib_fit(), which fills a struct nt_kernel_fit.  Nothing is
 * allocated in it and nothing is printed.
 *
 * Method, and why:
 *
 *   1. Per-SM medians.  For each SM with a latency and at least
 *      NT_ATTRIB_MIN_BLOCKS blocks, the median block duration (ns, and
 *      cycles separately).  Latency is a property of the SM, so the SM is
 *      the unit of evidence; the median keeps one stalled or preempted
 *      block from moving its SM.  Blocks on other SMs (no latency, an SM
 *      outside the map, a single block) are left out of everything below.
 *   2. Theil-Sen slope of median duration against latency over those SMs:
 *      the median of the slopes through every pair of SMs of different
 *      latency (132 SMs: 8,646 pairs).  It ignores up to ~29% of wild
 *      SMs, where least squares follows them.  The intercept is the median
 *      of (median_i - slope * lat_i).
 *   3. A 95% percentile bootstrap over SMs: NT_ATTRIB_BOOT resamples of
 *      the SMs with replacement, the Theil-Sen slope of each, and the
 *      2.5% and 97.5% quantiles of those.  The generator has a fixed
 *      seed (NT_ATTRIB_SEED): same input, same output, byte for byte.
 *      A resample is a count per SM, and its slope is the weighted median
 *      of the pairwise slopes sorted once (weight count_i * count_j):
 *      O(pairs) per resample, a few ms for 132 SMs.
 *   4. R^2 of the least-squares line through the same SM medians (and
 *      that line's slope, ols_slope_ns, to compare with Theil-Sen): the
 *      share of the SM-to-SM spread of block time that latency explains.
 *      NAN when the medians do not vary at all.
 *
 *   5. A shuffle test (p_value): is block time related to this map more
 *      than to maps that carry no physics?  The statistic is the
 *      covariance of the SMs' latencies with the ranks of their median
 *      block times (ranks: a wild SM moves it no more than any other);
 *      its null distribution comes from the same latencies on the same
 *      TPC structure at random places (nt_tpc_shuffle: SM pairs 2k,
 *      2k+1 move together, as their latencies are equal on an H200).
 *      One-sided, for a positive relation: p_value is the share of
 *      shuffled maps whose statistic reaches the observed one, by Besag
 *      and Clifford's sequential rule: at most NT_ATTRIB_SHUFFLES
 *      shuffles (p >= 1 / (NT_ATTRIB_SHUFFLES + 1)), stopping early at
 *      the NT_ATTRIB_SHUFFLE_STOP-th shuffle that reaches it (p = STOP /
 *      shuffles), so a kernel with no relation costs a few dozen.  The
 *      seed is fixed (NT_ATTRIB_SHUFFLE_SEED).  A statistic that other
 *      maps reach as easily is no evidence of an L2 effect, whatever its
 *      slope; the report turns p-values into verdicts across its kernels
 *      (report.h: Benjamini-Hochberg).
 *
 * The ns fit is what a user loses; the cycle fit is beside it for
 * kernels whose SM clock moved during the run.
 *
 *   effect_ns   = slope_ns * (max - min latency over the SMs used): how
 *                 much longer a block runs on the slowest SM than on the
 *                 fastest, by the fit; effect_pct = 100 * effect_ns /
 *                 median_ns, the median duration of the blocks used.
 *                 Signed: a negative slope gives a negative effect.
 *   effect_lo_pct, effect_hi_pct: the same at slope_lo, slope_hi.
 *
 * Fewer than NT_ATTRIB_MIN_SM (8) usable SMs, latencies all equal, or
 * blocks of no duration (a median of 0 ns: effect_pct would be 0 / 0) is
 * not an error: fitted = 0, reason a sentence, the counts set and every
 * double NAN.
 *
 * The controlled fit (ctl_ns, ctl_cyc) is ordinary least squares over
 * the individual blocks used above:
 *
 *     duration = b0 + b_lat * lat[sm] + b_cores * coresident + b_wave * wave
 *
 * so a report can say whether crowding on the SM or the block's wave,
 * rather than the SM's latency, explains block time (and whether b_lat
 * survives them).  A regressor that does not vary over the blocks (one
 * wave, always four blocks per SM), or that the earlier ones already
 * determine, is dropped: its coef and se are NAN.  se is the classical
 * standard error; se_sm is clustered by SM (the sandwich estimator with
 * the usual G/(G-1) * (n-1)/(n-p) correction).  Blocks on one SM share
 * its latency, so the classical se of b_lat is far too small; use se_sm,
 * and the bootstrap CI for the verdict.
 *
 * Cost: O(n log n) in the blocks plus O(m^2 log m + NT_ATTRIB_BOOT * m^2)
 * in the m SMs used, and O(n_sm) per shuffle; 132 SMs take ~5 ms on one
 * core (mostly the bootstrap) plus ~40 ms for a kernel whose shuffles
 * run to the end (a strong relation), 1024 SMs would take ~0.6 s.
 */
#ifndef NT_ATTRIB_H
#define NT_ATTRIB_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define NT_ATTRIB_MIN_SM 8		/* usable SMs below which there is no fit */
#define NT_ATTRIB_MIN_BLOCKS 2		/* blocks an SM needs to count */
#define NT_ATTRIB_BOOT 400		/* bootstrap resamples */
#define NT_ATTRIB_SEED 0x6e75636174726163ULL	/* "nucatrac" */
#define NT_ATTRIB_SENSITIVE_PCT 1.0	/* effect_pct an L2-sensitive kernel shows at least */
#define NT_ATTRIB_SHUFFLES 99999	/* shuffled maps at most: p resolves 1e-5 */
#define NT_ATTRIB_SHUFFLE_STOP 20	/* ... fewer once this many reach the statistic */
#define NT_ATTRIB_SHUFFLE_SEED 0x73687566666c6531ULL	/* "shuffle1" */

/* One traced block of the kernel. */
struct nt_attrib_block {
	int32_t sm;		/* %smid; index into lat[] */
	int32_t wave;		/* wave index within its launch, >= 0 (nt_attrib_waves) */
	int32_t coresident;	/* other blocks of its launch on its SM at its
				 * midpoint, >= 0 (nt_attrib_coresidency) */
	int64_t launch;		/* the launch it belongs to (counted in n_launches) */
	double ns;		/* t_end_ns - t_start_ns */
	double cycles;		/* c_end - c_start */
	/* not used by the fit; the report's, for what else varies by SM */
	float pos;		/* its place in its launch's grid, 0..1 */
	float order;		/* its SM's place in its launch's first-wave dispatch, 0..1 */
};

/* Terms of the controlled fit, indices into coef/se/se_sm. */
enum { NT_CTL_ICPT, NT_CTL_LAT, NT_CTL_CORES, NT_CTL_WAVE, NT_CTL_TERMS };

struct nt_attrib_ols {
	int fitted;		/* 0: not computed (no fit, or fewer blocks than terms + 1) */
	int n;			/* blocks */
	int terms;		/* terms estimated, intercept included */
	double coef[NT_CTL_TERMS];	/* duration per cycle of latency / per block / per wave */
	double se[NT_CTL_TERMS];	/* classical */
	double se_sm[NT_CTL_TERMS];	/* clustered by SM */
	double r2;		/* over the blocks */
};

struct nt_kernel_fit {
	int fitted;		/* 1: the numbers below are set; 0: see reason */
	char reason[128];	/* why there is no fit, "" when fitted */

	int n_blocks;		/* blocks given */
	int n_blocks_used;	/* blocks on the SMs used */
	int n_launches;		/* distinct launches among the blocks given */
	int n_sm_used;		/* SMs in the fit */
	double lat_min, lat_max;	/* over the SMs used, cycles */
	double median_ns, median_cyc;	/* median duration of the blocks used */

	/* Theil-Sen over per-SM medians: ns of block time per cycle of latency */
	double slope_ns, slope_lo, slope_hi;	/* estimate and 95% bootstrap CI */
	double intercept_ns;	/* ns at latency 0 */
	double r2;		/* least-squares line through the SM medians (ns) */
	double ols_slope_ns;	/* that line's slope */
	/* the same in cycles of block time per cycle of latency */
	double slope_cyc, slope_cyc_lo, slope_cyc_hi;
	double intercept_cyc;
	double r2_cyc;

	double effect_ns, effect_cyc;	/* slope * (lat_max - lat_min) */
	double effect_pct;	/* 100 * effect_ns / median_ns */
	double effect_lo_pct, effect_hi_pct;	/* at slope_lo, slope_hi */
	double p_value;		/* the shuffle test, one-sided (5. above) */
	int shuffles;		/* shuffled maps it took */
	double rank_stat;	/* its statistic: sum of latency x centred rank */

	struct nt_attrib_ols ctl_ns, ctl_cyc;	/* the controlled fit */
};

/* Fit the n blocks b against lat[n_sm].  0 with *fit filled (possibly
 * with fitted = 0: not enough SMs); -1 with err set on bad arguments
 * (NULL arrays, n_sm outside 1..NT_MAP_MAX_SM, n above INT_MAX), a
 * duration that is negative or not finite, a negative wave or
 * coresident (each names the block's index), or out of memory.  A block
 * whose sm is outside 0..n_sm-1 is treated as on an unmeasured SM. */
int nt_attrib_fit(const struct nt_attrib_block *b, size_t n, const double *lat, int n_sm,
		  struct nt_kernel_fit *fit, struct nt_err *err);

/* Benjamini-Hochberg q-values of the m p-values p[] into q[m]: q_(i) =
 * min over j >= i of m p_(j) / j (sorted ascending, ties by index), at
 * most 1.  A hypothesis is rejected at a false discovery rate alpha when
 * its q <= alpha.  0, or -1 when out of memory. */
int nt_attrib_bh(const double *p, int m, double *q);

/* The Theil-Sen slope of y on x over m points (2. above) into *slope,
 * NAN when every x is the same.  -1 with err set when out of memory. */
int nt_attrib_theil_sen(const double *x, const double *y, int m, double *slope, struct nt_err *err);

/* The shuffle test (5. above) alone: y[j] the median block time of the
 * m SMs used, SM sm_of[j], against lat[n_sm] and TPC-shuffled copies of
 * it.  0 with *out set; -1 with err set when out of memory. */
struct nt_attrib_test {
	double statistic, p_value;
	int shuffles;
};
int nt_attrib_shuffle_test(const double *y, const int *sm_of, int m, const double *lat, int n_sm,
			   struct nt_attrib_test *out, struct nt_err *err);

/* Per-SM medians as the fit takes them (for a scatter plot): for each
 * sm in 0..n_sm-1, count[sm] blocks and the median ns and cycles of
 * them (NAN when count[sm] = 0).  Blocks outside 0..n_sm-1 are ignored.
 * Any output may be NULL.  0, or -1 with err set when out of memory or
 * on bad arguments. */
int nt_attrib_sm_medians(const struct nt_attrib_block *b, size_t n, int n_sm, int *count,
			 double *med_ns, double *med_cyc, struct nt_err *err);

/* Co-residency, for the blocks of ONE launch: out[i] = how many other
 * blocks j on the same SM were resident at block i's midpoint
 * m = start[i] + (end[i] - start[i]) / 2 (rounded down), resident meaning
 * start[j] <= m < end[j].  start/end are ns (or cycles: only blocks of
 * one SM are compared).  O(n log n).  -1 with err set when a block ends
 * before it starts (naming it) or out of memory. */
int nt_attrib_coresidency(const int32_t *sm, const int64_t *start, const int64_t *end, size_t n,
			  int32_t *out, struct nt_err *err);

/* Waves, for the blocks of ONE launch: out[i] = floor(rank of start[i]
 * among the n starts / slots), slots = SMs * resident blocks per SM (ties
 * ranked by index).  -1 with err set when slots < 1 or out of memory. */
int nt_attrib_waves(const int64_t *start, size_t n, int64_t slots, int32_t *out, struct nt_err *err);

#endif
