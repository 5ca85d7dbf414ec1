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

/* offset[] (dispatch.h): first starts per SM, the median for the others. */
static int offsets(const struct nt_replay_block *b, size_t n, int n_sm, int64_t t0, double *offset)
{
	double *seen = malloc((size_t)n_sm * sizeof(*seen)), med;
	int m = 0;

	if (!seen)
		return -1;
	for (int s = 0; s < n_sm; s++)
		offset[s] = INFINITY;
	for (size_t i = 0; i < n; i++)
		offset[b[i].sm] = fmin(offset[b[i].sm], (double)(b[i].t_start_ns - t0));
	for (int s = 0; s < n_sm; s++)
		if (isfinite(offset[s]))
			seen[m++] = offset[s];
	qsort(seen, m, sizeof(*seen), cmp_double);
	med = m ? seen[(m - 1) / 2] : 0;
	for (int s = 0; s < n_sm; s++)
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

/* The slot gaps the records show (dispatch.h), shifted by 2^63 to sort
 * as unsigned; their number.  at[n_sm + 1] is scratch. */
static size_t slot_gaps(const uint64_t *ks, const uint64_t *ke, size_t n, int n_sm, int slots, size_t *at,
			uint64_t *by_s, uint64_t *by_e, uint64_t *gap)
{
	size_t g = 0;

	/* a stable counting sort by SM keeps each SM's times in order */
	memset(at, 0, ((size_t)n_sm + 1) * sizeof(*at));
	for (size_t i = 0; i < n; i++)
		at[(ks[i] & ((1u << SM_BITS) - 1)) + 1]++;
	for (int s = 0; s < n_sm; s++)
		at[s + 1] += at[s];
	for (int pass = 0; pass < 2; pass++) {
		const uint64_t *k = pass ? ke : ks;
		uint64_t *out = pass ? by_e : by_s;
		size_t *pos = malloc(((size_t)n_sm + 1) * sizeof(*pos));

		if (!pos)
			return (size_t)-1;
		memcpy(pos, at, ((size_t)n_sm + 1) * sizeof(*pos));
		for (size_t i = 0; i < n; i++)
			out[pos[k[i] & ((1u << SM_BITS) - 1)]++] = k[i] >> SM_BITS;
		free(pos);
	}
	for (int s = 0; s < n_sm; s++)
		for (size_t k = 0; at[s] + slots + k < at[s + 1]; k++)
			gap[g++] = (by_s[at[s] + slots + k] - by_e[at[s] + k]) + ((uint64_t)1 << 63);
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

int nt_dispatch_fit(const struct nt_replay_block *b, size_t n, int n_sm, int slots, double *offset,
		    struct nt_dispatch *out, struct nt_err *err)
{
	uint64_t *ks = NULL, *ke = NULL, *tmp = NULL, *by_s = NULL, *by_e = NULL;
	double *s = NULL, *e = NULL, hi, best = INFINITY, prev = -1;
	size_t n_slots = (size_t)n_sm * (size_t)(slots > 0 ? slots : 1), len, g, stride, *at = NULL;
	struct refills f;
	int64_t t0 = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!b || !n || slots < 1)
		return nt_err_set(err, "dispatch: %zu blocks, %d slots", n, slots);
	if (check(b, n, n_sm, &t0, err))
		return -1;
	if (offsets(b, n, n_sm, t0, offset))
		return nt_err_set(err, "dispatch: out of memory");
	if (n <= n_slots)
		return 0;	/* one wave: nothing is refilled */
	len = n - n_slots;
	ks = malloc(n * sizeof(*ks));
	ke = malloc(n * sizeof(*ke));
	tmp = malloc(n * sizeof(*tmp));
	by_s = malloc(n * sizeof(*by_s));
	by_e = malloc(n * sizeof(*by_e));
	at = malloc(((size_t)n_sm + 1) * sizeof(*at));
	stride = (len + NT_DISPATCH_FIT_POINTS - 1) / NT_DISPATCH_FIT_POINTS;
	f.p = (len + stride - 1) / stride;
	s = malloc(f.p * sizeof(*s));
	e = malloc(f.p * sizeof(*e));
	if (!ks || !ke || !tmp || !by_s || !by_e || !at || !s || !e)
		goto oom;
	time_keys(b, n, t0, 0, ks, tmp);
	time_keys(b, n, t0, 1, ke, tmp);
	for (size_t j = 0; j < f.p; j++) {
		s[j] = (double)(ks[n_slots + j * stride] >> SM_BITS);
		e[j] = (double)(ke[j * stride] >> SM_BITS);
	}
	f.s = s;
	f.e = e;
	f.stride = (double)stride;
	hi = len > 1 ? (double)((ks[n - 1] >> SM_BITS) - (ks[n_slots] >> SM_BITS)) / (double)(len - 1) : 0;
	/* the slot gaps, sorted, into tmp */
	if ((g = slot_gaps(ks, ke, n, n_sm, slots, at, by_s, by_e, tmp)) == (size_t)-1)
		goto oom;
	nt_sort_u64(tmp, by_s, g);
	for (int q = 0; q <= 12; q++) {
		double turnaround = 0, ferr, gap;

		if (g) {
			int64_t v = (int64_t)(tmp[(size_t)((double)(g - 1) * q / 20.0)] - ((uint64_t)1 << 63));

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
	free(ks);
	free(ke);
	free(tmp);
	free(by_s);
	free(by_e);
	free(at);
	free(s);
	free(e);
	return ret;
}
