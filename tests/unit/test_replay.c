/* Unit tests for core/report/replay.c: hand-computed schedules, the policies'
 * invariants, the observed-slots helper, speed, and the replay of the
 * real H200 traces (tests/data/traces). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include <cmocka.h>

#include "replaytest.h"

#include "report/replay.h"
#include "trace/trace.h"


/*
 * 3 SMs x 1 slot, L2 latency 0, 10, 20 cycles, slope 1 ns/cycle, and a
 * trace that is this very schedule (SM: start..end):
 *	b0 0: 0..30   b1 1: 0..10   b2 2: 0..50   b3 1: 10..30
 *	b4 0: 30..70  b5 1: 30..40  b6 1: 40..70
 * so base = 30 0 30 10 40 0 20 and d(b, s) = base + 0|10|20.
 *   measured/hardware: the schedule above, 70; tail from 50 (SM 2 done
 *     after the last dispatch at 40): 20.
 *   uniform (+10 everywhere): b0 S0 0-40, b1 S1 0-10, b2 S2 0-40,
 *     b3 S1 10-30, b4 S1 30-80, b5 S0 40-50, b6 S2 40-70: 80, lost -10.
 *   greedy (in order, key free + lat): b0 S0 0-30, b1 S1 0-10,
 *     b2 S1 10-50 (key 20 ties S2, lower SM), b3 S2 0-30, b4 S0 30-70,
 *     b5 S2 30-50, b6 S1 50-80: 80.
 *   LPT order b4 b0 b2 b6 b3 b1 b5.  aware: b4 S0 0-40, b0 S1 0-40,
 *     b2 S2 0-50, b6 S0 40-60, b3 S1 40-60, b1 S0 60-60, b5 S0 60-60: 60.
 *     blind: b4 S0 0-40, b0 S1 0-40, b2 S2 0-50, b6 S0 40-60,
 *     b3 S1 40-60, b1 S2 50-70, b5 S0 60-70: 70.
 */
static const struct nt_replay_block tiny[7] = {
	{ 0, 30, 0 }, { 0, 10, 1 }, { 0, 50, 2 }, { 10, 30, 1 }, { 30, 70, 0 }, { 30, 40, 1 }, { 40, 70, 1 },
};
static const double tiny_lat[3] = { 0, 10, 20 };

static void test_tiny_by_hand(void **state)
{
	struct nt_replay_input in = { .n_sm = 3, .slots = 1, .blocks = tiny, .n_blocks = 7,
					      .lat = tiny_lat, .slope = 1.0 };
	struct nt_replay_result r;

	(void)state;
	run_ok(&in, &r);
	assert_ns(r.measured_ns, 70);
	assert_ns(r.replay_ns, 70);
	assert_ns(r.error_pct, 0);
	assert_ns(r.hardware_ns, 70);
	assert_ns(r.uniform_ns, 80);
	assert_ns(r.lost_ns, -10);
	assert_ns(r.greedy_ns, 80);
	assert_ns(r.aware_ns, 60);
	assert_ns(r.lpt_blind_ns, 70);
	assert_ns(r.recoverable_ns, 10);
	assert_ns(r.recoverable_pct, 100.0 / 7);
	assert_ns(r.reorder_ns, 0);
	assert_ns(r.placement_ns, 10);
	assert_ns(r.greedy_recoverable_ns, -10);
	assert_ns(r.waves, 7.0 / 3);
	assert_int_equal(r.full_waves, 2);
	assert_ns(r.last_wave_fill, 1.0 / 3);
	assert_ns(r.tail_start_ns, 50);
	assert_ns(r.tail_ns, 20);

	/* slope 0: every policy runs the measured durations (30 10 50 20 40
	 * 10 30); in order that is the trace again; LPT (b2 b4 b0 b6 b3 b1
	 * b5): b2 S0 0-50, b4 S1 0-40, b0 S2 0-30, b6 S2 30-60,
	 * b3 S1 40-60, b1 S0 50-60, b5 S0 60-70 (three-way tie): 70. */
	in.slope = 0;
	run_ok(&in, &r);
	assert_ns(r.replay_ns, 70);
	assert_ns(r.hardware_ns, 70);
	assert_ns(r.uniform_ns, 70);
	assert_ns(r.greedy_ns, 70);
	assert_ns(r.aware_ns, 70);
	assert_ns(r.lpt_blind_ns, 70);
}

