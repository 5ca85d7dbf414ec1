/* Unit tests for core/report/dispatch.c and the replay's dispatch model
 * (replay.h): schedules by hand, the model's own records fitted back,
 * and the refills of the real multi-wave PyTorch launches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "replaytest.h"

#include "report/dispatch.h"
#include "trace/trace.h"

/*
 * 1 SM x 1 slot, three blocks of 10 ns: back to back 30 ns; a turnaround
 * of 5 adds it twice (40); an SM offset of 7 delays all (47, measured
 * from the launch's start at 0).  2 SMs x 1 slot, four blocks of 10, no
 * turnaround but refills 4 apart: b0, b1 at 0, b2 at 10, b3 at 14: 24.
 */
static void test_by_hand(void **state)
{
	struct nt_replay_block one[3] = { { 0, 10, 0 }, { 10, 20, 0 }, { 20, 30, 0 } };
	struct nt_replay_block two[4] = { { 0, 10, 0 }, { 0, 10, 1 }, { 10, 20, 0 }, { 10, 20, 1 } };
	struct nt_replay_input in = { .n_sm = 1, .slots = 1, .blocks = one, .n_blocks = 3 };
	double off = 7, off2[2] = { 0, 0 };
	struct nt_replay_result r;

	(void)state;
	run_ok(&in, &r);
	assert_ns(r.replay_ns, 30);
	assert_ns(r.start_err_pct, 0);
	in.turnaround_ns = 5;
	run_ok(&in, &r);
	assert_ns(r.replay_ns, 40);
	/* starts 0, 15, 30 against 0, 10, 20: |diff| 0, 5, 10 of 30 */
	assert_ns(r.start_err_pct, 100.0 * 5 / 30);
	assert_ns(r.start_err_p90_pct, 100.0 * 5 / 30);	/* the 90th of three is the second */
	in.sm_offset = &off;
	run_ok(&in, &r);
	assert_ns(r.replay_ns, 47);
	in = (struct nt_replay_input){ .n_sm = 2, .slots = 1, .blocks = two, .n_blocks = 4, .sm_offset = off2,
				       .gap_ns = 4 };
	run_ok(&in, &r);
	assert_ns(r.replay_ns, 24);
	assert_ns(r.hardware_ns, 24);
}

static void test_bad_model(void **state)
{
	struct nt_replay_block one[1] = { { 0, 10, 0 } };
	double off = -1;
	struct nt_replay_input in = { .n_sm = 1, .slots = 1, .blocks = one, .n_blocks = 1 };

	(void)state;
	in.turnaround_ns = NAN;
	expect_error(&in, "turnaround");
	in.turnaround_ns = 0;
	in.gap_ns = -1;
	expect_error(&in, "gap");
	in.gap_ns = 0;
	in.sm_offset = &off;
	expect_error(&in, "offset");
}

/*
 * Records made by the model itself (blocks in id order, each to the slot
 * that comes back first): the fit must find the turnaround and gap it
 * was made with, and the replay must then give back its makespan and
 * starts.  Blocks of 1-2 us on 8 SMs x 4 slots, offsets 0..210 ns.
 */
static void make_records(struct nt_replay_block *b, int n, int n_sm, int slots, const double *off,
			 double turnaround, double gap, int equal)
{
	double avail[64], server = -1e300;
	int used[64] = { 0 };

	for (int i = 0; i < n_sm * slots; i++)
		avail[i] = off[i % n_sm];
	for (int i = 0; i < n; i++) {
		int best = 0;
		double t;

		for (int j = 1; j < n_sm * slots; j++)
			if (avail[j] < avail[best])
				best = j;
		t = avail[best];
		if (used[best]) {
			t = fmax(t, server + gap);
			server = t;
		}
		used[best] = 1;
		b[i].sm = best % n_sm;
		b[i].t_start_ns = 1000000 + (int64_t)t;
		b[i].t_end_ns = b[i].t_start_ns + (equal ? 1500 : 1000 + (int64_t)(1000 * urand01()));
		avail[best] = (double)(b[i].t_end_ns - 1000000) + turnaround;
	}
}

