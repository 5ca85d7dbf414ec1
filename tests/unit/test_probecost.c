/* analysis/probecost.h: the probe-cost part of a map from a trace of
 * the traced run and the blocks' own body times: exact per-SM medians,
 * and a clear refusal of a trace that is not that run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "analysis/probecost.h"
#include "maptest.h"

#define N_SM 5		/* SM 4 runs no block: its costs stay NAN */
#define BLOCKS 8	/* blocks b on SM b % 4, two per SM */
#define N_CFG 2

static const struct nt_map_probe cfg[N_CFG] = {
	{ 32, 0, BLOCKS, 0, 0 },
	{ 256, 2000, BLOCKS, 0, 0 },
};

/* What tracing adds to block b of configuration p: per SM and
 * configuration, two blocks whose median is exactly cost(p, sm, 0.5). */
static int64_t cost(int p, int b)
{
	return 1000 * (p + 1) + 100 * (b % 4) + 10 * (b / 4);
}

static void bodies(struct nt_probe_body *y, int p, int shift)
{
	for (int b = 0; b < BLOCKS; b++) {
		y[b].start = 100000 * (p + 1) + 1000 * b;
		y[b].end = y[b].start + 50 + b + shift;
		y[b].sm = b % 4;
		y[b].pad = 0;
	}
}

/* Options for how the trace departs from the run. */
struct how {
	int launches;		/* of nt_probe_cost: 2 per configuration */
	int untraced;		/* the second launch of configuration 1 not traced */
	int other_sm;		/* blocks of configuration 0 whose record names another SM */
};

static char *make_trace(void **state, struct nt_probe_body y[N_CFG][BLOCKS], const struct how *h)
{
	char *path = path_in(state, "probe.sqlite");
	struct nt_trace_kernel k = { .mangled = "nt_probe_cost", .module = 1 };
	struct nt_trace *t = NULL;
	struct nt_err err;
	int64_t kid, seq = 0;

	unlink(path);	/* the one before, in test_refusals */
	if (nt_trace_create(path, &t, &err) || nt_trace_begin(t, &err) ||
	    nt_trace_add_kernel(t, &k, &kid, &err))
		fail_msg("%s", err.msg);
	for (int i = 0; i < h->launches; i++) {
		int p = i / 2 % N_CFG, traced = i % 2 && !(h->untraced && p == 1);
		struct nt_trace_launch l = {
			.launch = ++seq, .kernel = kid, .grid_x = BLOCKS, .grid_y = 1, .grid_z = 1,
			.block_x = cfg[p].threads, .block_y = 1, .block_z = 1, .max_blocks_per_sm = -1,
			.traced = traced, .blocks = traced ? BLOCKS : 0, .t_start_ns = -1, .t_end_ns = -1,
			.correlation = -1, .graph = -1, .graph_node = -1, .graph_launch = -1,
		};

		if (nt_trace_add_launch(t, &l, &err))
			fail_msg("%s", err.msg);
		for (int b = 0; traced && b < BLOCKS; b++) {
			struct nt_trace_block r = {
				.block = b, .sm = y[p][b].sm, .warps = 1, .t_start_ns = 0, .t_end_ns = 1,
				.c_start = y[p][b].start - cost(p, b) / 2,
				.c_end = y[p][b].end + (cost(p, b) - cost(p, b) / 2),
			};

			if (p == 0 && b < h->other_sm)
				r.sm = (r.sm + 1) % 4;
			if (nt_trace_add_blocks(t, l.launch, &r, 1, &err))
				fail_msg("%s", err.msg);
		}
	}
	if (nt_trace_commit(t, &err) || nt_trace_finish(t, &err))
		fail_msg("%s", err.msg);
	nt_trace_close(t);
	return path;
}

/* Join a trace made as h says; the return, the map and the message. */
static int join(void **state, const struct how *h, struct nt_map **m, struct nt_err *err)
{
	struct nt_probe_body y[N_CFG][BLOCKS], native[N_CFG][BLOCKS];
	struct nt_probe_body *ty[N_CFG], *ny[N_CFG];
	struct nt_trace *t = NULL;
	char *path;
	int ret;

	for (int p = 0; p < N_CFG; p++) {
		bodies(y[p], p, 0);
		bodies(native[p], p, 7);
		ty[p] = y[p], ny[p] = native[p];
	}
	path = make_trace(state, y, h);
	*m = nt_map_new(N_SM, 0, 0);
	assert_non_null(*m);
	if (nt_trace_open(path, &t, err))
		fail_msg("%s", err->msg);
	ret = nt_probe_cost_join(t, cfg, N_CFG, ty, ny, *m, err);
	nt_trace_close(t);
	free(path);
	return ret;
}

