#include "analysis/model.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Mark the rows to fit.  A row with no value is an SM that was not
 * measured and is skipped; a row with some values but not all cannot be
 * fitted by row/column means, so it is an error rather than a guess.
 */
static int pick_rows(const double *mat, int n_sm, int n_line, int *used, const char *what,
		     struct nt_err *err)
{
	int m = 0;

	for (int i = 0; i < n_sm; i++) {
		const double *row = mat + (size_t)i * n_line;
		int have = 0, hole = -1;

		for (int j = 0; j < n_line; j++) {
			have += !isnan(row[j]);
			if (hole < 0 && !isfinite(row[j]))
				hole = j;
		}
		used[i] = have > 0;
		if (have && hole >= 0)
			return nt_err_set(err, "%s: sm %d line %d is %s",
					  what, i, hole, isnan(row[hole]) ? "not measured" : "not finite");
		m += used[i];
	}
	if (!m)
		return nt_err_set(err, "%s: no SM was measured", what);
	return m;
}

/*
 * Least squares for mu + a + b on a complete matrix is the grand mean
 * plus row and column mean offsets.  Leaves the residual of the used rows
 * in res (m x n_line) and returns SS_tot through *ss_tot.
 */
static void fit_additive(const double *mat, const int *used, struct nt_fit *fit,
			 int m, double *res, double *ss_tot)
{
	int n_sm = fit->n_sm, n = fit->n_line, r = 0;
	double sum = 0, ss = 0;

	for (int j = 0; j < n; j++)
		fit->b[j] = 0;
	for (int i = 0; i < n_sm; i++) {
		const double *row = mat + (size_t)i * n;
		double rs = 0;

		fit->a[i] = NAN;
		if (!used[i])
			continue;
		for (int j = 0; j < n; j++) {
			rs += row[j];
			fit->b[j] += row[j];
		}
		fit->a[i] = rs / n;
		sum += rs;
	}
	fit->mu = sum / ((double)m * n);
	for (int i = 0; i < n_sm; i++)
		if (used[i])
			fit->a[i] -= fit->mu;
	for (int j = 0; j < n; j++)
		fit->b[j] = fit->b[j] / m - fit->mu;

	for (int i = 0; i < n_sm; i++) {
		const double *row = mat + (size_t)i * n;

		if (!used[i])
			continue;
		for (int j = 0; j < n; j++) {
			double d = row[j] - fit->mu;

			ss += d * d;
			res[(size_t)r * n + j] = d - fit->a[i] - fit->b[j];
		}
		r++;
	}
	*ss_tot = ss;
}

/*
 * Householder reduction of the symmetric n x n matrix A (overwritten) to
 * tridiagonal form T = Q^T A Q: diagonal d, sub-diagonal e[0..n-2].
 * Each step maps column k below the diagonal onto one entry with the
 * reflector H = I - beta v v^T, applied as A - v w^T - w v^T.
 */
static void tridiagonalize(double *A, int n, double *Q, double *d, double *e,
			   double *v, double *p)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			Q[i * n + j] = i == j;
	for (int k = 0; k + 2 < n; k++) {
		int s = k + 1, len = n - s;
		double alpha = 0, vv = 0, beta, vp = 0, half;

		for (int i = 0; i < len; i++) {
			v[i] = A[(s + i) * n + k];
			alpha += v[i] * v[i];
		}
		alpha = v[0] > 0 ? -sqrt(alpha) : sqrt(alpha);
		v[0] -= alpha;
		for (int i = 0; i < len; i++)
			vv += v[i] * v[i];
		if (vv == 0)
			continue;	/* column already reduced */
		beta = 2 / vv;
		for (int i = 0; i < len; i++) {
			double t = 0;

			for (int j = 0; j < len; j++)
				t += A[(s + i) * n + s + j] * v[j];
			p[i] = beta * t;
			vp += v[i] * p[i];
		}
		half = beta * vp / 2;
		for (int i = 0; i < len; i++)
			p[i] -= half * v[i];	/* p is now w */
		for (int i = 0; i < len; i++)
			for (int j = 0; j < len; j++)
				A[(s + i) * n + s + j] -= v[i] * p[j] + p[i] * v[j];
		for (int i = 0; i < len; i++)
			A[(s + i) * n + k] = A[k * n + s + i] = i ? 0 : alpha;
		for (int r = 0; r < n; r++) {
			double t = 0;

			for (int j = 0; j < len; j++)
				t += Q[r * n + s + j] * v[j];
			t *= beta;
			for (int j = 0; j < len; j++)
				Q[r * n + s + j] -= t * v[j];
		}
	}
	for (int i = 0; i < n; i++) {
		d[i] = A[i * n + i];
		if (i + 1 < n)
			e[i] = A[(i + 1) * n + i];
	}
}

