/* Unit tests for core/analysis/fingerprint.c, on the real H200 maps in
 * tests/data/maps: two maps each (`-a`, `-b`, separate processes) of
 * seven GPUs, and four maps of an eighth (GPU-c9b1521b) taken in one
 * minute with the chain buffer in different places: a full calibration,
 * a quick one, a quick one while another process held 20 GiB, and the
 * quick map of `nucatrace fingerprint`. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/fingerprint.h"
#include "maptest.h"

static const char *const files[] = {
	"af5e0b1a-a", "af5e0b1a-b", "707dd6a3-a", "707dd6a3-b", "2cf08462-a", "2cf08462-b",
	"d81de1c0-a", "d81de1c0-b", "67ec3211-a", "67ec3211-b", "ec165f43-a", "ec165f43-b",
	"a0094aaf-a", "a0094aaf-b", "c9b1521b-full", "c9b1521b-quick", "c9b1521b-quick-shifted",
	"c9b1521b-fingerprint",
};
#define N_MAPS ((int)(sizeof(files) / sizeof(files[0])))
#define N_GPUS 8

static struct nt_map *maps[N_MAPS];

/* The three GPUs whose maps share one signature (fingerprint.h). */
static int in_shared_class(int i)
{
	return !strncmp(files[i], "af5e0b1a", 8) || !strncmp(files[i], "a0094aaf", 8) ||
	       !strncmp(files[i], "ec165f43", 8);
}

static int same_gpu(int i, int j)
{
	return !strncmp(files[i], files[j], 8);
}

static int load_all(void **state)
{
	(void)state;
	for (int i = 0; i < N_MAPS; i++)
		if (!(maps[i] = real_map(files[i])))
			return -1;
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

static int sig(const struct nt_map *a, const struct nt_map *b)
{
	struct nt_err err;
	int g = -1;

	if (nt_fp_signature(a, b, &g, &err))
		fail_msg("%s", err.msg);
	return g;
}

/* The numbers of fingerprint.h.  Fine distance: maps of one GPU taken
 * alike are close, but where the chain buffer lands moves it past 5;
 * signature: no TPC of one GPU ever differs by 2 cycles, while GPUs that
 * differ at all do so on at least 5 TPCs. */
static void test_distance_and_signature_table(void **state)
{
	double alike_max = 0, placed_min = INFINITY;
	int same_sig_max = 0, diff_sig_min = 1 << 30, shared_pairs = 0;

	(void)state;
	for (int i = 0; i < N_MAPS; i++)
		for (int j = i + 1; j < N_MAPS; j++) {
			double d = dist(maps[i], maps[j]);
			int g = sig(maps[i], maps[j]);

			assert_int_equal(g, sig(maps[j], maps[i]));
			assert_true(fabs(d - dist(maps[j], maps[i])) < 1e-12);
			if (same_gpu(i, j)) {
				/* -a/-b: separate processes, same allocations */
				if (!strncmp(files[i], "c9b1521b", 8))
					placed_min = fmin(placed_min, strstr(files[i], "full") ? d : INFINITY);
				else
					alike_max = fmax(alike_max, d);
				same_sig_max = g > same_sig_max ? g : same_sig_max;
			} else if (in_shared_class(i) && in_shared_class(j)) {
				assert_int_equal(g, 0);
				shared_pairs++;
			} else {
				diff_sig_min = g < diff_sig_min ? g : diff_sig_min;
			}
		}
	print_message("fine: alike max %.3f, full vs quick min %.3f; signature: same max %d, "
		      "different min %d\n", alike_max, placed_min, same_sig_max, diff_sig_min);
	assert_true(alike_max < 0.6);
	assert_true(placed_min > 4.5);
	assert_int_equal(same_sig_max, 0);
	assert_true(diff_sig_min >= 5);
	assert_true(diff_sig_min > NT_FP_SIG_MATCH);
	assert_int_equal(shared_pairs, 12);	/* 6 maps, 3 GPUs: 15 pairs, 3 of them same-GPU */
	/* The full calibration and the fingerprint's quick map of GPU-c9b1521b:
	 * the same chip, 5 apart by the fine distance, equal by signature. */
	assert_true(dist(maps[14], maps[17]) > 4.5);
	assert_int_equal(sig(maps[14], maps[17]), 0);
}

/* Every map, against all the others, matches a set holding its own GPU:
 * alone for the five GPUs of a signature of their own, among three for
 * the shared class, where the fine distance still picks the twin for the
 * -a/-b maps (measured alike) but need not for c9b1521b's. */
static void test_match_finds_twin(void **state)
{
	(void)state;
	for (int i = 0; i < N_MAPS; i++) {
		const struct nt_map *cands[N_MAPS];
		struct nt_fp_match mt;
		struct nt_err err;
		int n = 0;

		for (int j = 0; j < N_MAPS; j++)
			if (j != i)
				cands[n++] = maps[j];
		assert_int_equal(nt_fp_match(maps[i], cands, n, -1, &mt, &err), 0);
		assert_false(mt.unknown);
		assert_int_equal(mt.threshold, NT_FP_SIG_MATCH);
		assert_int_equal(mt.best_sig, 0);
		assert_int_equal(mt.shared, in_shared_class(i) ? 3 : 1);
		if (!in_shared_class(i)) {
			assert_string_equal(cands[mt.best]->gpu.uuid, maps[i]->gpu.uuid);
			assert_true(mt.confidence == 1);
			assert_true(mt.second_sig >= 5);
		}
	}
}

/* Without its twin, a GPU of a signature of its own is unknown; one of the
 * shared class matches the other two (and says so: shared 2).  A threshold
 * of 1000 differing TPCs lets anything through. */
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
			if (!same_gpu(i, j))
				cands[n++] = maps[j];
		assert_int_equal(nt_fp_match(maps[i], cands, n, -1, &mt, &err), 0);
		if (in_shared_class(i)) {
			assert_false(mt.unknown);
			assert_int_equal(mt.shared, 2);
		} else {
			assert_true(mt.unknown);
			assert_true(mt.confidence == 0);
			assert_true(mt.best_sig >= 5);
			unknown++;
		}
		assert_int_equal(nt_fp_match(maps[i], cands, n, 1000, &mt, &err), 0);
		assert_false(mt.unknown);
		assert_int_equal(mt.threshold, 1000);
	}
	assert_int_equal(unknown, N_MAPS - 6);
}

