/* sampling.h: each term, their combinations, canonical forms, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct nt_sampling *parse_ok(const char *policy)
{
	struct nt_sampling *s = NULL;
	struct nt_err err = { "" };

	if (nt_sampling_parse(policy, &s, &err))
		fail_msg("'%s': %s", policy, err.msg);
	return s;
}

/* Launch n kernels "a".."?" in turn, rounds times; the decisions of
 * kernel 0 as a string of 0/1, and the total traced.  Every name is
 * asked with the same buffer: the lookaside by address (sampling.c)
 * must not take one kernel for another. */
static int run(struct nt_sampling *s, int kernels, int rounds, char *trace0, const char *const *demangled)
{
	int total = 0;

	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < kernels; k++) {
			char name[16];
			int d;

			snprintf(name, sizeof(name), "_Z1%cv", 'a' + k);
			d = nt_sampling_decide(s, name, demangled ? demangled[k] : NULL, 0.0);
			assert_true(d >= 0 && d <= (NT_SAMPLE_TRACE | NT_SAMPLE_CLOSE));
			d &= NT_SAMPLE_TRACE;
			total += d;
			if (k == 0 && trace0)
				trace0[r] = (char)('0' + d);
		}
	}
	if (trace0)
		trace0[rounds] = '\0';
	return total;
}

static void check(const char *policy, const char *canon, int kernels, int rounds, const char *want0,
		  int want_total)
{
	struct nt_sampling *s = parse_ok(policy);
	char got[256];

	assert_string_equal(nt_sampling_string(s), canon);
	assert_int_equal(run(s, kernels, rounds, got, NULL), want_total);
	assert_string_equal(got, want0);
	nt_sampling_free(s);
}

static void test_all_none(void **state)
{
	(void)state;
	check("all", "all", 3, 6, "111111", 18);
	check("none", "none", 3, 6, "000000", 0);
}

static void test_first(void **state)
{
	(void)state;
	check("first=2", "first=2", 3, 6, "110000", 6);
	check("first=10", "first=10", 2, 4, "1111", 8);
}

static void test_every(void **state)
{
	(void)state;
	check("every=3", "every=3", 2, 10, "1001001001", 8);
	check("every=1", "every=1", 2, 3, "111", 6);
}

static void test_first_and_every(void **state)
{
	(void)state;
	/* union of both */
	check("first=8,every=1000", "first=8,every=1000", 1, 10, "1111111100", 8);
	check("every=4,first=2", "first=2,every=4", 1, 10, "1100100010", 4);
	check(" first=2 , every=4 ", "first=2,every=4", 1, 10, "1100100010", 4);
}

static void test_max(void **state)
{
	(void)state;
	check("max=4", "all,max=4", 3, 4, "1100", 4);	/* alone: all launches, up to 4 */
	check("first=3,max=5", "first=3,max=5", 2, 5, "11100", 5);
	check("all,max=1", "all,max=1", 2, 3, "100", 1);
}

static void test_match(void **state)
{
	static const char *const dem[3] = { "gemm_kernel(float*)", "reduce<int>(int*)", NULL };
	struct nt_sampling *s;
	char got[32];

	(void)state;
	/* alone: every launch of the matching kernels */
	s = parse_ok("match=_Z1[ab]v");
	assert_string_equal(nt_sampling_string(s), "all,match=_Z1[ab]v");
	assert_int_equal(run(s, 3, 4, got, NULL), 8);
	nt_sampling_free(s);
	/* demangled names match too; several patterns: any */
	s = parse_ok("match=gemm*,match=reduce<*>*,first=1");
	assert_string_equal(nt_sampling_string(s), "first=1,match=gemm*,match=reduce<*>*");
	assert_int_equal(run(s, 3, 4, got, dem), 2);
	assert_string_equal(got, "1000");
	nt_sampling_free(s);
	s = parse_ok("match=*_Z1cv*,every=2,max=2");
	assert_int_equal(run(s, 3, 6, got, dem), 2);	/* c at 0 and 2, then max */
	assert_string_equal(got, "000000");
	assert_int_equal(nt_sampling_decide(s, "_Z1cv", NULL, 0.0), 0);
	nt_sampling_free(s);
	s = parse_ok("match=nothing*");
	assert_int_equal(run(s, 3, 4, got, dem), 0);
	nt_sampling_free(s);
}

/* The match is decided once per kernel, with the demangled name asked
 * for only then: later launches need no demangling and keep the verdict. */
