/*
 * structure.h - the paper's tests for structure in a latency map.
 *
 * Inputs are either a per-SM vector v[n] indexed by smid (the chain map,
 * or the a(sm) term of a fit) or the SM x line matrix (row-major, n_sm
 * rows of n_line).  NAN means "not measured" everywhere and is skipped,
 * never treated as a value.  Nothing here allocates except
 * nt_groups_cluster(), whose result is freed with nt_groups_free().
 *
 *   nt_pearson        correlation of two vectors, over pairs with both
 *                     values present.
 *   nt_tpc_pairs      are SMs 2k and 2k+1 (one TPC) the same within tol?
 *                     On H200 they are identical to noise; a pair that
 *                     differs hints that smids were renumbered around a
 *                     disabled unit.
 *   nt_tpc_shuffle    the same values with whole TPCs moved at random: a
 *                     map that carries no physics, to calibrate a test
 *                     against.
 *   nt_groups_cluster GPC-like groups: SMs whose rows of the line matrix
 *                     move together.
 *   nt_halves_best    two-fold symmetry: the paper split the L40's SM
 *                     term at smid 72 into halves of 72 and 70 that
 *                     correlate at r = 0.999.
 */
#ifndef NT_STRUCTURE_H
#define NT_STRUCTURE_H

#include "map/map.h"
#include "util/err.h"

#include <stdint.h>

/* Pearson r over the i where x[i] and y[i] are both not NAN; NAN when
 * fewer than 3 such pairs or either side has no variance. */
double nt_pearson(const double *x, const double *y, int n);

/*
 * TPC pairs: SMs 2k and 2k+1 for 2k+1 < n; a pair counts when both are
 * measured, and is "equal" when |v[2k] - v[2k+1]| <= tol.  max_diff and
 * median_diff are over the counted pairs (NAN when there are none).
 * Returns 0, or -1 when v is NULL or n < 0.
 */
struct nt_tpc {
	int pairs;		/* pairs with both SMs measured */
	int equal;		/* of those, |diff| <= tol */
	double tol;
	double max_diff, median_diff;
};
int nt_tpc_pairs(const double *v, int n, double tol, struct nt_tpc *out);

/*
 * The tolerance to use with nt_tpc_pairs(): max(0.5, 3 x median(noise))
 * cycles, where noise[n] is the map's noise part (|run 1 - run 2| per
 * SM).  Three times the typical run-to-run change keeps noisy pairs
 * equal; the 0.5-cycle floor covers maps whose noise is far below one
 * cycle (H200: 0.05-0.24), where a TPC split shows up as 5-8 cycles.
 * noise may be NULL or all NAN: then 0.5.
 */
double nt_tpc_default_tol(const double *noise, int n);

/*
 * A TPC-preserving shuffle of a per-SM vector, into out[n] (not v): the
 * pairs (2k, 2k+1) whose two values are both measured are permuted at
 * random among themselves, each pair moving whole and in order (SM 2k's
 * value stays with SM 2k+1's); a pair with a NAN, and a last SM without
 * a partner, stay where they are.  On an H200 the two SMs of a TPC have
 * the same latency, so shuffling single SMs would make maps no GPU has.
 * *state is a seed (util/rng.h), advanced: the same seed gives the same
 * shuffle.  n at most NT_MAP_MAX_SM; nothing is allocated.
 */
void nt_tpc_shuffle(const double *v, int n, uint64_t *state, double *out);

/* The shuffle as a permutation of the movable pairs, for a caller that
 * reads a few of the map's SMs many times over (the attribution's shuffle
 * test) without copying it: init finds v's movable pairs once; each next
 * draws from *state the shuffle nt_tpc_shuffle() (made of these) would,
 * and SM s's value in it is nt_tpc_perm_value() (s < NT_MAP_MAX_SM). */
struct nt_tpc_perm {
	int m;				/* movable pairs */
	int place[NT_MAP_MAX_SM / 2];	/* [m] their pair numbers, in smid order */
	int pair[NT_MAP_MAX_SM / 2];	/* [m] the pair whose values place[k] takes */
	int slot[NT_MAP_MAX_SM];	/* SM s: its pair's k among the places, or -1 */
};
void nt_tpc_perm_init(const double *v, int n, struct nt_tpc_perm *p);
void nt_tpc_perm_next(struct nt_tpc_perm *p, uint64_t *state);
static inline double nt_tpc_perm_value(const struct nt_tpc_perm *p, const double *v, int s)
{
	int k = p->slot[s];

	return k < 0 ? v[s] : v[2 * p->pair[k] + (s & 1)];
}

/*
 * GPC-like groups by average-linkage agglomerative clustering of the SMs'
 * rows.  Rows are compared after removing each line's mean over the SMs
 * (the line term b(line) that all SMs share, which would otherwise make
 * every pair correlate), then by Pearson r (which also centers each row).
 * Clusters merge while the best mean r between two clusters is >= min_r.
 * Pairs whose r is NAN (a row with no variance) count as r = 0.
 *
 * Rows with fewer than 3 measured cells are skipped: group -1.  Groups
 * are numbered 0.. in order of their smallest smid.  within_r[g] is the
 * mean r over the pairs inside group g, 1 for a group of one SM.
 * 0, or -1 with err set on bad arguments, no usable row, or no memory.
 */
struct nt_groups {
	int n;			/* n_sm */
	int n_groups;
	int *group;		/* [n], -1 for skipped rows */
	double min_r;
	double *within_r;	/* [n_groups] */
};
int nt_groups_cluster(const double *mat, int n_sm, int n_line, double min_r,
		      struct nt_groups *g, struct nt_err *err);
void nt_groups_free(struct nt_groups *g);

/*
 * Best two-fold symmetry of a per-SM vector.  For each split s in
 * [n/4, 3n/4] with len = min(s, n - s), correlate v[i] with v[s + i]
 * (shifted: the second half repeats the first) and v[s - 1 - i] with
 * v[s + i] (mirrored: it repeats it backwards), i < len.  The highest r
 * wins; ties go to the smaller split, shifted before mirrored.  A
 * candidate needs at least 8 pairs with both values present.
 * Returns 0, or -1 when no candidate qualifies (out->split = -1, r NAN).
 */
struct nt_halves {
	int split;		/* first smid of the second half */
	int len;		/* SMs compared from each half */
	int mirrored;		/* 1: second half runs backwards */
	double r;
};
int nt_halves_best(const double *v, int n, struct nt_halves *out);

#endif
