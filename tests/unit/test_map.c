/* map.h: the chain summary and the limits every reader enforces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "map/map.h"
#include "map/mapfields.h"

static void test_summary_mean_gap(void **state)
{
	struct nt_map *m = nt_map_new(5, 0, 0);
	struct nt_map_summary s;

	(void)state;
	assert_non_null(m);
	m->chain[0] = 1;
	m->chain[1] = 4;
	m->chain[3] = 2;	/* 2 and 4 are not measured */
	nt_map_summarize(m, &s);
	assert_int_equal(s.measured, 3);
	/* |1-4| + |1-2| + |4-2| over 3 pairs */
	assert_true(fabs(s.mean_gap - 2.0) < 1e-12);
	m->chain[1] = m->chain[3] = NAN;
	nt_map_summarize(m, &s);
	assert_true(isnan(s.mean_gap));
	nt_map_free(m);
}

static void test_limits(void **state)
{
	(void)state;
	assert_true(nt_map_latency_ok(NAN));
	assert_true(nt_map_latency_ok(0) && nt_map_latency_ok(NT_MAP_MAX_CYCLES));
	assert_false(nt_map_latency_ok(-1e-9));
	assert_false(nt_map_latency_ok(1e200));
	assert_false(nt_map_latency_ok(INFINITY));
	assert_true(nt_map_time_ok(0) && nt_map_time_ok(NT_MAP_MAX_TIME));
	assert_false(nt_map_time_ok(-1));
	assert_false(nt_map_time_ok(NT_MAP_MAX_TIME + 1));
}

/* The probe part: made only by nt_map_set_probe, replaced whole, copied
 * deep, freed with the map. */
static void test_probe_part(void **state)
{
	struct nt_map *m = nt_map_new(3, 0, NT_MAP_NOISE | NT_MAP_PROBE), *c;
	struct nt_map_probe *old;
	struct nt_err err;

	(void)state;
	assert_non_null(m);
	assert_int_equal(m->n_probe, 0);	/* its size is unknown to nt_map_new */
	assert_null(m->probe);
	assert_null(m->probe_cost);
	assert_int_equal(nt_map_parts_of(m), NT_MAP_NOISE);
	assert_int_equal(nt_map_set_probe(m, 0), -1);
	assert_int_equal(nt_map_set_probe(m, NT_MAP_MAX_PROBES + 1), -1);
	assert_int_equal(m->n_probe, 0);
	assert_int_equal(nt_map_set_probe(m, 2), 0);
	assert_int_equal(m->n_probe, 2);
	assert_int_equal(nt_map_parts_of(m), NT_MAP_NOISE | NT_MAP_PROBE);
	for (int p = 0; p < 2; p++) {
		assert_int_equal(m->probe[p].threads, 0);
		assert_int_equal(m->probe[p].iters, 0);
		assert_int_equal(m->probe[p].blocks, 0);
		for (int s = 0; s < 3; s++)
			assert_true(isnan(m->probe_cost[p * 3 + s]));
	}
	old = m->probe;
	assert_int_equal(nt_map_set_probe(m, 17), -1);	/* a bad size keeps the part */
	assert_ptr_equal(m->probe, old);
	m->probe[1] = (struct nt_map_probe){ 128, 10, 264, 50.5, NAN };
	m->probe_cost[1 * 3 + 2] = 17.25;
	m->chain[0] = 300;
	strcpy(m->gpu.uuid, "GPU-1");
	assert_int_equal(nt_map_check(m, "m", &err), 0);
	assert_int_equal(nt_map_check_values(m, "m", &err), -1);	/* probe[0] is all zero */
	assert_string_equal(err.msg, "'m': probe[0].threads 0 is not within 1..1024");

	c = nt_map_dup(m);
	assert_non_null(c);
	assert_int_equal(c->n_probe, 2);
	assert_true(c->probe != m->probe && c->probe_cost != m->probe_cost);
	assert_memory_equal(&c->probe[1], &m->probe[1], sizeof(m->probe[1]));
	assert_true(c->probe_cost[5] == 17.25 && isnan(c->probe_cost[4]));
	m->probe_cost[5] = 1;
	assert_true(c->probe_cost[5] == 17.25);

	assert_int_equal(nt_map_set_probe(m, NT_MAP_MAX_PROBES), 0);	/* replaced */
	assert_int_equal(m->n_probe, NT_MAP_MAX_PROBES);
	assert_int_equal(m->probe[1].threads, 0);
	assert_true(isnan(m->probe_cost[5]));
	for (int p = 0; p < m->n_probe; p++)
		m->probe[p].threads = 1024;
	assert_int_equal(nt_map_check_values(m, NULL, &err), 0);
	m->probe[3].iters = NT_MAP_MAX_PROBE_COUNT + 1;
	assert_int_equal(nt_map_check_values(m, NULL, &err), -1);
	assert_string_equal(err.msg, "probe[3].iters 1000001 is not within 0..1000000");
	m->probe[3].iters = 0;
	m->probe[2].body_traced = -1;
	assert_int_equal(nt_map_check_values(m, "m", &err), -1);
	assert_string_equal(err.msg, "'m': probe[2].body_traced -1 is not a latency of 0..1000000 cycles");
	m->probe[2].body_traced = NAN;
	m->probe_cost[15 * 3 + 1] = -5;
	assert_int_equal(nt_map_check_values(m, "m", &err), -1);
	assert_string_equal(err.msg, "'m': probe[15].cost[1] -5 is not a latency of 0..1000000 cycles");

	/* the invariants every writer checks */
	m->n_probe = 0;
	assert_int_equal(nt_map_check(m, "m", &err), -1);
	assert_string_equal(err.msg, "m: map has n_probe 0 but probe set and probe_cost set");
	m->n_probe = NT_MAP_MAX_PROBES + 1;
	assert_int_equal(nt_map_check(m, "m", &err), -1);
	assert_string_equal(err.msg, "m: map has 17 probe configurations (0..16)");
	m->n_probe = NT_MAP_MAX_PROBES;
	nt_map_free(c);
	nt_map_free(m);	/* and the part with it: ASan's leak check */
}