static void test_match_once(void **state)
{
	struct nt_sampling *s = parse_ok("match=foo<*");

	(void)state;
	assert_int_equal(nt_sampling_needs_demangled(s, "_Z3fooIiEvv"), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z3fooIiEvv", "void foo<int>()", 0.0), 0);
	/* "void foo<int>()" does not start with foo<: no match, decided */
	assert_int_equal(nt_sampling_needs_demangled(s, "_Z3fooIiEvv"), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z3fooIiEvv", "foo<int>", 0.0), 0);
	assert_int_equal(nt_sampling_needs_demangled(s, "_Z3barv"), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z3barv", "foo<bar>", 0.0), 1);
	assert_int_equal(nt_sampling_needs_demangled(s, "_Z3barv"), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z3barv", NULL, 0.0), 1);	/* kept */
	nt_sampling_free(s);
	/* no match= term: never asks */
	s = parse_ok("first=2");
	assert_int_equal(nt_sampling_needs_demangled(s, "_Z3barv"), 0);
	nt_sampling_free(s);
}

/* may_trace: the match= verdict without counting a launch, on the
 * mangled or demangled name, the kept verdict for a kernel seen; every
 * kernel without match=, none under none. */
static void test_may_trace(void **state)
{
	struct nt_sampling *s = parse_ok("match=*fill*,first=1");
	struct nt_sampling_stats st;

	(void)state;
	assert_int_equal(nt_sampling_may_trace(s, "_Z4fillPfi", NULL), 1);
	assert_int_equal(nt_sampling_may_trace(s, "_Z4gemmPfS_", NULL), 0);
	assert_int_equal(nt_sampling_may_trace(s, "_Z4gemmPfS_", "gemm_fill(float*)"), 1);
	nt_sampling_stats(s, 0.0, &st);
	assert_int_equal(st.launches, 0);
	/* decided once: the kernel's verdict is kept, whatever name comes */
	assert_int_equal(nt_sampling_decide(s, "_Z4gemmPfS_", "gemm(float*, float*)", 0.0), 0);
	assert_int_equal(nt_sampling_may_trace(s, "_Z4gemmPfS_", "gemm_fill(float*)"), 0);
	/* first=1 used up for fill: may_trace is about the policy's terms */
	assert_int_equal(nt_sampling_decide(s, "_Z4fillPfi", NULL, 0.0) & NT_SAMPLE_TRACE, NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_may_trace(s, "_Z4fillPfi", NULL), 1);
	nt_sampling_free(s);
	s = parse_ok("all");
	assert_int_equal(nt_sampling_may_trace(s, "_Z4gemmPfS_", NULL), 1);
	nt_sampling_free(s);
	s = parse_ok("none");
	assert_int_equal(nt_sampling_may_trace(s, "_Z4gemmPfS_", NULL), 0);
	nt_sampling_free(s);
}

/* Counting is per kernel: a kernel first seen late still gets its first N. */
static void test_per_kernel_counts(void **state)
{
	struct nt_sampling *s = parse_ok("first=2");

	(void)state;
	for (int i = 0; i < 100; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z4busyv", NULL, 0.0),
				 i < 2 ? NT_SAMPLE_TRACE : i == 2 ? NT_SAMPLE_CLOSE : 0);
	assert_int_equal(nt_sampling_decide(s, "_Z4latev", NULL, 0.0), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z4latev", "late()", 0.0), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z4latev", NULL, 0.0), NT_SAMPLE_CLOSE);
	for (int i = 0; i < 1000; i++) {	/* many distinct kernels */
		char name[32];

		snprintf(name, sizeof(name), "_Z1k%dv", i);
		assert_int_equal(nt_sampling_decide(s, name, NULL, 0.0), 1);
	}
	nt_sampling_free(s);
}

static void refused(const char *policy, const char *want);

/* The default policy: one window of 1000 launches after 1000, more as
 * the 1% budget allows, the next window's expected cost included. */
static void test_default(void **state)
{
	struct nt_sampling *s = parse_ok(NULL);
	int traced = 0, closes = 0, second = 0;

	(void)state;
	assert_string_equal(nt_sampling_string(s), NT_SAMPLING_DEFAULT);
	assert_string_equal(nt_sampling_string(s), "all,window=1000,skip=1000,blocks=1000000,budget=1");
	/* 10 us a launch: the window of 1000 launches takes 10 ms, so the next
	 * may open once the run is 1.99 s old (10 ms spent and as much to
	 * come: 1% of 1.99 + 0.01 s) */
	for (int i = 0; i < 290000; i++) {	/* a third would open at 2.99 s */
		int d = nt_sampling_decide(s, i % 3 ? "_Z1av" : "_Z1bv", NULL, i * 1e-5);

		traced += d & NT_SAMPLE_TRACE;
		closes += !!(d & NT_SAMPLE_CLOSE);
		if (d & NT_SAMPLE_CLOSE)
			nt_sampling_window_done(s, i * 1e-5);
		if (i < 1000 || (i >= 2000 && i < 198990))
			assert_int_equal(d & NT_SAMPLE_TRACE, 0);
		if (i >= 1000 && i < 2000)
			assert_int_equal(d, NT_SAMPLE_TRACE);
		if (i >= 2000 && !second && (d & NT_SAMPLE_TRACE))
			second = i;
	}
	assert_int_equal(traced, 2000);	/* at 1000 and at 199000 (rounding aside) */
	assert_true(second >= 198990 && second <= 199010);
	assert_int_equal(closes, 2);
	nt_sampling_free(s);
}

/* Windows of window=N launches: one, or more as budget= allows; first/every
 * count inside them only. */
static void test_windows(void **state)
{
	struct nt_sampling_stats st;
	struct nt_sampling *s;
	char got[64];
	int d;

	(void)state;
	check("window=4", "all,window=4", 1, 10, "1111000000", 4);	/* one window */
	s = parse_ok("window=3,skip=2,budget=100");
	assert_string_equal(nt_sampling_string(s), "all,window=3,skip=2,budget=100");
	for (int i = 0; i < 10; i++) {
		d = nt_sampling_decide(s, "_Z1av", NULL, i);
		got[i] = (char)('0' + d);
	}
	got[10] = '\0';
	/* launches 1-2 skipped; windows 3-5, 6-8, 9-: back to back, so no
	 * close in between (the modules stay patched) */
	assert_string_equal(got, "0011111111");
	nt_sampling_stats(s, 10, &st);
	assert_int_equal(st.windows, 3);
	assert_int_equal(st.traced, 8);
	assert_int_equal(st.in_windows, 8);
	assert_int_equal(st.launches, 10);
	nt_sampling_free(s);
	/* first= counts launches inside windows only: a kernel seen outside
	 * a window still gets its first N inside one */
	s = parse_ok("first=2,window=2,skip=3");
	for (int i = 0; i < 3; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), 0);	/* one window only */
	nt_sampling_free(s);
}

/* Phases (mixed tracing): a window of the default's window=1000 made
 * two phases of 1000 launches, with a close between them that the next
 * launch reopens at once, whatever the budget says; the last phase ends
 * with the window, and the next window starts in phase 0.  Without
 * window=, one phase. */
static void test_phases(void **state)
{
	struct nt_sampling_stats st;
	struct nt_sampling *s = parse_ok(NULL);
	int traced = 0, closes = 0, in_phase[2] = { 0, 0 };

	(void)state;
	assert_int_equal(nt_sampling_phases(s, 2), 2);
	for (int i = 0; i < 500000; i++) {
		double now = i * 1e-5;
		int d = nt_sampling_decide(s, i % 3 ? "_Z1av" : "_Z1bv", NULL, now);

		if (d & NT_SAMPLE_CLOSE) {
			closes++;
			/* the switch takes 1 ms: no budget left for a window
			 * then, but the second phase opens anyway */
			nt_sampling_window_done(s, now + 0.001);
			if (i == 2000)
				assert_int_equal(nt_sampling_next_open(s, now), now);
		}
		if (d & NT_SAMPLE_TRACE) {
			traced++;
			in_phase[nt_sampling_phase(s)]++;
		}
		if (i == 1000 || i == 1999 || i == 2001 || i == 3000) {
			assert_int_equal(d, NT_SAMPLE_TRACE);
			assert_int_equal(nt_sampling_phase(s), i > 2000);
		}
		if (i == 2000)	/* the first phase's close: not traced, phase 1 to come */
			assert_true(d == NT_SAMPLE_CLOSE && !nt_sampling_open(s) && nt_sampling_phase(s) == 1);
		if (i == 3001)	/* the window's end: phase 0 again */
			assert_true(d == NT_SAMPLE_CLOSE && nt_sampling_phase(s) == 0);
		if (i > 3001 && i < 437790)	/* 22 ms in the window and 22 to come: the next at 4.378 s */
			assert_int_equal(d, 0);
	}
	assert_int_equal(in_phase[0], 2000);	/* two windows of 1000 + 1000 */
	assert_int_equal(in_phase[1], 2000);
	assert_int_equal(traced, 4000);
	assert_int_equal(closes, 4);
	nt_sampling_stats(s, 5, &st);
	assert_int_equal(st.windows, 2);	/* phases are not windows */
	assert_int_equal(st.in_windows, 4000);
	nt_sampling_free(s);
	/* window=2, two phases: the second opens only once the first's close
	 * is done (its modules unpatched), and a kernel the policy does not
	 * pick keeps it waiting */
	s = parse_ok("match=_Z1a*,window=2");
	nt_sampling_phases(s, 2);
	{
		const char *k[] = { "_Z1av", "_Z1av", "_Z1av", "_Z1av", "_Z1bv", "_Z1av", "_Z1av", "_Z1av", "_Z1av" };
		const int want[] = { 1, 1, 2, 0, 0, 1, 1, 2, 0 };
		const int phase[] = { 0, 0, 1, 1, 1, 1, 1, 0, 0 };

		for (int i = 0; i < 9; i++) {
			assert_int_equal(nt_sampling_decide(s, k[i], NULL, i), want[i]);
			assert_int_equal(nt_sampling_phase(s), phase[i]);
			if (i == 3)	/* not before: launch 3 found the close not done */
				nt_sampling_window_done(s, i);
		}
	}
	nt_sampling_free(s);
	/* without window=: one phase, the whole window */
	s = parse_ok("all");
	assert_int_equal(nt_sampling_phases(s, 2), 1);
	for (int i = 0; i < 3000; i++) {
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, i), NT_SAMPLE_TRACE);
		assert_int_equal(nt_sampling_phase(s), 0);
	}
	nt_sampling_free(s);
}