/* The long block belongs on the fast SM: in order, block 1 (100 ns of
 * base) lands on the slow SM (+100); LPT puts it on the fast one and
 * block 0 after it there (key 100 ties the slow SM's, lower SM wins). */
static void test_aware_strictly_wins(void **state)
{
	static const struct nt_replay_block b[2] = { { 0, 10, 0 }, { 0, 100, 0 } };
	static const double lat[2] = { 0, 100 };
	struct nt_replay_input in = { .n_sm = 2, .slots = 1, .blocks = b, .n_blocks = 2,
					      .lat = lat, .slope = 1.0 };
	struct nt_replay_result r;

	(void)state;
	run_ok(&in, &r);
	assert_ns(r.hardware_ns, 200);
	assert_ns(r.uniform_ns, 150);
	assert_ns(r.lost_ns, 50);
	assert_ns(r.aware_ns, 110);
	assert_ns(r.greedy_ns, 110);
	assert_true(r.aware_ns < r.hardware_ns);
	assert_ns(r.recoverable_ns, 90);
	assert_ns(r.recoverable_pct, 45);
	/* exactly one wave: the tail runs from the first end */
	assert_int_equal(r.full_waves, 1);
	assert_ns(r.last_wave_fill, 1);
	assert_ns(r.tail_start_ns, 10);
}

/* Persistent-kernel counterfactuals by hand.  One wave on 2 SMs x 1 slot,
 * latency 0 and 10, 1 ns/cycle: b0 10 ns on SM 0, b1 20 ns on SM 1, so
 * base = 10 10, c = 10, omega = 15 15, W = 30, rho = 10/15 20/15.
 * even = 30 / 2 * 4/3 = 20 (the launch itself: quantisation 0); split =
 * 30 / (1.5 + 0.75) = 40/3, SM 0 taking 2/3 of the work: 20 x 2/3 on SM 0
 * and 10 x 4/3 on SM 1, both 13.33. */
static void test_persistent_by_hand(void **state)
{
	static const struct nt_replay_block b[2] = { { 0, 10, 0 }, { 0, 20, 1 } };
	static const double lat[2] = { 0, 10 };
	struct nt_replay_input in = { .n_sm = 2, .slots = 1, .blocks = b, .n_blocks = 2,
					      .lat = lat, .slope = 1.0 };
	struct nt_replay_result r;
	double rho[2];
	struct nt_err err;

	(void)state;
	run_ok(&in, &r);
	assert_ns(r.hardware_ns, 20);
	assert_ns(r.lost_ns, 5);
	assert_ns(r.even_ns, 20);
	assert_ns(r.split_ns, 40.0 / 3);
	assert_ns(r.quantisation_ns, 0);
	assert_ns(r.rebalance_ns, 20.0 / 3);
	assert_ns(r.persist_ns, 20.0 / 3);
	assert_ns(r.persist_pct, 100.0 / 3);
	assert_int_equal(nt_replay_rho(lat, 2, 10, 1, rho, &err), 0);
	assert_ns(rho[0], 2.0 / 3);
	assert_ns(rho[1], 4.0 / 3);
	/* a fit that has SM 0 take no time has no speeds */
	assert_int_equal(nt_replay_rho(lat, 2, -5, 1, rho, &err), -1);
	assert_non_null(strstr(err.msg, "SM 0"));
}

