/* Unit tests for core/analysis/stability.c: the schedule of `calibrate
 * --stability`, and the analysis on the real H200 maps of tests/data/maps
 * (two maps of each GPU from separate processes, `-a` and `-b`). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "maptest.h"
#include "util/jsonread.h"
#include "analysis/stability.h"

static struct nt_map *af_a, *af_b, *d8_a, *d8_b, *ec_a;

static int load_all(void **state)
{
	(void)state;
	af_a = real_map("af5e0b1a-a");
	af_b = real_map("af5e0b1a-b");
	d8_a = real_map("d81de1c0-a");
	d8_b = real_map("d81de1c0-b");
	ec_a = real_map("ec165f43-a");
	return af_a && af_b && d8_a && d8_b && ec_a ? 0 : -1;
}

static int free_all(void **state)
{
	(void)state;
	nt_map_free(af_a);
	nt_map_free(af_b);
	nt_map_free(d8_a);
	nt_map_free(d8_b);
	nt_map_free(ec_a);
	return 0;
}

/* A copy of m with chain[s] -> chain[s] * scale + add, SMs sms[] (ending
 * in -1) shifted by `shift` more, and the SM clock clock_mhz. */
static struct nt_map *variant(const struct nt_map *m, double scale, double add, const int *sms,
			      double shift, double clock_mhz)
{
	struct nt_map *v = nt_map_dup(m);

	assert_non_null(v);
	for (int s = 0; s < v->n_sm; s++)
		v->chain[s] = v->chain[s] * scale + add;
	for (int k = 0; sms && sms[k] >= 0; k++)
		v->chain[sms[k]] += shift;
	v->sm_clock_mhz = clock_mhz;
	return v;
}

static struct nt_stab_input in_(const struct nt_map *m, int phase, double t)
{
	return (struct nt_stab_input){ .m = m, .phase = phase, .t = t, .load_mhz = NAN,
				       .clock_lo_mhz = NAN, .clock_hi_mhz = NAN, .temp_c = NAN,
				       .power_w = NAN };
}

static void analyze(const struct nt_stab_input *in, int n, struct nt_stab_result *r)
{
	struct nt_err err;

	if (nt_stab_analyze(in, n, r, &err))
		fail_msg("%s", err.msg);
}

/* --- the schedule --- */

static void check_plan_shape(const struct nt_stab_plan *p)
{
	double end_load = p->before_s + p->load_s;

	assert_int_equal(p->n, p->per_phase[0] + p->per_phase[1] + p->per_phase[2]);
	assert_true(p->n <= NT_STAB_MAX_MAPS);
	assert_true(p->load_s >= 5 - 1e-9);
	assert_true(fabs(p->before_s + p->load_s + p->after_s - p->seconds) < 1e-9);
	for (int i = 0; i < p->n; i++) {
		const struct nt_stab_slot *s = &p->slot[i];

		if (i) {
			assert_true(s->at > p->slot[i - 1].at);
			assert_true(s->phase >= p->slot[i - 1].phase);
		}
		if (s->phase == NT_STAB_IDLE_BEFORE)
			assert_true(s->at >= 0 && s->at <= p->before_s + 1e-9);
		if (s->phase == NT_STAB_LOAD)
			assert_true(s->at > p->before_s && s->at <= end_load + 1e-9);
		if (s->phase == NT_STAB_IDLE_AFTER)
			assert_true(s->at > end_load && s->at <= p->seconds + 1e-9);
	}
	assert_true(p->slot[0].at == 0);
	assert_true(fabs(p->slot[p->n - 1].at - p->seconds) < 1e-9);
	/* the last load map at the end of the load: the hottest state */
	assert_true(fabs(p->slot[p->per_phase[0] + p->per_phase[1] - 1].at - end_load) < 1e-9);
}

