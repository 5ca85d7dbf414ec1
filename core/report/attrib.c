#include "report/attrib.h"
#include "report/attrib_ctl.h"
#include "analysis/structure.h"
#include "map/map.h"
#include "util/rng.h"
#include "util/sort.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Bucket the blocks by SM: start[sm]..start[sm+1] of idx are the
 * indices of the blocks on sm, in input order, and of g (when not NULL)
 * the blocks themselves, copied: read in memory order and written in one
 * stream per SM, where a pass over an SM's blocks through idx waited for
 * memory (the fit of 2^18 blocks: 0.1 s in its controlled fit alone).
 * Blocks outside 0..n_sm-1 are left out.  start has n_sm + 1 entries,
 * idx and g n (either may be NULL).
 */
static void bucket(const struct nt_attrib_block *b, size_t n, int n_sm, size_t *start, size_t *idx,
		   struct nt_attrib_block *g)
{
	memset(start, 0, sizeof(*start) * (n_sm + 1));
	for (size_t i = 0; i < n; i++)
		if (b[i].sm >= 0 && b[i].sm < n_sm)
			start[b[i].sm + 1]++;
	for (int s = 0; s < n_sm; s++)
		start[s + 1] += start[s];
	/* start[sm] advances to the end of its bucket, then all shift back */
	for (size_t i = 0; i < n; i++)
		if (b[i].sm >= 0 && b[i].sm < n_sm) {
			size_t at = start[b[i].sm]++;

			if (idx)
				idx[at] = i;
			if (g)
				g[at] = b[i];
		}
	for (int s = n_sm; s > 0; s--)
		start[s] = start[s - 1];
	start[0] = 0;
}

int nt_attrib_sm_medians(const struct nt_attrib_block *b, size_t n, int n_sm, int *count,
			 double *med_ns, double *med_cyc, struct nt_err *err)
{
	size_t *start, *idx;
	double *tmp;
	int ret = -1;

	if ((!b && n) || n_sm <= 0 || n_sm > NT_MAP_MAX_SM)
		return nt_err_set(err, "attribution: bad arguments (n_sm %d)", n_sm);
	start = malloc(sizeof(*start) * (n_sm + 1));
	idx = malloc(sizeof(*idx) * (n ? n : 1));
	tmp = malloc(sizeof(*tmp) * (n ? n : 1));
	if (!start || !idx || !tmp) {
		nt_err_set(err, "attribution: out of memory");
		goto out;
	}
	bucket(b, n, n_sm, start, idx, NULL);
	for (int s = 0; s < n_sm; s++) {
		size_t k = start[s + 1] - start[s];

		if (count)
			count[s] = (int)k;
		for (int pass = 0; pass < 2; pass++) {
			double *dst = pass ? med_cyc : med_ns;

			if (!dst)
				continue;
			for (size_t i = 0; i < k; i++) {
				const struct nt_attrib_block *x = &b[idx[start[s] + i]];

				tmp[i] = pass ? x->cycles : x->ns;
			}
			dst[s] = k ? nt_median_double(tmp, k) : NAN;
		}
	}
	ret = 0;
out:
	free(start);
	free(idx);
	free(tmp);
	return ret;
}

struct pair {
	double s;	/* slope through SMs i and j */
	int i, j;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->s != y->s)
		return (x->s > y->s) - (x->s < y->s);
	if (x->i != y->i)
		return x->i - y->i;
	return x->j - y->j;
}

/* All pairs i < j of different latency, sorted by slope; their number. */
static size_t make_pairs(const double *x, const double *y, int m, struct pair *p)
{
	size_t np = 0;

	for (int i = 0; i < m; i++)
		for (int j = i + 1; j < m; j++)
			if (x[i] != x[j])
				p[np++] = (struct pair){ (y[j] - y[i]) / (x[j] - x[i]), i, j };
	qsort(p, np, sizeof(*p), cmp_pair);
	return np;
}