/* A grid of 4/3 waves at slope 0: 3 SMs x 1 slot, four 10 ns blocks, the
 * fourth after the first.  Spread over a persistent kernel's three
 * blocks the 40 ns of work end at 13.33: that is wave quantisation (the
 * tail), and the map has nothing to add. */
static void test_persistent_tail(void **state)
{
	static const struct nt_replay_block b[4] = { { 0, 10, 0 }, { 0, 10, 1 }, { 0, 10, 2 }, { 10, 20, 0 } };
	struct nt_replay_input in = { .n_sm = 3, .slots = 1, .blocks = b, .n_blocks = 4,
					      .lat = NULL, .slope = 0 };
	struct nt_replay_result r;

	(void)state;
	run_ok(&in, &r);
	assert_ns(r.hardware_ns, 20);
	assert_ns(r.even_ns, 40.0 / 3);
	assert_ns(r.split_ns, 40.0 / 3);
	assert_ns(r.rebalance_ns, 0);
	assert_ns(r.quantisation_ns, 20 - 40.0 / 3);
	assert_ns(r.persist_ns, r.quantisation_ns);
}

/* SMs that ran slower than the fit says (residual factors, replay.h).
 * One wave on 2 SMs x 12 slots at slope 0: SM 0's twelve blocks 10 ns,
 * SM 1's 12 ns.  W = 264, c = 11.  The blocks' own spread is 0, so SM
 * 1's 12/11 is all its own: an even persistent version ends when SM 1
 * does, 264 / 24 x 12/11 = 12, and so does one split by the map (no
 * slope: equal shares): nothing to gain, where pooled work alone said 11.
 * Then half of each SM's blocks 1 ns shorter, half 1 ns longer: the same
 * means, within = 24 / 22 / 121 (22 pairs' worth), sys = 2/121 - within /
 * 12 = (21/11) / 121, lambda = 21/22: the factors 1 -+ 21/242, even and
 * split 11 x 263/242.  With 1 slot the launch is 12 waves: no factors,
 * and none when the blocks' spread rests on too few pairs (2 SMs x 2). */
static void test_persistent_residuals(void **state)
{
	struct nt_replay_block b[24];
	struct nt_replay_input in = { .n_sm = 2, .slots = 12, .blocks = b, .n_blocks = 24, .slope = 0 };
	struct nt_replay_result r;

	(void)state;
	for (int i = 0; i < 24; i++)
		b[i] = (struct nt_replay_block){ 0, i < 12 ? 10 : 12, i < 12 ? 0 : 1 };
	run_ok(&in, &r);
	assert_ns(r.hardware_ns, 12);
	assert_ns(r.even_ns, 12);
	assert_ns(r.split_ns, 12);
	assert_ns(r.quantisation_ns, 0);
	assert_ns(r.rebalance_ns, 0);
	assert_ns(r.persist_ns, 0);
	for (int i = 0; i < 24; i++)
		b[i].t_end_ns += i % 2 ? 1 : -1;
	run_ok(&in, &r);
	assert_ns(r.even_ns, 11 * 263.0 / 242);
	assert_ns(r.split_ns, 11 * 263.0 / 242);
	/* twelve waves of one slot: the means are not the SMs' own */
	in.slots = 1;
	for (int i = 0; i < 24; i++)
		b[i] = (struct nt_replay_block){ 12 * (i % 12), 12 * (i % 12) + (i < 12 ? 10 : 12), i < 12 ? 0 : 1 };
	run_ok(&in, &r);
	assert_ns(r.even_ns, 132);
	assert_ns(r.split_ns, 132);
	/* two blocks per SM: within rests on 2 pairs */
	in.slots = 2;
	in.n_blocks = 4;
	b[0] = (struct nt_replay_block){ 0, 10, 0 };
	b[1] = (struct nt_replay_block){ 0, 10, 0 };
	b[2] = (struct nt_replay_block){ 0, 12, 1 };
	b[3] = (struct nt_replay_block){ 0, 12, 1 };
	run_ok(&in, &r);
	assert_ns(r.even_ns, 11);
	assert_ns(r.split_ns, 11);
}

