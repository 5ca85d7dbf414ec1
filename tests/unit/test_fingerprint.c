/* Unit tests for core/fingerprint.c, on the 12 maps of 6 H200s in
 * tests/data/maps (two per GPU, `-a` and `-b`, separate processes). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fingerprint.h"
#include "mapio.h"

static const char *const gpus[] = { "af5e0b1a", "707dd6a3", "2cf08462", "d81de1c0", "67ec3211", "ec165f43" };
#define N_GPUS 6
#define N_MAPS (2 * N_GPUS)

/* maps[2g] and maps[2g + 1] are the two runs of gpus[g]. */
static struct nt_map *maps[N_MAPS];

static int load_all(void **state)
{
	const char *dir = getenv("NT_TEST_DATA");

	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		struct nt_err err;
		char path[512];

		snprintf(path, sizeof(path), "%s/maps/h200-%s-%c.json", dir ? dir : "tests/data",
			 gpus[i / 2], "ab"[i % 2]);
		if (nt_map_read_json(path, &maps[i], &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return -1;
		}
	}
	return 0;
}

static int free_all(void **state)
{
	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		nt_map_free(maps[i]);
		maps[i] = NULL;
	}
	return 0;
}

static double dist(const struct nt_map *a, const struct nt_map *b)
{
	struct nt_err err;
	double d = NAN;

	if (nt_fp_distance(a, b, &d, &err))
		fail_msg("%s", err.msg);
	return d;
}

static const char *label(int i)
{
	static char buf[N_MAPS][16];

	snprintf(buf[i], sizeof(buf[i]), "%s-%c", gpus[i / 2], "ab"[i % 2]);
	return buf[i];
}

/* The table of fingerprint.h: the threshold sits between the largest
 * same-GPU and the smallest different-GPU distance, at their geometric
 * mean.  Printed so that the numbers in the header can be checked. */
static void test_distance_table_and_threshold(void **state)
{
	double same_max = 0, diff_min = INFINITY;

	(void)state;
	print_message("%-11s", "");
	for (int j = 0; j < N_MAPS; j++)
		print_message(" %6.6s-%c", gpus[j / 2], "ab"[j % 2]);
	print_message("\n");
	for (int i = 0; i < N_MAPS; i++) {
		print_message("%-11s", label(i));
		for (int j = 0; j < N_MAPS; j++) {
			double d = dist(maps[i], maps[j]);

			print_message(" %8.3f", d);
			assert_true(fabs(d - dist(maps[j], maps[i])) < 1e-12);	/* symmetric */
			if (i == j)
				assert_true(d == 0);
			else if (i / 2 == j / 2)
				same_max = fmax(same_max, d);
			else
				diff_min = fmin(diff_min, d);
		}
		print_message("\n");
	}
	print_message("same-GPU max %.3f, different-GPU min %.3f, geometric mean %.3f, threshold %.3f\n",
		      same_max, diff_min, sqrt(same_max * diff_min), NT_FP_UNKNOWN_THRESHOLD);
	assert_true(same_max < NT_FP_UNKNOWN_THRESHOLD);
	assert_true(diff_min > NT_FP_UNKNOWN_THRESHOLD);
	/* At least a factor 4 of room on each side. */
	assert_true(same_max * 4 < NT_FP_UNKNOWN_THRESHOLD);
	assert_true(NT_FP_UNKNOWN_THRESHOLD * 4 < diff_min);
	assert_true(fabs(sqrt(same_max * diff_min) - NT_FP_UNKNOWN_THRESHOLD) < 0.1);
}

/* Every map against the other 11 finds its twin, confidently. */
static void test_match_finds_twin(void **state)
{
	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		const struct nt_map *cands[N_MAPS - 1];
		int idx[N_MAPS - 1], n = 0;
		struct nt_fp_match mt;
		struct nt_err err;

		for (int j = 0; j < N_MAPS; j++)
			if (j != i) {
				idx[n] = j;
				cands[n++] = maps[j];
			}
		assert_int_equal(nt_fp_match(maps[i], cands, n, 0, &mt, &err), 0);
		assert_false(mt.unknown);
		assert_int_equal(idx[mt.best], i ^ 1);
		assert_true(mt.second >= 0 && idx[mt.second] / 2 != i / 2);
		assert_true(mt.best_d < mt.second_d);
		assert_true(mt.threshold == NT_FP_UNKNOWN_THRESHOLD);
		assert_int_equal(mt.skipped, 0);
		assert_true(mt.confidence > 0.75 && mt.confidence <= 1);
		assert_true(fabs(mt.confidence - (1 - mt.best_d / NT_FP_UNKNOWN_THRESHOLD)) < 1e-12);
	}
}