/*
 * One implicit QR step with Wilkinson shift on the unreduced block
 * lo..hi of the tridiagonal (Golub & Van Loan 8.3.2): rotate planes
 * (k, k+1) to chase the bulge down, accumulating Q <- Q R^T.
 */
static void qr_step(double *d, double *e, int lo, int hi, double *Q, int n)
{
	double delta = (d[hi - 1] - d[hi]) / 2, b = e[hi - 1];
	double mu = d[hi] - b * b / (delta + copysign(hypot(delta, b), delta));
	double x = d[lo] - mu, z = e[lo];

	for (int k = lo; k < hi; k++) {
		double r = hypot(x, z), c = r ? x / r : 1, s = r ? z / r : 0;
		double a0 = d[k], b0 = e[k], c0 = d[k + 1];

		if (k > lo)
			e[k - 1] = r;
		d[k] = c * c * a0 + 2 * c * s * b0 + s * s * c0;
		d[k + 1] = s * s * a0 - 2 * c * s * b0 + c * c * c0;
		e[k] = c * s * (c0 - a0) + (c * c - s * s) * b0;
		if (k + 1 < hi) {
			x = e[k];
			z = s * e[k + 1];	/* the bulge at (k, k+2) */
			e[k + 1] *= c;
		}
		for (int i = 0; i < n; i++) {
			double qk = Q[i * n + k], qk1 = Q[i * n + k + 1];

			Q[i * n + k] = c * qk + s * qk1;
			Q[i * n + k + 1] = -s * qk + c * qk1;
		}
	}
}

static int negligible(const double *d, const double *e, int i)
{
	return fabs(e[i]) <= DBL_EPSILON * (fabs(d[i]) + fabs(d[i + 1]));
}

/* Eigenvalues d[] and eigenvectors (columns of Q) of symmetric A. */
static int sym_eigen(double *A, int n, double *d, double *Q, double *work)
{
	double *e = work, *v = work + n, *p = work + 2 * n;
	int hi = n - 1, iter = 0;

	tridiagonalize(A, n, Q, d, e, v, p);
	while (hi > 0) {
		int lo = hi - 1;

		if (negligible(d, e, hi - 1)) {
			e[hi - 1] = 0;
			hi--;
			continue;
		}
		while (lo > 0 && !negligible(d, e, lo - 1))
			lo--;
		if (++iter > 30 * n)
			return -1;
		qr_step(d, e, lo, hi, Q, n);
	}
	return 0;
}

/* Index of the largest remaining eigenvalue (taken ones are -INF). */
static int top_index(const double *d, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (d[i] > d[best])
			best = i;
	return best;
}

/* u = eigenvector of R R^T, v = R^T u / sigma; sign by u's largest entry. */
static void store_term(struct nt_fit *fit, int t, const int *used, const double *res,
		       const double *Q, int col, int m, double sigma)
{
	int n = fit->n_line, big = 0, r = 0;
	double sign;

	for (int i = 1; i < m; i++)
		if (fabs(Q[i * m + col]) > fabs(Q[big * m + col]))
			big = i;
	sign = Q[big * m + col] < 0 ? -1 : 1;
	for (int i = 0; i < fit->n_sm; i++)
		fit->u[t][i] = used[i] ? sign * Q[r++ * m + col] : NAN;
	for (int j = 0; j < n; j++) {
		double s = 0;

		for (int i = 0; i < m; i++)
			s += res[(size_t)i * n + j] * Q[i * m + col];
		fit->v[t][j] = sign * s / sigma;
	}
	fit->sigma[t] = sigma;
}