/* Slope 0 on a random multi-wave launch, and the same launch at a slope
 * on a flat map (every SM at 256 cycles): the map cannot matter, and the
 * second run goes through every policy's own replay. */
static void test_slope_zero_uniform_is_hardware(void **state)
{
	enum { N = 20000, SM = 13, SLOTS = 3 };
	struct nt_replay_block *b = calloc(N, sizeof(*b));
	double lat[SM];
	struct nt_replay_input in = { .n_sm = SM, .slots = SLOTS, .blocks = b, .n_blocks = N,
					      .lat = lat, .slope = 0 };
	struct nt_replay_result r0, r;

	(void)state;
	assert_non_null(b);
	for (int s = 0; s < SM; s++)
		lat[s] = 200 + 100 * urand01();
	for (int i = 0; i < N; i++) {
		b[i].t_start_ns = (int64_t)(1e6 * urand01());
		b[i].t_end_ns = b[i].t_start_ns + 1000 + (int64_t)(5000 * urand01());
		b[i].sm = (int32_t)(urand01() * SM);
	}
	run_ok(&in, &r0);
	assert_true(r0.hardware_ns > 0);
	assert_true(r0.uniform_ns == r0.hardware_ns && r0.replay_ns == r0.hardware_ns);
	assert_true(r0.greedy_ns == r0.hardware_ns && r0.aware_ns == r0.lpt_blind_ns);
	assert_true(r0.lost_ns == 0 && r0.placement_ns == 0 && r0.greedy_recoverable_ns == 0);
	/* many short blocks: LPT is not worse than in order, nor better
	 * than the average load */
	assert_true(r0.aware_ns <= r0.hardware_ns);
	assert_int_equal(r0.full_waves, N / (SM * SLOTS));

	for (int s = 0; s < SM; s++)
		lat[s] = 256;
	in.slope = 0.5;
	run_ok(&in, &r);
	assert_true(r.hardware_ns == r0.hardware_ns);
	assert_true(r.uniform_ns == r0.hardware_ns);
	assert_true(r.greedy_ns == r0.hardware_ns);
	assert_true(r.lpt_blind_ns == r0.lpt_blind_ns);
	assert_true(r.aware_ns == r0.lpt_blind_ns);
	assert_true(r.tail_ns == r0.tail_ns);

	/* and on a real spread the map does matter: same blocks */
	for (int s = 0; s < SM; s++)
		lat[s] = 200 + 100 * urand01();
	run_ok(&in, &r);
	assert_true(r.uniform_ns != r.hardware_ns);
	assert_true(r.hardware_ns != r0.hardware_ns);
	free(b);
}

