#include "report/dispatch.h"
#include "util/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SM_BITS 11	/* an SM in the low bits of a sort key */
#define MAX_REL_NS ((uint64_t)1 << 52)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* offset[] (dispatch.h): first starts per SM (each SM's starts are
 * sorted), the median for the others. */
static int offsets(const struct nt_dispatch_prep *p, double *offset)
{
	double *seen = malloc((size_t)p->n_sm * sizeof(*seen)), med;
	int m = 0;

	if (!seen)
		return -1;
	for (int s = 0; s < p->n_sm; s++) {
		offset[s] = p->at[s] < p->at[s + 1] ? (double)p->by_s[p->at[s]] : INFINITY;
		if (isfinite(offset[s]))
			seen[m++] = offset[s];
	}
	qsort(seen, m, sizeof(*seen), cmp_double);
	med = m ? seen[(m - 1) / 2] : 0;
	for (int s = 0; s < p->n_sm; s++)
		if (!isfinite(offset[s]))
			offset[s] = med;
	free(seen);
	return 0;
}

/* Keys (time from t0) << SM_BITS | sm, sorted: by time, then SM. */
static void time_keys(const struct nt_replay_block *b, size_t n, int64_t t0, int ends, uint64_t *key,
		      uint64_t *tmp)
{
	for (size_t i = 0; i < n; i++)
		key[i] = (uint64_t)((ends ? b[i].t_end_ns : b[i].t_start_ns) - t0) << SM_BITS |
			 (uint64_t)b[i].sm;
	nt_sort_u64(key, tmp, n);
}

/* Each SM's times in order, by a stable counting sort by SM of keys
 * sorted by time: p->at[], by_s[] and by_e[]. */
static void by_sm(struct nt_dispatch_prep *p)
{
	size_t *at = p->at, *pos = at + p->n_sm + 1;

	memset(at, 0, ((size_t)p->n_sm + 1) * sizeof(*at));
	for (size_t i = 0; i < p->n; i++)
		at[(p->ks[i] & ((1u << SM_BITS) - 1)) + 1]++;
	for (int s = 0; s < p->n_sm; s++)
		at[s + 1] += at[s];
	for (int pass = 0; pass < 2; pass++) {
		const uint64_t *k = pass ? p->ke : p->ks;
		uint64_t *out = pass ? p->by_e : p->by_s;

		memcpy(pos, at, ((size_t)p->n_sm + 1) * sizeof(*pos));
		for (size_t i = 0; i < p->n; i++)
			out[pos[k[i] & ((1u << SM_BITS) - 1)]++] = k[i] >> SM_BITS;
	}
}

/* The most blocks at once on one SM (nt_replay_observed_slots): each
 * SM's starts and ends merged, an end first at a tie ([start, end)). */
static int most_at_once(const struct nt_dispatch_prep *p)
{
	int most = 0;

	for (int s = 0; s < p->n_sm; s++) {
		size_t i = p->at[s], j = p->at[s], end = p->at[s + 1];
		int run = 0;

		while (i < end) {
			if (j < end && p->by_e[j] <= p->by_s[i]) {
				run--;
				j++;
			} else {
				run++;
				i++;
				most = run > most ? run : most;
			}
		}
	}
	return most;
}

/* The slot gaps the records show (dispatch.h), shifted by 2^63 to sort
 * as unsigned, into gap; their number. */
static size_t slot_gaps(const struct nt_dispatch_prep *p, int slots, uint64_t *gap)
{
	size_t g = 0;

	for (int s = 0; s < p->n_sm; s++)
		for (size_t k = 0; p->at[s] + slots + k < p->at[s + 1]; k++)
			gap[g++] = (p->by_s[p->at[s] + slots + k] - p->by_e[p->at[s] + k]) + ((uint64_t)1 << 63);
	return g;
}

/* The refills' fit error (sum of |r_j - S_j|) for one candidate. */
struct refills {
	const double *s, *e;	/* the subsample */
	size_t p;
	double stride;
};

static double fit_error(const struct refills *f, double turnaround, double gap)
{
	double r = -INFINITY, sum = 0;

	for (size_t j = 0; j < f->p; j++) {
		r = fmax(f->e[j] + turnaround, r + f->stride * gap);
		sum += fabs(f->s[j] - r);
	}
	return sum;
}

/* The best gap for a turnaround: golden-section search in [0, hi], and
 * 0; *err_out its error. */
static double best_gap(const struct refills *f, double turnaround, double hi, double *err_out)
{
	const double g = 0.6180339887498949;
	double lo = 0, a = hi - g * hi, c = g * hi;
	double fa = fit_error(f, turnaround, a), fc = fit_error(f, turnaround, c), mid, fm, f0;

	for (int it = 0; it < 24; it++) {
		if (fa <= fc) {
			hi = c;
			c = a;
			fc = fa;
			a = hi - g * (hi - lo);
			fa = fit_error(f, turnaround, a);
		} else {
			lo = a;
			a = c;
			fa = fc;
			c = lo + g * (hi - lo);
			fc = fit_error(f, turnaround, c);
		}
	}
	mid = 0.5 * (lo + hi);
	fm = fit_error(f, turnaround, mid);
	f0 = fit_error(f, turnaround, 0);
	*err_out = f0 <= fm ? f0 : fm;
	return f0 <= fm ? 0 : mid;
}