/* Without window=, a window closes at the first launch not picked when
 * no kernel traced in it has first= launches to come (every=K: one launch
 * a window); while one has, or under `all`, after idle= launches with none
 * traced.  What is traced is what the per-kernel terms select, as without
 * windows. */
static void test_idle(void **state)
{
	struct nt_sampling *s = parse_ok("every=5,idle=2");
	char got[32];

	(void)state;
	assert_string_equal(nt_sampling_string(s), "every=5,idle=2");
	for (int i = 0; i < 12; i++) {
		int d = nt_sampling_decide(s, "_Z1av", NULL, 0);

		got[i] = (char)('0' + d);
	}
	got[12] = '\0';
	/* traced at 0, 5, 10; closed at the launch after each */
	assert_string_equal(got, "120001200012");
	nt_sampling_free(s);
	/* a's first=3 is not done: b's launches keep the window open up to
	 * idle=3 of them */
	s = parse_ok("first=3,idle=3,match=_Z1a*");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	/* a's three are done: the next launch not picked closes at once */
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), NT_SAMPLE_CLOSE);
	nt_sampling_free(s);
	/* under the default idle=, a kernel with first= launches to come
	 * holds the window for NT_SAMPLING_QUOTA_IDLE launches not picked
	 * (a triad's fill, launched twice, held it through every triad) */
	s = parse_ok("first=8,every=1000");
	for (int i = 0; i < 2; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z4fillv", NULL, 0), NT_SAMPLE_TRACE);
	for (int i = 0; i < 8; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z5triadv", NULL, 0), NT_SAMPLE_TRACE);
	for (int i = 0; i < NT_SAMPLING_QUOTA_IDLE; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z5triadv", NULL, 0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z5triadv", NULL, 0), NT_SAMPLE_CLOSE);
	nt_sampling_free(s);
	/* the default idle limit, under all */
	s = parse_ok("all,match=_Z1a*");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	for (int i = 0; i < NT_SAMPLING_IDLE; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
}

/* nt_sampling_retry: a pick that could not be traced moves to the
 * kernel's next launch, the window staying open for it up to idle=; once
 * per kernel and window; a retry whose window closes first is gone. */
/* Launches of the kernels named by the letters of launches, in order
 * ('!' after one: its pick is retried); each decision must be the next
 * character of want: T traced, C a close, 0 neither. */
static void play(struct nt_sampling *s, const char *launches, const char *want)
{
	char name[8] = "";

	for (const char *p = launches; *p; p++) {
		int d;

		if (*p == '!') {
			nt_sampling_retry(s, name, 1);
			continue;
		}
		snprintf(name, sizeof(name), "_Z1%cv", *p);
		d = nt_sampling_decide(s, name, NULL, 0);
		if (*want != (d == NT_SAMPLE_TRACE ? 'T' : d == NT_SAMPLE_CLOSE ? 'C' : '0'))
			fail_msg("%s: launch %ld of \"%s\" gave %d, want %c", name, (long)(p - launches), launches, d,
				 *want);
		want++;
	}
}

static void test_retry(void **state)
{
	struct nt_sampling_stats st;
	struct nt_sampling *s = parse_ok("every=5,idle=3,max=2");

	(void)state;
	/* a's launch 0 is picked (the window opens) and retried: b's two
	 * launches keep the window open (b's 0 traced), a's launch 1 is
	 * picked instead; a second retry in one window is refused, the
	 * pick stays taken, and a's next launch closes the window */
	play(s, "a!bba!a", "TT0TC");
	/* max=2 counts the traced launches only: b's and a's second pick */
	nt_sampling_stats(s, 0, &st);
	assert_int_equal(st.traced, 2);
	assert_int_equal(nt_sampling_exhausted(s), 1);
	nt_sampling_free(s);

	/* a retry whose window idles out first: the pick is gone, and a's
	 * launches 1-4 open no window (its next pick is launch 5) */
	s = parse_ok("every=5,idle=2");
	play(s, "a!bbbbaaaaa", "TT00C0000T");
	nt_sampling_free(s);

	/* the retry comes just as idle= closes its window: the launch opens
	 * the next one and is picked there, and that window closes as soon
	 * as a launch is not picked (no retry left awaited in it) */
	s = parse_ok("every=4,idle=2");
	play(s, "a!bbbab", "TT00TC");
	nt_sampling_free(s);

	/* under window=, a retried launch does not count towards it: a
	 * window of 2 holds a's retried launch, b's and a's next */
	s = parse_ok("all,window=2");
	play(s, "a!bab", "TTTC");
	nt_sampling_stats(s, 0, &st);
	assert_int_equal(st.traced, 2);
	nt_sampling_free(s);

	/* ... nor towards blocks=: a's 150 blocks, retried, leave the window
	 * open for b, whose 150 close it */
	s = parse_ok("all,window=10,blocks=100");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	nt_sampling_blocks(s, 150);
	nt_sampling_retry(s, "_Z1av", 150);
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0), NT_SAMPLE_TRACE);
	nt_sampling_blocks(s, 150);
	assert_int_equal(nt_sampling_decide(s, "_Z1cv", NULL, 0), NT_SAMPLE_CLOSE);
	nt_sampling_free(s);

	/* nothing to retry outside a window, or for an unknown kernel */
	s = parse_ok("every=5");
	nt_sampling_retry(s, "_Z1av", 1);
	play(s, "a", "T");
	nt_sampling_retry(s, "_Z1zv", 1);
	nt_sampling_retry(s, NULL, 1);
	play(s, "a", "C");
	nt_sampling_free(s);
}

