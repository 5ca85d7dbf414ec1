/* Chain maps as GPU fingerprints: distance, matching, evaluation
 * (fingerprint.h has the definitions and the numbers behind them). */
#include "analysis/fingerprint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |a - b - offset| per SM, offset the median difference, in a new array
 * of a->n_sm (NAN where either map lacks the SM); NULL with a message. */
static double *residuals(const struct nt_map *a, const struct nt_map *b, struct nt_err *err)
{
	double *delta, offset;
	int n, used = 0;

	if (!a || !b)
		return nt_err_set(err, "fingerprint: no map"), NULL;
	if (a->n_sm != b->n_sm)
		return nt_err_set(err, "cannot compare maps of different SM counts: %s has %d SMs, %s has %d",
				  a->gpu.uuid, a->n_sm, b->gpu.uuid, b->n_sm), NULL;
	n = a->n_sm;
	delta = malloc(sizeof(*delta) * (size_t)(n > 0 ? n : 1));
	if (!delta)
		return nt_err_set(err, "fingerprint: out of memory"), NULL;
	for (int i = 0; i < n; i++) {
		delta[i] = isnan(a->chain[i]) || isnan(b->chain[i]) ? NAN : a->chain[i] - b->chain[i];
		used += !isnan(delta[i]);
	}
	offset = used ? nt_median(delta, n) : NAN;
	if (isnan(offset)) {
		nt_err_set(err, used ? "fingerprint: out of memory"
				     : "cannot compare %s and %s: no SM is measured in both maps",
			   a->gpu.uuid, b->gpu.uuid);
		free(delta);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		delta[i] = fabs(delta[i] - offset);
	return delta;
}

int nt_fp_distance(const struct nt_map *a, const struct nt_map *b, double *d, struct nt_err *err)
{
	int n, tpcs = 0;
	double *delta, sum = 0;

	if (!d)
		return nt_err_set(err, "fingerprint distance: no result");
	if (!(delta = residuals(a, b, err)))
		return -1;
	n = a->n_sm;
	/* delta becomes z in place: |delta - offset| / scale. */
	for (int i = 0; i < n; i++) {
		double s = NT_FP_NOISE_FLOOR;

		if (isnan(delta[i]))
			continue;
		if (a->noise && a->noise[i] > s)
			s = a->noise[i];
		if (b->noise && b->noise[i] > s)
			s = b->noise[i];
		delta[i] /= s;
	}
	/* One value per TPC: a real difference moves both of its SMs, a
	 * glitch usually one. */
	for (int k = 0; 2 * k < n; k++) {
		double z0 = delta[2 * k], z1 = 2 * k + 1 < n ? delta[2 * k + 1] : NAN;

		if (isnan(z0) && isnan(z1))
			continue;
		sum += isnan(z0) ? z1 : isnan(z1) ? z0 : fmin(z0, z1);
		tpcs++;
	}
	*d = sum / tpcs;
	free(delta);
	return 0;
}

int nt_fp_signature(const struct nt_map *a, const struct nt_map *b, int *differ, struct nt_err *err)
{
	double *r;

	if (!differ)
		return nt_err_set(err, "fingerprint signature: no result");
	if (!(r = residuals(a, b, err)))
		return -1;
	*differ = 0;
	for (int k = 0; 2 * k < a->n_sm; k++) {
		double z0 = r[2 * k], z1 = 2 * k + 1 < a->n_sm ? r[2 * k + 1] : NAN;
		double t = isnan(z0) ? z1 : isnan(z1) ? z0 : fmin(z0, z1);

		*differ += t > NT_FP_SIG_CYCLES;
	}
	free(r);
	return 0;
}

/*
 * The answer among n candidates, given each one's signature difference
 * sig[j] (-1: not a candidate) and fine distance d[j], and their UUIDs.
 * An identity's figures are those of its closest map.  Only the
 * candidates' UUIDs are read, never the identified map's.
 */
/* Is candidate j nearer than k (k < 0: none yet)?  Within the signature
 * threshold beats outside it; within it, the smaller fine distance;
 * outside it, fewer differing TPCs, then the fine distance (for "what
 * came closest"). */
static int nearer(const int *sig, const double *d, int j, int k, int threshold)
{
	int in_j, in_k;

	if (k < 0)
		return 1;
	in_j = sig[j] <= threshold;
	in_k = sig[k] <= threshold;
	if (in_j != in_k)
		return in_j;
	if (in_j || sig[j] == sig[k])
		return d[j] < d[k];
	return sig[j] < sig[k];
}

static void select_match(const int *sig, const double *d, const char *const *uuid, int n, int threshold,
			 struct nt_fp_match *out)
{
	out->best = out->second = -1;
	out->best_d = out->second_d = NAN;
	out->best_sig = out->second_sig = -1;
	out->shared = 0;
	out->confidence = 0;
	out->unknown = 1;
	out->threshold = threshold;
	for (int j = 0; j < n; j++)
		if (sig[j] >= 0 && nearer(sig, d, j, out->best, threshold))
			out->best = j;
	if (out->best < 0)
		return;
	/* second: the nearest other identity, by the same order. */
	for (int j = 0; j < n; j++)
		if (sig[j] >= 0 && strcmp(uuid[j], uuid[out->best]) && nearer(sig, d, j, out->second, threshold))
			out->second = j;
	out->best_d = d[out->best];
	out->best_sig = sig[out->best];
	if (out->second >= 0) {
		out->second_d = d[out->second];
		out->second_sig = sig[out->second];
	}
	out->unknown = out->best_sig > threshold;
	if (out->unknown)
		return;
	/* identities sharing the signature */
	for (int j = 0; j < n; j++) {
		int first = 1;

		if (sig[j] < 0 || sig[j] > threshold)
			continue;
		for (int i = 0; i < j && first; i++)
			first = !(sig[i] >= 0 && sig[i] <= threshold && !strcmp(uuid[i], uuid[j]));
		out->shared += first;
	}
	if (out->shared == 1)
		out->confidence = 1;
	else
		out->confidence = out->second_d > 0 ? fmax(0, 1 - out->best_d / out->second_d) : 0;
}

int nt_fp_match(const struct nt_map *m, const struct nt_map *const *cands, int n, int threshold,
		struct nt_fp_match *out, struct nt_err *err)
{
	double *d = NULL;
	int *sig = NULL;
	const char **uuid = NULL;
	int ret = -1;

	if (!m || !out || n < 0 || (n > 0 && !cands))
		return nt_err_set(err, "fingerprint match: bad arguments");
	if (threshold < 0)
		threshold = NT_FP_SIG_MATCH;
	d = malloc(sizeof(*d) * (size_t)(n ? n : 1));
	sig = malloc(sizeof(*sig) * (size_t)(n ? n : 1));
	uuid = malloc(sizeof(*uuid) * (size_t)(n ? n : 1));
	if (!d || !sig || !uuid) {
		nt_err_set(err, "fingerprint match: out of memory");
		goto out;
	}
	out->skipped = 0;
	for (int j = 0; j < n; j++) {
		d[j] = NAN;
		sig[j] = -1;
		uuid[j] = cands[j] ? cands[j]->gpu.uuid : "";
		if (!cands[j])
			continue;
		if (cands[j]->n_sm != m->n_sm) {
			out->skipped++;
			continue;
		}
		if (nt_fp_distance(m, cands[j], &d[j], err) || nt_fp_signature(m, cands[j], &sig[j], err))
			goto out;
	}
	{
		int skipped = out->skipped;

		select_match(sig, d, uuid, n, threshold, out);
		out->skipped = skipped;
	}
	ret = 0;
out:
	free(d);
	free(sig);
	free(uuid);
	return ret;
}

static void range_add(double *lo, double *hi, double v)
{
	if (isnan(v))
		return;
	if (isnan(*lo) || v < *lo)
		*lo = v;
	if (isnan(*hi) || v > *hi)
		*hi = v;
}

static int identity_of(struct nt_fp_eval *ev, const char *uuid)
{
	for (int t = 0; t < ev->n_ids; t++)
		if (!strcmp(ev->ids[t], uuid))
			return t;
	snprintf(ev->ids[ev->n_ids], NT_UUID_LEN, "%s", uuid);
	return ev->n_ids++;
}

int nt_fp_eval(const struct nt_map *const *maps, int n, int threshold, struct nt_fp_eval *ev,
	       struct nt_err *err)
{
	const char **uuid = NULL;
	int ret = -1;

	memset(ev, 0, sizeof(*ev));
	ev->same_min = ev->same_max = ev->diff_min = ev->diff_max = NAN;
	ev->same_sig_max = ev->diff_sig_min = -1;
	ev->threshold = threshold >= 0 ? threshold : NT_FP_SIG_MATCH;
	if (n < 1 || !maps)
		return nt_err_set(err, "fingerprint evaluation: no maps");
	for (int i = 0; i < n; i++)
		if (!maps[i])
			return nt_err_set(err, "fingerprint evaluation: map %d is missing", i);
	ev->n = n;
	ev->ids = calloc((size_t)n, sizeof(*ev->ids));
	ev->truth = calloc((size_t)n, sizeof(*ev->truth));
	ev->predicted = calloc((size_t)n, sizeof(*ev->predicted));
	ev->best_d = calloc((size_t)n, sizeof(*ev->best_d));
	ev->confidence = calloc((size_t)n, sizeof(*ev->confidence));
	ev->dist = calloc((size_t)n * (size_t)n, sizeof(*ev->dist));
	ev->sig = calloc((size_t)n * (size_t)n, sizeof(*ev->sig));
	ev->shared = calloc((size_t)n, sizeof(*ev->shared));
	uuid = calloc((size_t)n, sizeof(*uuid));
	if (!ev->ids || !ev->truth || !ev->predicted || !ev->best_d || !ev->confidence || !ev->dist ||
	    !ev->sig || !ev->shared || !uuid) {
		nt_err_set(err, "fingerprint evaluation: out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		uuid[i] = maps[i]->gpu.uuid;
		ev->truth[i] = identity_of(ev, uuid[i]);
	}
	ev->confusion = calloc((size_t)ev->n_ids * (size_t)(ev->n_ids + 1), sizeof(*ev->confusion));
	if (!ev->confusion) {
		nt_err_set(err, "fingerprint evaluation: out of memory");
		goto out;
	}

	/* The distance is symmetric: compute each pair once. */
	for (int i = 0; i < n; i++) {
		ev->dist[(size_t)i * n + i] = 0;
		ev->sig[(size_t)i * n + i] = 0;
		for (int j = i + 1; j < n; j++) {
			double d = NAN;
			int g = -1;

			if (maps[i]->n_sm == maps[j]->n_sm &&
			    (nt_fp_distance(maps[i], maps[j], &d, err) || nt_fp_signature(maps[i], maps[j], &g, err)))
				goto out;
			ev->dist[(size_t)i * n + j] = ev->dist[(size_t)j * n + i] = d;
			ev->sig[(size_t)i * n + j] = ev->sig[(size_t)j * n + i] = g;
			if (g < 0)
				continue;
			if (ev->truth[i] == ev->truth[j]) {
				range_add(&ev->same_min, &ev->same_max, d);
				ev->same_sig_max = g > ev->same_sig_max ? g : ev->same_sig_max;
			} else {
				range_add(&ev->diff_min, &ev->diff_max, d);
				if (ev->diff_sig_min < 0 || g < ev->diff_sig_min)
					ev->diff_sig_min = g;
			}
		}
	}

	for (int i = 0; i < n; i++) {
		double *row = &ev->dist[(size_t)i * n];
		int *srow = &ev->sig[(size_t)i * n], self = srow[i];
		struct nt_fp_match mt;
		int twin = 0, p, in_set = 0;

		srow[i] = -1;	/* leave map i out */
		select_match(srow, row, uuid, n, ev->threshold, &mt);
		for (int j = 0; j < n; j++)
			in_set |= srow[j] >= 0 && srow[j] <= ev->threshold && ev->truth[j] == ev->truth[i];
		srow[i] = self;
		p = mt.unknown ? ev->n_ids : ev->truth[mt.best];
		ev->predicted[i] = p;
		ev->best_d[i] = mt.best_d;
		ev->confidence[i] = mt.confidence;
		ev->shared[i] = mt.unknown ? 0 : mt.shared;
		ev->confusion[ev->truth[i] * (ev->n_ids + 1) + p]++;
		for (int j = 0; j < n; j++)
			twin |= j != i && ev->truth[j] == ev->truth[i];
		if (p == ev->truth[i] || (p == ev->n_ids && !twin))
			ev->correct++;
		else if (p == ev->n_ids)
			ev->unknown++;
		else
			ev->wrong++;
		if (!mt.unknown && mt.shared > 1) {
			ev->in_shared++;
			ev->shared_right += p == ev->truth[i];
		}
		ev->sig_right += in_set || (mt.unknown && !twin);
	}
	ret = 0;
out:
	free(uuid);
	return ret;
}

void nt_fp_eval_free(struct nt_fp_eval *ev)
{
	if (!ev)
		return;
	free(ev->ids);
	free(ev->truth);
	free(ev->predicted);
	free(ev->best_d);
	free(ev->confidence);
	free(ev->confusion);
	free(ev->dist);
	free(ev->sig);
	free(ev->shared);
	memset(ev, 0, sizeof(*ev));
}