/*
 * The median of the multiset in which pair (i, j) appears w[i] * w[j]
 * times: the Theil-Sen slope of data in which SM i appears w[i] times
 * (copies of one SM make no pair: equal latency).  NAN when empty.
 * The total weight comes in closed form, from the SMs' groups of equal
 * latency (grp[i], 0..m-1; gw is scratch of m), so that the sorted
 * pairs are walked once, and only up to the median.
 */
static double weighted_median(const struct pair *p, const int *w, const int *grp, int m,
			      int64_t *gw)
{
	int64_t sum = 0, same = 0, total, lo, hi, c = 0;
	size_t k = 0;
	double a;

	memset(gw, 0, sizeof(*gw) * m);
	for (int i = 0; i < m; i++) {
		sum += w[i];
		gw[grp[i]] += w[i];
	}
	for (int g = 0; g < m; g++)
		same += gw[g] * gw[g];
	total = (sum * sum - same) / 2;
	if (!total)
		return NAN;
	lo = (total - 1) / 2;
	hi = total / 2;
	while ((c += (int64_t)w[p[k].i] * w[p[k].j]) <= lo)
		k++;
	a = p[k].s;
	while (c <= hi) {
		k++;
		c += (int64_t)w[p[k].i] * w[p[k].j];
	}
	return 0.5 * (a + p[k].s);
}

/* Every SM once (w = 1), with its group of equal latency (grp: the first
 * SM of its latency), as weighted_median() takes them. */
static void unit_weights(const double *x, int m, int *w, int *grp)
{
	for (int k = 0; k < m; k++) {
		w[k] = 1;
		for (grp[k] = 0; x[grp[k]] != x[k];)
			grp[k]++;
	}
}

int nt_attrib_theil_sen(const double *x, const double *y, int m, double *slope, struct nt_err *err)
{
	struct pair *p = malloc(sizeof(*p) * ((size_t)m * (m > 1 ? m - 1 : 1) / 2 + 1));
	int *w = malloc(sizeof(*w) * (m > 0 ? m : 1)), *grp = malloc(sizeof(*grp) * (m > 0 ? m : 1));
	int64_t *gw = malloc(sizeof(*gw) * (m > 0 ? m : 1));
	int ret = -1;

	*slope = NAN;
	if (!p || !w || !grp || !gw) {
		nt_err_set(err, "attribution: out of memory for %d SMs", m);
		goto out;
	}
	if (make_pairs(x, y, m, p)) {
		unit_weights(x, m, w, grp);
		*slope = weighted_median(p, w, grp, m, gw);
	}
	ret = 0;
out:
	free(p);
	free(w);
	free(grp);
	free(gw);
	return ret;
}

/* Quantile q of sorted v[0..n-1], linear between order statistics. */
static double quantile(const double *v, int n, double q)
{
	double h = (n - 1) * q;
	int k = (int)h;

	if (n <= 0)
		return NAN;
	if (k >= n - 1)
		return v[n - 1];
	return v[k] + (h - k) * (v[k + 1] - v[k]);
}

/*
 * Percentile bootstrap over SMs for both slopes.  Both use the same
 * resamples.  boot has room for 2 * NT_ATTRIB_BOOT, w and gw for m.
 */
static void bootstrap(const struct pair *pn, const struct pair *pc, int m, int *w, const int *grp,
		      int64_t *gw, double *boot, struct nt_kernel_fit *f)
{
	double *bn = boot, *bc = boot + NT_ATTRIB_BOOT;
	uint64_t seed = NT_ATTRIB_SEED;
	int kn = 0, kc = 0;

	for (int r = 0; r < NT_ATTRIB_BOOT; r++) {
		double sn, sc;

		memset(w, 0, sizeof(*w) * m);
		for (int k = 0; k < m; k++)
			w[nt_rng_below(&seed, (uint32_t)m)]++;
		sn = weighted_median(pn, w, grp, m, gw);
		sc = weighted_median(pc, w, grp, m, gw);
		if (!isnan(sn))
			bn[kn++] = sn;
		if (!isnan(sc))
			bc[kc++] = sc;
	}
	qsort(bn, kn, sizeof(*bn), cmp_double);
	qsort(bc, kc, sizeof(*bc), cmp_double);
	f->slope_lo = quantile(bn, kn, 0.025);
	f->slope_hi = quantile(bn, kn, 0.975);
	f->slope_cyc_lo = quantile(bc, kc, 0.025);
	f->slope_cyc_hi = quantile(bc, kc, 0.975);
}

