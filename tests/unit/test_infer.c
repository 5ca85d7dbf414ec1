/* core/report/infer.c: block ends of entry-only launches from their SMs'
 * later starts, checked against schedules whose ends are known; and
 * interposer/entryrec.h, the entry-only record on the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "interposer/entryrec.h"
#include "report/infer.h"

#define MAX 4096

/* A GPU of n_sm SMs with `slots` slots each: blocks in id order, each to
 * the slot that frees first (lowest SM on a tie), starting when it frees
 * plus turn ns; block b takes dur(b).  Ends are kept to check against. */
struct sched {
	size_t n;
	int32_t sm[MAX];
	int64_t t0[MAX], c0[MAX], t1[MAX], c1[MAX], end[MAX];
	unsigned char how[MAX];
};

static void schedule(struct sched *s, size_t n, int n_sm, int slots, int64_t (*dur)(size_t b, int sm),
		     int64_t turn)
{
	int64_t free_at[64 * 8];

	assert_true(n <= MAX && n_sm * slots <= 64 * 8);
	memset(free_at, 0, sizeof(free_at));
	s->n = n;
	for (size_t b = 0; b < n; b++) {
		int best = 0;

		for (int q = 1; q < n_sm * slots; q++)
			if (free_at[q] < free_at[best])
				best = q;
		s->sm[b] = best / slots;
		s->t0[b] = 1000000 + free_at[best] + (b >= (size_t)(n_sm * slots) ? turn : 0);
		s->c0[b] = 2 * s->t0[b] + 7;	/* the SM's clock: 2 cycles a ns */
		s->end[b] = s->t0[b] + dur(b, s->sm[b]);
		free_at[best] = s->end[b] - 1000000;
	}
}

static int64_t by_sm(size_t b, int sm)
{
	(void)b;
	return 100 + 50 * sm;
}

/* Uniform blocks on each SM: every inferred end is the true end plus the
 * turnaround; the last `slots` of each SM are censored at its median. */
static void test_fifo_exact(void **state)
{
	static struct sched s;
	struct nt_infer_stats st;
	struct nt_err err;
	size_t censored = 0;

	(void)state;
	schedule(&s, 400, 4, 3, by_sm, 20);
	assert_int_equal(nt_infer_ends(s.n, s.sm, s.t0, s.c0, 4, 3, s.t1, s.c1, s.how, &st, &err), 0);
	assert_int_equal(st.sms, 4);
	assert_int_equal(st.sms_inferred, 4);
	assert_int_equal(st.censored, 4 * 3);
	assert_int_equal(st.inferred + st.censored, 400);
	assert_int_equal(st.unknown, 0);
	for (size_t b = 0; b < s.n; b++) {
		assert_true(s.how[b] == NT_END_INFERRED || s.how[b] == NT_END_CENSORED);
		censored += s.how[b] == NT_END_CENSORED;
		/* inferred or censored: its SM's block time plus the turnaround */
		assert_int_equal(s.t1[b] - s.t0[b], by_sm(b, s.sm[b]) + 20);
		assert_int_equal(s.c1[b] - s.c0[b], 2 * (by_sm(b, s.sm[b]) + 20));
	}
	assert_int_equal(censored, 12);
}

static int64_t varied(size_t b, int sm)
{
	return 100 + (int64_t)((b * 37) % 11) * 13 + 40 * sm;
}

/* Blocks of unequal length: single ends may be off, but each SM's mean
 * inferred block time is its true mean over the same number of blocks
 * within what the censored tail moves it (Little's law). */
static void test_little(void **state)
{
	static struct sched s;
	struct nt_infer_stats st;
	struct nt_err err;

	(void)state;
	schedule(&s, 2000, 2, 4, varied, 0);
	assert_int_equal(nt_infer_ends(s.n, s.sm, s.t0, s.c0, 2, 4, s.t1, s.c1, s.how, &st, &err), 0);
	for (int q = 0; q < 2; q++) {
		double inf = 0, truth = 0;
		size_t m = 0, all = 0;

		for (size_t b = 0; b < s.n; b++) {
			if (s.sm[b] != q)
				continue;
			truth += (double)(s.end[b] - s.t0[b]);
			all++;
			if (s.how[b] == NT_END_INFERRED) {
				inf += (double)(s.t1[b] - s.t0[b]);
				m++;
			}
		}
		assert_true(m + 4 == all);
		inf /= (double)m;
		truth /= (double)all;
		assert_true(inf > truth * 0.98 && inf < truth * 1.02);
	}
}