static void test_bad_input(void **state)
{
	struct nt_replay_block b[7];
	double lat[3] = { 0, 10, 20 };
	struct nt_replay_input in = { .n_sm = 3, .slots = 1, .blocks = b, .n_blocks = 7,
					      .lat = lat, .slope = 1.0 };

	(void)state;
	memcpy(b, tiny, sizeof(b));
	in.n_sm = 0;
	expect_error(&in, "0 SMs");
	in.n_sm = -2;
	expect_error(&in, "-2 SMs");
	in.n_sm = 3;
	in.slots = 0;
	expect_error(&in, "0 slots");
	in.slots = 1 << 23;
	expect_error(&in, "more than");
	in.slots = 1;
	in.n_blocks = 0;
	expect_error(&in, "no blocks");
	in.n_blocks = 7;
	in.slope = NAN;
	expect_error(&in, "slope nan");
	in.slope = INFINITY;
	expect_error(&in, "slope inf");
	in.slope = 1;
	lat[1] = NAN;
	expect_error(&in, "latency of SM 1");
	lat[1] = 10;
	in.lat = NULL;
	expect_error(&in, "no latency map");
	in.lat = lat;
	b[3].sm = 3;
	expect_error(&in, "block 3 ran on SM 3");
	b[3].sm = -1;
	expect_error(&in, "block 3 ran on SM -1");
	b[3] = tiny[3];
	b[5].t_end_ns = 29;
	expect_error(&in, "block 5 ends");
	b[5] = tiny[5];
	/* block 1: 10 ns on SM 1 (10 cycles) at slope 2 is -10 ns on SM 0 */
	in.slope = 2;
	expect_error(&in, "block 1");
	/* a negative slope is fine while no block goes negative: at -2,
	 * block 0 (30 ns on SM 0) would take -10 ns on SM 2 */
	in.slope = -2;
	expect_error(&in, "block 0");
	in.slope = -0.1;
	{
		struct nt_replay_result r;

		run_ok(&in, &r);
		/* lat NULL is fine at slope 0 */
		in.lat = NULL;
		in.slope = 0;
		run_ok(&in, &r);
		assert_ns(r.replay_ns, 70);
	}
	assert_int_equal(nt_replay_run(NULL, NULL, NULL), -1);
}

static void test_observed_slots(void **state)
{
	static const struct nt_replay_block b[] = {
		{ 0, 10, 0 }, { 10, 20, 0 },	/* touching: one slot */
		{ 100, 200, 1 }, { 150, 250, 1 }, { 160, 170, 1 }, { 170, 180, 1 },	/* 3 at 160..170 */
		{ 5, 5, 2 },			/* zero length: runs nothing */
	};
	struct nt_err err;
	int slots = -1;

	(void)state;
	assert_int_equal(nt_replay_observed_slots(b, 2, &slots, &err), 0);
	assert_int_equal(slots, 1);
	assert_int_equal(nt_replay_observed_slots(b, 6, &slots, &err), 0);
	assert_int_equal(slots, 3);
	assert_int_equal(nt_replay_observed_slots(b + 6, 1, &slots, &err), 0);
	assert_int_equal(slots, 0);
	assert_int_equal(nt_replay_observed_slots(b, 0, &slots, &err), 0);
	assert_int_equal(slots, 0);
	/* per SM, not over the GPU: the same intervals on two SMs */
	{
		const struct nt_replay_block two[] = { { 0, 10, 0 }, { 0, 10, 1 }, { 5, 15, 1 } };

		assert_int_equal(nt_replay_observed_slots(two, 3, &slots, &err), 0);
		assert_int_equal(slots, 2);
	}
	{
		const struct nt_replay_block bad[] = { { 0, 10, 0 }, { 10, 5, 0 } };

		assert_int_equal(nt_replay_observed_slots(bad, 2, &slots, &err), -1);
		assert_non_null(strstr(err.msg, "block 1"));
	}
}

/* Against counting by hand: for each block's start, the blocks on its SM
 * that cover that instant ([start, end)), over random launches with
 * ties, zero-length blocks and far-apart times. */