/* Leave-one-out over all maps: at the signature level every map is right;
 * the fine distance then picks among the three GPUs of the shared class. */
static void test_eval(void **state)
{
	const struct nt_map *subset[N_MAPS];
	struct nt_fp_eval ev;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_fp_eval((const struct nt_map *const *)maps, N_MAPS, -1, &ev, &err), 0);
	assert_int_equal(ev.n, N_MAPS);
	assert_int_equal(ev.n_ids, N_GPUS);
	assert_int_equal(ev.sig_right, N_MAPS);
	assert_int_equal(ev.unknown, 0);
	assert_int_equal(ev.in_shared, 6);
	assert_int_equal(ev.same_sig_max, 0);
	assert_true(ev.diff_sig_min == 0);	/* the shared class */
	assert_int_equal(ev.correct + ev.wrong, N_MAPS);
	print_message("eval: %d correct, %d wrong; %d in a shared signature, %d of them right\n",
		      ev.correct, ev.wrong, ev.in_shared, ev.shared_right);
	nt_fp_eval_free(&ev);

	/* Without the shared class every map is identified by its signature
	 * alone, and a GPU left with one map comes out unknown, as it should. */
	{
		int n = 0;

		for (int i = 0; i < N_MAPS; i++)
			if (!in_shared_class(i) && strcmp(files[i], "707dd6a3-b"))
				subset[n++] = maps[i];
		assert_int_equal(nt_fp_eval(subset, n, -1, &ev, &err), 0);
		assert_int_equal(ev.correct, n);
		assert_int_equal(ev.wrong + ev.unknown + ev.in_shared, 0);
		assert_true(ev.diff_sig_min >= 5);
		nt_fp_eval_free(&ev);
	}

	/* A threshold below anything: nothing matches but itself... which is
	 * left out, and 0 differing TPCs still match: threshold 0 changes
	 * nothing here. */
	assert_int_equal(nt_fp_eval((const struct nt_map *const *)maps, N_MAPS, 0, &ev, &err), 0);
	assert_int_equal(ev.sig_right, N_MAPS);
	nt_fp_eval_free(&ev);

	assert_int_equal(nt_fp_eval(NULL, 0, -1, &ev, &err), -1);
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
	assert_int_equal(nt_fp_match(maps[0], cands, 2, -1, &mt, &err), 0);
	assert_int_equal(mt.skipped, 1);
	assert_int_equal(mt.best, 1);
	assert_int_equal(mt.second, -1);
	assert_true(isnan(mt.second_d));
	assert_false(mt.unknown);
	assert_int_equal(nt_fp_match(maps[0], cands, 1, -1, &mt, &err), 0);
	assert_true(mt.unknown && mt.best == -1 && mt.skipped == 1);
	assert_int_equal(nt_fp_match(maps[0], cands, 0, -1, &mt, &err), 0);
	assert_true(mt.unknown && mt.best == -1 && mt.skipped == 0);

	/* In an evaluation, the pair has no distance. */
	cands[0] = maps[0];
	cands[1] = small;
	assert_int_equal(nt_fp_eval(cands, 2, -1, &ev, &err), 0);
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
	assert_true(d > 2.4);
	assert_int_equal(sig(m, maps[1]), 1);	/* one TPC, 20 cycles off */
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
	assert_true(dist(m, maps[1]) < 2.4);

	/* Unmeasured SMs are left out, the rest still matches. */
	m->chain[3] = m->chain[10] = m->chain[11] = NAN;
	assert_true(dist(m, maps[1]) < 2.4);
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance_and_signature_table),
		cmocka_unit_test(test_match_finds_twin),
		cmocka_unit_test(test_unknown_without_twin),
		cmocka_unit_test(test_eval),
		cmocka_unit_test(test_different_sm_counts),
		cmocka_unit_test(test_offset_invariance),
		cmocka_unit_test(test_noise_weighting),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}
