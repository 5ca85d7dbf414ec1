/*
 * fingerprint.h - which GPU is this?  Chain maps as fingerprints.
 *
 * `nucatrace fingerprint` measures a quick chain map of a GPU and looks
 * for the stored map it is closest to.  This module is the CPU part: a
 * distance between two chain maps, the nearest identity among candidate
 * maps (with "unknown" when nothing is close), and a leave-one-out
 * evaluation over maps whose UUIDs are known.  The UUID of the map being
 * identified is never read: only the candidates' UUIDs are, to group
 * several maps of one GPU into one identity.
 *
 * Distance (nt_fp_distance).  Over the SMs measured in both maps:
 *
 *   delta[i]  = a.chain[i] - b.chain[i]
 *   offset    = median over i of delta[i]   (a global clock / temperature
 *                                            shift, which says nothing of
 *                                            the chip; the median ignores
 *                                            the SMs that really differ)
 *   scale[i]  = max(a.noise[i], b.noise[i], NT_FP_NOISE_FLOOR)
 *   z[i]      = |delta[i] - offset| / scale[i]
 *   t[k]      = min(z[2k], z[2k+1])         (one value per TPC; an SM
 *                                            whose partner is unmeasured
 *                                            or missing counts alone)
 *   distance  = mean over TPCs of t[k]
 *
 * A missing noise part, or a NAN noise cell, counts as 0 (the floor
 * applies).  The distance is symmetric, 0 for a map against itself,
 * unchanged by adding a constant to every SM of either map, and a noisy
 * SM counts for little: its z is divided by its noise.
 *
 * Why these choices, measured on the 12 committed maps of 6 H200s
 * (tests/data/maps, two maps per GPU in separate processes; 6 same-GPU
 * and 60 different-GPU pairs; "ratio" is the smallest different-GPU
 * distance over the largest same-GPU one, the room for a threshold; all
 * with scale[i] as above and the floor at 0.05 unless said):
 *   - The floor.  The in-process noise (per-SM medians 0.006-0.023
 *     cycle) underestimates the change between separate runs: GPU
 *     d81de1c0's two maps differ by more than 3x noise on 13 SMs (up to
 *     0.244 cycle).  0.05 cycle is the low end of the run-to-run change
 *     the reference probes saw (PAPER.md: 0.05-0.24).  With it the mean
 *     of z gives ratio 0.698 -> 11.60 (16.6x); with a floor of 0.01 the
 *     same-GPU pairs spread (max 1.83).
 *   - Not the median of z.  Different GPUs often differ on a minority of
 *     SMs (d81de1c0 vs af5e0b1a: median |delta - offset| 0.02 cycle, but
 *     12 SMs, six whole TPCs, differ by 4.4-7.9 cycles), so the median
 *     of z overlaps: same-GPU max 0.37, different-GPU min 0.37 (1.0x).  A 25% trimmed mean
 *     gives 3.7x and a 5% one 11.8x: trimming throws away the few SMs that
 *     tell chips apart.  Not the maximum either (4.2x): one glitching SM
 *     decides it.
 *   - The mean over TPCs of the smaller z of the two SMs.  On the H200 the
 *     two SMs of a TPC have the same latency, and chips differ by whole
 *     TPCs (PAPER.md; also in these maps: the SMs where d81de1c0's runs
 *     differ come in pairs 0/1, 32/33, 48/49, 124-131).  Taking the
 *     smaller of the pair ignores a glitch on one SM at no cost to a real
 *     difference.  Ratio 0.524 -> 11.40 (21.8x), the best of the
 *     statistics tried.
 *
 * Signature (nt_fp_signature).  The distance above is fine-grained, and
 * what it sees is not all chip: a chain map also moves by up to ~0.7
 * cycle per SM with where in physical memory the probe's chain buffer
 * landed (measured 2026-12-01 on GPU-c9b1521b: a quick map against a
 * full calibration of the same GPU in the same minute, distance 5.0; a
 * quick map taken while another process held 20 GiB, 5.5), a pattern
 * over groups of SMs that no offset removes.  Different chips differ on
 * whole TPCs by 4-8 cycles.  So the signature of a pair of maps is the
 * number of TPCs k whose t'[k] = min(|delta[2k] - offset|,
 * |delta[2k+1] - offset|) exceeds NT_FP_SIG_CYCLES (2 cycles): 0 for
 * every pair of maps of one GPU seen (largest t' 0.64 cycle, placement
 * included), at least 5 for every pair of GPUs that differ at all.  GPUs
 * whose maps differ on no TPC share a signature: GPU-a0094aaf,
 * GPU-af5e0b1a and GPU-ec165f43 do (the first two agree within 0.07
 * cycle everywhere, as one GPU measured twice does).
 *
 * Matching (nt_fp_match).  Candidates whose SM count differs from the
 * map's are skipped (another GPU model).  Candidates of one UUID form one
 * identity, with the figures of its closest map.  The identities whose
 * signature difference is at most the threshold (NT_FP_SIG_MATCH TPCs by
 * default, room for a glitching TPC below the 5 that separate chips)
 * match; none matching is "unknown".  Among those that match, the answer
 * is the nearest by the fine distance, and `shared` says how many
 * identities matched: 1 is an identification by the chip's signature
 * (confidence 1); more means the signature cannot tell them apart, and
 * the pick rests on the fine distance alone (confidence 1 - best /
 * second), which is only meaningful between maps measured the same way
 * (the same probe allocations on an otherwise idle GPU; calib.c sizes its
 * buffers alike for quick and full maps to that end).
 */
