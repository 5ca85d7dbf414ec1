/* Unit tests for core/analysis/localize.c, on the 12 maps of 6 H200s in
 * tests/data/maps (two per GPU, `-a` and `-b`, separate processes): the
 * table is built from map -a, every SM's row of map -b stands in for
 * the probe (docs/localize.md quotes the numbers printed here). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/localize.h"
#include "maptest.h"

static const char *const gpus[] = { "af5e0b1a", "707dd6a3", "2cf08462", "d81de1c0", "67ec3211", "ec165f43" };
#define N_GPUS 6
#define N_MAPS (2 * N_GPUS)

/* maps[2g] and maps[2g + 1] are the two runs of gpus[g]; tables[g] is
 * built from maps[2g] with the defaults. */
static struct nt_map *maps[N_MAPS];
static struct nt_loc_table tables[N_GPUS];
static struct nt_loc_plan plans[N_GPUS];

static int load_all(void **state)
{
	struct nt_loc_opts o;
	struct nt_err err;

	(void)state;
	nt_loc_defaults(&o);
	for (int i = 0; i < N_MAPS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s-%c", gpus[i / 2], "ab"[i % 2]);
		if (!(maps[i] = real_map(name)))
			return -1;
	}
	for (int g = 0; g < N_GPUS; g++)
		if (nt_loc_build(maps[2 * g], &o, &tables[g], &plans[g], &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return -1;
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

static struct nt_loc_score eval(const struct nt_loc_table *t, int table_map, int rows_map,
				double offset)
{
	struct nt_loc_score s;
	struct nt_err err;

	if (nt_loc_eval_rows(t, maps[table_map], maps[rows_map], offset, &s, NULL, &err))
		fail_msg("%s", err.msg);
	return s;
}

/* The headline: table from -a, rows of -b, every GPU. */
static void test_other_run_of_same_gpu(void **state)
{
	int sm = 0, tpc = 0, group = 0, n = 0;

	(void)state;
	for (int g = 0; g < N_GPUS; g++) {
		struct nt_loc_score s = eval(&tables[g], 2 * g, 2 * g + 1, 0);

		print_message("%s: lines", gpus[g]);
		for (int k = 0; k < tables[g].n_line; k++)
			print_message(" %d", tables[g].line[k]);
		print_message("; %d groups; min D^2 %.1f (SMs %d/%d); b rows: SM %d, TPC %d, group %d of "
			      "%d; mean p_tpc %.3f; max fit %.2f\n", tables[g].n_groups,
			      plans[g].min_sep2, plans[g].worst_a, plans[g].worst_b, s.sm, s.tpc, s.group,
			      s.n, s.tpc ? s.conf_right / s.tpc : 0, s.fit_max);
		assert_int_equal(s.n, 132);
		assert_int_equal(s.tpc, 132);
		assert_int_equal(s.group, 132);
		assert_true(s.fit_max < 1);
		/* The two SMs of a TPC are the same: the SM is a coin toss. */
		assert_true(s.sm > 132 / 4 && s.sm < 3 * 132 / 4);
		sm += s.sm;
		tpc += s.tpc;
		group += s.group;
		n += s.n;
	}
	print_message("all six GPUs: SM %d, TPC %d, group %d of %d\n", sm, tpc, group, n);
}

/* Why lines and not the chain map: the chain value of -b's SM, nearest
 * TPC (mean of its two SMs) of -a's chain map.  One number per probe,
 * and a probe of 4096 loads (1.2 million cycles) to measure it. */
static void test_chain_alone(void **state)
{
	int right = 0;

	(void)state;
	for (int g = 0; g < N_GPUS; g++) {
		const struct nt_map *a = maps[2 * g], *b = maps[2 * g + 1];
		int ok = 0;

		for (int sm = 0; sm < b->n_sm; sm++) {
			double best = INFINITY;
			int tpc = -1;

			for (int k = 0; 2 * k + 1 < a->n_sm; k++) {
				double dv = fabs(b->chain[sm] - 0.5 * (a->chain[2 * k] + a->chain[2 * k + 1]));

				if (dv < best) {
					best = dv;
					tpc = k;
				}
			}
			ok += tpc == sm / 2;
		}
		print_message("%s: chain map alone, TPC %d of 132\n", gpus[g], ok);
		right += ok;
	}
	print_message("chain map alone: TPC %d of %d\n", right, N_GPUS * 132);
	assert_true(right < N_GPUS * 132);
}

/* The other way round, and a map against itself. */
static void test_reverse_and_self(void **state)
{
	struct nt_loc_opts o;
	struct nt_err err;

	(void)state;
	nt_loc_defaults(&o);
	for (int g = 0; g < N_GPUS; g++) {
		struct nt_loc_table t;
		struct nt_loc_score s;

		assert_int_equal(nt_loc_build(maps[2 * g + 1], &o, &t, NULL, &err), 0);
		s = eval(&t, 2 * g + 1, 2 * g, 0);
		assert_int_equal(s.tpc, 132);
		assert_int_equal(s.group, 132);
		s = eval(&tables[g], 2 * g, 2 * g, 0);
		assert_int_equal(s.tpc, 132);
		assert_true(s.fit_max < 1e-6);
	}
}

/* A clock, temperature or overhead shift moves every line alike: tau
 * absorbs it.  The maps' own offsets between runs are below 0.03 cycle. */
static void test_global_offset(void **state)
{
	static const double offs[] = { -2, -1, -0.5, 0.5, 1, 2, 4 };

	(void)state;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		int tpc = 0, n = 0;

		for (int g = 0; g < N_GPUS; g++) {
			struct nt_loc_score s = eval(&tables[g], 2 * g, 2 * g + 1, offs[i]);

			tpc += s.tpc;
			n += s.n;
		}
		print_message("offset %+.1f cycles: TPC %d of %d\n", offs[i], tpc, n);
		if (fabs(offs[i]) <= 2)
			assert_int_equal(tpc, n);
	}
}

/* xorshift64* and Box-Muller: the same noise on every run. */
static double gauss(uint64_t *st)
{
	double u, v;

	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	u = ((*st * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	v = ((*st * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* A simulation, not a measurement: a probe noisier than the maps (their
 * cells differ by 0.075 - 0.112 cycle between runs).  Gaussian noise of
 * sd cycles on every line of -b's rows, 10 draws per SM. */
static void test_simulated_noise(void **state)
{
	static const double sds[] = { 0.1, 0.25, 0.5, 1.0 };
	uint64_t st = 0x6c6f63616c697a65ULL;

	(void)state;
	for (size_t i = 0; i < sizeof(sds) / sizeof(sds[0]); i++) {
		int tpc = 0, n = 0;

		for (int g = 0; g < N_GPUS; g++) {
			const struct nt_map *b = maps[2 * g + 1];
			const struct nt_loc_table *t = &tables[g];

			for (int draw = 0; draw < 10; draw++)
				for (int sm = 0; sm < b->n_sm; sm++) {
					struct nt_loc_result r;
					float x[NT_LOC_MAX_LINES];

					for (int k = 0; k < t->n_line; k++)
						x[k] = (float)(b->line_lat[(size_t)sm * b->n_line + t->line[k]] +
							       sds[i] * gauss(&st));
					nt_loc_classify(t, x, &r);
					tpc += r.tpc == sm / 2;
					n++;
				}
		}
		print_message("noise sd %.2f cycle per line: TPC %d of %d (%.1f%%)\n", sds[i], tpc, n,
			      100.0 * tpc / n);
		if (sds[i] <= 0.25)
			assert_true(tpc >= 0.99 * n);
	}
}

/* How many lines it takes (the table from -a, rows of -b). */
static void test_fewer_lines(void **state)
{
	struct nt_loc_opts o;
	struct nt_err err;

	(void)state;
	nt_loc_defaults(&o);
	for (int k = 1; k <= 6; k++) {
		int tpc = 0, tpc1 = 0, n = 0;

		o.n_lines = k;
		for (int g = 0; g < N_GPUS; g++) {
			struct nt_loc_table t;

			assert_int_equal(nt_loc_build(maps[2 * g], &o, &t, NULL, &err), 0);
			tpc += eval(&t, 2 * g, 2 * g + 1, 0).tpc;
			tpc1 += eval(&t, 2 * g, 2 * g + 1, 1).tpc;
			n += 132;
		}
		print_message("%d line%s: TPC %d of %d, with a 1-cycle offset %d\n", k, k > 1 ? "s" : "",
			      tpc, n, tpc1);
		if (k == 1)
			assert_true(tpc < n);
		if (k >= 3)
			assert_int_equal(tpc, n);
		if (k >= 6)
			assert_int_equal(tpc1, n);
	}
}

/* Rows of another GPU.  Its smids need not be the same places: the probe
 * only finds a TPC that looks the same.  Most pairs give a fit in the
 * hundreds; af5e0b1a and d81de1c0 have the same layout on most TPCs
 * (docs/fingerprint.md), so the probe cannot tell them apart.  ec165f43's
 * lines lie on other L2 partitions than the others' (its allocation got
 * other physical pages): fit in the thousands. */
static void test_other_gpu(void **state)
{
	(void)state;
	print_message("table \\ rows ");
	for (int h = 0; h < N_GPUS; h++)
		print_message(" %17.8s", gpus[h]);
	print_message("   (TPC right, median fit)\n");
	for (int g = 0; g < N_GPUS; g++) {
		print_message("%-13s", gpus[g]);
		for (int h = 0; h < N_GPUS; h++) {
			struct nt_loc_result per[132];
			struct nt_loc_score s;
			struct nt_err err;
			double fit[132];

			assert_int_equal(nt_loc_eval_rows(&tables[g], maps[2 * g], maps[2 * h + 1], 0, &s,
							  per, &err), 0);
			for (int i = 0; i < 132; i++)
				fit[i] = per[i].fit;
			print_message(" %8d %8.1f", s.tpc, nt_median(fit, 132));
			if (g == h)
				assert_true(nt_median(fit, 132) < 1);
			if ((g == 5) != (h == 5))
				assert_true(nt_median(fit, 132) > 1000 && s.tpc < 132 / 4);
		}
		print_message("\n");
	}
}

/* A hand-made table: the decision rules the device copies. */
static void test_classify_rules(void **state)
{
	static struct nt_loc_table t;
	struct nt_loc_result r;
	struct nt_err err;
	float x[4] = { 300, 270, 300, 270 };

	(void)state;
	memset(&t, 0, sizeof(t));
	t.magic = NT_LOC_MAGIC;
	t.version = NT_LOC_VERSION;
	t.n_sm = 7;
	t.n_line = 4;
	t.loads = 64;
	t.reps = 1;
	t.sigma = 0.15f;
	t.tau = 0.3f;
	t.n_groups = 2;
	for (int s = 0; s < NT_LOC_MAX_SM; s++)
		t.group[s] = s < 7 ? s / 4 : NT_LOC_NO_GROUP;
	for (int s = 0; s < 7; s++)
		for (int k = 0; k < 4; k++)
			t.tmpl[s][k] = 280.0f + (float)((s / 2) * 10 * (k % 2 ? -1 : 1));
	assert_int_equal(nt_loc_check(&t, &err), 0);

	/* TPC 1 (SMs 2, 3) exactly: equal SMs, the even one is named. */
	memcpy(x, t.tmpl[2], sizeof(x));
	nt_loc_classify(&t, x, &r);
	assert_int_equal(r.tpc, 1);
	assert_int_equal(r.sm, 2);
	assert_int_equal(r.group, 0);
	assert_true(fabsf(r.p_sm - 0.5f) < 1e-6f && fabsf(r.p_tpc - 1) < 1e-6f);
	assert_true(r.fit == 0 && r.offset == 0);
	assert_true(memcmp(r.x, x, sizeof(x)) == 0);

	/* SM 6, alone in TPC 3 (n_sm odd); an offset of 0.2 on every line. */
	for (int k = 0; k < 4; k++)
		x[k] = t.tmpl[6][k] + 0.2f;
	nt_loc_classify(&t, x, &r);
	assert_int_equal(r.tpc, 3);
	assert_int_equal(r.sm, 6);
	assert_int_equal(r.group, 1);
	assert_true(fabsf(r.offset - 0.2f) < 1e-4f);
	assert_true(r.p_sm > 0.999f && r.fit > 0);

	/* Halfway between TPC 0 and TPC 1: a tie goes to the lower TPC. */
	for (int k = 0; k < 4; k++)
		x[k] = 0.5f * (t.tmpl[0][k] + t.tmpl[2][k]);
	nt_loc_classify(&t, x, &r);
	assert_int_equal(r.tpc, 0);
	assert_true(fabsf(r.p_tpc - 0.5f) < 1e-3f);
	assert_true(fabsf(r.p_group - 1) < 1e-5f);

	/* An SM without a row is never the answer. */
	t.group[2] = t.group[3] = NT_LOC_NO_GROUP;
	memcpy(x, t.tmpl[2], sizeof(x));
	nt_loc_classify(&t, x, &r);
	assert_true(r.tpc != 1 && r.tpc >= 0);

	/* No SM with a row, or a table that is not one: -1. */
	for (int s = 0; s < 7; s++)
		t.group[s] = NT_LOC_NO_GROUP;
	nt_loc_classify(&t, x, &r);
	assert_int_equal(r.tpc, -1);
	assert_int_equal(r.sm, -1);
	t.group[0] = 0;
	t.magic = 0;
	nt_loc_classify(&t, x, &r);
	assert_int_equal(r.tpc, -1);
	assert_int_equal(nt_loc_check(&t, &err), -1);
	assert_non_null(strstr(err.msg, "not a localisation table"));
	t.magic = NT_LOC_MAGIC;
	t.n_line = NT_LOC_MAX_LINES + 1;
	assert_int_equal(nt_loc_check(&t, &err), -1);
}

/* Same map, same table; what a map must have; NAN cells are avoided. */
static void test_build(void **state)
{
	static struct nt_loc_table t, t2;
	struct nt_loc_opts o;
	struct nt_map *m;
	struct nt_err err;
	int bad;

	(void)state;
	nt_loc_defaults(&o);
	assert_int_equal(nt_loc_build(maps[0], &o, &t, NULL, &err), 0);
	assert_true(memcmp(&t, &tables[0], sizeof(t)) == 0);
	assert_true(t.base == 0 && t.loads == 64 && t.reps == 1 && t.warm == 4);
	for (int k = 0; k < t.n_line; k++) {
		assert_true(t.offset[k] == (unsigned long long)maps[0]->line_offset[t.line[k]]);
		for (int j = 0; j < k; j++)
			assert_true(t.line[j] != t.line[k]);
	}
	for (int s = 0; s < 132; s++)
		assert_true(t.group[s] >= 0 && t.group[s] < t.n_groups);

	/* A NAN in one cell of a chosen line: that line is not chosen again. */
	m = nt_map_dup(maps[0]);
	assert_non_null(m);
	bad = t.line[0];
	*nt_map_at(m->line_lat, m, 17, bad) = NAN;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), 0);
	for (int k = 0; k < t2.n_line; k++)
		assert_true(t2.line[k] != bad);
	assert_int_equal(eval(&t2, 0, 1, 0).tpc, 132);

	o.n_lines = NT_LOC_MAX_LINES + 1;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "lines"));
	nt_loc_defaults(&o);
	o.sigma = 0;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), -1);
	nt_loc_defaults(&o);

	/* Every line has a NAN somewhere: nothing to choose from. */
	for (int l = 0; l < m->n_line; l++)
		*nt_map_at(m->line_lat, m, l % 132, l) = NAN;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "0 lines measured on every SM"));

	free(m->line_lat);
	m->line_lat = NULL;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "no line matrix"));
	nt_map_free(m);

	m = nt_map_new(NT_LOC_MAX_SM + 2, 16, NT_MAP_LINES);
	assert_non_null(m);
	m->params.line_loads = 64;
	assert_int_equal(nt_loc_build(m, &o, &t2, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "SMs"));
	nt_map_free(m);
}

/* Rows of a map with other lines or another SM count are refused. */
static void test_eval_rows_refuses(void **state)
{
	struct nt_loc_score s;
	struct nt_map *m = nt_map_dup(maps[1]);
	struct nt_err err;

	(void)state;
	assert_non_null(m);
	m->line_offset[tables[0].line[3]] += 128;
	assert_int_equal(nt_loc_eval_rows(&tables[0], maps[0], m, 0, &s, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "lines differ"));
	nt_map_free(m);
	m = nt_map_new(131, 256, NT_MAP_LINES);
	assert_non_null(m);
	assert_int_equal(nt_loc_eval_rows(&tables[0], maps[0], m, 0, &s, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "131"));
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_run_of_same_gpu),
		cmocka_unit_test(test_chain_alone),
		cmocka_unit_test(test_reverse_and_self),
		cmocka_unit_test(test_global_offset),
		cmocka_unit_test(test_simulated_noise),
		cmocka_unit_test(test_fewer_lines),
		cmocka_unit_test(test_other_gpu),
		cmocka_unit_test(test_classify_rules),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_eval_rows_refuses),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}