static void check_fit(int equal, double turnaround, double gap)
{
	enum { N = 400, SM = 8, SLOTS = 4 };
	struct nt_replay_block b[N];
	double off[SM], fitted[SM];
	struct nt_dispatch d;
	struct nt_replay_result r;
	struct nt_replay_input in = { .n_sm = SM, .slots = SLOTS, .blocks = b, .n_blocks = N };
	struct nt_err err = { "" };

	for (int s = 0; s < SM; s++)
		off[s] = 30 * s;
	make_records(b, N, SM, SLOTS, off, turnaround, gap, equal);
	if (nt_dispatch_fit(b, N, SM, SLOTS, fitted, &d, &err))
		fail_msg("%s", err.msg);
	for (int s = 0; s < SM; s++)
		assert_ns(fitted[s], off[s]);
	assert_int_equal(d.refills, N - SM * SLOTS);
	assert_true(fabs(d.turnaround_ns - turnaround) <= 1);
	assert_true(fabs(d.gap_ns - gap) <= 1);
	in.sm_offset = fitted;
	in.turnaround_ns = d.turnaround_ns;
	in.gap_ns = d.gap_ns;
	run_ok(&in, &r);
	assert_true(fabs(r.error_pct) < 0.1);
	assert_true(r.start_err_p90_pct < 0.1);
}

static void test_fit_own_records(void **state)
{
	(void)state;
	check_fit(0, 0, 0);
	check_fit(0, 700, 0);
	/* blocks of one length end together: their refills queue */
	check_fit(1, 300, 40);
}

/* One wave: offsets only.  An SM without blocks takes the median of the
 * others' (here 0, 20, 40: 20). */
static void test_one_wave(void **state)
{
	struct nt_replay_block b[3] = { { 100, 200, 0 }, { 120, 200, 1 }, { 140, 200, 3 } };
	double off[4];
	struct nt_dispatch d;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_dispatch_fit(b, 3, 4, 1, off, &d, &err), 0);
	assert_ns(off[0], 0);
	assert_ns(off[1], 20);
	assert_ns(off[2], 20);
	assert_ns(off[3], 40);
	assert_true(d.refills == 0 && d.turnaround_ns == 0 && d.gap_ns == 0);
	b[2].sm = 4;
	assert_int_equal(nt_dispatch_fit(b, 3, 4, 1, off, &d, &err), -1);
	assert_non_null(strstr(err.msg, "SM 4"));
	b[2].sm = 3;
	b[2].t_end_ns = 10;
	assert_int_equal(nt_dispatch_fit(b, 3, 4, 1, off, &d, &err), -1);
	assert_int_equal(nt_dispatch_fit(b, 0, 4, 1, off, &d, &err), -1);
}

/*
 * The real PyTorch trace (tests/data/traces, GPU-abc66725): its
 * multi-wave elementwise launches (4,096 blocks of 128 threads, 16 per
 * SM) ran 10-21% longer than a replay without turnaround.  Fitted, the
 * turnaround comes out at microseconds (the instrumented exit) and every
 * launch replays within 5%, block starts within a few percent.
 */