/* Per SM, the mean of cost over the configuration's mean, over the short
 * configurations that ran; an SM with no cost is 1. */
static void test_probe_shape(void **state)
{
	static const struct {
		int iters;
		double cost[4];
	} cf[] = {
		{ 10, { 1, 2, 3, NAN } },		/* mean 2: 0.5 1 1.5 - */
		{ 1000, { 5, NAN, 3, NAN } },		/* mean 4: 1.25 - 0.75 - */
		{ 1001, { 100, 1, 1, 1 } },		/* too long a body: left out */
		{ 0, { NAN, NAN, NAN, NAN } },		/* no block ran */
		{ 5, { 0, 0, 0, 0 } },			/* mean 0: no ratio */
	};
	struct nt_map *m = nt_map_new(4, 0, 0);
	double shape[4] = { -1, -1, -1, -1 };

	(void)state;
	assert_non_null(m);
	assert_int_equal(nt_map_probe_shape(m, 1000, shape), 0);	/* no part */
	assert_true(shape[0] == -1);
	assert_int_equal(nt_map_set_probe(m, 5), 0);
	for (int p = 0; p < 5; p++) {
		m->probe[p].iters = cf[p].iters;
		memcpy(&m->probe_cost[p * 4], cf[p].cost, sizeof(cf[p].cost));
	}
	assert_int_equal(nt_map_probe_shape(m, 9, shape), 0);	/* only the empty and the zero one */
	assert_true(shape[0] == -1 && shape[3] == -1);
	assert_int_equal(nt_map_probe_shape(m, 1000, shape), 2);
	assert_true(shape[0] == 0.875);		/* (0.5 + 1.25) / 2 */
	assert_true(shape[1] == 1);		/* 2 / 2, its NAN left out */
	assert_true(shape[2] == 1.125);		/* (1.5 + 0.75) / 2 */
	assert_true(shape[3] == 1);		/* no cost anywhere */
	assert_int_equal(nt_map_probe_shape(m, 1001, shape), 3);
	assert_true(shape[1] == (1 + 1 / 25.75) / 2);	/* 2 / 2 and 1 / (103 / 4) */
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_mean_gap),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_probe_part),
		cmocka_unit_test(test_probe_shape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
