/*
 * stability.h - does a GPU's latency map stay put under load?  The CPU
 * part of `calibrate --stability` (docs/stability.md): when to measure
 * the maps, and what a series of maps says.
 *
 * The run has three phases: idle maps (idle-before), a sustained
 * full-GPU load paused briefly for each map (load), idle maps again while
 * the GPU cools (idle-after).  Every map is a chain map with its noise
 * floor (the chain map twice, back to back).
 *
 * Schedule (nt_stab_plan), for T seconds in all:
 *   idle-before  min(max(0.15 T, 10 s), 120 s); 2 maps, 3 from 20 s, 4
 *                from 60 s, evenly spaced, the first at 0 and the last at
 *                the end of the phase;
 *   load         what is left, at least 5 s; a map every "interval",
 *                interval = min(max(load / 8, 10 s), 60 s), so
 *                round(load / interval) maps, at least 2 and at most
 *                NT_STAB_MAX_LOAD_MAPS, evenly spaced with the last at
 *                the end of the load (the hottest state);
 *   idle-after   min(max(0.20 T, 15 s), 300 s); 3 maps, 4 from 30 s, 5
 *                from 120 s, 6 from 300 s, at geometric times (the last
 *                at the end, each earlier one at half the time of the
 *                next), because cooling is fastest at first.
 * Three minutes give 3 + 8 + 4 maps (idle 27 s, load 117 s, a map every
 * 14.6 s, idle 36 s); one hour 4 + 53 + 6.  Times are seconds since the
 * start; a map that comes due while the previous one is still running
 * starts when it ends, so a run lasts T plus the last map.
 *
 * Analysis (nt_stab_analyze).  Maps whose noise floor says the GPU was
 * busy (median noise above NT_STAB_BUSY_NOISE, as for `calibrate`) are
 * shown but left out of everything else.  The reference is the per-SM
 * median of the idle-before maps (each less its median offset from the
 * first of them), its noise per SM the median of their in-map noise, so
 * that one odd idle map is not the reference: on GPU-443e086d
 * (2026-12-01) the run's first map, right after the clock warm-up,
 * sat up to 0.48 cycle off the next two, which agreed within 0.04, on
 * the SMs the load maps later moved (idle_spread reports how far the
 * idle maps spread).  With a single idle-before map it is the
 * reference, as it is.  For every map (the idle-before ones too, when
 * there are several), over the SMs measured in both:
 *   delta[s]   = map[s] - ref[s]
 *   offset     = median of delta                (a global shift)
 *   resid[s]   = delta[s] - offset
 *   floor[s]   = max(ref.noise[s], map.noise[s], NT_STAB_MIN_FLOOR)
 *                (ref.noise includes the idle spread above)
 *                (NT_STAB_DEFAULT_FLOOR when neither map has a noise part)
 *   beyond     = SMs with |resid[s]| > NT_STAB_FACTOR * floor[s]
 *   r          = Pearson correlation of map and ref
 *   scale, intercept: map ~ intercept + scale * ref, a Theil-Sen fit
 *                (median of the slopes over SM pairs at least
 *                NT_STAB_TS_MIN_DX cycles apart, robust to a few SMs that
 *                moved); affine residual = map - intercept - scale * ref.
 * Why a scale: latencies are in SM cycles, and a different SM clock under
 * load at an unchanged L2 clock stretches or shrinks every latency by the
 * clock ratio, which widens or narrows the map's spread (24 cycles on the
 * H200) without any SM moving relative to the others.
 *
 * An SM moved when its residual is beyond noise in at least
 * NT_STAB_MIN_REPEATS of the compared maps (in the one map, when only one
 * is compared): a single excursion is a glitch (one SM of twelve H200
 * maps showed a 0.67-cycle noise once) and is listed apart.  Verdict:
 *   stable   no SM moved (offset residual);
 *   uniform  SMs moved only before the scale is removed: the whole map
 *            stretched, the per-SM pattern held;
 *   moved    SMs moved also after offset and scale are removed;
 *   too few  no map to compare with the reference.
 *
 * Lifecycle: nt_stab_analyze() fills a struct nt_stab_result that
 * nt_stab_free() releases (also after a failure).
 */
#ifndef NT_STABILITY_H
#define NT_STABILITY_H

#include <stddef.h>

#include "util/err.h"
#include "map/map.h"

enum nt_stab_phase { NT_STAB_IDLE_BEFORE, NT_STAB_LOAD, NT_STAB_IDLE_AFTER, NT_STAB_N_PHASES };

/* "idle-before", "load", "idle-after"; "?" for anything else. */
const char *nt_stab_phase_name(int phase);

#define NT_STAB_MIN_SECONDS 30.0
#define NT_STAB_MAX_SECONDS 86400.0
#define NT_STAB_MAX_LOAD_MAPS 70
#define NT_STAB_MAX_MAPS (4 + NT_STAB_MAX_LOAD_MAPS + 6)