/* One wave: nothing can be inferred; an SM in its first wave beside SMs
 * with later starts takes the launch's median. */
static void test_one_wave(void **state)
{
	static struct sched s;
	struct nt_infer_stats st;
	struct nt_err err;

	(void)state;
	schedule(&s, 8, 4, 2, by_sm, 0);	/* 4 SMs x 2 slots: 8 blocks, one wave */
	assert_int_equal(nt_infer_ends(s.n, s.sm, s.t0, s.c0, 4, 2, s.t1, s.c1, s.how, &st, &err), 0);
	assert_int_equal(st.unknown, 8);
	assert_int_equal(st.inferred + st.censored, 0);
	for (size_t b = 0; b < s.n; b++) {
		assert_int_equal(s.how[b], NT_END_UNKNOWN);
		assert_int_equal(s.t1[b], s.t0[b]);
	}
	/* SM 3 has one block only; the others three */
	s.n = 10;
	s.sm[8] = 0, s.t0[8] = s.c0[8] = 5000000;
	s.sm[9] = 1, s.t0[9] = s.c0[9] = 5000000;
	s.sm[2] = 0, s.sm[3] = 1, s.sm[6] = 2, s.sm[7] = 2;
	assert_int_equal(nt_infer_ends(s.n, s.sm, s.t0, s.c0, 4, 2, s.t1, s.c1, s.how, &st, &err), 0);
	assert_true(st.inferred > 0);
	assert_int_equal(st.unknown, 0);
	assert_int_equal(st.sms, 3);
}

/* The order on an SM is its clock's, not the ns timer's (equal there). */
static void test_clock_order(void **state)
{
	int32_t sm[4] = { 0, 0, 0, 0 };
	int64_t t0[4] = { 500, 500, 500, 500 }, c0[4] = { 40, 10, 30, 20 }, t1[4], c1[4];
	unsigned char how[4];
	struct nt_infer_stats st;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_infer_ends(4, sm, t0, c0, 1, 1, t1, c1, how, &st, &err), 0);
	/* order 1, 3, 2, 0 */
	assert_int_equal(c1[1], 20);
	assert_int_equal(c1[3], 30);
	assert_int_equal(c1[2], 40);
	assert_int_equal(how[0], NT_END_CENSORED);
	assert_int_equal(c1[0], 40 + 10);
}

/* No occupancy in the trace: the slots from the starts alone, the first
 * wave's burst closed by the widest early gap on each SM. */
static void test_slots_from_starts(void **state)
{
	static struct sched s;
	struct nt_err err;

	(void)state;
	schedule(&s, 600, 4, 3, by_sm, 20);
	assert_int_equal(nt_infer_slots(s.n, s.sm, s.c0, 4, NT_INFER_MAX_SLOTS, &err), 3);
	schedule(&s, 600, 4, 7, varied, 20);
	assert_int_equal(nt_infer_slots(s.n, s.sm, s.c0, 4, NT_INFER_MAX_SLOTS, &err), 7);
	assert_int_equal(nt_infer_slots(0, s.sm, s.c0, 4, NT_INFER_MAX_SLOTS, &err), 1);
	s.sm[5] = 4;
	assert_int_equal(nt_infer_slots(s.n, s.sm, s.c0, 4, NT_INFER_MAX_SLOTS, &err), -1);
	assert_non_null(strstr(err.msg, "SM 4"));
}

/* A trace is input: a timer that runs against the SM's clock, or times
 * near the top of int64_t, give no negative block and no overflow. */