static void test_plan_three_minutes(void **state)
{
	struct nt_stab_plan p;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_stab_plan(180, &p, &err), 0);
	check_plan_shape(&p);
	assert_int_equal(p.per_phase[NT_STAB_IDLE_BEFORE], 3);
	assert_int_equal(p.per_phase[NT_STAB_LOAD], 8);
	assert_int_equal(p.per_phase[NT_STAB_IDLE_AFTER], 4);
	assert_true(fabs(p.before_s - 27) < 1e-9 && fabs(p.load_s - 117) < 1e-9 &&
		    fabs(p.after_s - 36) < 1e-9);
	assert_true(fabs(p.load_every_s - 14.625) < 1e-9);
	assert_true(fabs(p.slot[1].at - 13.5) < 1e-9);
	assert_true(fabs(p.slot[3].at - (27 + 14.625)) < 1e-9);
	/* cooling: 4.5, 9, 18 and 36 s after the load */
	assert_true(fabs(p.slot[11].at - 148.5) < 1e-9);
	assert_true(fabs(p.slot[12].at - 153) < 1e-9);
	assert_true(fabs(p.slot[13].at - 162) < 1e-9);
}

static void test_plan_short_and_long(void **state)
{
	static const struct {
		double s;
		int b, l, a;
	} cases[] = {
		{ 30, 2, 2, 3 }, { 60, 2, 4, 3 }, { 120, 2, 8, 3 }, { 600, 4, 8, 5 },
		{ 3600, 4, 53, 6 }, { 86400, 4, NT_STAB_MAX_LOAD_MAPS, 6 },
	};
	struct nt_stab_plan p;
	struct nt_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(nt_stab_plan(cases[i].s, &p, &err), 0);
		check_plan_shape(&p);
		if (p.per_phase[0] != cases[i].b || p.per_phase[1] != cases[i].l ||
		    p.per_phase[2] != cases[i].a)
			fail_msg("%g s: %d + %d + %d maps, expected %d + %d + %d", cases[i].s,
				 p.per_phase[0], p.per_phase[1], p.per_phase[2], cases[i].b, cases[i].l,
				 cases[i].a);
	}
	/* a load map at most every 60 s up to the cap */
	assert_int_equal(nt_stab_plan(3600, &p, &err), 0);
	assert_true(p.load_every_s <= 60 + 1e-9 && p.load_every_s > 59);
}

static void test_plan_out_of_range(void **state)
{
	struct nt_stab_plan p;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_stab_plan(29.9, &p, &err), -1);
	assert_non_null(strstr(err.msg, "need 30 s .. 86400 s"));
	assert_int_equal(nt_stab_plan(86401, &p, &err), -1);
	assert_int_equal(nt_stab_plan(NAN, &p, &err), -1);
}

/* --- the analysis --- */

/* Two maps of one GPU from separate processes, alternating through all
 * three phases: stable within noise, nothing moved, no glitch. */
static void test_same_gpu_is_stable(void **state)
{
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(af_b, NT_STAB_IDLE_BEFORE, 10),
		in_(af_a, NT_STAB_LOAD, 20), in_(af_b, NT_STAB_LOAD, 30),
		in_(af_b, NT_STAB_IDLE_AFTER, 40),
	};
	struct nt_stab_result r;
	char text[256];

	(void)state;
	analyze(in, 5, &r);
	assert_int_equal(r.ref, 0);
	assert_int_equal(r.ref_maps, 2);
	assert_int_equal(r.compared, 5);	/* the two idle maps against their median too */
	assert_int_equal(r.busy, 0);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	assert_int_equal(r.n_moved, 0);
	assert_int_equal(r.n_glitch, 0);
	assert_int_equal(r.repeats, 2);
	/* af5e0b1a-a and -b differ by at most 0.046 cycle: each is half of
	 * that from their median, all within 3x floor */
	assert_int_equal(r.row[1].beyond, 0);
	assert_true(r.row[1].max_abs > 0.015 && r.row[1].max_abs < 0.03);
	assert_true(fabs(r.row[0].max_abs - r.row[1].max_abs) < 0.005);
	assert_true(fabs(r.row[1].offset) < 0.01);
	assert_true(r.row[1].r > 0.9999);
	assert_true(fabs(r.row[1].scale - 1) < 0.001);
	assert_true(fabs(r.row[2].max_abs - r.row[0].max_abs) < 1e-9);
	assert_non_null(r.row[0].resid);
	assert_int_equal(r.phase[NT_STAB_LOAD].maps, 2);
	assert_int_equal(r.phase[NT_STAB_IDLE_BEFORE].compared, 2);
	assert_true(fabs(r.phase[NT_STAB_IDLE_BEFORE].mean - 281.66) < 0.01);
	assert_true(fabs(r.phase[NT_STAB_LOAD].clock_min - 1980) < 0.1);
	nt_stab_verdict_text(&r, text, sizeof(text));
	assert_non_null(strstr(text, "stable within noise: no SM beyond 3x its noise floor in 2 or "
				     "more of 5 maps"));
	assert_string_equal(nt_stab_verdict_name(r.verdict), "stable");
	nt_stab_free(&r);
}