/* budget=P: a window opens only while the time in windows, the
 * unpatching included, would be at most P% of the time since the first
 * launch once it closed, taking as long as a window did on average. */
static void test_budget(void **state)
{
	struct nt_sampling_stats st;
	struct nt_sampling *s = parse_ok("window=2,budget=10");
	double t = 0;
	int windows_at[8], n = 0;

	(void)state;
	assert_string_equal(nt_sampling_string(s), "all,window=2,budget=10");
	/* one launch a second; each window is 2 launches (2 s) plus 1 s of
	 * unpatching: 3 s in a window and 3 s for the next need 60 s of
	 * run by the next one's end, 57 s at its start; 9 s, 87 s */
	for (int i = 0; i < 130; i++, t += 1) {
		int d = nt_sampling_decide(s, "_Z1av", NULL, t);

		if (d & NT_SAMPLE_CLOSE)
			nt_sampling_window_done(s, t + 1);
		if ((d & NT_SAMPLE_TRACE) && n < 8 && (!n || windows_at[n - 1] < t - 2))
			windows_at[n++] = (int)t;
	}
	nt_sampling_stats(s, t, &st);
	assert_int_equal(n, 4);
	assert_int_equal(windows_at[0], 0);
	assert_int_equal(windows_at[1], 57);	/* 3 + 3 s <= 10% of 57 + 3 s */
	assert_int_equal(windows_at[2], 87);
	assert_int_equal(windows_at[3], 117);
	assert_true(st.window_s <= 0.1 * t + 3);
	assert_int_equal(st.windows, 4);
	nt_sampling_free(s);
	refused("budget=0", "percent");
	refused("budget=101", "percent");
	refused("budget=x", "percent");
	refused("budget=\377\377mm", "percent");	/* found by the fuzzer: no number read */
	refused("budget=1,budget=2", "twice");
	s = parse_ok("budget=0.5,window=10");
	assert_string_equal(nt_sampling_string(s), "all,window=10,budget=0.5");
	nt_sampling_free(s);
}

