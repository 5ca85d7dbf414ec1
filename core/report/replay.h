/*
 * replay.h - block-dispatch replay of one launch, and its counterfactuals.
 *
 * A launch ran its blocks on n_sm SMs, each holding up to `slots` blocks
 * at once (the occupancy).  The replay dispatches the same blocks again
 * on that model and gives the makespan; feeding it the measured
 * durations must give back the measured makespan (its error is the
 * credibility of everything else), and changing who runs where gives
 * the counterfactuals the report prints.
 *
 * Duration model.  A block b measured on SM m(b) for dur(b) ns would take
 *
 *	d(b, s) = base(b) + slope * lat[s],  base(b) = dur(b) - slope * lat[m(b)]
 *
 * on SM s: slope is ns per cycle of L2 latency (the attribution fit),
 * lat[] the map's chain latency per SM in cycles.  With slope 0, d(b, s)
 * is the measured duration wherever b goes.
 *
 * Policies (all dispatch to "slots"; a slot is (sm, k), k < slots; at
 * time 0 every slot is free; a slot runs its blocks back to back):
 *
 *   measured	slope 0; blocks in linear block-id order (the order of the
 *		input), each to the slot that becomes free first; ties go
 *		to the lowest k, then the lowest SM (breadth first: block i
 *		< n_sm of the first wave goes to SM i, as the hardware
 *		spreads blocks over SMs before stacking them).
 *   hardware	the same dispatch with the slope model: d(b, s) above.
 *   uniform	the same dispatch, every SM at the mean latency over SMs:
 *		d = base(b) + slope * mean(lat).
 *   aware	LPT with speeds: blocks sorted by base(b) descending (ties:
 *		lower block id first), each to the slot that would finish it
 *		earliest, argmin over slots of free(slot) + d(b, sm(slot)),
 *		ties as above.  Since d(b, s) - base(b) depends on s only,
 *		that slot is the same for every b: a heap keyed on
 *		free + slope * lat[sm] finds it in O(log slots).
 *   lpt_blind	the same order as aware, each block to the slot that
 *		becomes free first, map ignored (then run at d(b, s)).
 *   greedy	linear block-id order (no reordering), each block to the
 *		slot that would finish it earliest, as aware does.  With
 *		slope 0 it is the hardware replay exactly.
 *
 * LPT also wins by reordering alone, whatever the map: on the real
 * multi-wave PyTorch launches (slope 0) it beats the in-order dispatch
 * by 2-18%.  So "recoverable" is split: reorder = hardware - lpt_blind
 * (no map needed), placement = lpt_blind - aware (what the map adds);
 * greedy_recoverable = hardware - greedy is a placement-only figure that
 * is 0 for a kernel with no latency slope.
 *
 * Derived figures (percentages are of hardware_ns, the modelled launch;
 * nothing is clamped: a negative value means the counterfactual is
 * worse, and is reported as such):
 *   lost = hardware - uniform	time slow SMs cost ("lost to slow SMs");
 *   recoverable = hardware - aware	what the placement-aware schedule
 *		wins = reorder + placement (below).
 *
 * Caveat: d(b, s) ignores co-residency.  With slots above what the
 * launch really ran at once, aware and greedy may stack blocks on the
 * fastest SM's slots (allowed by the occupancy, but a latency-bound
 * block may slow down when it shares the SM): pass the observed slots
 * when that matters.
 *
 * Persistent-kernel counterfactuals.  The policies above move whole
 * blocks.  A persistent (grid-stride) kernel can instead move *work*:
 * its grid is one block per slot and the blocks split the work among
 * them.  With the same total work, pooled over every slot of the GPU:
 *   omega(b)  = base(b) + slope * mean(lat)	block b at the average SM
 *   W         = sum of omega(b)			the work, in ns at the average SM
 *   c         = mean over blocks of base(b)	the part of a block that does not
 *						scale with latency
 *   rho[s]    = (c + slope * lat[s]) / (c + slope * mean(lat))
 *						time per unit of work on SM s,
 *						relative to the average SM
 *   res[s]    = how much slower SM s ran than rho[s] says (residual
 *		factors, below; 1 when nothing tells)
 *   even	every slot the same share W / (n_sm * slots), so the SM
 *		slowest in fact finishes last:
 *		even_ns = W / (n_sm * slots) * max over s of rho[s] * res[s]
 *   split	shares in proportion to SM speed by the map, 1 / rho, so
 *		every slot would finish together if the map were all; the SM
 *		most behind it finishes last:
 *		split_ns = W / (slots * sum over SMs of 1 / rho) * max res
 * and rebalance = even - split (what the map adds to a persistent
 * kernel: equal shares to shares by speed), quantisation = hardware -
 * even (what recasting the grid as an even persistent kernel changes:
 * the tail of a grid of 1.1 waves, say; about 0, the blocks' own spread,
 * for a grid that already is one even wave; negative where the hardware's
 * dispatch already gave fast SMs more blocks), persist = hardware - split
 * = quantisation + rebalance.  Pooled work has no block-to-block noise,
 * so for a launch that already is one even wave, rebalance (not persist)
 * is the prediction for its map-aware persistent version.  At slope 0
 * every rho is 1: rebalance is 0.  SMs with no block still count (a
 * persistent kernel uses every SM).  When c + slope * lat[s] is not
 * positive on some SM (only blocks of no duration get there) these six
 * figures are NAN.
 *
 * Residual factors.  SMs differ by more than the map's latency says: on
 * the validation chase (GPU-443e086d) the SMs' times spread 0.6% about
 * the fit, the same SMs in every launch, and a version split by the map
 * ended when the SM furthest behind it did, 1.3% after the pooled
 * model's split (docs/validation.md: 3.21% gained where 4.12% was
 * predicted, now 2.85%).  For a launch of at most one wave (an SM's
 * blocks ran side by side all along), res[s] = q(s) / mean over SMs,
 * q(s) the mean over SM s's blocks of dur(b) / (c + slope * lat[s]),
 * shrunk towards 1 by how much of the SMs' spread their blocks' own
 * spread explains (one-way random effects: lambda = sys / (sys +
 * within / k(s)), replay.c's residuals()).  1 everywhere for launches of
 * more waves (an SM's mean then is the company its blocks kept, the
 * last wave's ran alone), where no SM has two blocks (nothing to tell a
 * slow SM from a long block), or where the blocks' spread explains all.
 *
 * Waves and tail (on the hardware replay), kept apart from placement:
 *   waves = n_blocks / (n_sm * slots); full_waves = floor(waves);
 *   last_wave_fill = the last wave's share of n_sm * slots, in (0, 1]
 *   (1 when the grid is a whole number of waves).
 *   tail: let cap = min(n_sm * slots, n_blocks), the most blocks that can
 *   ever run at once.  Once the last block has been dispatched, every
 *   block end leaves a slot idle for good; tail_start is the first such
 *   end (the first time, at or after the last dispatch, that fewer than
 *   cap blocks run), tail_ns = makespan - tail_start.  A grid of one
 *   partial wave therefore has its tail from its shortest block's end.
 *
 * Lifecycle: nothing to open or free; nt_replay_run() allocates its
 * scratch (O(n_blocks + n_sm * slots)) and frees it before returning.
 * nt_replay_read_launch() hands back an array for the caller to free().
 *
 * Complexity: the in-order policies are O(n log(n_sm * slots)), the LPT
 * ones add one O(n log n) sort; nt_replay_observed_slots() is
 * O(n log n).  Six replays at a nonzero slope, two at slope 0 (the
 * others are then equal by construction).  A million blocks on 132 x 16
 * slots at a slope: 0.55-0.75 s on the 2-core EPYC build machine.
 *
 * Times are int64 ns as the trace records them (GPU epoch times do not
 * fit a double exactly); the replay works in double ns from 0.
 */