/* A global shift (the whole map 0.7 cycles slower) is removed. */
static void test_offset_is_not_a_move(void **state)
{
	struct nt_map *up = variant(af_b, 1, 0.7, NULL, 0, 1980);
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(up, NT_STAB_LOAD, 20), in_(up, NT_STAB_LOAD, 30),
	};
	struct nt_stab_result r;

	(void)state;
	analyze(in, 3, &r);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	assert_true(fabs(r.row[1].offset - 0.7) < 0.01);
	assert_true(fabs(r.offset_min - 0.7) < 0.01 && fabs(r.offset_max - 0.7) < 0.01);
	nt_stab_free(&r);
	nt_map_free(up);
}

/* The SM clock 11% lower at the same L2 clock: every latency in SM
 * cycles 11% lower, the spread too.  By the offset alone the far SMs
 * move; with the scale removed nothing does: "uniform". */
static void test_clock_change_is_uniform(void **state)
{
	double k = 1760.0 / 1980.0;
	struct nt_map *slow = variant(af_b, k, 0, NULL, 0, 1760);
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(af_b, NT_STAB_IDLE_BEFORE, 10),
		in_(slow, NT_STAB_LOAD, 20), in_(slow, NT_STAB_LOAD, 30),
		in_(af_b, NT_STAB_IDLE_AFTER, 40),
	};
	struct nt_stab_result r;
	char text[256];

	(void)state;
	analyze(in, 5, &r);
	assert_int_equal(r.verdict, NT_STAB_UNIFORM);
	assert_int_equal(r.n_moved, 0);
	assert_true(r.n_moved_offset > 10);
	assert_true(r.row[2].beyond > 10 && r.row[2].beyond_affine == 0);
	assert_true(fabs(r.row[2].scale - k) < 0.001);
	assert_true(fabs(r.phase[NT_STAB_LOAD].scale_min - k) < 0.001);
	assert_true(fabs(r.phase[NT_STAB_IDLE_AFTER].scale_min - 1) < 0.001);
	assert_true(fabs(r.clock_min - 1760) < 1e-9 && fabs(r.clock_max - 1980) < 0.1);
	nt_stab_verdict_text(&r, text, sizeof(text));
	assert_non_null(strstr(text, "per-SM pattern stable, the whole map scaled by 0.88"));
	nt_stab_free(&r);
	nt_map_free(slow);
}

/* SMs 10 and 11 (one TPC) 1 cycle slower in every load map, one of
 * those also with the clock change: exactly they moved, in the load. */
