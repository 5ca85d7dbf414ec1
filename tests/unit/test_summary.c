/* interposer/summary.c: the exit summary's lines, from counts given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interposer/summary.h"

/* What nt_summary_print writes for s (malloc'd). */
static char *print(const struct nt_summary *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	nt_summary_print(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The line of text that begins with prefix, or NULL. */
static const char *line_of(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, strlen(prefix)))
			return p;
	return NULL;
}

static void assert_line(const char *text, const char *line)
{
	const char *p = line_of(text, line);

	if (!p || (p[strlen(line)] != '\n' && p[strlen(line)]))
		fail_msg("no line '%s' in:\n%s", line, text);
}

static struct nt_run_counts run = { .launches = 100 };

/* Five reasons: the three most frequent in full, the other two and the
 * drops of reasons not counted apart on one line. */
static void test_drops_top_three_and_the_rest(void **state)
{
	struct nt_summary_drop d[] = { { "a", 9 }, { "b", 7 }, { "c", 5 }, { "d", 3 }, { "e", 2 } };
	const struct nt_summary_drop *v[] = { &d[0], &d[1], &d[2], &d[3], &d[4] };
	struct nt_summary s = { .backend = "blocks", .sampling = "all", .run = &run, .dropped = 30,
				.drops = v, .n_drops = 5, .dropped_other = 4 };
	char *out = print(&s);

	(void)state;
	assert_line(out, "nucatrace: blocks mode: traced 0 of 100 launches, 0 blocks recorded, 30 launches dropped");
	assert_line(out, "nucatrace: dropped, by reason:");
	assert_line(out, "         9  a");
	assert_line(out, "         7  b");
	assert_line(out, "         5  c");
	assert_null(line_of(out, "         3  d"));
	assert_null(line_of(out, "         2  e"));
	assert_line(out, "         9  for other reasons (the trace has each; nucatrace report lists them)");
	free(out);
}

/* Only drops past the table of reasons: the heading and that line. */
static void test_drops_only_uncounted(void **state)
{
	struct nt_summary s = { .backend = "blocks", .sampling = "all", .run = &run, .dropped = 6,
				.dropped_other = 6 };
	char *out = print(&s);

	(void)state;
	assert_line(out, "nucatrace: dropped, by reason:");
	assert_line(out, "         6  for other reasons (the trace has each; nucatrace report lists them)");
	free(out);
}

/* No drop: no heading; three reasons: no line for the rest. */
static void test_drops_none_and_exactly_three(void **state)
{
	struct nt_summary_drop d[] = { { "x", 3 }, { "y", 2 }, { "z", 1 } };
	const struct nt_summary_drop *v[] = { &d[0], &d[1], &d[2] };
	struct nt_summary s = { .backend = "blocks", .sampling = "all", .run = &run };
	char *out = print(&s);

	(void)state;
	assert_null(strstr(out, "dropped, by reason"));
	free(out);
	s.drops = v;
	s.n_drops = 3;
	s.dropped = 6;
	out = print(&s);
	assert_line(out, "         3  x");
	assert_line(out, "         2  y");
	assert_line(out, "         1  z");
	assert_null(strstr(out, "other reasons"));
	free(out);
}

/* A reason's control bytes print as '?': a kernel name in it cannot
 * move the terminal's cursor or end the line. */
static void test_drop_reason_control_bytes(void **state)
{
	struct nt_summary_drop d = { "bad\nname\x1b[2J\x7f", 1 };
	const struct nt_summary_drop *v[] = { &d };
	struct nt_summary s = { .backend = "kernels", .run = &run, .traced = 5, .dropped = 1, .drops = v,
				.n_drops = 1 };
	char *out = print(&s);

	(void)state;
	assert_line(out, "nucatrace: kernels mode: 5 launches recorded");
	assert_line(out, "         1  bad?name?[2J?");
	free(out);
}

/* Top kernels by time, most first, at most five, long names cut at 70
 * bytes, demangled names where there are. */
static void test_top_kernels(void **state)
{
	char longname[120];
	struct nt_sink_kernel k[6] = {
		{ "_Z1av", "a()", 1, 10, 1000000 },
		{ "_Z1bv", NULL, 2, 20, 4000000 },
		{ longname, NULL, 3, 30, 3000000 },
		{ "_Z1dv", "d()", 4, 40, 500000 },
		{ "_Z1ev", "e()", 5, 50, 1000000 },
		{ "_Z1fv", "f()", 6, 60, 500000 },
	};
	const struct nt_sink_kernel *v[] = { &k[0], &k[1], &k[2], &k[3], &k[4], &k[5] };
	struct nt_summary s = { .backend = "blocks", .sampling = "all", .run = &run, .kernels = v,
				.n_kernels = 6 };
	const char *first, *second;
	char *out, want[160];

	(void)state;
	memset(longname, 'k', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	out = print(&s);
	assert_line(out, "nucatrace: top kernels by traced GPU time:");
	first = line_of(out, "   40.0%       4.000 ms       2 launches  _Z1bv");
	second = line_of(out, "   30.0%       3.000 ms       3 launches  kkk");
	assert_non_null(first);
	assert_non_null(second);
	assert_true(first < second);
	snprintf(want, sizeof(want), "   30.0%%       3.000 ms       3 launches  %.70s...", longname);
	assert_line(out, want);
	assert_line(out, "   10.0%       1.000 ms       1 launches  a()");
	/* five of six: one of the two 0.5 ms kernels is left out */
	assert_true(!line_of(out, "    5.0%       0.500 ms       4 launches  d()") !=
		    !line_of(out, "    5.0%       0.500 ms       6 launches  f()"));
	free(out);
	/* a kernel of no traced launch (named only by a drop) is not listed */
	k[2].launches = 0;
	k[2].ns = 0;
	s.kernels = v;
	s.n_kernels = 3;	/* a(), _Z1bv and it: within the five */
	out = print(&s);
	assert_null(strstr(out, "kkk"));
	assert_line(out, "   80.0%       4.000 ms       2 launches  _Z1bv");
	free(out);
	/* entry-only tracing has no block ends: the time is its starts' span */
	s.entry_only = 1;
	out = print(&s);
	assert_line(out, "nucatrace: top kernels by traced GPU time (entry-only: first block start to last):");
	free(out);
}

/* Where the trace went, and what was missing. */
static void test_trace_path_and_maps(void **state)
{
	struct nt_summary s = { .backend = "blocks", .sampling = "all", .run = &run, .path = "/t/x.sqlite",
				.missing_maps = "" };
	char *out = print(&s);

	(void)state;
	assert_null(strstr(out, "no calibration map"));
	free(out);
	s.missing_maps = "GPU-1234";
	out = print(&s);
	assert_line(out, "nucatrace: no calibration map for GPU-1234 in the store: the trace has no map "
			 "(run 'nucatrace calibrate')");
	assert_line(out, "nucatrace: trace written to /t/x.sqlite");
	free(out);
	s.incomplete = 1;
	out = print(&s);
	assert_line(out, "nucatrace: trace written to /t/x.sqlite, incomplete: writes to it failed (see above)");
	assert_null(strstr(out, "nucatrace: trace written to /t/x.sqlite\n"));
	free(out);
	s.path = NULL;
	out = print(&s);
	assert_null(strstr(out, "trace written"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drops_top_three_and_the_rest),
		cmocka_unit_test(test_drops_only_uncounted),
		cmocka_unit_test(test_drops_none_and_exactly_three),
		cmocka_unit_test(test_drop_reason_control_bytes),
		cmocka_unit_test(test_top_kernels),
		cmocka_unit_test(test_trace_path_and_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