/* Least-squares line through (x, y): its slope, and R^2 (NAN if y is flat). */
static void ols_line(const double *x, const double *y, int m, double *slope, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;

	for (int k = 0; k < m; k++) {
		mx += x[k] / m;
		my += y[k] / m;
	}
	for (int k = 0; k < m; k++) {
		sxx += (x[k] - mx) * (x[k] - mx);
		sxy += (x[k] - mx) * (y[k] - my);
		syy += (y[k] - my) * (y[k] - my);
	}
	*slope = sxy / sxx;
	*r2 = syy > 0 ? sxy * sxy / (sxx * syy) : NAN;
}

/* median(y - slope * x); tmp has room for m. */
static double ts_intercept(const double *x, const double *y, int m, double slope, double *tmp)
{
	for (int k = 0; k < m; k++)
		tmp[k] = y[k] - slope * x[k];
	return nt_median_double(tmp, m);
}

static void fit_init(struct nt_kernel_fit *f)
{
	double *nums[] = {
		&f->lat_min, &f->lat_max, &f->median_ns, &f->median_cyc, &f->slope_ns, &f->slope_lo,
		&f->slope_hi, &f->intercept_ns, &f->r2, &f->ols_slope_ns, &f->slope_cyc,
		&f->slope_cyc_lo, &f->slope_cyc_hi, &f->intercept_cyc, &f->r2_cyc, &f->effect_ns,
		&f->effect_cyc, &f->effect_pct, &f->effect_lo_pct, &f->effect_hi_pct, &f->rank_stat,
	};

	memset(f, 0, sizeof(*f));
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
		*nums[k] = NAN;
	nt_attrib_ctl_init(&f->ctl_ns);
	nt_attrib_ctl_init(&f->ctl_cyc);
	f->p_value = NAN;
}

static int check_blocks(const struct nt_attrib_block *b, size_t n, struct nt_err *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(b[i].ns) || b[i].ns < 0 || !isfinite(b[i].cycles) || b[i].cycles < 0)
			return nt_err_set(err, "attribution: block %zu has duration %g ns, %g cycles",
					  i, b[i].ns, b[i].cycles);
		if (b[i].wave < 0 || b[i].coresident < 0)
			return nt_err_set(err, "attribution: block %zu has wave %d, coresident %d",
					  i, (int)b[i].wave, (int)b[i].coresident);
	}
	return 0;
}

static int count_launches(const struct nt_attrib_block *b, size_t n)
{
	int64_t *l = malloc(sizeof(*l) * (n ? n : 1));
	int k = 0;

	if (!l)
		return -1;
	for (size_t i = 0; i < n; i++)
		l[i] = b[i].launch;
	qsort(l, n, sizeof(*l), cmp_i64);
	for (size_t i = 0; i < n; i++)
		k += !i || l[i] != l[i - 1];
	free(l);
	return k;
}

static void effect(struct nt_kernel_fit *f)
{
	double range = f->lat_max - f->lat_min;

	f->effect_ns = f->slope_ns * range;
	f->effect_cyc = f->slope_cyc * range;
	f->effect_pct = 100.0 * f->effect_ns / f->median_ns;
	f->effect_lo_pct = 100.0 * f->slope_lo * range / f->median_ns;
	f->effect_hi_pct = 100.0 * f->slope_hi * range / f->median_ns;
}