#ifndef NT_FINGERPRINT_H
#define NT_FINGERPRINT_H

#include "util/err.h"
#include "map/map.h"

#define NT_FP_NOISE_FLOOR 0.05		/* cycles; see above */
#define NT_FP_SIG_CYCLES 2.0		/* a TPC differs beyond this; see above */
#define NT_FP_SIG_MATCH 2		/* differing TPCs still the same signature */

/* The distance of a and b in *d.  -1 when their SM counts differ (the
 * message names both UUIDs and counts) or no SM is measured in both. */
int nt_fp_distance(const struct nt_map *a, const struct nt_map *b, double *d, struct nt_err *err);

/* How many TPCs of a and b differ by more than NT_FP_SIG_CYCLES after the
 * offset, in *differ.  -1 as nt_fp_distance(). */
int nt_fp_signature(const struct nt_map *a, const struct nt_map *b, int *differ, struct nt_err *err);

/*
 * The nearest identities of a map among candidates.  best and second
 * index cands[]: the closest map of the nearest and of the second-nearest
 * identity (by UUID); -1 when there is none.  best is set also when the
 * answer is "unknown", so that a front end can say what came closest.
 */
struct nt_fp_match {
	int best, second;
	double best_d, second_d;	/* fine distances; NAN when there is no such candidate */
	int best_sig, second_sig;	/* differing TPCs; -1 likewise */
	int shared;			/* identities matching the signature (0 when unknown) */
	double confidence;		/* 0..1, see above; 0 when unknown */
	int unknown;			/* no candidate, or best_sig > threshold */
	int skipped;			/* candidates of another SM count */
	int threshold;			/* the one used */
};

/* Match m against cands[0..n-1] (NULL entries are skipped).  threshold
 * < 0 means NT_FP_SIG_MATCH.  No usable candidate is not an error:
 * unknown = 1, best = -1.  -1 when a distance fails (no SM measured in
 * both) or out of memory. */
int nt_fp_match(const struct nt_map *m, const struct nt_map *const *cands, int n, int threshold,
		struct nt_fp_match *out, struct nt_err *err);

/*
 * Leave-one-out evaluation (`nucatrace fingerprint --eval`): each map is
 * matched against all the other maps, and the result compared with its
 * UUID, which is the ground truth.  Identities are the distinct UUIDs in
 * order of first appearance.  A map counts as
 *   correct  when it is matched to its own identity, or comes out unknown
 *            while no other map of its GPU is there (nothing to find),
 *   wrong    when it is matched to another identity,
 *   unknown  when it comes out unknown although a map of its GPU is there.
 * confusion[t * (n_ids + 1) + p] counts maps of identity t predicted as
 * identity p, with p = n_ids for "unknown".  dist[i * n + j] is the
 * fine distance of maps i and j (NAN when their SM counts differ),
 * sig[i * n + j] their signature difference (-1 then).  The same/diff
 * ranges are over pairs i < j of the same / different UUIDs (NAN, -1
 * when there is no such pair).  At the signature level a map counts as
 * right (sig_right) when the identities it matched include its own, or
 * it matched none and has no twin; in_shared counts the maps whose
 * signature matched several identities, shared_right those of them the
 * fine distance then got right.
 */
struct nt_fp_eval {
	int n;
	int n_ids;
	char (*ids)[NT_UUID_LEN];	/* [n_ids] */
	int *truth;			/* [n] identity of each map */
	int *predicted;			/* [n] identity, n_ids for unknown */
	double *best_d;			/* [n] distance to the nearest other identity's map */
	double *confidence;		/* [n] */
	int *confusion;			/* [n_ids * (n_ids + 1)] */
	double *dist;			/* [n * n] */
	int *sig;			/* [n * n] */
	int *shared;			/* [n] identities matching each map's signature */
	int correct, wrong, unknown;
	int sig_right, in_shared, shared_right;
	double same_min, same_max, diff_min, diff_max;
	int same_sig_max, diff_sig_min;
	int threshold;
};

/* 0, or -1 (n < 1, a NULL map, a failing distance, out of memory).  Free
 * with nt_fp_eval_free() in either case. */
int nt_fp_eval(const struct nt_map *const *maps, int n, int threshold, struct nt_fp_eval *ev,
	       struct nt_err *err);
void nt_fp_eval_free(struct nt_fp_eval *ev);

#endif
