/* Block ends of entry-only launches from their SMs' later starts (infer.h). */
#include "report/infer.h"

#include <stdlib.h>
#include <string.h>

struct ord {
	const int32_t *sm;
	const int64_t *c0;
};

static _Thread_local struct ord by;

/* By SM, then by the SM's clock at the start, then by block id. */
static int cmp_start(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (by.sm[i] != by.sm[j])
		return by.sm[i] < by.sm[j] ? -1 : 1;
	if (by.c0[i] != by.c0[j])
		return by.c0[i] < by.c0[j] ? -1 : 1;
	return (i > j) - (i < j);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* a + b for a, b >= 0, at most INT64_MAX (a trace's times are input) */
static int64_t add_sat(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* b - a, or 0 when b comes first (both >= 0) */
static int64_t gap(int64_t a, int64_t b)
{
	return b > a ? b - a : 0;
}

/* The median of v[0..n) (sorted in place); n > 0. */
static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* The blocks' indices by SM, in the order of each SM's clock (a new
 * array), or NULL with err set (an SM out of range, out of memory); n > 0. */
static size_t *in_sm_order(size_t n, const int32_t *sm, const int64_t *c0, int n_sm, struct nt_err *err)
{
	size_t *idx = malloc(n * sizeof(*idx));

	if (!idx) {
		nt_err_set(err, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (sm[i] < 0 || sm[i] >= n_sm) {
			nt_err_set(err, "entry-only blocks: block %zu on SM %d of %d", i, sm[i], n_sm);
			free(idx);
			return NULL;
		}
		idx[i] = i;
	}
	by = (struct ord){ sm, c0 };
	qsort(idx, n, sizeof(*idx), cmp_start);
	return idx;
}

/* The end of the run of idx[i..] on one SM. */
static size_t sm_run(const size_t *idx, size_t n, size_t i, const int32_t *sm)
{
	size_t j = i;

	while (j < n && sm[idx[j]] == sm[idx[i]])
		j++;
	return j;
}

int nt_infer_slots(size_t n, const int32_t *sm, const int64_t *c0, int n_sm, int most, struct nt_err *err)
{
	size_t *idx, i, j, used = 0;
	int64_t *k;
	int slots = 1;

	if (!n)
		return 1;
	if (!(idx = in_sm_order(n, sm, c0, n_sm, err)))
		return -1;
	if (!(k = malloc(n * sizeof(*k)))) {
		free(idx);
		return nt_err_set(err, "out of memory");
	}
	for (i = 0; i < n; i = j) {
		int64_t widest = -1;
		size_t at = 0;

		j = sm_run(idx, n, i, sm);
		if (j - i < 2)
			continue;
		for (size_t q = i; q + 1 < j && q - i < (size_t)most; q++)
			if (c0[idx[q + 1]] - c0[idx[q]] > widest) {
				widest = c0[idx[q + 1]] - c0[idx[q]];
				at = q - i + 1;
			}
		k[used++] = (int64_t)at;
	}
	if (used)
		slots = (int)median(k, used);
	free(idx);
	free(k);
	return slots > 0 ? slots : 1;
}

int nt_infer_ends(size_t n, const int32_t *sm, const int64_t *t0, const int64_t *c0, int n_sm, int slots,
		  int64_t *t1, int64_t *c1, unsigned char *how, struct nt_infer_stats *st, struct nt_err *err)
{
	size_t *idx = NULL, i, j;
	int64_t *dt = NULL, *dc = NULL, all_t = -1, all_c = -1;
	size_t n_all = 0;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (slots < 1 || n_sm < 1)
		return nt_err_set(err, "entry-only blocks: %d slots on %d SMs", slots, n_sm);
	if (!n)
		return 0;
	if (!(idx = in_sm_order(n, sm, c0, n_sm, err)))
		return -1;
	dt = malloc(n * sizeof(*dt));
	dc = malloc(n * sizeof(*dc));
	if (!dt || !dc) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	/* the launch's inferred block times, for SMs that have none */
	for (i = 0; i < n; i = j) {
		j = sm_run(idx, n, i, sm);
		for (size_t k = i; k + (size_t)slots < j; k++, n_all++) {
			dt[n_all] = gap(t0[idx[k]], t0[idx[k + slots]]);
			dc[n_all] = gap(c0[idx[k]], c0[idx[k + slots]]);
		}
	}
	if (n_all) {
		all_t = median(dt, n_all);
		all_c = median(dc, n_all);
	}
	for (i = 0; i < n; i = j) {
		size_t m = 0;
		int64_t med_t = all_t, med_c = all_c;

		st->sms++;
		j = sm_run(idx, n, i, sm);
		for (size_t k = i; k + (size_t)slots < j; k++) {
			size_t a = idx[k], b = idx[k + slots];

			/* a trace whose timer disagrees with the SM's clock (hostile
			 * input) gets no negative block */
			t1[a] = t0[a] + gap(t0[a], t0[b]);
			c1[a] = c0[a] + gap(c0[a], c0[b]);
			how[a] = NT_END_INFERRED;
			dt[m] = t1[a] - t0[a];
			dc[m++] = c1[a] - c0[a];
		}
		if (m) {
			st->sms_inferred++;
			st->inferred += m;
			med_t = median(dt, m);
			med_c = median(dc, m);
		}
		for (size_t k = i + m; k < j; k++) {
			size_t a = idx[k];

			how[a] = med_t >= 0 ? NT_END_CENSORED : NT_END_UNKNOWN;
			t1[a] = add_sat(t0[a], med_t >= 0 ? med_t : 0);
			c1[a] = add_sat(c0[a], med_c >= 0 ? med_c : 0);
			if (med_t >= 0)
				st->censored++;
			else
				st->unknown++;
		}
	}
	ret = 0;
out:
	free(idx);
	free(dt);
	free(dc);
	return ret;
}