static void test_shifted_sms_moved(void **state)
{
	static const int tpc[] = { 10, 11, -1 };
	struct nt_map *hot = variant(af_b, 1, 0.2, tpc, 1.0, 1980);
	struct nt_map *hot_slow = variant(af_b, 0.95, 0, tpc, 1.0, 1881);
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(af_b, NT_STAB_IDLE_BEFORE, 10),
		in_(hot, NT_STAB_LOAD, 20), in_(hot_slow, NT_STAB_LOAD, 30),
		in_(af_b, NT_STAB_IDLE_AFTER, 40),
	};
	struct nt_stab_result r;
	char text[256];

	(void)state;
	analyze(in, 5, &r);
	assert_int_equal(r.verdict, NT_STAB_MOVED);
	assert_int_equal(r.n_moved, 2);
	for (int k = 0; k < 2; k++) {
		assert_true(r.moved[k].sm == 10 || r.moved[k].sm == 11);
		assert_int_equal(r.moved[k].maps, 2);
		assert_int_equal(r.moved[k].phases, 1u << NT_STAB_LOAD);
		assert_true(fabs(r.moved[k].worst - 1.0) < 0.1);
	}
	assert_int_equal(r.row[2].beyond, 2);
	assert_true(r.row[2].max_sm == 10 || r.row[2].max_sm == 11);
	assert_int_equal(r.row[4].beyond, 0);
	nt_stab_verdict_text(&r, text, sizeof(text));
	assert_non_null(strstr(text, "2 SMs moved: beyond 3x noise in 2 or more of 5 maps"));
	nt_stab_free(&r);
	nt_map_free(hot);
	nt_map_free(hot_slow);
}

/* What GPU-443e086d did (docs/stability.md): the run's first idle map
 * sits 0.48 cycle off on a few SMs, the next two idle maps agree, and
 * the load maps are like them.  Against the median of the idle maps
 * nothing moved; against the first map alone (the reference before) the
 * same SMs "moved" in every later map. */
static void test_odd_first_idle_map(void **state)
{
	static const int odd[] = { 32, 33, 126, 127, -1 };
	struct nt_map *first = variant(af_b, 1, 0, odd, 0.48, 1980);
	struct nt_stab_input in[] = {
		in_(first, NT_STAB_IDLE_BEFORE, 0), in_(af_b, NT_STAB_IDLE_BEFORE, 10),
		in_(af_a, NT_STAB_IDLE_BEFORE, 20), in_(af_b, NT_STAB_LOAD, 30),
		in_(af_a, NT_STAB_LOAD, 40), in_(af_b, NT_STAB_IDLE_AFTER, 50),
	};
	struct nt_stab_result r;

	(void)state;
	analyze(in, 6, &r);
	assert_int_equal(r.ref_maps, 3);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	/* the first map itself is the one off the median */
	assert_true(r.row[0].max_abs > 0.4);
	assert_true(r.row[3].max_abs < 0.06);
	nt_stab_free(&r);
	nt_map_free(first);
}

/* The real 3-minute run on GPU-443e086d (tests/data/stability, written by
 * `calibrate --stability 3 --output`): 3 idle maps, 8 under load, 4 idle
 * after.  The first idle map sits up to 0.48 cycle off the other two on
 * 16 SMs; the load maps move by up to 0.5 cycle; the idle-after maps
 * come back.  Re-analysed here from the JSON's per-map chains and noise. */
/* The maps of a real run's JSON into in[]/m[] (at most 32); their count. */
static int load_run(const char *file, struct nt_stab_input *in, struct nt_map **m)
{
	const char *dir = getenv("NT_TEST_DATA");
	struct nt_jsonread jr;
	struct nt_err err;
	char path[512];
	int n = 0;

	snprintf(path, sizeof(path), "%s/stability/%s", dir ? dir : "tests/data", file);
	if (nt_jsonread_open(&jr, path, &err))
		fail_msg("%s", err.msg);
	for (;; n++) {
		char jp[64], ph[32] = "";
		sqlite3_stmt *st;
		int rc, len;

		snprintf(jp, sizeof(jp), "$.maps[%d]", n);
		if (nt_jsonread_member(&jr, jp, "object", &len) != 1)
			break;
		assert_true(n < 32);
		m[n] = nt_map_new(132, 0, NT_MAP_NOISE);
		assert_non_null(m[n]);
		snprintf(jp, sizeof(jp), "$.maps[%d].phase", n);
		st = nt_jsonread_query(&jr, "SELECT json_extract(?1, ?2)", jp);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		snprintf(ph, sizeof(ph), "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		for (int part = 0; part < 2; part++) {
			snprintf(jp, sizeof(jp), "$.maps[%d].%s", n, part ? "noise" : "chain");
			st = nt_jsonread_query(&jr, "SELECT key, value FROM json_each(?1, ?2)", jp);
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				(part ? m[n]->noise : m[n]->chain)[sqlite3_column_int(st, 0)] =
					sqlite3_column_double(st, 1);
			assert_int_equal(rc, SQLITE_DONE);
			sqlite3_finalize(st);
		}
		in[n] = in_(m[n], !strcmp(ph, "idle-before") ? NT_STAB_IDLE_BEFORE
				  : !strcmp(ph, "load") ? NT_STAB_LOAD : NT_STAB_IDLE_AFTER, n);
	}
	nt_jsonread_close(&jr);
	return n;
}

