/*
 * dispatch.h - how the GPU handed out one launch's blocks, fitted from
 * the launch's own records, so that the replay (replay.h) hands them out
 * the same way.
 *
 * What the records of real launches show (H200; docs/report.md has the
 * numbers):
 *   - the first wave starts within a few hundred ns, but not all at once:
 *     some SMs take their first block later than others;
 *   - a slot whose block has ended does not take its next block at once.
 *     On instrumented launches the gap is 1.5-4 us (the block's exit
 *     writes its record to host memory behind a system-scope fence after
 *     its end time is taken, kernels/patch.cu), up to ~10 us when
 *     hundreds of blocks end together;
 *   - then the refills come at a limited rate.
 * A replay without these runs multi-wave launches of short blocks 10-28%
 * short of their measured makespans.
 *
 * The model: SM s takes its first blocks offset[s] ns after the launch's
 * first block start; a slot whose block ends at e takes its next block at
 * max(e + turnaround, the previous refill + gap).  Fitted:
 *
 *   offset[s]     the SM's first recorded start, from the launch's first;
 *                 an SM without blocks takes the median of the others.
 *   turnaround, gap
 *                 from the refills, the blocks after the first wave: the
 *                 launch's starts sorted, past the first n_sm x slots (S),
 *                 against its ends sorted, as many (E).  The k-th refill
 *                 is modelled r_k = max(E_k + turnaround, r_{k-1} + gap),
 *                 and the pair with the least mean |r_k - S_k| is taken:
 *                 turnaround among the quantiles 0, 5%, ..., 60% of the
 *                 slot gaps the records show (on each SM, its (slots+k)-th
 *                 start after its k-th end; negative ones count as 0), gap
 *                 by golden-section search in [0, the refills' mean
 *                 spacing], and gap 0.  At most NT_DISPATCH_FIT_POINTS
 *                 refills enter (an even subsample; gap scaled by its
 *                 stride).
 * A launch of at most one wave has no refills: turnaround = gap = 0.
 *
 * Fitted to start times, not to the makespan: the replay's makespan,
 * and its block starts against the recorded ones (replay.h,
 * start_err_pct), check the model.  The instrumentation's part of the
 * turnaround is not the program's own: the report sets the replay's
 * figures against native time (report.h).
 *
 * Cost: O(n) (radix sorts) plus O(NT_DISPATCH_FIT_POINTS) per candidate,
 * about 0.3 ms for 10,000 blocks.
 */
#ifndef NT_DISPATCH_H
#define NT_DISPATCH_H

#include "report/replay.h"

#define NT_DISPATCH_FIT_POINTS 1024

struct nt_dispatch {
	double turnaround_ns, gap_ns;
	size_t refills;		/* blocks after the first wave (0: nothing fitted) */
	double fit_err_ns;	/* mean |modelled - recorded| start of the refills fitted */
};

/* Fit the n blocks b (block-id order; checked as nt_replay_run does) on
 * n_sm SMs of `slots` slots: offset[n_sm] and *out.  -1 with err set on
 * bad input (an SM out of range, more than 2048 SMs, a block ending
 * before it starts, a launch longer than 2^52 ns) or out of memory. */
int nt_dispatch_fit(const struct nt_replay_block *b, size_t n, int n_sm, int slots, double *offset,
		    struct nt_dispatch *out, struct nt_err *err);

/* The same in two steps, for a caller that needs the slots the records
 * show before it knows `slots`: a launch's times sorted once serve both
 * (sorting them again for nt_replay_observed_slots was a twentieth of
 * the report's time). */
struct nt_dispatch_prep {
	size_t n;
	int n_sm;
	int64_t t0;		/* the first start */
	uint64_t *ks, *ke;	/* [n] starts, ends: (time from t0) << 11 | SM, ascending */
	size_t *at;		/* SM s's times are by_s/by_e[at[s] .. at[s + 1]) */
	uint64_t *by_s, *by_e;	/* [n] each SM's starts, ends from t0, ascending */
	int observed_slots;	/* the most blocks at once on one SM, as nt_replay_observed_slots */
};

/* Check and sort b as nt_dispatch_fit does; -1 with err set as it does
 * (then nothing to free). */
int nt_dispatch_prepare(const struct nt_replay_block *b, size_t n, int n_sm, struct nt_dispatch_prep *p,
			struct nt_err *err);
int nt_dispatch_fit_prepared(const struct nt_dispatch_prep *p, int slots, double *offset, struct nt_dispatch *out,
			     struct nt_err *err);
void nt_dispatch_prep_free(struct nt_dispatch_prep *p);

#endif
