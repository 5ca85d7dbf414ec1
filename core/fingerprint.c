/* Chain maps as GPU fingerprints: distance, matching, evaluation
 * (fingerprint.h has the definitions and the numbers behind them). */
#include "fingerprint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_fp_distance(const struct nt_map *a, const struct nt_map *b, double *d, struct nt_err *err)
{
	int n, used = 0, tpcs = 0, ret = -1;
	double *delta = NULL, offset, sum = 0;

	if (!a || !b || !d)
		return nt_err_set(err, "fingerprint distance: no map");
	if (a->n_sm != b->n_sm)
		return nt_err_set(err, "cannot compare maps of different SM counts: %s has %d SMs, %s has %d",
				  a->gpu.uuid, a->n_sm, b->gpu.uuid, b->n_sm);
	n = a->n_sm;
	delta = malloc(sizeof(*delta) * (size_t)(n > 0 ? n : 1));
	if (!delta) {
		nt_err_set(err, "fingerprint distance: out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		delta[i] = isnan(a->chain[i]) || isnan(b->chain[i]) ? NAN : a->chain[i] - b->chain[i];
		used += !isnan(delta[i]);
	}
	if (!used) {
		nt_err_set(err, "cannot compare %s and %s: no SM is measured in both maps", a->gpu.uuid,
			   b->gpu.uuid);
		goto out;
	}
	offset = nt_median(delta, n);
	if (isnan(offset)) {
		nt_err_set(err, "fingerprint distance: out of memory");
		goto out;
	}
	/* delta becomes z in place: |delta - offset| / scale. */
	for (int i = 0; i < n; i++) {
		double s = NT_FP_NOISE_FLOOR;

		if (isnan(delta[i]))
			continue;
		if (a->noise && a->noise[i] > s)
			s = a->noise[i];
		if (b->noise && b->noise[i] > s)
			s = b->noise[i];
		delta[i] = fabs(delta[i] - offset) / s;
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
	ret = 0;
out:
	free(delta);
	return ret;
}

/*
 * The nearest and second-nearest identity among n candidates, given the
 * distance to each (NAN: not a candidate) and their UUIDs.  Only the
 * candidates' UUIDs are read, never the identified map's.
 */
static void select_match(const double *d, const char *const *uuid, int n, double threshold,
			 struct nt_fp_match *out)
{
	double alt;

	out->best = out->second = -1;
	out->best_d = out->second_d = NAN;
	out->confidence = 0;
	out->unknown = 1;
	out->threshold = threshold;
	for (int j = 0; j < n; j++)
		if (!isnan(d[j]) && (out->best < 0 || d[j] < out->best_d)) {
			out->best = j;
			out->best_d = d[j];
		}
	if (out->best < 0)
		return;
	for (int j = 0; j < n; j++)
		if (!isnan(d[j]) && strcmp(uuid[j], uuid[out->best]) &&
		    (out->second < 0 || d[j] < out->second_d)) {
			out->second = j;
			out->second_d = d[j];
		}
	out->unknown = !(out->best_d <= threshold);
	if (out->unknown)
		return;
	alt = out->second >= 0 && out->second_d < threshold ? out->second_d : threshold;
	out->confidence = alt > 0 ? fmax(0, 1 - out->best_d / alt) : 0;
}

int nt_fp_match(const struct nt_map *m, const struct nt_map *const *cands, int n, double threshold,
		struct nt_fp_match *out, struct nt_err *err)
{
	double *d = NULL;
	const char **uuid = NULL;
	int ret = -1;

	if (!m || !out || n < 0 || (n > 0 && !cands))
		return nt_err_set(err, "fingerprint match: bad arguments");
	if (!(threshold > 0))
		threshold = NT_FP_UNKNOWN_THRESHOLD;
	d = malloc(sizeof(*d) * (size_t)(n ? n : 1));
	uuid = malloc(sizeof(*uuid) * (size_t)(n ? n : 1));
	if (!d || !uuid) {
		nt_err_set(err, "fingerprint match: out of memory");
		goto out;
	}
	out->skipped = 0;
	for (int j = 0; j < n; j++) {
		d[j] = NAN;
		uuid[j] = cands[j] ? cands[j]->gpu.uuid : "";
		if (!cands[j])
			continue;
		if (cands[j]->n_sm != m->n_sm) {
			out->skipped++;
			continue;
		}
		if (nt_fp_distance(m, cands[j], &d[j], err))
			goto out;
	}
	{
		int skipped = out->skipped;

		select_match(d, uuid, n, threshold, out);
		out->skipped = skipped;
	}
	ret = 0;
out:
	free(d);
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

int nt_fp_eval(const struct nt_map *const *maps, int n, double threshold, struct nt_fp_eval *ev,
	       struct nt_err *err)
{
	const char **uuid = NULL;
	int ret = -1;

	memset(ev, 0, sizeof(*ev));
	ev->same_min = ev->same_max = ev->diff_min = ev->diff_max = NAN;
	ev->threshold = threshold > 0 ? threshold : NT_FP_UNKNOWN_THRESHOLD;
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
	uuid = calloc((size_t)n, sizeof(*uuid));
	if (!ev->ids || !ev->truth || !ev->predicted || !ev->best_d || !ev->confidence || !ev->dist ||
	    !uuid) {
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
		for (int j = i + 1; j < n; j++) {
			double d = NAN;

			if (maps[i]->n_sm == maps[j]->n_sm && nt_fp_distance(maps[i], maps[j], &d, err))
				goto out;
			ev->dist[(size_t)i * n + j] = ev->dist[(size_t)j * n + i] = d;
			if (ev->truth[i] == ev->truth[j])
				range_add(&ev->same_min, &ev->same_max, d);
			else
				range_add(&ev->diff_min, &ev->diff_max, d);
		}
	}

	for (int i = 0; i < n; i++) {
		double *row = &ev->dist[(size_t)i * n], self = row[i];
		struct nt_fp_match mt;
		int twin = 0, p;

		row[i] = NAN;	/* leave map i out */
		select_match(row, uuid, n, ev->threshold, &mt);
		row[i] = self;
		p = mt.unknown ? ev->n_ids : ev->truth[mt.best];
		ev->predicted[i] = p;
		ev->best_d[i] = mt.best_d;
		ev->confidence[i] = mt.confidence;
		ev->confusion[ev->truth[i] * (ev->n_ids + 1) + p]++;
		for (int j = 0; j < n; j++)
			twin |= j != i && ev->truth[j] == ev->truth[i];
		if (p == ev->truth[i] || (p == ev->n_ids && !twin))
			ev->correct++;
		else if (p == ev->n_ids)
			ev->unknown++;
		else
			ev->wrong++;
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
	memset(ev, 0, sizeof(*ev));
}
