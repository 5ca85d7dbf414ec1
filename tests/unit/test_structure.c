/* Unit tests for core/analysis/structure.c: TPC pairs, groups, halves, Pearson. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"

static uint64_t rng_state;

static double urand(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / (double)(1ULL << 52) - 1.0;
}

static void test_pearson(void **state)
{
	double x[] = { 1, 2, 3, 4 }, y[] = { 1, 3, 2, 4 }, big[4], lin[10], neg[10];
	double xn[] = { 1, 2, NAN, 3, 4, 5 }, yn[] = { 1, 3, 100, 2, NAN, 4 };
	double flat[] = { 5, 5, 5, 5 };

	assert_true(fabs(nt_pearson(x, y, 4) - 0.8) < 1e-12);
	/* a large offset must not cost precision (two-pass sums) */
	for (int i = 0; i < 4; i++)
		big[i] = 1e8 + y[i];
	assert_true(fabs(nt_pearson(x, big, 4) - 0.8) < 1e-9);
	for (int i = 0; i < 10; i++) {
		lin[i] = 2 * i + 3;
		neg[i] = -i;
	}
	assert_true(fabs(nt_pearson(lin, neg, 10) + 1) < 1e-12);
	/* pairs with a NAN are dropped: (1,1) (2,3) (3,2) (5,4) */
	assert_true(fabs(nt_pearson(xn, yn, 6) - nt_pearson((double[]){ 1, 2, 3, 5 },
				(double[]){ 1, 3, 2, 4 }, 4)) < 1e-12);
	assert_true(isnan(nt_pearson(x, y, 2)));
	assert_true(isnan(nt_pearson(xn + 2, yn + 2, 3)));	/* 1 pair left */
	assert_true(isnan(nt_pearson(x, flat, 4)));
}

static void test_tpc_pairs(void **state)
{
	/* 6 pairs + a lone SM 12: pair 2 differs by 6, pair 4 lacks SM 9 */
	double v[13] = { 280, 280.1, 290, 290, 283, 277, 300, 300.2, 295, NAN, 288, 288, 999 };
	struct nt_tpc t;

	assert_int_equal(nt_tpc_pairs(v, 13, 0.5, &t), 0);
	assert_int_equal(t.pairs, 5);
	assert_int_equal(t.equal, 4);
	assert_true(fabs(t.max_diff - 6) < 1e-9);
	assert_true(fabs(t.median_diff - 0.1) < 1e-9);	/* 0, 0, 0.1, 0.2, 6 */
	assert_true(t.tol == 0.5);
	assert_int_equal(nt_tpc_pairs(v, 13, 10, &t), 0);
	assert_int_equal(t.equal, 5);
	assert_int_equal(nt_tpc_pairs(v, 1, 0.5, &t), 0);
	assert_int_equal(t.pairs, 0);
	assert_true(isnan(t.max_diff) && isnan(t.median_diff));
	assert_int_equal(nt_tpc_pairs(NULL, 4, 0.5, &t), -1);
}

/* Whole TPCs move, in order; NAN pairs and a lone last SM stay; the
 * multiset of values is kept; the seed decides, and every pair can go
 * anywhere. */
static void test_tpc_shuffle(void **state)
{
	double v[11] = { 1, 1.5, 2, 2.5, 3, NAN, 4, 4.5, 5, 5.5, 9 }, out[11], again[11];
	uint64_t seed = 42, seed2 = 42, s3 = 7;
	int seen[5][5] = { { 0 } }, moved = 0;

	nt_tpc_shuffle(v, 11, &seed, out);
	nt_tpc_shuffle(v, 11, &seed2, again);
	assert_memory_equal(out, again, sizeof(out));
	assert_true(seed == seed2 && seed != 42);
	assert_true(out[4] == 3 && isnan(out[5]) && out[10] == 9);
	for (int t = 0; t < 2000; t++) {
		nt_tpc_shuffle(v, 11, &s3, out);
		for (int k = 0; k < 5; k++) {
			int from;

			if (k == 2)
				continue;
			assert_true(out[2 * k + 1] == out[2 * k] + 0.5);	/* a pair moves whole */
			from = (int)out[2 * k] - 1;
			assert_true(from >= 0 && from < 5 && from != 2);
			seen[k][from]++;
			moved += from != k;
		}
	}
	for (int k = 0; k < 5; k++)
		for (int f = 0; f < 5; f++)
			if (k != 2 && f != 2)
				assert_true(seen[k][f] > 350 && seen[k][f] < 650);	/* 500 expected */
	assert_true(moved > 0);
}

/* nt_tpc_perm draws nt_tpc_shuffle's maps: the same values, SM by SM,
 * from the same seed, on maps with NAN pairs and an odd last SM. */
static void test_tpc_perm(void **state)
{
	double v[132], out[132];
	uint64_t a = 99, b = 99, r = 5;
	static struct nt_tpc_perm p;

	(void)state;
	for (int n = 1; n <= 132; n += 13) {
		for (int s = 0; s < n; s++) {
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			v[s] = (r >> 60) == 3 ? NAN : (double)(r >> 40);
		}
		nt_tpc_perm_init(v, n, &p);
		for (int t = 0; t < 50; t++) {
			nt_tpc_shuffle(v, n, &a, out);
			nt_tpc_perm_next(&p, &b);
			assert_true(a == b);
			for (int s = 0; s < n; s++) {
				double x = nt_tpc_perm_value(&p, v, s);

				assert_true(x == out[s] || (isnan(x) && isnan(out[s])));
			}
		}
	}
}