#ifndef NT_REPLAY_H
#define NT_REPLAY_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct nt_trace;

/* One block as measured; arrays of them are in linear block-id order. */
struct nt_replay_block {
	int64_t t_start_ns, t_end_ns;
	int32_t sm;
};

struct nt_replay_input {
	int n_sm;			/* > 0 */
	int slots;			/* resident blocks per SM, > 0 */
	const struct nt_replay_block *blocks;	/* [n_blocks], dispatch order */
	size_t n_blocks;		/* > 0 */
	const double *lat;		/* [n_sm] cycles, finite; NULL only when slope == 0 */
	double slope;			/* ns per cycle, finite */
	/* The dispatch model (dispatch.h fits it from the records); zeros
	 * and NULL: every slot free at 0 and again the moment its block
	 * ends. */
	const double *sm_offset;	/* [n_sm] ns from the launch's start to the SM's first block; NULL: 0 */
	double turnaround_ns;		/* a slot takes its next block this long after its block ends */
	double gap_ns;			/* blocks that reuse a slot start at least this far apart */
};

/* The most blocks a replay takes: n_sm * slots is bounded too. */
#define NT_REPLAY_MAX_BLOCKS ((size_t)1 << 32)
#define NT_REPLAY_MAX_SLOTS (1 << 24)