/* A GPU whose twin is not among the candidates is unknown, for every GPU
 * and both of its maps; a low enough threshold override makes even the
 * twin unknown, a high one lets the nearest stranger through. */
static void test_unknown_without_twin(void **state)
{
	int unknown = 0;

	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		const struct nt_map *cands[N_MAPS];
		struct nt_fp_match mt;
		struct nt_err err;
		int n = 0;

		for (int j = 0; j < N_MAPS; j++)
			if (j / 2 != i / 2)
				cands[n++] = maps[j];
		assert_int_equal(n, N_MAPS - 2);
		assert_int_equal(nt_fp_match(maps[i], cands, n, 0, &mt, &err), 0);
		assert_true(mt.best >= 0 && mt.best_d > NT_FP_UNKNOWN_THRESHOLD);
		assert_true(mt.confidence == 0);
		unknown += mt.unknown;

		assert_int_equal(nt_fp_match(maps[i], cands, n, 1000, &mt, &err), 0);
		assert_false(mt.unknown);
		assert_true(mt.threshold == 1000);

		cands[0] = maps[i ^ 1];
		assert_int_equal(nt_fp_match(maps[i], cands, 1, 0.01, &mt, &err), 0);
		assert_true(mt.unknown);
		assert_int_equal(mt.best, 0);
	}
	assert_int_equal(unknown, N_MAPS);
}

/* Leave-one-out over the 12 maps: 12 correct, the confusion matrix is
 * two per GPU on the diagonal; with a GPU's second map left out, its
 * lone map comes out unknown, which counts as correct. */
static void test_eval(void **state)
{
	struct nt_fp_eval ev;
	struct nt_err err;
	const struct nt_map *subset[N_MAPS - 1];

	(void)state;
	assert_int_equal(nt_fp_eval((const struct nt_map *const *)maps, N_MAPS, 0, &ev, &err), 0);
	assert_int_equal(ev.n_ids, N_GPUS);
	assert_int_equal(ev.correct, N_MAPS);
	assert_int_equal(ev.wrong, 0);
	assert_int_equal(ev.unknown, 0);
	for (int t = 0; t < N_GPUS; t++) {
		assert_true(strstr(ev.ids[t], gpus[t]) != NULL);
		for (int p = 0; p <= N_GPUS; p++)
			assert_int_equal(ev.confusion[t * (N_GPUS + 1) + p], p == t ? 2 : 0);
	}
	for (int i = 0; i < N_MAPS; i++) {
		assert_int_equal(ev.truth[i], i / 2);
		assert_int_equal(ev.predicted[i], i / 2);
		assert_true(ev.confidence[i] > 0.75);
		assert_true(ev.dist[i * N_MAPS + (i ^ 1)] == ev.best_d[i]);
	}
	assert_true(ev.same_max < NT_FP_UNKNOWN_THRESHOLD && ev.diff_min > NT_FP_UNKNOWN_THRESHOLD);
	assert_true(ev.same_min <= ev.same_max && ev.diff_min <= ev.diff_max);
	print_message("eval: %d correct, %d wrong, %d unknown; "
		      "same-GPU %.3f..%.3f, different %.3f..%.3f\n", ev.correct, ev.wrong,
		      ev.unknown, ev.same_min, ev.same_max, ev.diff_min, ev.diff_max);
	nt_fp_eval_free(&ev);

	/* Drop maps[1] (af5e0b1a-b): af5e0b1a-a has no twin. */
	subset[0] = maps[0];
	for (int i = 2; i < N_MAPS; i++)
		subset[i - 1] = maps[i];
	assert_int_equal(nt_fp_eval(subset, N_MAPS - 1, 0, &ev, &err), 0);
	assert_int_equal(ev.correct, N_MAPS - 1);
	assert_int_equal(ev.wrong + ev.unknown, 0);
	assert_int_equal(ev.predicted[0], N_GPUS);
	assert_int_equal(ev.confusion[0 * (N_GPUS + 1) + N_GPUS], 1);
	nt_fp_eval_free(&ev);

	/* A threshold too low for anything: every map with a twin is a miss. */
	assert_int_equal(nt_fp_eval((const struct nt_map *const *)maps, N_MAPS, 1e-6, &ev, &err), 0);
	assert_int_equal(ev.unknown, N_MAPS);
	assert_int_equal(ev.correct + ev.wrong, 0);
	nt_fp_eval_free(&ev);

	assert_int_equal(nt_fp_eval(NULL, 0, 0, &ev, &err), -1);
	nt_fp_eval_free(&ev);
}

