/* Unit tests for core/map/heatmap.c and core/map/heatmap_svg.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/heatmap.h"

/* Output of a renderer as a string (caller frees). */
#define RENDER(buf, call) do { \
	size_t len_; \
	FILE *f = open_memstream(&(buf), &len_); \
	assert_non_null(f); \
	assert_int_equal((call), 0); \
	fclose(f); \
} while (0)

static int count(const char *s, const char *needle)
{
	int k = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		k++;
	return k;
}

/* Widest line, counting what a terminal shows (ANSI escapes are zero). */
static int max_columns(const char *s, int *lines)
{
	int w = 0, col = 0;

	*lines = 0;
	for (; *s; s++) {
		if (*s == '\033') {
			s = strchr(s, 'm');
			assert_non_null(s);
			continue;
		}
		if (*s == '\n') {
			(*lines)++;
			col = 0;
			continue;
		}
		if (++col > w)
			w = col;
	}
	return w;
}

static void test_term_plain_golden(void **state)
{
	double v[5] = { 280, 290, NAN, 300, 285 };
	char *out;
	const char *want =
		"  sm    +0    +1    +2    +3\n"
		"   0 280.0 290.0    -- 300.0\n"
		"     ..... +++++       @@@@@\n"
		"   4 285.0\n"
		"     -----\n"
		"min 280.0 (sm 0)  max 300.0 (sm 3)  cycles  shade: . low .. @ high\n";

	RENDER(out, nt_heatmap_term(f, v, 5, 4, 0, "cycles"));
	assert_string_equal(out, want);
	free(out);
}

static void test_term_h200_fits(void **state)
{
	double v[132];
	char *out;
	int lines;

	for (int i = 0; i < 132; i++)
		v[i] = 271.9 + (i * 37 % 132) * 0.17;
	v[124] = v[125] = NAN;
	RENDER(out, nt_heatmap_term(f, v, 132, 0, 0, "cycles"));
	assert_true(max_columns(out, &lines) <= 100);
	assert_int_equal(lines, 1 + 9 * 2 + 1);	/* header, 9 rows of 16, legend */
	assert_int_equal(count(out, " -- "), 2);	/* not the "-----" shading */
	assert_null(strstr(out, "nan"));
	assert_null(strstr(out, " \n"));
	free(out);

	/* values of 6+ characters lose their decimal but still fit */
	for (int i = 0; i < 132; i++)
		v[i] = 1000 + i * 111.25;
	RENDER(out, nt_heatmap_term(f, v, 132, 16, 0, NULL));
	assert_true(max_columns(out, &lines) <= 100);
	assert_non_null(strstr(out, "min 1000 (sm 0)  max 15574 (sm 131)  shade"));
	free(out);

	/* a row that cannot fit is narrowed, not overflowed */
	for (int i = 0; i < 132; i++)
		v[i] = -123456.0 * i;
	RENDER(out, nt_heatmap_term(f, v, 132, 32, 0, "ns"));
	assert_true(max_columns(out, &lines) <= 100);
	free(out);
}

/* A value of hundreds of digits (a damaged map) gets a %g cell, in
 * plain and colour mode, instead of overflowing the row. */
static void test_term_huge_values(void **state)
{
	double v[8] = { 282.9, 283.1, 283.0, 284.2, 283.3, 1e200, -1e200, NAN };
	char *out;
	int lines;

	for (int color = 0; color <= 1; color++) {
		RENDER(out, nt_heatmap_term(f, v, 8, 16, color, "cycles"));
		assert_true(max_columns(out, &lines) <= 100);
		assert_non_null(strstr(out, " 1e+200"));
		assert_non_null(strstr(out, "-1e+200"));
		assert_non_null(strstr(out, "min -1e+200 (sm 6)  max 1e+200 (sm 5)"));
		free(out);
	}
}

static void test_term_color(void **state)
{
	double v[20];
	char *out;
	int lines;

	for (int i = 0; i < 20; i++)
		v[i] = i == 7 ? NAN : 250 + i;
	RENDER(out, nt_heatmap_term(f, v, 20, 8, 1, "cycles"));
	assert_int_equal(count(out, "\033[48;5;"), 19);	/* every measured SM */
	assert_int_equal(count(out, "\033[0m"), 19);
	assert_true(max_columns(out, &lines) <= 100);
	assert_int_equal(lines, 1 + 3 + 1);
	/* lowest and highest get the ends of the ramp: viridis purple, yellow */
	assert_non_null(strstr(out, "\033[48;5;53;38;5;231m250.0"));
	assert_non_null(strstr(out, "\033[48;5;220;38;5;16m269.0"));
	free(out);
}

/*
 * Enough of an XML check for our own output: tags nest and close, the
 * only '&' are entities, no text outside the root element.
 */
