/*
 * infer.h - block ends of an entry-only launch (NUCATRACE_BLOCKS=entry:
 * only each block's SM and start were recorded, kernels/blockrec.h).
 *
 * An SM starts a block when one of its slots is free: once its first
 * `slots` blocks are resident, each later start marks the end of a block
 * before it.  With the SM's blocks in the order they started (by its own
 * %clock64, exact on one SM), block i is taken to have ended when block
 * i + slots started (first in, first out: exact when an SM's blocks take
 * about as long as each other; in any order the SM's total block time is
 * the same, so its mean block time is exact either way: Little's law).
 * What comes out includes the slot's turnaround (from one block's end to
 * the next one's start, a few hundred ns or less natively), which a
 * measured end does not.
 *
 * The last `slots` blocks of each SM have no later start: their ends are
 * *censored*.  They are given their SM's median inferred block time (the
 * launch's, when the SM has none), for figures that need an end (the
 * replay, the timeline), and are kept out of the per-SM fits.  A launch
 * in which no SM ran more than `slots` blocks (one wave) has no inferred
 * block at all: its block times cannot be known from starts.
 *
 * The model fails when other kernels share the SM (concurrent streams:
 * a start may then follow another kernel's block end) and when the
 * slots are fewer than the occupancy calculator says.
 */
#ifndef NT_INFER_H
#define NT_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The most blocks an SM can hold (32 on Volta to Hopper). */
#define NT_INFER_MAX_SLOTS 64

/* How a block's end was obtained. */
enum nt_block_end {
	NT_END_MEASURED = 0,	/* recorded at the block's exit */
	NT_END_INFERRED,	/* the start that took its slot */
	NT_END_CENSORED,	/* its SM's (or launch's) median inferred time */
	NT_END_UNKNOWN,		/* one wave: none inferred anywhere (end = start) */
};

struct nt_infer_stats {
	size_t inferred, censored, unknown;	/* blocks by how */
	int sms, sms_inferred;			/* SMs that ran blocks; ... with an inferred one */
};

/* Fill t1[], c1[] and how[] for the n blocks of one launch from their
 * SMs (0 <= sm < n_sm), starts t0[] (ns) and c0[] (their SM's cycles),
 * `slots` resident blocks per SM (at least 1).  0, or -1 with err set
 * (bad arguments, out of memory). */
int nt_infer_ends(size_t n, const int32_t *sm, const int64_t *t0, const int64_t *c0, int n_sm, int slots,
		  int64_t *t1, int64_t *c1, unsigned char *how, struct nt_infer_stats *st, struct nt_err *err);

/* Slots per SM for a launch whose occupancy is not known (a graph node's
 * dynamic shared memory is not seen, for one), from its starts alone: an
 * SM's first wave comes in one burst, and its first refill only once a
 * block has run, so on each SM the widest of its first `most` gaps
 * between starts (by its clock) closes its first wave; the median over
 * the SMs with two blocks or more.  1 when no SM has two. */
int nt_infer_slots(size_t n, const int32_t *sm, const int64_t *c0, int n_sm, int most, struct nt_err *err);

#endif