static int fit_interaction(struct nt_fit *fit, const int *used, const double *res,
			   int m, int kmax, double ss_tot, const char *what, struct nt_err *err)
{
	int n = fit->n_line, ret = -1;
	double *G = malloc(sizeof(*G) * m * m), *Q = malloc(sizeof(*Q) * m * m);
	double *d = malloc(sizeof(*d) * m), *work = malloc(sizeof(*work) * 3 * m);

	if (!G || !Q || !d || !work) {
		nt_err_set(err, "%s: out of memory", what);
		goto out;
	}
	for (int i = 0; i < m; i++)
		for (int j = 0; j <= i; j++) {
			double s = 0;

			for (int c = 0; c < n; c++)
				s += res[(size_t)i * n + c] * res[(size_t)j * n + c];
			G[i * m + j] = G[j * m + i] = s;
		}
	if (sym_eigen(G, m, d, Q, work)) {
		nt_err_set(err, "%s: eigen solver did not converge", what);
		goto out;
	}
	for (int t = 0; t < kmax && t < m; t++) {
		int col = top_index(d, m);

		/* below this the "term" is rounding error, not structure */
		if (!(d[col] > 1e-12 * ss_tot))
			break;
		fit->u[t] = malloc(sizeof(double) * fit->n_sm);
		fit->v[t] = malloc(sizeof(double) * n);
		if (!fit->u[t] || !fit->v[t]) {
			nt_err_set(err, "%s: out of memory", what);
			goto out;
		}
		store_term(fit, t, used, res, Q, col, m, sqrt(d[col]));
		d[col] = -INFINITY;
		fit->k = t + 1;
	}
	ret = 0;
out:
	free(G);
	free(Q);
	free(d);
	free(work);
	return ret;
}

static void fill_r2(struct nt_fit *fit, int kmax, double ss_tot, double ss_res)
{
	for (int t = 0; t <= NT_FIT_KMAX; t++) {
		if (t > kmax) {
			fit->r2[t] = NAN;
			continue;
		}
		if (t >= 1 && t <= fit->k)
			ss_res -= fit->sigma[t - 1] * fit->sigma[t - 1];
		if (ss_res < 0)
			ss_res = 0;
		fit->r2[t] = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
	}
}

int nt_fit_matrix(const double *mat, int n_sm, int n_line, int kmax, const char *what,
		  struct nt_fit *fit, struct nt_err *err)
{
	int *used = NULL, m, ret = -1;
	double *res = NULL, ss_tot, ss_res = 0;

	if (!what)
		what = "matrix";
	if (!fit)
		return nt_err_set(err, "%s: fit: no output", what);
	memset(fit, 0, sizeof(*fit));
	for (int t = 0; t < NT_FIT_KMAX; t++)
		fit->sigma[t] = NAN;
	if (!mat || n_sm <= 0 || n_line <= 0 || kmax < 0 || kmax > NT_FIT_KMAX)
		return nt_err_set(err, "%s: fit: bad arguments (%d x %d matrix, k = %d)",
				  what, n_sm, n_line, kmax);
	fit->n_sm = n_sm;
	fit->n_line = n_line;
	used = malloc(sizeof(*used) * n_sm);
	if (!used) {
		nt_err_set(err, "%s: out of memory", what);
		goto out;
	}
	m = pick_rows(mat, n_sm, n_line, used, what, err);
	if (m < 0)
		goto out;
	fit->rows_used = m;
	fit->a = malloc(sizeof(double) * n_sm);
	fit->b = malloc(sizeof(double) * n_line);
	res = malloc(sizeof(*res) * (size_t)m * n_line);
	if (!fit->a || !fit->b || !res) {
		nt_err_set(err, "%s: out of memory", what);
		goto out;
	}
	fit_additive(mat, used, fit, m, res, &ss_tot);
	for (size_t c = 0; c < (size_t)m * n_line; c++)
		ss_res += res[c] * res[c];
	if (kmax && fit_interaction(fit, used, res, m, kmax, ss_tot, what, err))
		goto out;
	fill_r2(fit, kmax, ss_tot, ss_res);
	ret = 0;
out:
	if (ret)
		nt_fit_free(fit);
	free(used);
	free(res);
	return ret;
}

void nt_fit_free(struct nt_fit *fit)
{
	if (!fit)
		return;
	free(fit->a);
	free(fit->b);
	for (int t = 0; t < NT_FIT_KMAX; t++) {
		free(fit->u[t]);
		free(fit->v[t]);
	}
	memset(fit, 0, sizeof(*fit));
}