/* max= ends the windows too. */
static void test_exhausted(void **state)
{
	struct nt_sampling *s = parse_ok("max=2,window=100");

	(void)state;
	assert_int_equal(nt_sampling_exhausted(s), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_exhausted(s), 1);
	/* the window closes at once: nothing more to trace in it */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0), 0);
	nt_sampling_free(s);
	s = parse_ok("none");
	assert_int_equal(nt_sampling_exhausted(s), 1);
	nt_sampling_free(s);
}

static void refused(const char *policy, const char *want)
{
	struct nt_sampling *s = (struct nt_sampling *)1;
	struct nt_err err = { "" };

	assert_int_equal(nt_sampling_parse(policy, &s, &err), -1);
	assert_null(s);
	if (!strstr(err.msg, want))
		fail_msg("'%s': '%s' does not say '%s'", policy, err.msg, want);
}

/* from_start: modules must be patched as they load exactly while the
 * first window may open at the very next launch. */
static void test_from_start(void **state)
{
	struct nt_sampling *s;

	(void)state;
	s = parse_ok("all");
	assert_int_equal(nt_sampling_from_start(s), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_from_start(s), 1);	/* open, never closes */
	nt_sampling_free(s);
	s = parse_ok("first=1");
	assert_int_equal(nt_sampling_from_start(s), 1);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_from_start(s), 0);	/* the first window closed */
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_from_start(s), 0);	/* a later window */
	nt_sampling_free(s);
	s = parse_ok(NULL);	/* the default skips 1,000 launches */
	assert_int_equal(nt_sampling_from_start(s), 0);
	nt_sampling_free(s);
	s = parse_ok("max=1");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_from_start(s), 0);	/* exhausted */
	nt_sampling_free(s);
	s = parse_ok("none");
	assert_int_equal(nt_sampling_from_start(s), 0);
	nt_sampling_free(s);
}

static void test_errors(void **state)
{
	(void)state;
	refused("", "empty");
	refused("  ", "empty");
	refused("first=8,,every=2", "empty term");
	refused("first=8,", "empty term");
	refused("sometimes", "'sometimes'");
	refused("often=3", "'often=3'");
	refused("first=0", "'0'");
	refused("first=-1", "'-1'");
	refused("first=", "positive integer");
	refused("every=2x", "'2x'");
	refused("max=99999999999999999999", "positive integer");
	refused("first=1,first=2", "'first' given twice");
	refused("all,all", "'all' given twice");
	refused("none,first=2", "'none'");
	refused("none,match=x", "'none'");
	refused("all,every=3", "'all'");
	refused("match=", "pattern");
	refused("First=8", "'First=8'");
	refused("window=0", "'0'");
	refused("skip=-3", "'-3'");
	refused("idle=1,idle=2", "'idle' given twice");
	refused("none,window=3", "'none'");
	refused("none,budget=1", "'none'");
}

/* One kernel asked with two copies of its name, and two kernels with
 * one buffer: counted by name, whatever the address. */