/* Values with their index, sorted by value then index: for ranks and
 * for Benjamini-Hochberg. */
struct ranked {
	double y;
	int i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->y != y->y)
		return (x->y > y->y) - (x->y < y->y);
	return x->i - y->i;
}

/* Midranks of y[0..m-1], centred (they sum to 0), into rc; tmp has room
 * for m pairs. */
static void centred_ranks(const double *y, int m, double *rc, struct ranked *tmp)
{
	for (int j = 0; j < m; j++)
		tmp[j] = (struct ranked){ y[j], j };
	qsort(tmp, m, sizeof(*tmp), cmp_ranked);
	for (int j = 0; j < m;) {
		int k = j;

		while (k + 1 < m && tmp[k + 1].y == tmp[j].y)
			k++;
		for (int t = j; t <= k; t++)	/* ranks j+1..k+1 share their mean */
			rc[tmp[t].i] = 0.5 * (j + k) + 1 - 0.5 * (m + 1);
		j = k + 1;
	}
}

int nt_attrib_bh(const double *p, int m, double *q)
{
	struct ranked *o = malloc(sizeof(*o) * (m > 0 ? m : 1));
	double least = 1;

	if (!o)
		return -1;
	for (int i = 0; i < m; i++)
		o[i] = (struct ranked){ p[i], i };
	qsort(o, m, sizeof(*o), cmp_ranked);
	/* from the largest p down: q_(i) = min over j >= i of m p_(j) / j */
	for (int i = m - 1; i >= 0; i--) {
		least = fmin(least, o[i].y * m / (i + 1));
		q[o[i].i] = least;
	}
	free(o);
	return 0;
}

int nt_attrib_shuffle_test(const double *y, const int *sm_of, int m, const double *lat, int n_sm,
			   struct nt_attrib_test *out, struct nt_err *err)
{
	double *rc = malloc(sizeof(*rc) * (m > 0 ? m : 1));
	struct ranked *tmp = malloc(sizeof(*tmp) * (m > 0 ? m : 1));
	struct nt_tpc_perm *perm = malloc(sizeof(*perm));
	uint64_t seed = NT_ATTRIB_SHUFFLE_SEED;
	double observed = 0;
	int64_t above = 0, k;
	int ret = -1;

	if (n_sm < 1 || n_sm > NT_MAP_MAX_SM) {	/* nt_tpc_perm holds that many */
		nt_err_set(err, "attribution: %d SMs (1..%d)", n_sm, NT_MAP_MAX_SM);
		goto out;
	}
	if (!rc || !tmp || !perm) {
		nt_err_set(err, "attribution: out of memory");
		goto out;
	}
	centred_ranks(y, m, rc, tmp);
	for (int j = 0; j < m; j++)
		observed += lat[sm_of[j]] * rc[j];
	/* Besag and Clifford's sequential test: stop at the STOP-th shuffle
	 * that reaches the observed statistic (p = STOP / shuffles), else
	 * after all of them (p = (reached + 1) / (shuffles + 1)). */
	/* nt_tpc_shuffle()'s maps, only the SMs used read from each (a
	 * copy of the map a shuffle was most of the test's time) */
	nt_tpc_perm_init(lat, n_sm, perm);
	for (k = 1; k <= NT_ATTRIB_SHUFFLES; k++) {
		double t = 0;

		nt_tpc_perm_next(perm, &seed);
		for (int j = 0; j < m; j++)
			t += nt_tpc_perm_value(perm, lat, sm_of[j]) * rc[j];
		/* a tie counts: the identity permutation reaches it exactly */
		if (t >= observed - 1e-9 * fabs(observed) && ++above == NT_ATTRIB_SHUFFLE_STOP)
			break;
	}
	out->statistic = observed;
	if (k <= NT_ATTRIB_SHUFFLES) {
		out->shuffles = (int)k;
		out->p_value = (double)above / (double)k;
	} else {
		out->shuffles = NT_ATTRIB_SHUFFLES;
		out->p_value = (double)(above + 1) / (NT_ATTRIB_SHUFFLES + 1.0);
	}
	ret = 0;
out:
	free(rc);
	free(perm);
	free(tmp);
	return ret;
}

