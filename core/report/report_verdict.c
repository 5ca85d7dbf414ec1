/* The verdict (report.h): each device's common per-SM pattern, the
 * q-values of the shuffle tests across the report's kernels, and what is
 * said of each kernel. */
#include "report/report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"

static const char *const cov_names[NT_COV_COUNT] = {
	[NT_COV_PATTERN] = "the trace's common per-SM pattern",
	[NT_COV_CORES] = "co-residency",
	[NT_COV_POSITION] = "the position in the grid",
	[NT_COV_ORDER] = "the first-wave dispatch order",
};

const char *nt_report_cov_name(int cov)
{
	return cov >= 0 && cov < NT_COV_COUNT ? cov_names[cov] : "?";
}

const char *nt_report_verdict_name(enum nt_report_verdict v)
{
	switch (v) {
	case NT_VERDICT_SENSITIVE:
		return "L2-sensitive";
	case NT_VERDICT_NO_EFFECT:
		return "no L2 effect detected";
	case NT_VERDICT_OTHER:
		return "varies with the SM, not with the map";
	case NT_VERDICT_NOT_MEASURABLE:
		return "not measurable here";
	case NT_VERDICT_COLLECTIVE:
		return "collective";
	default:
		return "no fit";
	}
}

static int fitted(const struct nt_report_kernel *k)
{
	return k->fitted && k->fit.fitted && k->sm_median_ns;
}

/* k's per-SM points (report.h: the fit's SMs) over its median, into
 * v[n_sm]; NAN elsewhere. */
static void normalised(const struct nt_report_kernel *k, double *v)
{
	for (int s = 0; s < k->map->n_sm; s++)
		v[s] = k->sm_blocks[s] >= NT_ATTRIB_MIN_BLOCKS && !isnan(k->map->chain[s])
			       ? k->sm_median_ns[s] / k->fit.median_ns
			       : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of sorted v[0..c-1] without one element equal to x. */
static double median_without(const double *v, int c, double x)
{
	int lo = 0, hi = c, m = c - 1;
	double a, b;

	while (lo < hi) {	/* the first element not below x */
		int mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* element i of the rest is v[i] below the one removed, v[i + 1] from it */
	a = v[(m - 1) / 2 < lo ? (m - 1) / 2 : (m - 1) / 2 + 1];
	b = v[m / 2 < lo ? m / 2 : m / 2 + 1];
	return 0.5 * (a + b);
}

/* For the fitted kernels of one device (idx[0..n-1]), each one's r with
 * the median of the others' normalised per-SM points (leave one out, so
 * a kernel is not set against itself). */
static int device_pattern(struct nt_report *r, const int *idx, int n, int n_sm)
{
	double *v = malloc((size_t)n * n_sm * sizeof(*v));
	double *sorted = malloc((size_t)n * n_sm * sizeof(*sorted)), *pat = malloc(n_sm * sizeof(*pat));
	int *cnt = calloc(n_sm, sizeof(*cnt)), ret = -1;

	if (!v || !sorted || !pat || !cnt)
		goto out;
	for (int i = 0; i < n; i++)
		normalised(&r->kernels[idx[i]], v + (size_t)i * n_sm);
	for (int s = 0; s < n_sm; s++) {
		for (int i = 0; i < n; i++)
			if (!isnan(v[(size_t)i * n_sm + s]))
				sorted[(size_t)s * n + cnt[s]++] = v[(size_t)i * n_sm + s];
		qsort(sorted + (size_t)s * n, cnt[s], sizeof(*sorted), cmp_double);
	}
	for (int i = 0; i < n; i++) {
		struct nt_report_kernel *k = &r->kernels[idx[i]];
		const double *mine = v + (size_t)i * n_sm;

		for (int s = 0; s < n_sm; s++)
			pat[s] = !isnan(mine[s]) && cnt[s] - 1 >= NT_REPORT_PATTERN_MIN
					 ? median_without(sorted + (size_t)s * n, cnt[s], mine[s])
					 : NAN;
		k->cov_r[NT_COV_PATTERN] = nt_pearson(mine, pat, n_sm);
		k->cov_map_r[NT_COV_PATTERN] = nt_pearson(pat, k->map->chain, n_sm);
	}
	ret = 0;
out:
	free(v);
	free(sorted);
	free(pat);
	free(cnt);
	return ret;
}

static int patterns(struct nt_report *r)
{
	int *idx = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*idx)), ret = 0;

	if (!idx)
		return -1;
	for (int d = 0; d < r->n_devices && !ret; d++) {
		const struct nt_report_device *dev = &r->devices[d];
		int n = 0;

		if (!dev->map)
			continue;
		for (int k = 0; k < r->n_kernels; k++)
			if (r->kernels[k].trace == dev->trace && r->kernels[k].device == dev->device &&
			    fitted(&r->kernels[k]))
				idx[n++] = k;
		if (n > NT_REPORT_PATTERN_MIN)
			ret = device_pattern(r, idx, n, dev->map->n_sm);
	}
	free(idx);
	return ret;
}