static int check(const struct nt_replay_block *b, size_t n, int n_sm, int64_t *t0, struct nt_err *err)
{
	int64_t t1;

	if (n_sm < 1 || n_sm > (1 << SM_BITS))
		return nt_err_set(err, "dispatch: %d SMs (1..%d)", n_sm, 1 << SM_BITS);
	*t0 = t1 = b[0].t_start_ns;
	for (size_t i = 0; i < n; i++) {
		if (b[i].sm < 0 || b[i].sm >= n_sm || b[i].t_end_ns < b[i].t_start_ns)
			return nt_err_set(err, "dispatch: block %zu: SM %d, %lld..%lld ns", i, b[i].sm,
					  (long long)b[i].t_start_ns, (long long)b[i].t_end_ns);
		*t0 = b[i].t_start_ns < *t0 ? b[i].t_start_ns : *t0;
		t1 = b[i].t_end_ns > t1 ? b[i].t_end_ns : t1;
	}
	if ((uint64_t)t1 - (uint64_t)*t0 >= MAX_REL_NS)
		return nt_err_set(err, "dispatch: a launch of %lld ns", (long long)(t1 - *t0));
	return 0;
}

void nt_dispatch_prep_free(struct nt_dispatch_prep *p)
{
	free(p->ks);
	free(p->ke);
	free(p->by_s);
	free(p->by_e);
	free(p->at);
	memset(p, 0, sizeof(*p));
}

int nt_dispatch_prepare(const struct nt_replay_block *b, size_t n, int n_sm, struct nt_dispatch_prep *p,
			struct nt_err *err)
{
	uint64_t *tmp;

	memset(p, 0, sizeof(*p));
	if (!b || !n)
		return nt_err_set(err, "dispatch: %zu blocks", n);
	if (check(b, n, n_sm, &p->t0, err))
		return -1;
	p->n = n;
	p->n_sm = n_sm;
	p->ks = malloc(n * sizeof(*p->ks));
	p->ke = malloc(n * sizeof(*p->ke));
	p->by_s = malloc(n * sizeof(*p->by_s));
	p->by_e = malloc(n * sizeof(*p->by_e));
	p->at = malloc(2 * ((size_t)n_sm + 1) * sizeof(*p->at));	/* and by_sm()'s scratch */
	tmp = malloc(n * sizeof(*tmp));
	if (!p->ks || !p->ke || !p->by_s || !p->by_e || !p->at || !tmp) {
		free(tmp);
		nt_dispatch_prep_free(p);
		return nt_err_set(err, "dispatch: out of memory for %zu blocks", n);
	}
	time_keys(b, n, p->t0, 0, p->ks, tmp);
	time_keys(b, n, p->t0, 1, p->ke, tmp);
	free(tmp);
	by_sm(p);
	p->observed_slots = most_at_once(p);
	return 0;
}

int nt_dispatch_fit_prepared(const struct nt_dispatch_prep *p, int slots, double *offset, struct nt_dispatch *out,
			     struct nt_err *err)
{
	uint64_t *gaps = NULL, *tmp = NULL;
	double *s = NULL, *e = NULL, hi, best = INFINITY, prev = -1;
	size_t n = p->n, n_slots = (size_t)p->n_sm * (size_t)(slots > 0 ? slots : 1), len, g, stride;
	struct refills f;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!n || slots < 1)
		return nt_err_set(err, "dispatch: %zu blocks, %d slots", n, slots);
	if (offsets(p, offset))
		return nt_err_set(err, "dispatch: out of memory");
	if (n <= n_slots)
		return 0;	/* one wave: nothing is refilled */
	len = n - n_slots;
	gaps = malloc(n * sizeof(*gaps));
	tmp = malloc(n * sizeof(*tmp));
	stride = (len + NT_DISPATCH_FIT_POINTS - 1) / NT_DISPATCH_FIT_POINTS;
	f.p = (len + stride - 1) / stride;
	s = malloc(f.p * sizeof(*s));
	e = malloc(f.p * sizeof(*e));
	if (!gaps || !tmp || !s || !e)
		goto oom;
	for (size_t j = 0; j < f.p; j++) {
		s[j] = (double)(p->ks[n_slots + j * stride] >> SM_BITS);
		e[j] = (double)(p->ke[j * stride] >> SM_BITS);
	}
	f.s = s;
	f.e = e;
	f.stride = (double)stride;
	hi = len > 1 ? (double)((p->ks[n - 1] >> SM_BITS) - (p->ks[n_slots] >> SM_BITS)) / (double)(len - 1) : 0;
	/* the slot gaps, sorted */
	g = slot_gaps(p, slots, gaps);
	nt_sort_u64(gaps, tmp, g);
	for (int q = 0; q <= 12; q++) {
		double turnaround = 0, ferr, gap;

		if (g) {
			int64_t v = (int64_t)(gaps[(size_t)((double)(g - 1) * q / 20.0)] - ((uint64_t)1 << 63));

			turnaround = v > 0 ? (double)v : 0;
		}
		if (q && turnaround == prev)
			continue;	/* the same candidate again */
		prev = turnaround;
		gap = best_gap(&f, turnaround, hi, &ferr);
		if (ferr < best) {
			best = ferr;
			out->turnaround_ns = turnaround;
			out->gap_ns = gap;
		}
	}
	out->refills = len;
	out->fit_err_ns = best / (double)f.p;
	ret = 0;
	goto out;
oom:
	nt_err_set(err, "dispatch: out of memory for %zu blocks", n);
out:
	free(gaps);
	free(tmp);
	free(s);
	free(e);
	return ret;
}

int nt_dispatch_fit(const struct nt_replay_block *b, size_t n, int n_sm, int slots, double *offset,
		    struct nt_dispatch *out, struct nt_err *err)
{
	struct nt_dispatch_prep p;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!b || !n || slots < 1)
		return nt_err_set(err, "dispatch: %zu blocks, %d slots", n, slots);
	if (nt_dispatch_prepare(b, n, n_sm, &p, err))
		return -1;
	ret = nt_dispatch_fit_prepared(&p, slots, offset, out, err);
	nt_dispatch_prep_free(&p);
	return ret;
}