static void assert_wellformed(const char *s)
{
	char stack[32][32];
	int depth = 0, roots = 0;

	for (const char *p = s; *p; p++) {
		if (*p == '&') {
			assert_true(!strncmp(p, "&amp;", 5) || !strncmp(p, "&lt;", 4) ||
				    !strncmp(p, "&gt;", 4) || !strncmp(p, "&quot;", 6) ||
				    !strncmp(p, "&#39;", 5));
			continue;
		}
		if (*p == '>')
			fail_msg("stray '>' at %.20s", p);
		if (*p != '<') {
			assert_true(depth > 0 || *p == '\n');
			continue;
		}
		const char *end = strchr(p, '>');
		int len = strcspn(p + 1, " />");

		assert_non_null(end);
		assert_null(memchr(p + 1, '<', end - p - 1));
		if (p[1] == '?') {
			/* declaration */
		} else if (p[1] == '/') {
			assert_true(depth > 0);
			depth--;
			assert_int_equal(strncmp(p + 2, stack[depth], strlen(stack[depth])), 0);
		} else if (end[-1] != '/') {
			assert_true(depth < 32 && len < 32);
			memcpy(stack[depth], p + 1, len);
			stack[depth++][len] = '\0';
			roots += depth == 1;
		}
		p = end;
	}
	assert_int_equal(depth, 0);
	assert_int_equal(roots, 1);
}

static void assert_clean_svg(const char *out)
{
	assert_wellformed(out);
	assert_null(strstr(out, "nan"));
	assert_null(strstr(out, "NaN"));
	assert_null(strstr(out, "inf"));
	assert_null(strstr(out, "<script"));
	assert_null(strstr(out, "href"));
	assert_non_null(strstr(out, "xmlns=\"http://www.w3.org/2000/svg\""));
	assert_int_equal(count(out, "<text"), count(out, "</text>"));
}

static void test_svg_vector(void **state)
{
	double v[132];
	char *out;

	for (int i = 0; i < 132; i++)
		v[i] = 280 + (i % 17);
	v[3] = NAN;
	v[9] = INFINITY;	/* drawn as missing, and no "inf" in the file */
	RENDER(out, nt_heatmap_svg(f, v, 132, 16, "H200 <GPU-1> & \"x\" 'y'", "cycles"));
	assert_clean_svg(out);
	/* background + one per SM + colour bar */
	assert_int_equal(count(out, "<rect"), 1 + 132 + 1);
	assert_int_equal(count(out, "H200 &lt;GPU-1&gt; &amp; &quot;x&quot; &#39;y&#39;"), 2);
	assert_null(strstr(out, "<GPU-1>"));
	assert_int_equal(count(out, "fill=\"#cccccc\""), 2);	/* the missing SMs */
	assert_int_equal(count(out, ">--</text>"), 2);
	assert_non_null(strstr(out, ">131</text>"));
	assert_non_null(strstr(out, ">296.0 cycles</text>"));
	free(out);
}

static void test_svg_all_missing(void **state)
{
	double v[4] = { NAN, NAN, NAN, NAN };
	char *out;

	RENDER(out, nt_heatmap_svg(f, v, 4, 0, NULL, NULL));
	assert_clean_svg(out);
	assert_non_null(strstr(out, "no SM measured"));
	free(out);
}

static void test_svg_matrix(void **state)
{
	enum { R = 132, C = 256 };
	double *m = malloc(sizeof(*m) * R * C);
	char *out;

	for (int i = 0; i < R * C; i++)
		m[i] = 300 + ((i / C < 66) == (i % C % 2) ? 150 : 0);
	m[5] = NAN;
	RENDER(out, nt_heatmap_svg_matrix(f, m, R, C, "lines & SMs", "cycles"));
	assert_clean_svg(out);
	assert_int_equal(count(out, "<rect"), 1 + R * C + 1);
	assert_int_equal(count(out, "fill=\"#cccccc\""), 1);
	assert_non_null(strstr(out, "lines &amp; SMs"));
	free(out);
	free(m);
}

static void test_ramp_and_args(void **state)
{
	unsigned char lo[3], hi[3], mid[3];

	nt_heatmap_rgb(-1, lo);
	nt_heatmap_rgb(2, hi);
	nt_heatmap_rgb(0.5, mid);
	assert_true(lo[0] == 68 && lo[1] == 1 && lo[2] == 84);
	assert_true(hi[0] == 253 && hi[1] == 231 && hi[2] == 37);
	assert_true(mid[0] == 38 && mid[1] == 130 && mid[2] == 142);
	assert_int_equal(nt_heatmap_term(stdout, NULL, 3, 0, 0, ""), -1);
	assert_int_equal(nt_heatmap_svg(NULL, (double[]){ 1 }, 1, 0, "", ""), -1);
	assert_int_equal(nt_heatmap_svg_matrix(stdout, (double[]){ 1 }, 0, 1, "", ""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_plain_golden),
		cmocka_unit_test(test_term_h200_fits),
		cmocka_unit_test(test_term_huge_values),
		cmocka_unit_test(test_term_color),
		cmocka_unit_test(test_svg_vector),
		cmocka_unit_test(test_svg_all_missing),
		cmocka_unit_test(test_svg_matrix),
		cmocka_unit_test(test_ramp_and_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