struct nt_replay_result {
	size_t n_blocks;
	int n_sm, slots;

	double measured_ns;		/* last end - first start, from the records */
	double replay_ns;		/* the measured policy's makespan */
	double error_pct;		/* (replay - measured) / measured * 100 */
	/* The measured replay's block starts against the recorded ones:
	 * median and 90th percentile of |difference|, % of measured_ns. */
	double start_err_pct, start_err_p90_pct;

	double hardware_ns, uniform_ns, aware_ns, lpt_blind_ns, greedy_ns;
	double lost_ns, lost_pct;	/* hardware - uniform */
	double recoverable_ns, recoverable_pct;	/* hardware - aware */
	double reorder_ns, placement_ns;	/* hardware - lpt_blind, lpt_blind - aware */
	double greedy_recoverable_ns, greedy_recoverable_pct;	/* hardware - greedy */

	double even_ns, split_ns;	/* persistent kernel: equal shares, shares by speed */
	double rebalance_ns, rebalance_pct;	/* even - split */
	double quantisation_ns, quantisation_pct;	/* hardware - even */
	double persist_ns, persist_pct;	/* hardware - split */

	double waves;
	int64_t full_waves;
	double last_wave_fill;
	double tail_start_ns, tail_ns, tail_pct;
};

/* Replay in->blocks under every policy into *out.  -1 with a message on
 * bad input: n_sm or slots <= 0, too many slots or blocks, no blocks, a
 * block ending before it starts or starting before 0, an SM out of
 * range, a NAN or infinite slope or latency, lat NULL with a nonzero
 * slope, or a model that makes some d(b, s) negative; also when out of
 * memory. */
int nt_replay_run(const struct nt_replay_input *in, struct nt_replay_result *out, struct nt_err *err);

/* Relative time per unit of work on each SM, rho[s] above, for a kernel
 * whose blocks take intercept_ns + slope * lat[s] ns on SM s (its fit):
 * into rho[n_sm].  A persistent kernel gives SM s a share of its work in
 * proportion to 1 / rho[s].  -1 with a message when a value is not a
 * positive finite number (a fit that makes some SM take no time). */
int nt_replay_rho(const double *lat, int n_sm, double intercept_ns, double slope, double *rho,
		  struct nt_err *err);

/* The most blocks that ran at once on any one SM: for launches whose
 * occupancy is unknown.  Intervals are half-open [start, end): a block
 * starting when another ends on that SM does not overlap it.  0 for no
 * blocks; -1 on bad input (SM < 0, end < start) or out of memory. */
int nt_replay_observed_slots(const struct nt_replay_block *b, size_t n, int *slots, struct nt_err *err);

/* The block records of one launch of an open trace, in block-id order,
 * into a malloc'ed array *out of *n (NULL, 0 when it has none). */
int nt_replay_read_launch(struct nt_trace *t, int64_t launch, struct nt_replay_block **out, size_t *n,
			  struct nt_err *err);

#endif
