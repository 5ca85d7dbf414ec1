#include "analysis/structure.h"
#include "map/map.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two passes (means first): latencies sit near 300 with spreads of a few
 * cycles, where one-pass sums of squares lose most of their digits. */
static double pearson_by(const double *v, const int *ix, const int *iy, int n,
			 const double *x, const double *y)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
	int k = 0;

	for (int i = 0; i < n; i++) {
		double a = x ? x[i] : v[ix[i]], b = y ? y[i] : v[iy[i]];

		if (isnan(a) || isnan(b))
			continue;
		mx += a;
		my += b;
		k++;
	}
	if (k < 3)
		return NAN;
	mx /= k;
	my /= k;
	for (int i = 0; i < n; i++) {
		double a = x ? x[i] : v[ix[i]], b = y ? y[i] : v[iy[i]];

		if (isnan(a) || isnan(b))
			continue;
		sxy += (a - mx) * (b - my);
		sxx += (a - mx) * (a - mx);
		syy += (b - my) * (b - my);
	}
	if (sxx <= 0 || syy <= 0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}

double nt_pearson(const double *x, const double *y, int n)
{
	if (!x || !y || n < 3)
		return NAN;
	return pearson_by(NULL, NULL, NULL, n, x, y);
}

int nt_tpc_pairs(const double *v, int n, double tol, struct nt_tpc *out)
{
	double *diff;

	memset(out, 0, sizeof(*out));
	out->tol = tol;
	out->max_diff = out->median_diff = NAN;
	if (!v || n < 0)
		return -1;
	diff = malloc(sizeof(*diff) * (n / 2 + 1));
	if (!diff)
		return -1;
	for (int k = 0; 2 * k + 1 < n; k++) {
		double d = fabs(v[2 * k] - v[2 * k + 1]);

		if (isnan(d))
			continue;
		diff[out->pairs++] = d;
		out->equal += d <= tol;
		if (!(d <= out->max_diff))
			out->max_diff = d;
	}
	out->median_diff = nt_median(diff, out->pairs);
	free(diff);
	return 0;
}

void nt_tpc_shuffle(const double *v, int n, uint64_t *state, double *out)
{
	struct nt_tpc_perm p;

	nt_tpc_perm_init(v, n, &p);
	nt_tpc_perm_next(&p, state);
	for (int s = 0; s < n; s++)	/* past NT_MAP_MAX_SM nothing moves */
		out[s] = s < NT_MAP_MAX_SM ? nt_tpc_perm_value(&p, v, s) : v[s];
}

void nt_tpc_perm_init(const double *v, int n, struct nt_tpc_perm *p)
{
	p->m = 0;
	for (int s = 0; s < n && s < NT_MAP_MAX_SM; s++)
		p->slot[s] = -1;
	for (int k = 0; 2 * k + 1 < n && k < NT_MAP_MAX_SM / 2; k++)
		if (!isnan(v[2 * k]) && !isnan(v[2 * k + 1])) {
			p->slot[2 * k] = p->slot[2 * k + 1] = p->m;
			p->place[p->m++] = k;
		}
}

/* Fisher-Yates over the movable pairs' places: place[k] (the k-th in
 * smid order) takes pair[k]'s values */
void nt_tpc_perm_next(struct nt_tpc_perm *p, uint64_t *state)
{
	memcpy(p->pair, p->place, (size_t)p->m * sizeof(*p->pair));
	for (int i = p->m - 1; i > 0; i--) {
		int j = (int)nt_rng_below(state, (uint32_t)i + 1), t = p->pair[i];

		p->pair[i] = p->pair[j];
		p->pair[j] = t;
	}
}

double nt_tpc_default_tol(const double *noise, int n)
{
	double med = noise ? nt_median(noise, n) : NAN;

	return isnan(med) || 3 * med < 0.5 ? 0.5 : 3 * med;
}

/* Pair candidate: r of v[s + i] against v[i] or v[s - 1 - i]. */
static double halves_r(const double *v, int s, int len, int mirrored, int *ix, int *iy,
		       int *pairs)
{
	*pairs = 0;
	for (int i = 0; i < len; i++) {
		ix[i] = mirrored ? s - 1 - i : i;
		iy[i] = s + i;
		*pairs += !isnan(v[ix[i]]) && !isnan(v[iy[i]]);
	}
	return pearson_by(v, ix, iy, len, NULL, NULL);
}

int nt_halves_best(const double *v, int n, struct nt_halves *out)
{
	int *ix, *iy;

	out->split = out->len = -1;
	out->mirrored = 0;
	out->r = NAN;
	if (!v || n < 16)
		return -1;
	ix = malloc(sizeof(*ix) * n);
	iy = malloc(sizeof(*iy) * n);
	if (!ix || !iy)
		goto out;
	for (int s = n / 4; s <= 3 * n / 4; s++) {
		int len = s < n - s ? s : n - s;

		for (int mir = 0; mir < 2; mir++) {
			int pairs;
			double r = halves_r(v, s, len, mir, ix, iy, &pairs);

			if (pairs < 8 || isnan(r) || !(isnan(out->r) || r > out->r))
				continue;
			out->split = s;
			out->len = len;
			out->mirrored = mir;
			out->r = r;
		}
	}
out:
	free(ix);
	free(iy);
	return out->split < 0 ? -1 : 0;
}

/*
 * Rows to cluster, with each line's mean over those rows removed: the
 * line term is shared by every SM and would make all rows correlate.
 * Returns the number of rows kept (their smids in rows[]).
 */