static void test_name_addresses(void **state)
{
	struct nt_sampling *s = parse_ok("first=1");
	char one[8] = "_Z1av", two[8] = "_Z1av";

	(void)state;
	assert_int_equal(nt_sampling_decide(s, one, NULL, 0.0) & NT_SAMPLE_TRACE, NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, two, NULL, 0.0) & NT_SAMPLE_TRACE, 0);	/* a's second */
	assert_int_equal(nt_sampling_decide(s, one, NULL, 0.0) & NT_SAMPLE_TRACE, 0);
	memcpy(one, "_Z1bv", 6);
	assert_int_equal(nt_sampling_decide(s, one, NULL, 0.0) & NT_SAMPLE_TRACE, NT_SAMPLE_TRACE);	/* b's first */
	assert_int_equal(nt_sampling_decide(s, two, NULL, 0.0) & NT_SAMPLE_TRACE, 0);
	nt_sampling_free(s);
}

/* blocks=: the window closes once its traced launches hold that many
 * blocks (budget= then says when the next opens: 1% of the time), and
 * the next one starts afresh, with at least one launch. */
static void test_blocks_cap(void **state)
{
	struct nt_sampling *s = parse_ok("all,window=100,blocks=100,budget=1");
	int d;

	(void)state;
	assert_string_equal(nt_sampling_string(s), "all,window=100,blocks=100,budget=1");
	for (int i = 0; i < 3; i++) {	/* 40, 80, 120 blocks */
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
		nt_sampling_blocks(s, 40);
	}
	d = nt_sampling_decide(s, "_Z1av", NULL, 1.0);	/* its window took 1 s */
	assert_int_equal(d, NT_SAMPLE_CLOSE);
	nt_sampling_window_done(s, 1.0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 150.0), 0);	/* 1 + 1 s > 1% of 150 + 1 s */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 200.0), NT_SAMPLE_TRACE);
	nt_sampling_blocks(s, 1000);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 200.5), NT_SAMPLE_CLOSE);
	nt_sampling_free(s);
}

/* nt_sampling_left: what the open phase has left after the launch just
 * decided, in launches (window=, max=) and blocks (blocks=); -1 where no
 * term bounds it, launches 0 under first=/every=. */
static void test_left(void **state)
{
	struct nt_sampling *s = parse_ok("all,window=10,skip=2,blocks=100,max=25");
	int64_t launches, blocks;

	(void)state;
	nt_sampling_left(s, &launches, &blocks);	/* nothing open: max= only */
	assert_int_equal(launches, 25);
	assert_int_equal(blocks, -1);
	for (int i = 0; i < 2; i++)	/* skip= */
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(nt_sampling_decide_grid(s, "_Z1av", NULL, 20, 0.0), NT_SAMPLE_TRACE);
		nt_sampling_blocks(s, 20);
	}
	nt_sampling_left(s, &launches, &blocks);
	assert_int_equal(launches, 7);
	assert_int_equal(blocks, 40);
	nt_sampling_free(s);

	s = parse_ok("all");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_left(s, &launches, &blocks);
	assert_int_equal(launches, -1);
	assert_int_equal(blocks, -1);
	nt_sampling_free(s);

	s = parse_ok("first=3");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_left(s, &launches, &blocks);
	assert_int_equal(launches, 0);
	nt_sampling_free(s);
}

/* blocks= bounds a window in records (issue 32): a launch of more blocks
 * than that is never traced (NT_SAMPLE_TOO_BIG; the window goes on);
 * with phases each phase holds blocks= of its own; nt_sampling_close_now
 * closes the window at the next decision; a window= policy does not wait
 * for record space, `all` does. */