static void test_hostile(void **state)
{
	int32_t sm[4] = { 0, 0, 0, 0 };
	int64_t t0[4] = { 900, 100, 50, INT64_MAX - 5 }, c0[4] = { 1, 2, 3, INT64_MAX - 1 }, t1[4], c1[4];
	unsigned char how[4];
	struct nt_infer_stats st;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_infer_ends(4, sm, t0, c0, 1, 1, t1, c1, how, &st, &err), 0);
	for (int i = 0; i < 4; i++) {
		assert_true(t1[i] >= t0[i]);
		assert_true(c1[i] >= c0[i]);
	}
	assert_int_equal(t1[0], 900);	/* its successor's timer is earlier: 0 ns */
	assert_int_equal(how[3], NT_END_CENSORED);
	assert_int_equal(c1[3], INT64_MAX);	/* saturated */
}

static void test_bad(void **state)
{
	int32_t sm[2] = { 0, 9 };
	int64_t t0[2] = { 0, 1 }, c0[2] = { 0, 1 }, t1[2], c1[2];
	unsigned char how[2];
	struct nt_infer_stats st;
	struct nt_err err;

	(void)state;
	assert_int_equal(nt_infer_ends(2, sm, t0, c0, 4, 1, t1, c1, how, &st, &err), -1);
	assert_non_null(strstr(err.msg, "SM 9"));
	assert_int_equal(nt_infer_ends(2, sm, t0, c0, 4, 0, t1, c1, how, &st, &err), -1);
	assert_int_equal(nt_infer_ends(0, sm, t0, c0, 4, 1, t1, c1, how, &st, &err), 0);
}

/* entryrec.h: complete only when every word has the tag, whatever order
 * the words came in; the 64-bit values put back together. */
static void test_entry_record(void **state)
{
	struct nt_entry_rec r;
	struct nt_trace_block b;
	unsigned long long t = 0x123456789abcdefull, c = 0xdcba9876543ull;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_false(nt_entry_complete(&r, 7));
	r.w[NT_ENTRY_SM_C_HI] = NT_ENTRY_WORD(7, NT_ENTRY_SM_C(131, c));
	r.w[NT_ENTRY_C_LO] = NT_ENTRY_WORD(7, c);
	r.w[NT_ENTRY_T_HI] = NT_ENTRY_WORD(7, t >> 32);
	r.w[NT_ENTRY_T_LO] = NT_ENTRY_WORD(6, t);	/* an earlier launch's word */
	assert_false(nt_entry_complete(&r, 7));
	r.w[NT_ENTRY_T_LO] = NT_ENTRY_WORD(7, t);
	assert_true(nt_entry_complete(&r, 7));
	assert_false(nt_entry_complete(&r, 8));
	nt_entry_decode(&r, &b);
	assert_int_equal(b.t_start_ns, (int64_t)t);
	assert_int_equal(b.c_start, (int64_t)c);
	assert_int_equal(b.sm, 131);
	assert_int_equal(b.t_end_ns, NT_TRACE_UNKNOWN);
	assert_int_equal(b.c_end, NT_TRACE_UNKNOWN);
	assert_int_equal(b.warps, 0);
	/* it fits in a full record's slot, and in a block's scratch */
	assert_true(sizeof(struct nt_entry_rec) <= sizeof(struct nt_block_rec));
	assert_true(sizeof(struct nt_entry_rec) <= sizeof(struct nt_blk_scratch));
	/* SM 255 and 2^56 - 1 cycles still come back */
	c = (1ull << 56) - 1;
	r.w[NT_ENTRY_C_LO] = NT_ENTRY_WORD(7, c);
	r.w[NT_ENTRY_SM_C_HI] = NT_ENTRY_WORD(7, NT_ENTRY_SM_C(255, c));
	nt_entry_decode(&r, &b);
	assert_int_equal(b.c_start, (int64_t)c);
	assert_int_equal(b.sm, 255);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_exact),
		cmocka_unit_test(test_little),
		cmocka_unit_test(test_one_wave),
		cmocka_unit_test(test_clock_order),
		cmocka_unit_test(test_slots_from_starts),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_entry_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