/* The q-values of the fitted kernels' p-values, across the report. */
static int q_values(struct nt_report *r)
{
	int *idx = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*idx)), m = 0, ret = -1;
	double *p = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*p));
	double *q = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*q));

	if (!idx || !p || !q)
		goto out;
	for (int k = 0; k < r->n_kernels; k++)
		if (fitted(&r->kernels[k])) {
			p[m] = r->kernels[k].fit.p_value;
			idx[m++] = k;
		}
	if (nt_attrib_bh(p, m, q))
		goto out;
	for (int i = 0; i < m; i++)
		r->kernels[idx[i]].q_value = q[i];
	ret = 0;
out:
	free(idx);
	free(p);
	free(q);
	return ret;
}

/* What the kernel's per-SM medians follow best, if anything. */
static void follows(struct nt_report_kernel *k)
{
	k->follows = -1;
	for (int v = 0; v < NT_COV_COUNT; v++)
		if (fabs(k->cov_r[v]) >= NT_REPORT_FOLLOWS_R &&
		    (k->follows < 0 || fabs(k->cov_r[v]) > fabs(k->follows_r))) {
			k->follows = v;
			k->follows_r = k->cov_r[v];
			k->follows_map_r = k->cov_map_r[v];
		}
}

static void verdict(struct nt_report_kernel *k)
{
	const struct nt_kernel_fit *f = &k->fit;

	k->sensitive = 0;
	if (k->collective) {
		k->verdict = NT_VERDICT_COLLECTIVE;	/* never fitted */
		return;
	}
	if (k->probe_share >= NT_REPORT_PROBE_MAX) {
		k->verdict = NT_VERDICT_NOT_MEASURABLE;	/* with a fit or without */
		return;
	}
	if (!fitted(k)) {
		k->verdict = NT_VERDICT_NO_FIT;
		return;
	}
	follows(k);
	if (k->q_value <= NT_REPORT_FDR && f->effect_pct >= NT_ATTRIB_SENSITIVE_PCT)
		k->verdict = NT_VERDICT_SENSITIVE;
	else if ((f->slope_ns < 0 || f->effect_pct >= NT_ATTRIB_SENSITIVE_PCT) && k->follows >= 0)
		k->verdict = NT_VERDICT_OTHER;
	else
		k->verdict = NT_VERDICT_NO_EFFECT;
	k->sensitive = k->verdict == NT_VERDICT_SENSITIVE;
}

int nt_report_judge(struct nt_report *r, struct nt_err *err)
{
	if (patterns(r) || q_values(r))
		return nt_err_set(err, "out of memory");
	for (int i = 0; i < r->n_kernels; i++) {
		struct nt_report_kernel *k = &r->kernels[i];

		verdict(k);
		if (fitted(k)) {
			for (int d = 0; d < r->n_devices; d++)
				if (r->devices[d].trace == k->trace && r->devices[d].device == k->device)
					nt_report_kernel_shares(k, r->devices[d].sm_count);
		}
		r->sensitive += k->sensitive;
	}
	return 0;
}

void nt_report_verdict_text(const struct nt_report_kernel *k, char *buf, size_t len)
{
	const struct nt_kernel_fit *f = &k->fit;
	const char *neg = f->slope_ns < 0 ? "its blocks run faster on the SMs the map calls slow" :
					    "shuffled maps explain its slope";

	switch (k->verdict) {
	case NT_VERDICT_SENSITIVE:
		snprintf(buf, len, "L2-sensitive: p = %.2g against %d TPC-shuffled maps, q = %.2g (FDR %g%%); "
			 "a block takes %.2f%% longer on the slowest SM than on the fastest", f->p_value,
			 f->shuffles, k->q_value, 100 * NT_REPORT_FDR, f->effect_pct);
		break;
	case NT_VERDICT_OTHER:
		snprintf(buf, len, "block time varies with the SM in a way the L2 map does not explain (%s, "
			 "p = %.2g): it follows %s (r = %.2f), which %s the map (r = %.2f)", neg, f->p_value,
			 nt_report_cov_name(k->follows), k->follows_r,
			 k->follows_map_r < 0 ? "runs against" : "goes with", k->follows_map_r);
		break;
	case NT_VERDICT_NOT_MEASURABLE:
		snprintf(buf, len, "not measurable here: the instrumentation took %.0f%% of its traced time "
			 "(native %.1f us, traced %.1f us), %.0f%% or more leaves too little of its own in a block",
			 100 * k->probe_share, k->native_ns / 1e3, k->traced_min_ns / 1e3, 100 * NT_REPORT_PROBE_MAX);
		break;
	case NT_VERDICT_NO_EFFECT:
		if (k->q_value <= NT_REPORT_FDR)
			snprintf(buf, len, "no L2 effect detected: related to the map (q = %.2g) but by %.2f%% of a "
				 "block, under %g%%", k->q_value, f->effect_pct, NT_ATTRIB_SENSITIVE_PCT);
		else
			snprintf(buf, len, "no L2 effect detected: p = %.2g against %d TPC-shuffled maps (that "
				 "share of them relate to its block times as strongly), q = %.2g", f->p_value,
				 f->shuffles, k->q_value);
		break;
	case NT_VERDICT_COLLECTIVE:
		snprintf(buf, len, "a collective: its blocks wait for the other ranks, so their times say "
			 "nothing of its SMs; left out of the sums (the job view lines ranks up at it)");
		break;
	default:
		snprintf(buf, len, "no fit: %s", k->fitted ? f->reason : nt_report_no_fit(k));
	}
}