static void test_budgeted(void **state)
{
	struct nt_sampling *s = parse_ok("all,window=10,blocks=100");
	const int64_t grid[] = { 60, 150, 60, 60, 60, 60, 60 };
	const int want[] = { NT_SAMPLE_TRACE, NT_SAMPLE_TOO_BIG, NT_SAMPLE_TRACE, NT_SAMPLE_CLOSE,
			     NT_SAMPLE_TRACE, NT_SAMPLE_TRACE, NT_SAMPLE_CLOSE };
	const int phase[] = { 0, 0, 0, 1, 1, 1, 0 };

	(void)state;
	assert_int_equal(nt_sampling_waits(s), 0);
	assert_int_equal(nt_sampling_phases(s, 2), 2);
	for (int i = 0; i < 7; i++) {	/* phase 0: 120 blocks, then phase 1 its own 120 */
		int d = nt_sampling_decide_grid(s, "_Z1av", NULL, grid[i], 0.0);

		assert_int_equal(d, want[i]);
		assert_int_equal(nt_sampling_phase(s), phase[i]);
		if (d & NT_SAMPLE_TRACE)
			nt_sampling_blocks(s, grid[i]);
		if (d & NT_SAMPLE_CLOSE)
			nt_sampling_window_done(s, 0.0);
	}
	nt_sampling_free(s);
	s = parse_ok("window=10");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_close_now(s);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_CLOSE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);	/* one window (no budget=) */
	nt_sampling_free(s);
	s = parse_ok("all");
	assert_int_equal(nt_sampling_waits(s), 1);
	assert_int_equal(nt_sampling_decide_grid(s, "_Z1av", NULL, 1 << 30, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
}

/* gpu=: a window's phase closes at the first decision after its traced
 * launches that have finished took that much GPU time; a launch of an
 * earlier phase counts towards none; each phase has its own. */
static void test_gpu_cap(void **state)
{
	struct nt_sampling *s = parse_ok("all,window=100,gpu=0.5");
	int64_t first, old;
	int d;

	(void)state;
	assert_string_equal(nt_sampling_string(s), "all,window=100,gpu=0.5");
	assert_int_equal(nt_sampling_phase_id(s), -1);	/* no window open yet */
	assert_int_equal(nt_sampling_phases(s, 2), 2);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	first = nt_sampling_phase_id(s);
	assert_true(first >= 0);
	nt_sampling_gpu_time(s, first, 0.3);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);	/* 0.3 s < 0.5 */
	nt_sampling_gpu_time(s, first, 0.3);
	d = nt_sampling_decide(s, "_Z1av", NULL, 0.0);	/* 0.6 s: the phase closes */
	assert_int_equal(d, NT_SAMPLE_CLOSE);
	nt_sampling_window_done(s, 0.0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);	/* phase 1 */
	assert_int_equal(nt_sampling_phase(s), 1);
	old = first;
	assert_true(nt_sampling_phase_id(s) != old);
	nt_sampling_gpu_time(s, old, 10.0);	/* a launch of phase 0 that ended late */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_gpu_time(s, nt_sampling_phase_id(s), 0.5);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_CLOSE);	/* the window's end */
	nt_sampling_window_done(s, 0.0);
	nt_sampling_gpu_time(s, first, 1.0);	/* none open: nothing */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);	/* one window (no budget=) */
	nt_sampling_free(s);
	refused("gpu=0", "seconds");
	refused("gpu=3601", "seconds");
	refused("gpu=x", "seconds");
	refused("gpu=1,gpu=2", "twice");
}

/* nt_sampling_next_open: when a caller may stop deciding launches, and
 * that the window it then expects opens at that time, not before. */
static void test_next_open(void **state)
{
	struct nt_sampling *s = parse_ok("window=2,budget=10");
	double t;

	(void)state;
	assert_true(nt_sampling_next_open(s, 0.0) == 0.0);	/* nothing decided yet */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_true(nt_sampling_next_open(s, 0.5) == 0.5);	/* a window is open */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 1.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 2.0), NT_SAMPLE_CLOSE);
	nt_sampling_window_done(s, 3.0);	/* 3 s in the window, 3 s to come: 10% of 57 + 3 s */
	t = nt_sampling_next_open(s, 3.0);
	assert_true(t > 56.999 && t < 57.001);
	assert_true(nt_sampling_next_open(s, 70.0) == 70.0);	/* due: decide again */
	/* nothing decided from 3 s to 56 s: none opens before t, one at t */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 56.0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, t), NT_SAMPLE_TRACE);
	nt_sampling_free(s);

	/* window= without budget=: one window, then never again */
	s = parse_ok("window=2");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_CLOSE);
	nt_sampling_window_done(s, 0.0);
	assert_true(isinf(nt_sampling_next_open(s, 1.0)));
	nt_sampling_free(s);

	/* skip= counts launches: every one until the first window */
	s = parse_ok("window=2,skip=3,budget=1");
	for (int i = 0; i < 3; i++) {
		assert_true(nt_sampling_next_open(s, 1.0) == 1.0);
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 1.0), 0);
	}
	assert_true(nt_sampling_next_open(s, 1.0) == 1.0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 1.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);

	/* per-kernel counts without window=: every launch, always */
	s = parse_ok("every=10");
	run(s, 1, 25, NULL, NULL);
	assert_true(nt_sampling_next_open(s, 5.0) == 5.0);
	nt_sampling_free(s);

	/* nothing more to trace */
	s = parse_ok("max=1,window=5,budget=50");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_true(isinf(nt_sampling_next_open(s, 0.0)));
	nt_sampling_free(s);
	s = parse_ok("none");
	assert_true(isinf(nt_sampling_next_open(s, 0.0)));
	nt_sampling_free(s);
}

/* Opening ahead (at a graph launch's entry) changes no decision: two
 * policies decide the same launches at the same times, one of them
 * opened ahead whenever it would open at the next launch; the one opened
 * ahead then traces that launch in the window, as the other opens one
 * for it.  Policies that pick per kernel never open ahead. */