static void test_different_sm_counts(void **state)
{
	struct nt_map *small = nt_map_new(131, 0, NT_MAP_NOISE);
	const struct nt_map *cands[2];
	struct nt_fp_match mt;
	struct nt_fp_eval ev;
	struct nt_err err;
	double d = -1;

	(void)state;
	assert_non_null(small);
	snprintf(small->gpu.uuid, sizeof(small->gpu.uuid), "GPU-small");
	for (int i = 0; i < 131; i++) {
		small->chain[i] = maps[0]->chain[i];
		small->noise[i] = maps[0]->noise[i];
	}
	assert_int_equal(nt_fp_distance(maps[0], small, &d, &err), -1);
	assert_true(d == -1);
	assert_non_null(strstr(err.msg, maps[0]->gpu.uuid));
	assert_non_null(strstr(err.msg, "GPU-small"));
	assert_non_null(strstr(err.msg, "132"));
	assert_non_null(strstr(err.msg, "131"));

	/* Matching skips it; with nothing else, the map is unknown. */
	cands[0] = small;
	cands[1] = maps[1];
	assert_int_equal(nt_fp_match(maps[0], cands, 2, 0, &mt, &err), 0);
	assert_int_equal(mt.skipped, 1);
	assert_int_equal(mt.best, 1);
	assert_int_equal(mt.second, -1);
	assert_true(isnan(mt.second_d));
	assert_false(mt.unknown);
	assert_int_equal(nt_fp_match(maps[0], cands, 1, 0, &mt, &err), 0);
	assert_true(mt.unknown && mt.best == -1 && mt.skipped == 1);
	assert_int_equal(nt_fp_match(maps[0], cands, 0, 0, &mt, &err), 0);
	assert_true(mt.unknown && mt.best == -1 && mt.skipped == 0);

	/* In an evaluation, the pair has no distance. */
	cands[0] = maps[0];
	cands[1] = small;
	assert_int_equal(nt_fp_eval(cands, 2, 0, &ev, &err), 0);
	assert_true(isnan(ev.dist[1]) && isnan(ev.dist[2]));
	assert_true(isnan(ev.same_max) && isnan(ev.diff_min));
	assert_int_equal(ev.correct, 2);	/* both alone, both unknown */
	nt_fp_eval_free(&ev);

	/* No SM measured in both. */
	for (int i = 0; i < 131; i++)
		small->chain[i] = NAN;
	assert_int_equal(nt_fp_distance(small, small, &d, &err), -1);
	assert_non_null(strstr(err.msg, "no SM"));
	nt_map_free(small);
}

/* A clock or temperature shift moves every SM alike: no effect. */
static void test_offset_invariance(void **state)
{
	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		struct nt_map *shifted = nt_map_dup(maps[i]);

		assert_non_null(shifted);
		for (int k = 0; k < shifted->n_sm; k++)
			shifted->chain[k] += i % 2 ? 7.25 : -13.5;
		for (int j = 0; j < N_MAPS; j++)
			assert_true(fabs(dist(shifted, maps[j]) - dist(maps[i], maps[j])) < 1e-9);
		assert_true(dist(shifted, maps[i]) < 1e-9);
		nt_map_free(shifted);
	}
}

/* A real difference moves a whole TPC and counts; the same difference on
 * SMs whose noise is huge barely counts; a glitch on one SM of a TPC does
 * not count.  Missing noise and NAN SMs are handled. */
static void test_noise_weighting(void **state)
{
	struct nt_map *m = nt_map_dup(maps[0]);
	double base = dist(maps[0], maps[1]), d;

	(void)state;
	assert_non_null(m);
	m->chain[40] += 20;
	m->chain[41] += 20;
	d = dist(m, maps[1]);
	assert_true(d > NT_FP_UNKNOWN_THRESHOLD);
	m->noise[40] = m->noise[41] = 1e5;
	d = dist(m, maps[1]);
	assert_true(fabs(d - base) < 0.01);

	/* One SM of a TPC off by 20 cycles, at normal noise: ignored. */
	nt_map_free(m);
	m = nt_map_dup(maps[0]);
	m->chain[77] += 20;
	assert_true(fabs(dist(m, maps[1]) - base) < 0.05);

	/* No noise part: the floor alone scales (never below the floor, so
	 * the distance can only grow). */
	free(m->noise);
	m->noise = NULL;
	m->chain[77] -= 20;
	assert_true(dist(m, maps[1]) >= base - 1e-12);
	assert_true(dist(m, maps[1]) < NT_FP_UNKNOWN_THRESHOLD);

	/* Unmeasured SMs are left out, the rest still matches. */
	m->chain[3] = m->chain[10] = m->chain[11] = NAN;
	assert_true(dist(m, maps[1]) < NT_FP_UNKNOWN_THRESHOLD);
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance_table_and_threshold),
		cmocka_unit_test(test_match_finds_twin),
		cmocka_unit_test(test_unknown_without_twin),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_different_sm_counts),
		cmocka_unit_test(test_offset_invariance),
		cmocka_unit_test(test_noise_weighting),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}