static int center_lines(const double *mat, int n_sm, int n_line, double *x, int *rows)
{
	int m = 0;

	for (int i = 0; i < n_sm; i++) {
		int have = 0;

		for (int j = 0; j < n_line; j++)
			have += !isnan(mat[(size_t)i * n_line + j]);
		if (have >= 3)
			rows[m++] = i;
	}
	for (int j = 0; j < n_line; j++) {
		double sum = 0;
		int k = 0;

		for (int r = 0; r < m; r++) {
			double c = mat[(size_t)rows[r] * n_line + j];

			if (!isnan(c)) {
				sum += c;
				k++;
			}
		}
		for (int r = 0; r < m; r++)
			x[(size_t)r * n_line + j] = mat[(size_t)rows[r] * n_line + j] - sum / (k ? k : 1);
	}
	return m;
}

/* Best pair of live clusters by mean cross r; -inf when none is left. */
static double best_pair(const double *S, const int *size, int m, int *pa, int *pb)
{
	double best = -INFINITY;

	for (int a = 0; a < m; a++) {
		if (!size[a])
			continue;
		for (int b = a + 1; b < m; b++) {
			double r;

			if (!size[b])
				continue;
			r = S[a * m + b] / ((double)size[a] * size[b]);
			if (r > best) {
				best = r;
				*pa = a;
				*pb = b;
			}
		}
	}
	return best;
}

/*
 * Average linkage on the r matrix (in S, m x m).  S[a][b] holds the sum
 * of r over all cross pairs of clusters a and b, so merging is adding
 * rows and the mean stays exact.  cl[r] ends as each row's cluster id,
 * W[c] as the sum of r inside cluster c.
 */
static void agglomerate(double *S, int m, double min_r, int *cl, int *size, double *W)
{
	int a = 0, b = 0;

	for (int r = 0; r < m; r++) {
		cl[r] = r;
		size[r] = 1;
		W[r] = 0;
	}
	while (best_pair(S, size, m, &a, &b) >= min_r) {
		W[a] += W[b] + S[a * m + b];
		for (int c = 0; c < m; c++) {
			S[a * m + c] += S[b * m + c];
			S[c * m + a] = S[a * m + c];
		}
		size[a] += size[b];
		size[b] = 0;
		for (int r = 0; r < m; r++)
			if (cl[r] == b)
				cl[r] = a;
	}
}

/* Number clusters by their smallest smid: rows[] is in smid order. */
static int number_groups(struct nt_groups *g, const int *rows, const int *cl,
			 const int *size, const double *W, int m)
{
	int *id = malloc(sizeof(*id) * m), n = 0;

	if (!id)
		return -1;
	for (int c = 0; c < m; c++)
		id[c] = -1;
	for (int r = 0; r < m; r++) {
		int c = cl[r];

		if (id[c] < 0) {
			id[c] = n;
			g->within_r[n++] = size[c] > 1 ?
				W[c] / (size[c] * (size[c] - 1) / 2.0) : 1;
		}
		g->group[rows[r]] = id[c];
	}
	g->n_groups = n;
	free(id);
	return 0;
}

int nt_groups_cluster(const double *mat, int n_sm, int n_line, double min_r,
		      struct nt_groups *g, struct nt_err *err)
{
	int ret = -1, m, *rows = NULL, *cl = NULL, *size = NULL;
	double *x = NULL, *S = NULL, *W = NULL;

	memset(g, 0, sizeof(*g));
	if (!mat || n_sm <= 0 || n_line <= 0)
		return nt_err_set(err, "groups: bad arguments (%d x %d matrix)", n_sm, n_line);
	g->n = n_sm;
	g->min_r = min_r;
	g->group = malloc(sizeof(*g->group) * n_sm);
	g->within_r = malloc(sizeof(*g->within_r) * n_sm);
	rows = malloc(sizeof(*rows) * n_sm);
	x = malloc(sizeof(*x) * (size_t)n_sm * n_line);
	if (!g->group || !g->within_r || !rows || !x) {
		nt_err_set(err, "groups: out of memory");
		goto out;
	}
	for (int i = 0; i < n_sm; i++)
		g->group[i] = -1;
	m = center_lines(mat, n_sm, n_line, x, rows);
	if (!m) {
		nt_err_set(err, "groups: no SM has 3 measured lines");
		goto out;
	}
	S = malloc(sizeof(*S) * m * m);
	W = malloc(sizeof(*W) * m);
	cl = malloc(sizeof(*cl) * m);
	size = malloc(sizeof(*size) * m);
	if (!S || !W || !cl || !size) {
		nt_err_set(err, "groups: out of memory");
		goto out;
	}
	for (int a = 0; a < m; a++)
		for (int b = 0; b <= a; b++) {
			double r = nt_pearson(x + (size_t)a * n_line, x + (size_t)b * n_line, n_line);

			S[a * m + b] = S[b * m + a] = isnan(r) ? 0 : r;
		}
	agglomerate(S, m, min_r, cl, size, W);
	if (number_groups(g, rows, cl, size, W, m)) {
		nt_err_set(err, "groups: out of memory");
		goto out;
	}
	ret = 0;
out:
	if (ret)
		nt_groups_free(g);
	free(rows);
	free(x);
	free(S);
	free(W);
	free(cl);
	free(size);
	return ret;
}

void nt_groups_free(struct nt_groups *g)
{
	if (!g)
		return;
	free(g->group);
	free(g->within_r);
	memset(g, 0, sizeof(*g));
}