struct real {
	struct nt_trace *t;
	int n_sm, launches, multi;
};

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct real *c = arg;
	struct nt_replay_block *b;
	struct nt_replay_result r;
	struct nt_dispatch d;
	struct nt_err err;
	double *off = malloc(c->n_sm * sizeof(*off));
	size_t n;
	int slots;

	(void)k;
	assert_non_null(off);
	if (nt_replay_read_launch(c->t, l->launch, &b, &n, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(nt_replay_observed_slots(b, n, &slots, &err), 0);
	slots = slots < l->max_blocks_per_sm ? slots : l->max_blocks_per_sm;
	if (nt_dispatch_fit(b, n, c->n_sm, slots, off, &d, &err))
		fail_msg("%s", err.msg);
	{
		struct nt_replay_input in = { .n_sm = c->n_sm, .slots = slots, .blocks = b, .n_blocks = n,
					      .sm_offset = off, .turnaround_ns = d.turnaround_ns,
					      .gap_ns = d.gap_ns };

		run_ok(&in, &r);
	}
	print_message("launch %lld: %zu blocks, %d slots, turnaround %.0f ns, gap %.1f ns: replay %+.2f%%, "
		      "starts off by %.2f%% (p90 %.2f%%)\n", (long long)l->launch, n, slots, d.turnaround_ns,
		      d.gap_ns, r.error_pct, r.start_err_pct, r.start_err_p90_pct);
	assert_true(fabs(r.error_pct) < 5);
	assert_true(r.start_err_pct < 2);
	if (d.refills) {
		c->multi++;
		assert_true(d.turnaround_ns > 1000 && d.turnaround_ns < 12000);
	}
	c->launches++;
	free(b);
	free(off);
	return 0;
}

static void test_real_gemm_trace(void **state)
{
	const char *dir = getenv("NT_TEST_DATA");
	char path[512];
	struct real c = { 0 };
	struct nt_err err;

	(void)state;
	snprintf(path, sizeof(path), "%s/traces/h200-abc66725-torch-gemm.sqlite", dir ? dir : "tests/data");
	if (nt_trace_open(path, &c.t, &err))
		fail_msg("%s", err.msg);
	c.n_sm = 132;
	assert_int_equal(nt_trace_foreach_launch(c.t, on_launch, &c, &err), 0);
	nt_trace_close(c.t);
	assert_int_equal(c.launches, 10);
	assert_true(c.multi >= 5);
}

/*
 * The two steps agree with the one: random launches (blocks of no
 * length, shared start and end times, SMs without blocks), the slots
 * the sorted times show against nt_replay_observed_slots, and the fit
 * from them against nt_dispatch_fit, field by field.
 */
static void test_prepared(void **state)
{
	enum { SM = 6, N = 400 };
	struct nt_replay_block b[N];
	uint64_t s = 0x2545f4914f6cdd1dULL;

	(void)state;
	for (int round = 0; round < 50; round++) {
		struct nt_dispatch_prep p;
		struct nt_dispatch d1, d2;
		struct nt_err err;
		double o1[SM], o2[SM];
		size_t n = 1 + (size_t)(round * 37 % N);
		int seen, slots;

		for (size_t i = 0; i < n; i++) {
			s ^= s << 13, s ^= s >> 7, s ^= s << 17;
			b[i].sm = (int)(s % (SM - 1));	/* the last SM runs nothing */
			b[i].t_start_ns = 1000 + (int64_t)((s >> 8) % 200);
			b[i].t_end_ns = b[i].t_start_ns + (int64_t)((s >> 20) % 4) * 25;
		}
		assert_int_equal(nt_replay_observed_slots(b, n, &seen, &err), 0);
		assert_int_equal(nt_dispatch_prepare(b, n, SM, &p, &err), 0);
		assert_int_equal(p.observed_slots, seen);
		for (slots = 1; slots <= 3; slots++) {
			assert_int_equal(nt_dispatch_fit(b, n, SM, slots, o1, &d1, &err), 0);
			assert_int_equal(nt_dispatch_fit_prepared(&p, slots, o2, &d2, &err), 0);
			assert_memory_equal(o1, o2, sizeof(o1));
			assert_memory_equal(&d1, &d2, sizeof(d1));
		}
		nt_dispatch_prep_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prepared),
		cmocka_unit_test(test_by_hand),
		cmocka_unit_test(test_bad_model),
		cmocka_unit_test(test_fit_own_records),
		cmocka_unit_test(test_one_wave),
		cmocka_unit_test(test_real_gemm_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