static void test_real_run(void **state)
{
	struct nt_stab_input in[32];
	struct nt_map *m[32] = { 0 };
	struct nt_stab_result r;
	int n = load_run("h200-443e086d-3min.json", in, m);

	(void)state;
	assert_int_equal(n, 15);
	analyze(in, n, &r);
	assert_int_equal(r.ref_maps, 3);
	assert_int_equal(r.busy, 0);
	print_message("real run: verdict %s, %d moved, %d isolated; first idle map max %.3f, "
		      "load max %.3f, idle-after max %.3f\n", nt_stab_verdict_name(r.verdict), r.n_moved,
		      r.n_glitch, r.row[0].max_abs, r.phase[NT_STAB_LOAD].max_abs,
		      r.phase[NT_STAB_IDLE_AFTER].max_abs);
	for (int k = 0; k < r.n_moved; k++)
		print_message("  moved SM %d: %+.3f in %d maps, phases %#x\n", r.moved[k].sm, r.moved[k].worst,
			      r.moved[k].maps, r.moved[k].phases);
	{
		char text[512];

		nt_stab_verdict_text(&r, text, sizeof(text));
		print_message("  %s\n", text);
	}
	assert_true(r.row[0].max_abs > 0.4);
	assert_true(r.row[1].max_abs < 0.06 && r.row[2].max_abs < 0.06);
	assert_true(r.phase[NT_STAB_LOAD].max_abs < 0.6);
	nt_stab_free(&r);
	for (int i = 0; i < n; i++)
		nt_map_free(m[i]);
}

/* The 8-minute run on GPU-7fb76c28: 4 idle maps, 8 under load (5 min), 4
 * idle after.  Each load map's first chain walk sits up to 0.68 cycle off
 * on a few SMs and its repeat half a second later does not, so its own
 * noise floor covers it: stable within noise, and the idle maps after the
 * load are back within 0.08 cycle. */
static void test_real_run_8min(void **state)
{
	struct nt_stab_input in[32];
	struct nt_map *m[32] = { 0 };
	struct nt_stab_result r;
	int n = load_run("h200-7fb76c28-8min.json", in, m);

	(void)state;
	assert_int_equal(n, 16);
	analyze(in, n, &r);
	assert_int_equal(r.ref_maps, 4);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	assert_true(r.phase[NT_STAB_LOAD].max_abs > 0.6 && r.phase[NT_STAB_LOAD].max_abs < 0.7);
	assert_true(r.phase[NT_STAB_IDLE_AFTER].max_abs < 0.08);
	assert_true(r.phase[NT_STAB_IDLE_BEFORE].max_abs < 0.07);
	for (int i = 4; i < 12; i++)
		assert_true(r.row[i].noise_max > 0.6);	/* the transient is in the map's own repeat */
	nt_stab_free(&r);
	for (int i = 0; i < n; i++)
		nt_map_free(m[i]);
}

