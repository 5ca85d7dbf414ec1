#include "report/attrib_ctl.h"

#include <math.h>
#include <string.h>

#define Q (NT_CTL_TERMS - 1)	/* regressors besides the intercept */

void nt_attrib_ctl_init(struct nt_attrib_ols *o)
{
	memset(o, 0, sizeof(*o));
	o->r2 = NAN;
	for (int t = 0; t < NT_CTL_TERMS; t++)
		o->coef[t] = o->se[t] = o->se_sm[t] = NAN;
}

/* Regressor t (0: latency, 1: co-residency, 2: wave) of block x. */
static double reg(const struct nt_attrib_block *x, const double *lat, int t)
{
	return t == 0 ? lat[x->sm] : t == 1 ? (double)x->coresident : (double)x->wave;
}

static double dur(const struct nt_attrib_block *x, int cycles)
{
	return cycles ? x->cycles : x->ns;
}

/*
 * Everything is done on centred regressors, where the intercept is
 * orthogonal to the slopes: X'X is diag(n, S) with S the q x q centred
 * cross-product of the kept regressors, so only S needs a Cholesky
 * factor, and a regressor is kept only when its part not explained by
 * the regressors before it (the Cholesky pivot) is a real fraction of
 * its spread.  The intercept of the uncentred model is recovered as
 * ybar - beta . xbar, its variance through the same linear map.
 */
void nt_attrib_ctl_fit(const struct nt_attrib_block *b, size_t n,
		       const double *lat, int cycles, struct nt_attrib_ols *o)
{
	double mx[Q] = { 0 }, my = 0, S[Q][Q] = { { 0 } }, sy[Q] = { 0 }, syy = 0;
	double L[Q][Q] = { { 0 } }, Li[Q][Q] = { { 0 } }, A[Q][Q] = { { 0 } }, beta[Q] = { 0 };
	double V[Q + 1][Q + 1], B[Q + 1][Q + 1], M[Q + 1][Q + 1] = { { 0 } }, s[Q + 1], g[Q + 1];
	double ssr = 0, sig2, corr;
	int keep[Q], q = 0, p, clusters = 0;

	nt_attrib_ctl_init(o);
	o->n = (int)n;
	if (n < 2)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct nt_attrib_block *x = &b[i];

		for (int t = 0; t < Q; t++)
			mx[t] += reg(x, lat, t) / (double)n;
		my += dur(x, cycles) / (double)n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct nt_attrib_block *x = &b[i];
		double d[Q], e = dur(x, cycles) - my;

		for (int t = 0; t < Q; t++)
			d[t] = reg(x, lat, t) - mx[t];
		for (int t = 0; t < Q; t++) {
			for (int u = 0; u < Q; u++)
				S[t][u] += d[t] * d[u];
			sy[t] += d[t] * e;
		}
		syy += e * e;
	}

	/* greedy selection by incremental Cholesky: L L' = S over kept */
	for (int t = 0; t < Q; t++) {
		double z[Q], piv = S[t][t], tiny = 1e-9 * fmax(fabs(mx[t]), 1.0);

		if (!(S[t][t] / (double)n > tiny * tiny))
			continue;	/* does not vary */
		for (int a = 0; a < q; a++) {
			z[a] = S[keep[a]][t];
			for (int c = 0; c < a; c++)
				z[a] -= L[a][c] * z[c];
			z[a] /= L[a][a];
			piv -= z[a] * z[a];
		}
		if (!(piv > 1e-9 * S[t][t]))
			continue;	/* determined by the ones before */
		for (int a = 0; a < q; a++)
			L[q][a] = z[a];
		L[q][q] = sqrt(piv);
		keep[q++] = t;
	}
	p = q + 1;
	o->terms = p;
	if (n <= (size_t)p)
		return;

	/* A = S^-1 = Li' Li with Li = L^-1 (lower triangular) */
	for (int a = 0; a < q; a++) {
		Li[a][a] = 1 / L[a][a];
		for (int r = a + 1; r < q; r++) {
			double v = 0;

			for (int c = a; c < r; c++)
				v -= L[r][c] * Li[c][a];
			Li[r][a] = v / L[r][r];
		}
	}
	for (int a = 0; a < q; a++)
		for (int c = 0; c < q; c++)
			for (int r = 0; r < q; r++)
				A[a][c] += Li[r][a] * Li[r][c];
	for (int a = 0; a < q; a++)
		for (int c = 0; c < q; c++)
			beta[a] += A[a][c] * sy[keep[c]];

	/* residuals: their sum of squares and per-SM scores z_i e_i */
	for (size_t i = 0; i < n; i++) {
		const struct nt_attrib_block *x = &b[i];
		double z[Q + 1], e = dur(x, cycles) - my;

		z[0] = 1;
		for (int a = 0; a < q; a++) {
			z[a + 1] = reg(x, lat, keep[a]) - mx[keep[a]];
			e -= beta[a] * z[a + 1];
		}
		ssr += e * e;
		if (!i || x->sm != b[i - 1].sm) {
			if (i)
				for (int r = 0; r < p; r++)
					for (int c = 0; c < p; c++)
						M[r][c] += s[r] * s[c];
			memset(s, 0, sizeof(s));
			clusters++;
		}
		for (int r = 0; r < p; r++)
			s[r] += z[r] * e;
	}
	for (int r = 0; r < p; r++)
		for (int c = 0; c < p; c++)
			M[r][c] += s[r] * s[c];

	o->fitted = 1;
	o->r2 = syy > 0 ? 1 - ssr / syy : NAN;
	sig2 = ssr / (double)(n - p);
	g[0] = 1;
	o->coef[NT_CTL_ICPT] = my;
	for (int a = 0; a < q; a++) {
		o->coef[keep[a] + 1] = beta[a];
		o->coef[NT_CTL_ICPT] -= beta[a] * mx[keep[a]];
		g[a + 1] = -mx[keep[a]];
	}

	/* with B = (X'X)^-1 = diag(1/n, A): classical V = sig2 B, clustered
	 * V = corr B M B; then the intercept's variance is g' V g */
	for (int r = 0; r < p; r++)
		for (int c = 0; c < p; c++)
			B[r][c] = !r && !c ? 1.0 / (double)n : r && c ? A[r - 1][c - 1] : 0;
	for (int pass = 0; pass < 2; pass++) {
		double *se = pass ? o->se_sm : o->se, v0 = 0;

		if (pass && clusters < 2)
			break;
		corr = (double)clusters / (clusters - 1) * (double)(n - 1) / (double)(n - p);
		for (int r = 0; r < p; r++)
			for (int c = 0; c < p; c++) {
				double v = 0;

				for (int k = 0; k < p && pass; k++)
					for (int l = 0; l < p; l++)
						v += B[r][k] * M[k][l] * B[l][c];
				V[r][c] = pass ? corr * v : sig2 * B[r][c];
			}
		for (int r = 0; r < p; r++)
			for (int c = 0; c < p; c++)
				v0 += g[r] * V[r][c] * g[c];
		se[NT_CTL_ICPT] = sqrt(v0);
		for (int a = 0; a < q; a++)
			se[keep[a] + 1] = sqrt(V[a + 1][a + 1]);
	}
}
