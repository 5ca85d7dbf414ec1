/* Unit tests for core/report/report_verdict.c: Benjamini-Hochberg
 * q-values across a report's kernels and the verdict each one gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "report/report_impl.h"

#define N 6

/*
 * Six kernels on one 4-SM device, p = 0.0001, 0.001, 0.002, 0.03, 0.5
 * and one without a fit; m = 5 fitted.  Sorted, m p / rank = 0.0005,
 * 0.0025, 0.0033, 0.0375, 0.5, each q the least of those from its rank
 * on.  At FDR 1% the first three pass the test:
 *   k0 p 0.0001, effect 5%:           L2-sensitive
 *   k1 p 0.001, effect 0.5%:          no L2 effect (too small)
 *   k2 p 0.002, effect 5%, probe 60%: not measurable here
 *   k3 p 0.03, slope < 0, follows the common pattern (r 0.8): other
 *   k4 p 0.5, effect 2%, nothing else: no L2 effect
 *   k5 no fit.
 */
static void test_bh_and_verdicts(void **state)
{
	static const double p[N] = { 0.0001, 0.001, 0.002, 0.03, 0.5, NAN };
	static const double eff[N] = { 5, 0.5, 5, -3, 2, NAN };
	struct nt_map *m = nt_map_new(4, 0, 0);
	struct nt_report_device dev = { .trace = 0, .device = 0, .sm_count = 4, .map = m };
	struct nt_report_kernel k[N];
	struct nt_report r = { .n_kernels = N, .n_devices = 1, .kernels = k, .devices = &dev };
	int blocks[4] = { 3, 3, 3, 3 };
	double med[4] = { 10, 11, 12, 13 };
	struct nt_err err;

	(void)state;
	assert_non_null(m);
	for (int s = 0; s < 4; s++)
		m->chain[s] = 280 + s;
	memset(k, 0, sizeof(k));
	for (int i = 0; i < N; i++) {
		k[i].map = m;
		k[i].fitted = !isnan(p[i]);
		k[i].fit.fitted = k[i].fitted;
		k[i].fit.p_value = p[i];
		k[i].fit.effect_pct = eff[i];
		k[i].fit.slope_ns = eff[i];
		k[i].fit.median_ns = 12;
		k[i].fit.intercept_ns = 1;
		k[i].sm_blocks = blocks;
		k[i].sm_median_ns = k[i].fitted ? med : NULL;
		k[i].probe_share = i == 2 ? 0.6 : NAN;
		k[i].q_value = NAN;
		for (int v = 0; v < NT_COV_COUNT; v++)
			k[i].cov_r[v] = k[i].cov_map_r[v] = NAN;
	}
	k[3].cov_r[NT_COV_PATTERN] = 0.8;
	k[3].cov_map_r[NT_COV_PATTERN] = -0.4;
	k[4].cov_r[NT_COV_CORES] = 0.1;
	assert_int_equal(nt_report_judge(&r, &err), 0);
	assert_true(fabs(k[0].q_value - 0.0005) < 1e-12);
	assert_true(fabs(k[1].q_value - 0.0025) < 1e-12);
	assert_true(fabs(k[2].q_value - 0.002 * 5 / 3) < 1e-12);
	assert_true(fabs(k[3].q_value - 0.0375) < 1e-12);
	assert_true(fabs(k[4].q_value - 0.5) < 1e-12);
	assert_true(isnan(k[5].q_value));
	assert_int_equal(k[0].verdict, NT_VERDICT_SENSITIVE);
	assert_int_equal(k[1].verdict, NT_VERDICT_NO_EFFECT);
	assert_int_equal(k[2].verdict, NT_VERDICT_NOT_MEASURABLE);
	assert_int_equal(k[3].verdict, NT_VERDICT_OTHER);
	assert_int_equal(k[3].follows, NT_COV_PATTERN);
	assert_int_equal(k[4].verdict, NT_VERDICT_NO_EFFECT);
	assert_int_equal(k[4].follows, -1);
	assert_int_equal(k[5].verdict, NT_VERDICT_NO_FIT);
	assert_int_equal(r.sensitive, 1);
	assert_true(k[0].sensitive && !k[1].sensitive && !k[2].sensitive);
	/* shares by the slope for the sensitive kernel only (mean 1) */
	assert_non_null(k[0].shares);
	assert_true(k[0].shares[0] > k[0].shares[3]);
	assert_non_null(k[4].shares);
	for (int s = 0; s < 4; s++)
		assert_true(fabs(k[4].shares[s] - 1) < 1e-12);
	{
		char buf[512];

		nt_report_verdict_text(&k[3], buf, sizeof(buf));
		assert_non_null(strstr(buf, "its blocks run faster on the SMs the map calls slow"));
		assert_non_null(strstr(buf, "the trace's common per-SM pattern (r = 0.80), which runs against"));
		nt_report_verdict_text(&k[2], buf, sizeof(buf));
		assert_non_null(strstr(buf, "not measurable here: the instrumentation took 60%"));
	}
	for (int i = 0; i < N; i++)
		free(k[i].shares);
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bh_and_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