/* One SM off once is a glitch, not a move. */
static void test_single_excursion_is_a_glitch(void **state)
{
	static const int one[] = { 7, -1 };
	struct nt_map *blip = variant(af_b, 1, 0, one, -2.0, 1980);
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(af_b, NT_STAB_LOAD, 20),
		in_(blip, NT_STAB_LOAD, 30), in_(af_b, NT_STAB_IDLE_AFTER, 40),
	};
	struct nt_stab_result r;

	(void)state;
	analyze(in, 4, &r);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	assert_int_equal(r.n_moved, 0);
	assert_int_equal(r.n_glitch, 1);
	assert_int_equal(r.glitch[0].sm, 7);
	assert_int_equal(r.glitch[0].maps, 1);
	assert_int_equal(r.glitch[0].worst_map, 2);
	assert_true(fabs(r.glitch[0].worst + 2.0) < 0.1);
	nt_stab_free(&r);
	nt_map_free(blip);
}

/* Another GPU in place of the load maps: many SMs moved, by several
 * cycles; the correlation drops. */
static void test_other_gpu_moved(void **state)
{
	struct nt_stab_input in[] = {
		in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(d8_a, NT_STAB_LOAD, 20),
		in_(d8_b, NT_STAB_LOAD, 30),
	};
	struct nt_stab_result r;

	(void)state;
	analyze(in, 3, &r);
	assert_int_equal(r.verdict, NT_STAB_MOVED);
	assert_true(r.n_moved >= 40);
	assert_true(fabs(r.moved[0].worst) > 7);
	assert_true(r.row[1].r < 0.96);
	assert_true(r.row[1].max_abs > 7);
	nt_stab_free(&r);
	/* ec165f43 differs from af5e0b1a by at most ~1 cycle, but on every SM */
	in[1].m = ec_a;
	in[2].m = ec_a;
	analyze(in, 3, &r);
	assert_int_equal(r.verdict, NT_STAB_MOVED);
	assert_true(r.row[1].beyond > 120);
	assert_true(r.row[1].max_abs < 1.2);
	nt_stab_free(&r);
}

/* d81de1c0's two maps (separate processes) differ beyond 3x noise on 13
 * SMs by up to 0.244 cycle: with one map compared that is a move. */
static void test_one_compared_map(void **state)
{
	struct nt_stab_input in[] = {
		in_(d8_a, NT_STAB_IDLE_BEFORE, 0), in_(d8_b, NT_STAB_IDLE_AFTER, 10),
	};
	struct nt_stab_result r;
	char text[256];

	(void)state;
	analyze(in, 2, &r);
	assert_int_equal(r.repeats, 1);
	assert_int_equal(r.row[1].beyond, 13);
	assert_int_equal(r.verdict, NT_STAB_MOVED);
	assert_int_equal(r.n_moved, 13);
	assert_true(fabs(fabs(r.moved[0].worst) - 0.244) < 0.01);
	nt_stab_verdict_text(&r, text, sizeof(text));
	assert_non_null(strstr(text, "13 SMs moved: beyond 3x noise in the one map compared"));
	nt_stab_free(&r);
}

/* Busy maps (median noise above 1 cycle) are shown, never compared; the
 * reference is the first idle one. */
static void test_busy_maps_left_out(void **state)
{
	struct nt_map *busy = nt_map_dup(af_b);
	struct nt_stab_input in[] = {
		in_(busy, NT_STAB_IDLE_BEFORE, 0), in_(af_a, NT_STAB_IDLE_BEFORE, 10),
		in_(busy, NT_STAB_LOAD, 20), in_(af_b, NT_STAB_LOAD, 30),
	};
	struct nt_stab_result r;
	struct nt_err err;

	(void)state;
	assert_non_null(busy);
	for (int s = 0; s < busy->n_sm; s++)
		busy->noise[s] = 3.0;
	busy->chain[5] += 40;
	analyze(in, 4, &r);
	assert_int_equal(r.ref, 1);
	assert_int_equal(r.busy, 2);
	assert_int_equal(r.compared, 1);
	assert_true(r.row[0].busy && r.row[2].busy && !r.row[2].compared);
	assert_true(fabs(r.row[2].noise_median - 3.0) < 1e-12);
	assert_int_equal(r.phase[NT_STAB_LOAD].busy, 1);
	assert_int_equal(r.phase[NT_STAB_LOAD].compared, 1);
	assert_int_equal(r.verdict, NT_STAB_STABLE);
	nt_stab_free(&r);
	/* nothing idle before the load: no reference */
	in[1].m = busy;
	assert_int_equal(nt_stab_analyze(in, 4, &r, &err), -1);
	assert_non_null(strstr(err.msg, "no idle-before map to compare with"));
	nt_stab_free(&r);
	/* only the reference: too few */
	in[0].m = af_a;
	analyze(in, 1, &r);
	assert_int_equal(r.verdict, NT_STAB_TOO_FEW);
	nt_stab_free(&r);
	nt_map_free(busy);
}