static void test_observed_slots_brute(void **state)
{
	enum { N = 400 };
	struct nt_replay_block b[N];
	struct nt_err err;

	(void)state;
	for (int rep = 0; rep < 60; rep++) {
		int n = 1 + (int)(urand01() * N), sms = 1 + (int)(urand01() * 9), most = 0, slots = -1;
		int64_t grain = rep % 3 == 0 ? 1 : rep % 3 == 1 ? 10 : (int64_t)1 << 40;

		for (int i = 0; i < n; i++) {
			b[i].t_start_ns = grain * (int64_t)(urand01() * 50);
			b[i].t_end_ns = b[i].t_start_ns + grain * (int64_t)(urand01() * 8);
			b[i].sm = (int32_t)(urand01() * sms);
		}
		for (int i = 0; i < n; i++) {
			int run = 0;

			for (int j = 0; j < n; j++)
				run += b[j].sm == b[i].sm && b[j].t_start_ns <= b[i].t_start_ns &&
				       b[i].t_start_ns < b[j].t_end_ns;
			most = run > most ? run : most;
		}
		assert_int_equal(nt_replay_observed_slots(b, (size_t)n, &slots, &err), 0);
		assert_int_equal(slots, most);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A million blocks, 132 SMs x 16 slots, with a slope: only that it ends
 * (the time is printed; the brief is well under a second). */
static void test_million_blocks(void **state)
{
	enum { N = 1000000, SM = 132 };
	struct nt_replay_block *b = malloc(N * sizeof(*b));
	double lat[SM], t;
	struct nt_replay_input in = { .n_sm = SM, .slots = 16, .blocks = b, .n_blocks = N,
					      .lat = lat, .slope = 0.3 };
	struct nt_replay_result r;
	int slots;
	struct nt_err err;

	(void)state;
	assert_non_null(b);
	for (int s = 0; s < SM; s++)
		lat[s] = 250 + 60 * urand01();
	for (int i = 0; i < N; i++) {
		b[i].sm = i % SM;
		b[i].t_start_ns = 1700000000000000000LL + (int64_t)i * 7;
		b[i].t_end_ns = b[i].t_start_ns + 200 + (int64_t)(20000 * urand01());
	}
	t = now();
	run_ok(&in, &r);
	t = now() - t;
	print_message("replay of %d blocks, six policies: %.3f s\n", N, t);
	t = now();
	assert_int_equal(nt_replay_observed_slots(b, N, &slots, &err), 0);
	print_message("observed slots of %d blocks: %.3f s\n", N, now() - t);
	assert_true(r.hardware_ns > 0 && r.aware_ns > 0);
	free(b);
}

/* The real traces.  A launch of at most one wave starts every block at
 * 0 in the replay, so its makespan is the longest block, and the
 * measured one exceeds it by less than the spread of the block starts:
 * 0 <= measured - replay <= max start - min start (at most 160 ns on
 * these traces: < 0.1% of the chase's 300 us launches, 0.55% of the
 * 29 us PyTorch reduction).  Over more waves the replay
 * misses the turnaround between one block's last warp out and the next
 * block's first warp in on a slot (the records do not cover it: on the
 * PyTorch launches about 1.5-3.9 us per block on 14 us blocks), so it
 * comes out short: -25% < error < 0 there.  (The report fits that
 * turnaround to the records, dispatch.h; test_dispatch.c checks it.) */
struct replay_check {
	struct nt_trace *t;
	const double *lat;
	int n_sm, launches, multi_wave;
	double single_pct;
	double worst_single, worst_multi;
};

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct replay_check *c = arg;
	struct nt_replay_block *b;
	struct nt_replay_result r;
	struct nt_err err;
	size_t n;
	int64_t s0, s1;
	double longest = 0;

	(void)k;
	if (!l->traced)
		return 0;
	c->launches++;
	if (nt_replay_read_launch(c->t, l->launch, &b, &n, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(n, l->blocks);
	assert_true(l->max_blocks_per_sm > 0);
	{
		struct nt_replay_input in = { .n_sm = c->n_sm, .slots = l->max_blocks_per_sm, .blocks = b,
					      .n_blocks = n, .lat = c->lat, .slope = 0 };

		run_ok(&in, &r);
	}
	assert_true(r.uniform_ns == r.hardware_ns && r.replay_ns == r.hardware_ns);
	s0 = s1 = b[0].t_start_ns;
	for (size_t i = 0; i < n; i++) {
		s0 = b[i].t_start_ns < s0 ? b[i].t_start_ns : s0;
		s1 = b[i].t_start_ns > s1 ? b[i].t_start_ns : s1;
		longest = fmax(longest, (double)(b[i].t_end_ns - b[i].t_start_ns));
	}
	if (r.waves <= 1) {
		assert_true(r.replay_ns == longest);
		assert_true(r.measured_ns >= r.replay_ns);
		assert_true(r.measured_ns - r.replay_ns <= (double)(s1 - s0));
		assert_true(fabs(r.error_pct) < c->single_pct);
		c->worst_single = fmax(c->worst_single, fabs(r.error_pct));
	} else {
		c->multi_wave++;
		if (!(r.error_pct < 0 && r.error_pct > -25))
			fail_msg("launch %lld: replay %.0f ns vs measured %.0f ns: %+.2f%%", (long long)l->launch,
				 r.replay_ns, r.measured_ns, r.error_pct);
		c->worst_multi = fmax(c->worst_multi, fabs(r.error_pct));
	}
	free(b);
	return 0;
}

static void replay_trace(const char *name, int launches, int multi_wave, double single_pct)
{
	const char *dir = getenv("NT_TEST_DATA");
	struct replay_check c = { .single_pct = single_pct };
	struct nt_map *m = NULL;
	struct nt_err err;
	char path[512];

	snprintf(path, sizeof(path), "%s/traces/h200-abc66725-%s.sqlite", dir ? dir : "tests/data", name);
	if (nt_trace_open(path, &c.t, &err) ||
	    nt_trace_get_map(c.t, "GPU-abc66725-5d0d-d932-f66a-78b0c1d33c17", &m, &err))
		fail_msg("%s", err.msg);
	c.lat = m->chain;
	c.n_sm = m->n_sm;
	assert_int_equal(nt_trace_foreach_launch(c.t, on_launch, &c, &err), 0);
	assert_int_equal(c.launches, launches);
	assert_int_equal(c.multi_wave, multi_wave);
	print_message("%s: %d launches, worst |error| %.3f%% within a wave, %.2f%% over %d multi-wave\n", name,
		      c.launches, c.worst_single, c.worst_multi, c.multi_wave);
	nt_map_free(m);
	nt_trace_close(c.t);
}

static void test_real_chase(void **state)
{
	(void)state;
	replay_trace("chase", 21, 0, 0.1);
}

static void test_real_torch_gemm(void **state)
{
	(void)state;
	replay_trace("torch-gemm", 10, 7, 1);
}

/* 528 one-warp blocks on 132 SMs: the hardware put 4 on each. */
static void test_real_observed_slots(void **state)
{
	const char *dir = getenv("NT_TEST_DATA");
	struct nt_trace *t = NULL;
	struct nt_replay_block *b;
	struct nt_err err;
	char path[512];
	size_t n;
	int slots;

	(void)state;
	snprintf(path, sizeof(path), "%s/traces/h200-abc66725-chase.sqlite", dir ? dir : "tests/data");
	if (nt_trace_open(path, &t, &err))
		fail_msg("%s", err.msg);
	for (int64_t launch = 1; launch <= 21; launch++) {
		if (nt_replay_read_launch(t, launch, &b, &n, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(n, 528);
		assert_int_equal(nt_replay_observed_slots(b, n, &slots, &err), 0);
		assert_int_equal(slots, 4);
		free(b);
	}
	assert_int_equal(nt_replay_read_launch(t, 999, &b, &n, &err), 0);
	assert_null(b);
	assert_int_equal(n, 0);
	nt_trace_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiny_by_hand),
		cmocka_unit_test(test_aware_strictly_wins),
		cmocka_unit_test(test_persistent_by_hand),
		cmocka_unit_test(test_persistent_tail),
		cmocka_unit_test(test_persistent_residuals),
		cmocka_unit_test(test_slope_zero_uniform_is_hardware),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_observed_slots),
		cmocka_unit_test(test_observed_slots_brute),
		cmocka_unit_test(test_million_blocks),
		cmocka_unit_test(test_real_chase),
		cmocka_unit_test(test_real_torch_gemm),
		cmocka_unit_test(test_real_observed_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