static void test_tpc_default_tol(void **state)
{
	double small[4] = { 0.05, 0.1, 0.24, 0.1 }, loud[5] = { 0.4, 0.3, NAN, 0.5, 2 };
	double none[2] = { NAN, NAN };

	assert_true(nt_tpc_default_tol(NULL, 0) == 0.5);
	assert_true(nt_tpc_default_tol(small, 4) == 0.5);
	assert_true(fabs(nt_tpc_default_tol(loud, 5) - 3 * 0.45) < 1e-12);
	assert_true(nt_tpc_default_tol(none, 2) == 0.5);
}

enum { GS = 30, GL = 64 };

/* SM i belongs to planted group truth(i): interleaved so numbering matters. */
static int truth(int i)
{
	return i < 2 ? 2 : (i * 7) % 3;
}

static double *group_matrix(void)
{
	double p[3][GL], b[GL], *m = malloc(sizeof(*m) * GS * GL);

	rng_state = 11;
	for (int j = 0; j < GL; j++) {
		b[j] = 40 * urand();	/* a strong shared line term */
		for (int t = 0; t < 3; t++)
			p[t][j] = 6 * urand();
	}
	for (int i = 0; i < GS; i++) {
		double a = 20 * urand();

		for (int j = 0; j < GL; j++)
			m[i * GL + j] = 300 + a + b[j] + p[truth(i)][j] + 0.3 * urand();
	}
	return m;
}

static void test_groups_planted(void **state)
{
	double *m = group_matrix();
	struct nt_groups g;
	struct nt_err err;
	int map[3] = { -1, -1, -1 };

	for (int j = 0; j < GL; j++)
		m[5 * GL + j] = NAN;	/* SM 5 not measured */
	assert_int_equal(nt_groups_cluster(m, GS, GL, 0.5, &g, &err), 0);
	assert_int_equal(g.n, GS);
	assert_int_equal(g.n_groups, 3);
	assert_int_equal(g.group[5], -1);
	/* numbered by smallest smid: SMs 0-2 are planted 2, SM 3 is 0, SM 4 is 1 */
	assert_int_equal(g.group[0], 0);
	assert_int_equal(g.group[2], 0);
	assert_int_equal(g.group[3], 1);
	assert_int_equal(g.group[4], 2);
	/* same partition as planted, as a bijection */
	for (int i = 0; i < GS; i++) {
		if (i == 5)
			continue;
		if (map[truth(i)] < 0)
			map[truth(i)] = g.group[i];
		assert_int_equal(g.group[i], map[truth(i)]);
	}
	assert_true(map[0] != map[1] && map[1] != map[2] && map[0] != map[2]);
	for (int k = 0; k < 3; k++)
		assert_true(g.within_r[k] > 0.9);
	nt_groups_free(&g);

	/* a very low threshold merges everything, a very high one nothing */
	assert_int_equal(nt_groups_cluster(m, GS, GL, -1.0, &g, &err), 0);
	assert_int_equal(g.n_groups, 1);
	nt_groups_free(&g);
	assert_int_equal(nt_groups_cluster(m, GS, GL, 1.01, &g, &err), 0);
	assert_int_equal(g.n_groups, GS - 1);
	assert_true(g.within_r[0] == 1);
	for (int i = 0; i < GS; i++)
		assert_int_equal(g.group[i], i < 5 ? i : i == 5 ? -1 : i - 1);
	nt_groups_free(&g);
	free(m);
}

static void test_groups_errors(void **state)
{
	double m[4 * 2] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct nt_groups g;
	struct nt_err err = { "" };

	assert_int_equal(nt_groups_cluster(m, 4, 2, 0.5, &g, &err), -1);
	assert_non_null(strstr(err.msg, "3 measured"));
	assert_null(g.group);
	assert_int_equal(nt_groups_cluster(NULL, 4, 2, 0.5, &g, &err), -1);
	nt_groups_free(&g);
}

/* L40-like: 142 SMs, second half (70) repeats the first 72, split 72. */
static void test_halves(void **state)
{
	enum { N = 142, S = 72 };
	double f[S], v[N];
	struct nt_halves h;

	rng_state = 12;
	for (int i = 0; i < S; i++)
		v[i] = f[i] = 280 + 50 * urand();
	for (int i = 0; i < N - S; i++)
		v[S + i] = f[i] + 0.2 * urand() + 3;
	v[10] = v[100] = NAN;
	assert_int_equal(nt_halves_best(v, N, &h), 0);
	assert_int_equal(h.split, S);
	assert_int_equal(h.len, N - S);
	assert_int_equal(h.mirrored, 0);
	assert_true(h.r > 0.999);

	for (int i = 0; i < N - S; i++)
		v[S + i] = f[S - 1 - i] - 2 + 0.2 * urand();
	assert_int_equal(nt_halves_best(v, N, &h), 0);
	assert_int_equal(h.split, S);
	assert_int_equal(h.mirrored, 1);
	assert_true(h.r > 0.999);
}

static void test_halves_too_few(void **state)
{
	double v[40];
	struct nt_halves h;

	for (int i = 0; i < 40; i++)
		v[i] = i % 3 ? NAN : i;	/* at most 7 pairs with both values */
	assert_int_equal(nt_halves_best(v, 40, &h), -1);
	assert_int_equal(h.split, -1);
	assert_true(isnan(h.r));
	assert_int_equal(nt_halves_best(v, 10, &h), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pearson),
		cmocka_unit_test(test_tpc_pairs),
		cmocka_unit_test(test_tpc_shuffle),
		cmocka_unit_test(test_tpc_perm),
		cmocka_unit_test(test_tpc_default_tol),
		cmocka_unit_test(test_groups_planted),
		cmocka_unit_test(test_groups_errors),
		cmocka_unit_test(test_halves),
		cmocka_unit_test(test_halves_too_few),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