#define NT_STAB_FACTOR 3.0		/* beyond: |resid| > FACTOR x floor (as map diff) */
#define NT_STAB_MIN_FLOOR NT_MAP_MIN_FLOOR	/* cycles (as map diff and fingerprint) */
#define NT_STAB_DEFAULT_FLOOR NT_MAP_DEFAULT_FLOOR	/* maps without a noise part (as map diff) */
#define NT_STAB_BUSY_NOISE 1.0		/* median noise of a busy GPU's map (as calibrate) */
#define NT_STAB_MIN_REPEATS 2		/* maps an SM must be beyond in to have moved */
#define NT_STAB_TS_MIN_DX 1.0		/* cycles between two SMs for a Theil-Sen slope */

struct nt_stab_slot {
	int phase;
	double at;		/* seconds since the start */
};

struct nt_stab_plan {
	double seconds;		/* asked for */
	double before_s, load_s, after_s;	/* load runs from before_s to before_s + load_s */
	double load_every_s;	/* between load maps */
	int n;
	int per_phase[NT_STAB_N_PHASES];
	struct nt_stab_slot slot[NT_STAB_MAX_MAPS];	/* in time order */
};

/* The schedule above for `seconds` (NT_STAB_MIN_SECONDS ..
 * NT_STAB_MAX_SECONDS); -1 and a message outside that range. */
int nt_stab_plan(double seconds, struct nt_stab_plan *p, struct nt_err *err);

/* One measured map and what was seen around it. */
struct nt_stab_input {
	const struct nt_map *m;	/* chain, and noise for the floor */
	int phase;
	double t;		/* seconds since the start */
	double load_mhz;	/* SM clock of the load right before the map, NAN if none */
	double clock_lo_mhz, clock_hi_mhz;	/* least and most of the SMs in the map, or NAN */
	double temp_c, power_w;	/* at the map (NVML), NAN if unknown */
};

struct nt_stab_row {
	double mean, noise_median, noise_max;
	int busy;		/* median noise > NT_STAB_BUSY_NOISE: left out */
	int compared;		/* neither busy nor the reference */
	/* Against the reference; NAN (-1, 0) for the reference itself: */
	double offset, r, scale, intercept;
	double max_abs;		/* max |resid| */
	int max_sm;
	int beyond;
	double max_affine;	/* max |affine residual| */
	int max_affine_sm;
	int beyond_affine;
	double *resid;		/* [n_sm] resid, NAN where unmeasured; NULL for the reference */
};

struct nt_stab_phase_sum {
	int maps, busy, compared;
	double mean;		/* mean of the maps' means (busy maps left out) */
	double clock_min, clock_max;		/* in-kernel SM clock of the maps */
	double load_clock_min, load_clock_max;	/* of the load before them */
	double temp_min, temp_max, power_max;
	/* Over the compared maps; NAN (-1, 0) when none: */
	double offset_min, offset_max, scale_min, scale_max, r_min, max_abs;
	int max_sm, beyond_max;
};

/* An SM beyond noise in some compared map (by the residual the verdict
 * uses: affine for "moved", offset otherwise). */
struct nt_stab_sm {
	int sm;
	int maps;		/* compared maps where it is beyond */
	double worst;		/* its residual of largest |value| over those, signed */
	int worst_map;		/* index of that map */
	unsigned phases;	/* bit p: beyond in a map of phase p */
};

enum nt_stab_verdict { NT_STAB_STABLE, NT_STAB_UNIFORM, NT_STAB_MOVED, NT_STAB_TOO_FEW };

struct nt_stab_result {
	int n, n_sm;
	int ref;		/* index of the first idle-before map left in */
	int ref_maps;		/* idle-before maps in the reference's median */
	double idle_spread;	/* widest |idle-before map - median| over SMs, cycles */
	int idle_spread_sm;
	struct nt_map *refm;	/* the reference (owned) */
	int busy, compared;	/* maps */
	struct nt_stab_row *row;	/* [n] */
	struct nt_stab_phase_sum phase[NT_STAB_N_PHASES];
	int verdict;
	int repeats;		/* maps an SM had to be beyond in: min(NT_STAB_MIN_REPEATS, compared) */
	/* SMs that moved (verdict moved: affine residual; else offset), and
	 * SMs beyond in fewer maps (glitches), each by |worst| descending. */
	int n_moved, n_glitch;
	struct nt_stab_sm *moved, *glitch;
	int n_moved_offset;	/* SMs that moved by the offset residual */
	double offset_min, offset_max, scale_min, scale_max;	/* over the compared maps */
	double clock_min, clock_max;	/* in-kernel SM clock over the maps left in */
};

/* Analyze in[0..n-1] (in time order, all with the same SM count).  -1
 * and a message when n < 1, the SM counts differ, no idle-before map is
 * idle enough to be the reference, or out of memory. */
int nt_stab_analyze(const struct nt_stab_input *in, int n, struct nt_stab_result *r,
		    struct nt_err *err);
void nt_stab_free(struct nt_stab_result *r);

/* "stable", "uniform", "moved", "too_few" (the JSON spelling). */
const char *nt_stab_verdict_name(int verdict);

/* One line of at most len - 1 bytes that says what the verdict means,
 * with the numbers behind it. */
void nt_stab_verdict_text(const struct nt_stab_result *r, char *buf, size_t len);

#endif