static void test_exact(void **state)
{
	struct how h = { .launches = 2 * N_CFG };
	struct nt_map *m;
	struct nt_err err;

	assert_int_equal(join(state, &h, &m, &err), 0);
	assert_int_equal(m->n_probe, N_CFG);
	for (int p = 0; p < N_CFG; p++) {
		assert_int_equal(m->probe[p].threads, cfg[p].threads);
		assert_int_equal(m->probe[p].iters, cfg[p].iters);
		assert_int_equal(m->probe[p].blocks, BLOCKS);
		/* bodies 50 + b: median over b = 0..7 is 53.5; natively 7 more */
		assert_true(m->probe[p].body_traced == 53.5);
		assert_true(m->probe[p].body_native == 60.5);
		for (int s = 0; s < 4; s++)
			assert_true(m->probe_cost[p * N_SM + s] == 1000 * (p + 1) + 100 * s + 5);
		assert_true(isnan(m->probe_cost[p * N_SM + 4]));
	}
	nt_map_free(m);
}

static void expect_error(void **state, const struct how *h, const char *want)
{
	struct nt_map *m;
	struct nt_err err;

	assert_int_equal(join(state, h, &m, &err), -1);
	if (!strstr(err.msg, want) || !strstr(err.msg, "probe.sqlite"))
		fail_msg("'%s' does not name the trace and say '%s'", err.msg, want);
	assert_int_equal(m->n_probe, 0);	/* no half-made part */
	assert_null(m->probe);
	nt_map_free(m);
}

static void test_refusals(void **state)
{
	struct how missing = { .launches = 2 * N_CFG - 1 };
	struct how untraced = { .launches = 2 * N_CFG, .untraced = 1 };
	struct how moved = { .launches = 2 * N_CFG, .other_sm = 1 };

	expect_error(state, &missing, "3 launches of nt_probe_cost, not the 4 of the run");
	expect_error(state, &untraced, "has 0 of its 8 blocks recorded");
	expect_error(state, &moved, "1 of the 8 block records of launch 2 disagree");
}

/* The real thing: calibrate's probe-cost trace and the bodies the
 * traced run timed (GPU-33c5c5a1, kept by --probe-cost-keep), joined
 * again, give the probe part of the map that run stored, cell for cell
 * (its native bodies were not kept: the traced ones stand in). */
static void test_real(void **state)
{
	const char *data = getenv("NT_TEST_DATA") ? getenv("NT_TEST_DATA") : "tests/data";
	char *trace = path_in(state, "probe-cost.sqlite"), *bin = path_in(state, "bodies.bin"), cmd[8400];
	struct nt_map *m = real_map("33c5c5a1-a"), *got;
	struct nt_probe_body *y[NT_MAP_MAX_PROBES];
	struct nt_trace *t = NULL;
	struct nt_err err;
	FILE *f;

	assert_non_null(m);
	assert_int_equal(m->n_probe, 6);
	snprintf(cmd, sizeof(cmd), "xz -dc %s/traces/h200-33c5c5a1-probe-cost.sqlite.xz >%s && "
		 "xz -dc %s/traces/h200-33c5c5a1-probe-bodies.bin.xz >%s", data, trace, data, bin);
	assert_int_equal(system(cmd), 0);
	assert_non_null(f = fopen(bin, "rb"));
	for (int p = 0; p < m->n_probe; p++) {
		assert_non_null(y[p] = malloc((size_t)m->probe[p].blocks * sizeof(*y[p])));
		assert_int_equal(fread(y[p], sizeof(*y[p]), m->probe[p].blocks, f), m->probe[p].blocks);
	}
	assert_int_equal(fgetc(f), EOF);
	fclose(f);
	assert_non_null(got = nt_map_new(m->n_sm, 0, 0));
	if (nt_trace_open(trace, &t, &err) || nt_probe_cost_join(t, m->probe, m->n_probe, y, y, got, &err))
		fail_msg("%s", err.msg);
	for (int p = 0; p < m->n_probe; p++) {
		assert_true(got->probe[p].body_traced == m->probe[p].body_traced);
		for (int s = 0; s < m->n_sm; s++)
			assert_same_double(got->probe_cost[p * m->n_sm + s], m->probe_cost[p * m->n_sm + s],
					   "probe_cost", p * m->n_sm + s);
		free(y[p]);
	}
	nt_trace_close(t);
	nt_map_free(got);
	nt_map_free(m);
	free(trace);
	free(bin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