/* Working arrays of one fit, freed together. */
struct work {
	size_t *start;		/* [n_sm + 1] SM s's blocks are g[start[s]..start[s + 1]) */
	struct nt_attrib_block *g;	/* [n] the blocks, bucketed by SM */
	int *sm_of;		/* [m] SM of each used SM's slot */
	double *x, *yn, *yc;	/* [m] latency, median ns, median cycles */
	double *tmp;		/* [max(n, m)] */
	struct pair *pn, *pc;	/* [m (m - 1) / 2] */
	int *w, *grp;		/* [m] resample counts, group of equal latency */
	int64_t *gw;		/* [m] */
	double *boot;		/* [2 * NT_ATTRIB_BOOT] */
};

static void work_free(struct work *w)
{
	free(w->start);
	free(w->g);
	free(w->sm_of);
	free(w->x);
	free(w->yn);
	free(w->yc);
	free(w->tmp);
	free(w->pn);
	free(w->pc);
	free(w->w);
	free(w->grp);
	free(w->gw);
	free(w->boot);
}

int nt_attrib_fit(const struct nt_attrib_block *b, size_t n, const double *lat, int n_sm,
		  struct nt_kernel_fit *fit, struct nt_err *err)
{
	struct work w = { 0 };
	size_t np, used = 0, big;
	int m = 0, ret = -1;

	if (!fit)
		return nt_err_set(err, "attribution: no result struct");
	fit_init(fit);
	if ((!b && n) || !lat || n_sm <= 0 || n_sm > NT_MAP_MAX_SM || n > INT_MAX)
		return nt_err_set(err, "attribution: bad arguments (%zu blocks, n_sm %d)", n, n_sm);
	if (check_blocks(b, n, err))
		return -1;
	fit->n_blocks = (int)n;
	if ((fit->n_launches = count_launches(b, n)) < 0)
		return nt_err_set(err, "attribution: out of memory");

	big = n > (size_t)n_sm ? n : (size_t)n_sm;
	w.start = malloc(sizeof(*w.start) * (n_sm + 1));
	w.g = malloc(sizeof(*w.g) * (n ? n : 1));
	w.sm_of = malloc(sizeof(*w.sm_of) * n_sm);
	w.x = malloc(sizeof(*w.x) * n_sm);
	w.yn = malloc(sizeof(*w.yn) * n_sm);
	w.yc = malloc(sizeof(*w.yc) * n_sm);
	w.tmp = malloc(sizeof(*w.tmp) * big);
	w.w = malloc(sizeof(*w.w) * n_sm);
	w.grp = malloc(sizeof(*w.grp) * n_sm);
	w.gw = malloc(sizeof(*w.gw) * n_sm);
	w.boot = malloc(sizeof(*w.boot) * 2 * NT_ATTRIB_BOOT);
	if (!w.start || !w.g || !w.sm_of || !w.x || !w.yn || !w.yc || !w.tmp || !w.w || !w.grp || !w.gw ||
	    !w.boot)
		goto oom;

