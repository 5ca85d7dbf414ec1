/* map.h: the chain summary and the limits every reader enforces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "map/map.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_mean_gap),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