static void test_errors(void **state)
{
	struct nt_map *small = nt_map_new(64, 0, NT_MAP_NOISE);
	struct nt_stab_input in[] = { in_(af_a, NT_STAB_IDLE_BEFORE, 0), in_(small, NT_STAB_LOAD, 1) };
	struct nt_stab_result r;
	struct nt_err err;

	(void)state;
	assert_non_null(small);
	assert_int_equal(nt_stab_analyze(in, 2, &r, &err), -1);
	assert_string_equal(err.msg, "map 2 has 64 SMs, map 1 has 132");
	nt_stab_free(&r);
	assert_int_equal(nt_stab_analyze(in, 0, &r, &err), -1);
	nt_stab_free(&r);
	nt_map_free(small);
	assert_string_equal(nt_stab_phase_name(NT_STAB_IDLE_AFTER), "idle-after");
	assert_string_equal(nt_stab_phase_name(7), "?");
	assert_string_equal(nt_stab_verdict_name(NT_STAB_TOO_FEW), "too_few");
}

/* A synthetic map that is exactly affine in the reference: the
 * Theil-Sen fit finds it, and without noise parts the default floor holds. */
static void test_affine_fit_exact(void **state)
{
	struct nt_map *x = nt_map_new(40, 0, 0), *y = nt_map_new(40, 0, 0);
	struct nt_stab_input in[] = { in_(x, NT_STAB_IDLE_BEFORE, 0), in_(y, NT_STAB_LOAD, 1) };
	struct nt_stab_result r;

	(void)state;
	assert_non_null(x);
	assert_non_null(y);
	for (int s = 0; s < 40; s++) {
		x->chain[s] = 270 + (s * 7 % 25);
		y->chain[s] = 3 + 0.9 * x->chain[s];
	}
	x->chain[3] = NAN;
	analyze(in, 2, &r);
	assert_true(fabs(r.row[1].scale - 0.9) < 1e-12);
	assert_true(fabs(r.row[1].intercept - 3) < 1e-9);
	assert_true(r.row[1].max_affine < 1e-9);
	assert_true(isnan(r.row[1].resid[3]));
	assert_int_equal(r.verdict, NT_STAB_UNIFORM);
	nt_stab_free(&r);
	nt_map_free(x);
	nt_map_free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_three_minutes),
		cmocka_unit_test(test_plan_short_and_long),
		cmocka_unit_test(test_plan_out_of_range),
		cmocka_unit_test(test_same_gpu_is_stable),
		cmocka_unit_test(test_offset_is_not_a_move),
		cmocka_unit_test(test_clock_change_is_uniform),
		cmocka_unit_test(test_shifted_sms_moved),
		cmocka_unit_test(test_odd_first_idle_map),
		cmocka_unit_test(test_real_run),
		cmocka_unit_test(test_real_run_8min),
		cmocka_unit_test(test_single_excursion_is_a_glitch),
		cmocka_unit_test(test_other_gpu_moved),
		cmocka_unit_test(test_one_compared_map),
		cmocka_unit_test(test_busy_maps_left_out),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_affine_fit_exact),
	};

	return cmocka_run_group_tests(tests, load_all, free_all);
}