static void lockstep(const char *policy, int phases, int expect_ahead)
{
	struct nt_sampling *a = parse_ok(policy), *b = parse_ok(policy);
	struct nt_sampling_stats sa, sb;
	unsigned rng = 12345;
	int ahead = 0;

	nt_sampling_phases(a, phases);
	nt_sampling_phases(b, phases);
	for (int i = 0; i < 20000; i++) {
		double now = i * 1e-4;
		char name[8];
		int da, db, opened;

		rng = rng * 1103515245u + 12345u;
		snprintf(name, sizeof(name), "_Z1%cv", 'a' + (int)(rng >> 16) % 3);
		if (nt_sampling_opens_next(a, 1, now)) {
			assert_false(nt_sampling_open(a));
			opened = nt_sampling_open_ahead(a, 1, now);
			assert_true(opened && nt_sampling_open(a));
			ahead++;
		}
		da = nt_sampling_decide(a, name, NULL, now);
		db = nt_sampling_decide(b, name, NULL, now);
		assert_int_equal(da & NT_SAMPLE_TRACE, db & NT_SAMPLE_TRACE);
		assert_int_equal(nt_sampling_open(a), nt_sampling_open(b));
		assert_int_equal(nt_sampling_phase(a), nt_sampling_phase(b));
		if (da & NT_SAMPLE_CLOSE)
			nt_sampling_window_done(a, now + 5e-5);
		if (db & NT_SAMPLE_CLOSE)
			nt_sampling_window_done(b, now + 5e-5);
	}
	nt_sampling_stats(a, 3.0, &sa);
	nt_sampling_stats(b, 3.0, &sb);
	assert_int_equal(sa.windows, sb.windows);
	assert_int_equal(sa.traced, sb.traced);
	assert_int_equal(sa.in_windows, sb.in_windows);
	if (expect_ahead)
		assert_true(ahead > 0);
	else
		assert_int_equal(ahead, 0);
	nt_sampling_free(a);
	nt_sampling_free(b);
}

static void test_open_ahead(void **state)
{
	struct nt_sampling *s;

	(void)state;
	lockstep(NULL, 2, 1);	/* the default, mixed: windows and their second phases */
	lockstep(NULL, 1, 1);
	lockstep("all,window=50,budget=20", 1, 1);
	lockstep("all,window=7,skip=30,blocks=1000,budget=40", 2, 1);
	lockstep("all", 1, 1);	/* once, at the first launch */
	lockstep("first=2", 1, 0);
	lockstep("every=3,window=4,budget=50", 1, 0);
	lockstep("match=_Z1a*,window=5,budget=50", 1, 0);

	/* skip= counts launches: opens ahead only once they are done, or
	 * for a graph launch of n nodes, once the launch past skip= is one
	 * of them */
	s = parse_ok("window=2,skip=2,budget=50");
	assert_false(nt_sampling_opens_next(s, 1, 0.0));
	assert_false(nt_sampling_opens_next(s, 2, 0.0));
	assert_true(nt_sampling_opens_next(s, 3, 0.0));
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_false(nt_sampling_open_ahead(s, 1, 0.0));
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_true(nt_sampling_open_ahead(s, 1, 0.0));
	assert_false(nt_sampling_opens_next(s, 1, 0.0));	/* open now */
	assert_int_equal(nt_sampling_decide(s, "_Z1bv", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
	/* a graph launch of 4 nodes holding launch 3 of skip=2: all 4 in
	 * the window, which window=4 then closes */
	s = parse_ok("window=4,skip=2,budget=1");
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_true(nt_sampling_open_ahead(s, 4, 0.0));
	for (int i = 0; i < 4; i++)
		assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 1.0), NT_SAMPLE_CLOSE);
	nt_sampling_free(s);
	/* held, no decision opens a window (nor its next phase) under a
	 * policy that opens ahead; a window open closes as it would, or
	 * goes on into the next at once where budget= allows */
	s = parse_ok("window=2,skip=1,budget=50");
	nt_sampling_hold(s, 1);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_true(nt_sampling_open_ahead(s, 1, 0.0));
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);	/* the next */
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 1.0), NT_SAMPLE_CLOSE);	/* 1 s of 1 */
	nt_sampling_window_done(s, 1.0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 100.0), 0);
	nt_sampling_hold(s, 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 100.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
	s = parse_ok("window=2,skip=1,budget=50");
	nt_sampling_phases(s, 2);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_hold(s, 1);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_CLOSE);	/* the first phase */
	nt_sampling_window_done(s, 0.0);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), 0);	/* not the second */
	assert_true(nt_sampling_open_ahead(s, 1, 0.0));
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
	/* other policies pick per kernel and open at a decision: no hold */
	s = parse_ok("first=1");
	nt_sampling_hold(s, 1);
	assert_int_equal(nt_sampling_decide(s, "_Z1av", NULL, 0.0), NT_SAMPLE_TRACE);
	nt_sampling_free(s);
	/* nothing more to trace */
	s = parse_ok("none");
	assert_false(nt_sampling_opens_next(s, 1, 0.0));
	nt_sampling_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_none),
		cmocka_unit_test(test_first),
		cmocka_unit_test(test_every),
		cmocka_unit_test(test_first_and_every),
		cmocka_unit_test(test_max),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_match_once),
		cmocka_unit_test(test_may_trace),
		cmocka_unit_test(test_per_kernel_counts),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_exhausted),
		cmocka_unit_test(test_from_start),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_name_addresses),
		cmocka_unit_test(test_blocks_cap),
		cmocka_unit_test(test_left),
		cmocka_unit_test(test_budgeted),
		cmocka_unit_test(test_gpu_cap),
		cmocka_unit_test(test_next_open),
		cmocka_unit_test(test_open_ahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
