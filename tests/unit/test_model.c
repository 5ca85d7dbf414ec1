/* Unit tests for core/analysis/model.c: fits of synthetic matrices with known terms. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/model.h"

static uint64_t rng_state;

/* Uniform in [-1, 1): a fixed generator so the tests never vary. */
static double urand(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

static double dot(const double *x, const double *y, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += x[i] * y[i];
	return s;
}

/* Random vector, zero mean, unit, orthogonal to the `nprev` given ones. */
static void orthovec(double *x, int n, double **prev, int nprev)
{
	double mean = 0, norm;

	for (int i = 0; i < n; i++)
		mean += (x[i] = urand()) / n;
	for (int i = 0; i < n; i++)
		x[i] -= mean;
	for (int p = 0; p < nprev; p++) {
		double d = dot(x, prev[p], n);

		for (int i = 0; i < n; i++)
			x[i] -= d * prev[p][i];
	}
	norm = sqrt(dot(x, x, n));
	for (int i = 0; i < n; i++)
		x[i] /= norm;
}

static void zero_sum(double *x, int n, double scale)
{
	double mean = 0;

	for (int i = 0; i < n; i++)
		mean += (x[i] = scale * urand()) / n;
	for (int i = 0; i < n; i++)
		x[i] -= mean;
}

/* The sign rule: the largest |component| of u is positive. */
static void assert_sign_rule(const double *u, int n)
{
	int big = 0;

	for (int i = 1; i < n; i++)
		if (fabs(u[i]) > fabs(u[big]))
			big = i;
	assert_true(u[big] > 0);
}

/* L = mu + a + b + sum_t s[t] u[t] v[t]^T + noise * U(-1, 1). */
static double *make_matrix(int ns, int nl, double mu, const double *a, const double *b,
			   int k, const double *s, double **u, double **v, double noise)
{
	double *m = malloc(sizeof(*m) * ns * nl);

	for (int i = 0; i < ns; i++)
		for (int j = 0; j < nl; j++) {
			double x = mu + a[i] + b[j] + noise * urand();

			for (int t = 0; t < k; t++)
				x += s[t] * u[t][i] * v[t][j];
			m[i * nl + j] = x;
		}
	return m;
}

static void test_additive_exact(void **state)
{
	enum { NS = 20, NL = 12 };
	double a[NS], b[NL], *m;
	struct nt_fit fit;
	struct nt_err err;

	rng_state = 1;
	zero_sum(a, NS, 30);
	zero_sum(b, NL, 10);
	m = make_matrix(NS, NL, 300, a, b, 0, NULL, NULL, NULL, 0);
	assert_int_equal(nt_fit_matrix(m, NS, NL, 2, NULL, &fit, &err), 0);
	assert_int_equal(fit.rows_used, NS);
	assert_true(fabs(fit.mu - 300) < 1e-9);
	for (int i = 0; i < NS; i++)
		assert_true(fabs(fit.a[i] - a[i]) < 1e-9);
	for (int j = 0; j < NL; j++)
		assert_true(fabs(fit.b[j] - b[j]) < 1e-9);
	assert_true(fabs(fit.r2[0] - 1) < 1e-12);
	/* nothing left for an interaction term to explain */
	assert_int_equal(fit.k, 0);
	assert_null(fit.u[0]);
	assert_true(fabs(fit.r2[2] - 1) < 1e-12);
	assert_true(isnan(fit.r2[3]));
	nt_fit_free(&fit);
	free(m);
}

/* Hopper-like: SM partition (u's sign) x line partition dominates. */
static void test_rank1_partition(void **state)
{
	enum { NS = 132, NL = 96 };
	double a[NS], b[NL], u[NS], v[NL], *uu[1] = { u }, *vv[1] = { v }, s = 1400, *m;
	struct nt_fit fit;
	struct nt_err err;
	double nu = 0, nv = 0;

	rng_state = 2;
	zero_sum(a, NS, 5);
	zero_sum(b, NL, 5);
	/* SMs 0..65 in one partition, 66..131 in the other, lines alternate */
	for (int i = 0; i < NS; i++) {
		u[i] = (i < NS / 2 ? 1 : -1) * (1 + 0.1 * urand());
		nu += u[i] * u[i];
	}
	for (int j = 0; j < NL; j++) {
		v[j] = j % 2 ? 1 : -1;
		nv += v[j] * v[j];
	}
	for (int i = 0; i < NS; i++)
		u[i] /= sqrt(nu);
	for (int j = 0; j < NL; j++)
		v[j] /= sqrt(nv);
	m = make_matrix(NS, NL, 380, a, b, 1, &s, uu, vv, 0.5);
	assert_int_equal(nt_fit_matrix(m, NS, NL, 2, NULL, &fit, &err), 0);
	assert_true(fit.r2[0] < 0.3);
	assert_true(fit.r2[1] > 0.99);
	assert_true(fit.r2[2] >= fit.r2[1]);
	assert_true(fabs(fit.sigma[0] / s - 1) < 0.02);
	assert_true(fabs(fabs(dot(fit.u[0], u, NS)) - 1) < 1e-3);
	assert_true(fabs(fabs(dot(fit.v[0], v, NL)) - 1) < 1e-3);
	/* the fitted u splits the SMs exactly where the partition does */
	for (int i = 1; i < NS; i++)
		assert_int_equal(fit.u[0][i] > 0, fit.u[0][0] > 0 ? i < NS / 2 : i >= NS / 2);
	nt_fit_free(&fit);
	free(m);
}

static void test_rank3_exact(void **state)
{
	enum { NS = 40, NL = 64 };
	double a[NS], b[NL], us[3][NS], vs[3][NL], s[3] = { 50, 20, 7 };
	double *u[3] = { us[0], us[1], us[2] }, *v[3] = { vs[0], vs[1], vs[2] }, *m;
	struct nt_fit fit;
	struct nt_err err;

	rng_state = 3;
	zero_sum(a, NS, 10);
	zero_sum(b, NL, 10);
	for (int t = 0; t < 3; t++) {
		orthovec(u[t], NS, u, t);
		orthovec(v[t], NL, v, t);
	}
	m = make_matrix(NS, NL, 250, a, b, 3, s, u, v, 0);
	assert_int_equal(nt_fit_matrix(m, NS, NL, 3, NULL, &fit, &err), 0);
	assert_int_equal(fit.k, 3);
	assert_true(fit.r2[0] < fit.r2[1] && fit.r2[1] < fit.r2[2]);
	assert_true(fabs(fit.r2[3] - 1) < 1e-10);
	for (int t = 0; t < 3; t++) {
		assert_true(fabs(fit.sigma[t] - s[t]) < 1e-8);
		assert_true(fabs(fabs(dot(fit.u[t], u[t], NS)) - 1) < 1e-9);
		assert_true(fabs(dot(fit.u[t], fit.u[t], NS) - 1) < 1e-12);
		assert_true(fabs(dot(fit.v[t], fit.v[t], NL) - 1) < 1e-12);
		assert_sign_rule(fit.u[t], NS);
		for (int q = 0; q < t; q++)
			assert_true(fabs(dot(fit.u[t], fit.u[q], NS)) < 1e-10);
	}
	nt_fit_free(&fit);
	free(m);
}

/* Two equal singular values: the solver must still split them cleanly. */
static void test_degenerate_terms(void **state)
{
	enum { NS = 30, NL = 30 };
	double a[NS] = { 0 }, b[NL] = { 0 }, us[2][NS], vs[2][NL], s[2] = { 9, 9 };
	double *u[2] = { us[0], us[1] }, *v[2] = { vs[0], vs[1] }, *m;
	struct nt_fit fit;

	rng_state = 4;
	for (int t = 0; t < 2; t++) {
		orthovec(u[t], NS, u, t);
		orthovec(v[t], NL, v, t);
	}
	m = make_matrix(NS, NL, 100, a, b, 2, s, u, v, 0);
	assert_int_equal(nt_fit_matrix(m, NS, NL, 3, NULL, &fit, NULL), 0);
	assert_int_equal(fit.k, 2);
	assert_true(fabs(fit.sigma[0] - 9) < 1e-9 && fabs(fit.sigma[1] - 9) < 1e-9);
	assert_true(fabs(fit.r2[2] - 1) < 1e-12 && fabs(fit.r2[3] - 1) < 1e-12);
	assert_true(fabs(dot(fit.u[0], fit.u[1], NS)) < 1e-9);
	nt_fit_free(&fit);
	free(m);
}

/* Unmeasured SMs are skipped and change nothing else. */
static void test_skipped_rows(void **state)
{
	enum { NS = 16, NL = 10 };
	double a[NS], b[NL], u[NS], v[NL], *uu[1] = { u }, *vv[1] = { v }, s = 40;
	double *m, *packed = malloc(sizeof(double) * NS * NL);
	struct nt_fit full, part;
	int skip[NS] = { [3] = 1, [11] = 1 }, r = 0;

	rng_state = 5;
	zero_sum(a, NS, 10);
	zero_sum(b, NL, 10);
	orthovec(u, NS, NULL, 0);
	orthovec(v, NL, NULL, 0);
	m = make_matrix(NS, NL, 200, a, b, 1, &s, uu, vv, 0.3);
	for (int i = 0; i < NS; i++) {
		if (!skip[i]) {
			memcpy(packed + r++ * NL, m + i * NL, sizeof(double) * NL);
			continue;
		}
		for (int j = 0; j < NL; j++)
			m[i * NL + j] = NAN;
	}
	assert_int_equal(nt_fit_matrix(m, NS, NL, 1, NULL, &full, NULL), 0);
	assert_int_equal(nt_fit_matrix(packed, NS - 2, NL, 1, NULL, &part, NULL), 0);
	assert_int_equal(full.rows_used, NS - 2);
	assert_true(isnan(full.a[3]) && isnan(full.a[11]) && isnan(full.u[0][3]));
	assert_true(fabs(full.mu - part.mu) < 1e-9);
	assert_true(fabs(full.r2[1] - part.r2[1]) < 1e-12);
	r = 0;
	for (int i = 0; i < NS; i++) {
		if (skip[i])
			continue;
		assert_true(fabs(full.a[i] - part.a[r]) < 1e-9);
		assert_true(fabs(full.u[0][i] - part.u[0][r]) < 1e-9);
		r++;
	}
	nt_fit_free(&full);
	nt_fit_free(&part);
	free(m);
	free(packed);
}

static void test_hole_is_error(void **state)
{
	double m[6 * 8];
	struct nt_fit fit;
	struct nt_err err = { "" };

	for (int c = 0; c < 6 * 8; c++)
		m[c] = 300 + c % 5;
	m[5 * 8 + 7] = NAN;
	assert_int_equal(nt_fit_matrix(m, 6, 8, 1, "first-touch matrix", &fit, &err), -1);
	assert_string_equal(err.msg, "first-touch matrix: sm 5 line 7 is not measured");
	assert_null(fit.a);
	nt_fit_free(&fit);
	m[5 * 8 + 7] = INFINITY;
	assert_int_equal(nt_fit_matrix(m, 6, 8, 1, NULL, &fit, &err), -1);
	assert_non_null(strstr(err.msg, "not finite"));
	for (int j = 0; j < 8; j++)
		m[5 * 8 + j] = -INFINITY;	/* not the same as unmeasured */
	assert_int_equal(nt_fit_matrix(m, 6, 8, 1, NULL, &fit, &err), -1);
	assert_non_null(strstr(err.msg, "sm 5 line 0 is not finite"));
	for (int c = 0; c < 6 * 8; c++)
		m[c] = NAN;
	assert_int_equal(nt_fit_matrix(m, 6, 8, 1, NULL, &fit, &err), -1);
	assert_non_null(strstr(err.msg, "no SM"));
	assert_int_equal(nt_fit_matrix(m, 6, 8, 4, NULL, &fit, &err), -1);
	assert_int_equal(nt_fit_matrix(m, 0, 8, 1, NULL, &fit, NULL), -1);
}

/* Flipping the sign of the planted term must not flip the output's u. */
static void test_sign_is_fixed(void **state)
{
	enum { NS = 24, NL = 16 };
	double a[NS] = { 0 }, b[NL] = { 0 }, u[NS], v[NL], *uu[1] = { u }, *vv[1] = { v };
	double s = 10, ms = -10, *m1, *m2;
	struct nt_fit f1, f2;

	/* several seeds, so that a solver's lucky sign cannot pass */
	for (int seed = 0; seed < 8; seed++) {
		rng_state = 60 + seed;
		orthovec(u, NS, NULL, 0);
		orthovec(v, NL, NULL, 0);
		m1 = make_matrix(NS, NL, 0, a, b, 1, &s, uu, vv, 0);
		m2 = make_matrix(NS, NL, 0, a, b, 1, &ms, uu, vv, 0);
		assert_int_equal(nt_fit_matrix(m1, NS, NL, 1, NULL, &f1, NULL), 0);
		assert_int_equal(nt_fit_matrix(m2, NS, NL, 1, NULL, &f2, NULL), 0);
		assert_sign_rule(f1.u[0], NS);
		for (int i = 0; i < NS; i++)
			assert_true(fabs(f1.u[0][i] - f2.u[0][i]) < 1e-12);
		for (int j = 0; j < NL; j++)
			assert_true(fabs(f1.v[0][j] + f2.v[0][j]) < 1e-12);
		nt_fit_free(&f1);
		nt_fit_free(&f2);
		free(m1);
		free(m2);
	}
}

/* H200 size, noisy rank 2: must stay far below the 100 ms budget. */
static void test_speed_h200_size(void **state)
{
	enum { NS = 132, NL = 256 };
	double a[NS], b[NL], us[2][NS], vs[2][NL], s[2] = { 2000, 300 };
	double *u[2] = { us[0], us[1] }, *v[2] = { vs[0], vs[1] }, *m, ms;
	struct nt_fit fit;
	struct timespec t0, t1;

	rng_state = 7;
	zero_sum(a, NS, 20);
	zero_sum(b, NL, 20);
	for (int t = 0; t < 2; t++) {
		orthovec(u[t], NS, u, t);
		orthovec(v[t], NL, v, t);
	}
	m = make_matrix(NS, NL, 300, a, b, 2, s, u, v, 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(nt_fit_matrix(m, NS, NL, 3, NULL, &fit, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("fit 132 x 256, k = 3: %.1f ms\n", ms);
	assert_true(ms < 100);
	assert_int_equal(fit.k, 3);
	assert_true(fit.r2[2] > 0.99 && fit.r2[3] - fit.r2[2] < 0.01);
	assert_true(fabs(fabs(dot(fit.u[1], u[1], NS)) - 1) < 1e-3);
	for (int t = 0; t < 3; t++)
		assert_sign_rule(fit.u[t], NS);
	nt_fit_free(&fit);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_additive_exact),
		cmocka_unit_test(test_rank1_partition),
		cmocka_unit_test(test_rank3_exact),
		cmocka_unit_test(test_degenerate_terms),
		cmocka_unit_test(test_skipped_rows),
		cmocka_unit_test(test_hole_is_error),
		cmocka_unit_test(test_sign_is_fixed),
		cmocka_unit_test(test_speed_h200_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