	/* 1. per-SM medians of the usable SMs */
	bucket(b, n, n_sm, w.start, NULL, w.g);
	for (int s = 0; s < n_sm; s++) {
		size_t k = w.start[s + 1] - w.start[s];

		if (k < NT_ATTRIB_MIN_BLOCKS || !isfinite(lat[s]))
			continue;
		for (size_t i = 0; i < k; i++)
			w.tmp[i] = w.g[w.start[s] + i].ns;
		w.yn[m] = nt_median_double(w.tmp, k);
		for (size_t i = 0; i < k; i++)
			w.tmp[i] = w.g[w.start[s] + i].cycles;
		w.yc[m] = nt_median_double(w.tmp, k);
		w.x[m] = lat[s];
		w.sm_of[m++] = s;
		used += k;
	}
	fit->n_sm_used = m;
	fit->n_blocks_used = (int)used;
	if (m < NT_ATTRIB_MIN_SM) {
		snprintf(fit->reason, sizeof(fit->reason),
			 "%d SM%s with a latency and %d+ blocks; the fit needs %d", m, m == 1 ? "" : "s",
			 NT_ATTRIB_MIN_BLOCKS, NT_ATTRIB_MIN_SM);
		ret = 0;
		goto out;
	}
	fit->lat_min = fit->lat_max = w.x[0];
	for (int k = 1; k < m; k++) {
		fit->lat_min = fmin(fit->lat_min, w.x[k]);
		fit->lat_max = fmax(fit->lat_max, w.x[k]);
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t k = 0;

		for (int j = 0; j < m; j++) {
			int s = w.sm_of[j];

			for (size_t i = w.start[s]; i < w.start[s + 1]; i++)
				w.tmp[k++] = pass ? w.g[i].cycles : w.g[i].ns;
		}
		*(pass ? &fit->median_cyc : &fit->median_ns) = nt_median_double(w.tmp, k);
	}
	if (!(fit->median_ns > 0)) {	/* no effect can be a share of no time */
		snprintf(fit->reason, sizeof(fit->reason), "the blocks used take a median of %g ns",
			 fit->median_ns);
		ret = 0;
		goto out;
	}

	/* 2. Theil-Sen */
	np = (size_t)m * (m - 1) / 2;
	w.pn = malloc(sizeof(*w.pn) * np);
	w.pc = malloc(sizeof(*w.pc) * np);
	if (!w.pn || !w.pc)
		goto oom;
	np = make_pairs(w.x, w.yn, m, w.pn);
	make_pairs(w.x, w.yc, m, w.pc);
	if (!np) {
		snprintf(fit->reason, sizeof(fit->reason), "the %d SMs used all have the same latency", m);
		ret = 0;
		goto out;
	}
	unit_weights(w.x, m, w.w, w.grp);
	fit->slope_ns = weighted_median(w.pn, w.w, w.grp, m, w.gw);
	fit->slope_cyc = weighted_median(w.pc, w.w, w.grp, m, w.gw);
	fit->intercept_ns = ts_intercept(w.x, w.yn, m, fit->slope_ns, w.tmp);
	fit->intercept_cyc = ts_intercept(w.x, w.yc, m, fit->slope_cyc, w.tmp);

	/* 3. bootstrap, 4. R^2 */
	bootstrap(w.pn, w.pc, m, w.w, w.grp, w.gw, w.boot, fit);
	ols_line(w.x, w.yn, m, &fit->ols_slope_ns, &fit->r2);
	{
		double unused;

		ols_line(w.x, w.yc, m, &unused, &fit->r2_cyc);
	}
	fit->fitted = 1;
	effect(fit);
	{
		struct nt_attrib_test t;

		if (nt_attrib_shuffle_test(w.yn, w.sm_of, m, lat, n_sm, &t, err))
			goto out;
		fit->p_value = t.p_value;
		fit->shuffles = t.shuffles;
		fit->rank_stat = t.statistic;
	}

	/* the controlled fit, over the same blocks, grouped by SM */
	used = 0;	/* the copy only moves left: used <= i */
	for (int j = 0; j < m; j++) {
		int s = w.sm_of[j];

		for (size_t i = w.start[s]; i < w.start[s + 1]; i++)
			w.g[used++] = w.g[i];
	}
	nt_attrib_ctl_fit(w.g, used, lat, 0, &fit->ctl_ns);
	nt_attrib_ctl_fit(w.g, used, lat, 1, &fit->ctl_cyc);
	ret = 0;
	goto out;
oom:
	nt_err_set(err, "attribution: out of memory (%zu blocks, %d SMs)", n, n_sm);
out:
	work_free(&w);
	return ret;
}
