/* mapio.h: JSON and CSV round trips, and clear errors on bad files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "map/mapio.h"
#include "maptest.h"

#define ALL_PARTS (NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH)

typedef int (*write_fn)(FILE *f, const struct nt_map *m, int opt);
typedef int (*read_fn)(const char *path, struct nt_map **out, struct nt_err *err);

static int write_csv(FILE *f, const struct nt_map *m, int opt)
{
	(void)opt;
	return nt_map_write_csv(f, m);
}

static void save(const char *path, write_fn w, const struct nt_map *m, int opt)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(w(f, m, opt), 0);
	assert_int_equal(fclose(f), 0);
}

static void round_trip(void **state, write_fn w, read_fn r, int opt, int n_sm, int n_line,
		       unsigned parts)
{
	char *path = path_in(state, "map");
	struct nt_map *m = sample_map(n_sm, n_line, parts, 7), *back = NULL;
	struct nt_err err = { "" };

	save(path, w, m, opt);
	if (r(path, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	nt_map_free(back);
	nt_map_free(m);
	free(path);
}

/* The same reader over a string in memory (how a trace keeps its maps). */
static void test_json_text(void **state)
{
	struct nt_map *m = sample_map(6, 5, ALL_PARTS, 3), *back = NULL;
	struct nt_err err = { "" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(nt_map_write_json(f, m, 0), 0);
	assert_int_equal(fclose(f), 0);
	if (nt_map_read_json_text(text, "mem", &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	nt_map_free(back);
	text[len / 2] = '\0';
	assert_int_equal(nt_map_read_json_text(text, "trace.sqlite: map of X", &back, &err), -1);
	assert_null(back);
	assert_non_null(strstr(err.msg, "'trace.sqlite: map of X'"));
	assert_non_null(strstr(err.msg, "not valid JSON"));
	assert_int_equal(nt_map_read_json_text("{\"format\": \"nucatrace-map\", \"version\": 1}", "m2",
						 &back, &err), -1);
	assert_non_null(strstr(err.msg, "'m2'"));
	free(text);
	nt_map_free(m);
}

static void test_json_round_trip(void **state)
{
	round_trip(state, nt_map_write_json, nt_map_read_json, 1, 6, 5, ALL_PARTS);
	round_trip(state, nt_map_write_json, nt_map_read_json, 0, 6, 5, ALL_PARTS);
	round_trip(state, nt_map_write_json, nt_map_read_json, 1, 1, 0, 0);
	round_trip(state, nt_map_write_json, nt_map_read_json, 0, 3, 2, NT_MAP_LINES);
	round_trip(state, nt_map_write_json, nt_map_read_json, 0, 3, 2, NT_MAP_FIRST_TOUCH);
	round_trip(state, nt_map_write_json, nt_map_read_json, 0, 132, 64, ALL_PARTS);
}

static void test_csv_round_trip(void **state)
{
	round_trip(state, write_csv, nt_map_read_csv, 0, 6, 5, ALL_PARTS);
	round_trip(state, write_csv, nt_map_read_csv, 0, 1, 0, 0);
	round_trip(state, write_csv, nt_map_read_csv, 0, 3, 2, NT_MAP_NOISE | NT_MAP_LINES);
	round_trip(state, write_csv, nt_map_read_csv, 0, 3, 2, NT_MAP_FIRST_TOUCH);
	round_trip(state, write_csv, nt_map_read_csv, 0, 132, 64, ALL_PARTS);
}

/* The probe part: JSON carries it bit for bit, CSV leaves it out. */
static void test_probe_round_trip(void **state)
{
	static const double edge[] = { 5e-324, 999999.99999999988, 0.1 + 0.2, 0 };
	char *path = path_in(state, "probe");
	struct nt_map *m = sample_map(132, 4, ALL_PARTS, 5), *back = NULL;
	struct nt_err err = { "" };

	sample_probe(m, NT_MAP_MAX_PROBES);
	memcpy(m->probe_cost, edge, sizeof(edge));
	m->probe[2].body_native = 5e-324;
	for (int pretty = 0; pretty < 2; pretty++) {
		save(path, nt_map_write_json, m, pretty);
		if (nt_map_read_json(path, &back, &err))
			fail_msg("%s", err.msg);
		assert_maps_equal(m, back);	/* == on every cell but NAN: no -0 here */
		nt_map_free(back);
	}
	save(path, write_csv, m, 0);
	if (nt_map_read_csv(path, &back, &err))
		fail_msg("%s", err.msg);
	free(m->probe);
	free(m->probe_cost);
	m->probe = NULL;
	m->probe_cost = NULL;
	m->n_probe = 0;
	assert_maps_equal(m, back);
	nt_map_free(back);
	nt_map_free(m);
	free(path);
}

/* Values at the edges of double precision survive both formats. */
static void test_awkward_doubles(void **state)
{
	/* within the latencies readers accept (map.h: 0..1e6 cycles) */
	static const double v[] = {
		5e-324, 2.2250738585072009e-308, 999999.99999999988, 0.1 + 0.2, 1.0 / 3,
		9007199254.740993e-4, 123456.789012345678, 1e6, 8.589973e3, 0.0, 612.125,
		4.9406564584124654e-300, 2.4703282292062328e-324 * 3, 1e-5, 6.02214076e-23,
	};
	const int n = sizeof(v) / sizeof(v[0]);
	char *path = path_in(state, "awkward");
	struct nt_map *m = sample_map(n, 0, NT_MAP_NOISE, 1), *back = NULL;
	struct nt_err err = { "" };

	for (int i = 0; i < n; i++) {
		m->chain[i] = v[i];
		m->noise[i] = nextafter(v[i], 0);
	}
	for (int fmt = 0; fmt < 2; fmt++) {
		save(path, fmt ? write_csv : nt_map_write_json, m, 0);
		if ((fmt ? nt_map_read_csv : nt_map_read_json)(path, &back, &err))
			fail_msg("%s", err.msg);
		assert_maps_equal(m, back);
		nt_map_free(back);
	}
	nt_map_free(m);

	/* and doubles of random mantissas, from 2^-1000 to 2^19 */
	m = sample_map(NT_MAP_MAX_SM, 0, 0, 2);
	m->gpu.sm_count = m->n_sm;
	srand(1);
	for (int i = 0; i < m->n_sm; i++) {
		uint64_t bits = 0x3ffULL << 52;
		double x;

		for (int k = 0; k < 4; k++)
			bits ^= (uint64_t)(rand() & 0xffff) << (16 * k) & ((1ULL << 52) - 1);
		memcpy(&x, &bits, sizeof(bits));
		m->chain[i] = ldexp(x, rand() % 1019 - 1000);
	}
	for (int fmt = 0; fmt < 2; fmt++) {
		save(path, fmt ? write_csv : nt_map_write_json, m, 0);
		if ((fmt ? nt_map_read_csv : nt_map_read_json)(path, &back, &err))
			fail_msg("%s", err.msg);
		assert_maps_equal(m, back);
		nt_map_free(back);
	}
	nt_map_free(m);
	free(path);
}

/* The documented layout, as a reader of the file sees it. */
static void test_json_layout(void **state)
{
	char *path = path_in(state, "layout.json"), *text;
	struct nt_map *m = sample_map(2, 2, ALL_PARTS, 0);

	m->created_at = 1764461400;
	m->chain[0] = 612.5;
	save(path, nt_map_write_json, m, 1);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "{\n  \"format\": \"nucatrace-map\",\n  \"version\": 1,\n  \"gpu\": {\n"));
	assert_non_null(strstr(text, "\"cc\": \"9.0\""));
	assert_non_null(strstr(text, "\"created_at\": \"2025-11-30T00:10:00Z\",\n  \"created_at_unix\": 1764461400"));
	assert_non_null(strstr(text, "\"chain\": [612.5, null]"));
	assert_non_null(strstr(text, "\"lines\": {\n    \"offset\": [21474836480, 21474836608],"));
	assert_non_null(strstr(text, "\"first_touch\": {\n    \"first\": [\n      ["));
	assert_non_null(strstr(text, "\\\"t\\\\est\\\" \xc3\xbc\\t0"));
	free(text);
	nt_map_free(m);
	free(path);
}

static void test_csv_layout(void **state)
{
	char *path = path_in(state, "layout.csv"), *text;
	struct nt_map *m = sample_map(2, 2, NT_MAP_LINES, 0);

	m->chain[0] = 612.5;
	save(path, write_csv, m, 0);
	text = slurp(path, NULL);
	assert_true(!strncmp(text, "# format=nucatrace-map-csv\n# version=1\n# uuid=GPU-", 50));
	assert_non_null(strstr(text, "\n# command=nucatrace calibrate --reps 9,a \"quoted\" back\\\\slash\\nsecond line\\r\n"));
	assert_non_null(strstr(text, "\n# n_sm=2\n# n_line=2\n# parts=lines\npart,sm,line,value\n"
			       "chain,0,,612.5\nchain,1,,\noffset,,0,21474836480\n"));
	assert_non_null(strstr(text, "\nline,0,0,550\nline,0,1,550.3333333333334\n"));
	assert_non_null(strstr(text, "\nline,1,1,\n"));
	free(text);
	nt_map_free(m);
	free(path);
}

/* A valid small file's text, to break in various ways. */
static char *valid_text(void **state, write_fn w)
{
	char *path = path_in(state, "valid"), *text;
	struct nt_map *m = sample_map(2, 2, ALL_PARTS, 0);

	save(path, w, m, 0);
	text = slurp(path, NULL);
	nt_map_free(m);
	free(path);
	return text;
}

/* text with the first `from` replaced by `to` (from must occur). */
static char *mutate(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out;

	if (!at)
		fail_msg("'%s' not in the fixture", from);
	out = malloc(strlen(text) + strlen(to) + 1);
	assert_non_null(out);
	sprintf(out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	return out;
}

struct bad_case {
	const char *from, *to;	/* from NULL: keep the first `to` percent */
	const char *want;
};

static void expect_refused(void **state, read_fn r, const char *base, const struct bad_case *c)
{
	char *path = path_in(state, "bad"), *text;
	struct nt_map *m = (struct nt_map *)1;
	struct nt_err err = { "" };

	text = c->from ? mutate(base, c->from, c->to) : strdup(base);
	if (!c->from)
		text[strlen(text) * atoi(c->to) / 100] = '\0';
	write_file(path, text, strlen(text));
	if (r(path, &m, &err) != -1)
		fail_msg("accepted after '%s' -> '%s'", c->from, c->to);
	assert_null(m);
	if (getenv("NT_TEST_VERBOSE"))
		fprintf(stderr, "%s\n", err.msg);
	if (!strstr(err.msg, path) || !strstr(err.msg, c->want))
		fail_msg("'%s' -> '%s': message '%s' lacks the path or '%s'", c->from, c->to,
			 err.msg, c->want);
	free(text);
	free(path);
}

static void test_json_malformed(void **state)
{
	static const struct bad_case cases[] = {
		{ NULL, "50", "not valid JSON" },
		{ NULL, "99", "not valid JSON" },
		{ "{", "", "not valid JSON" },
		{ "{\"format\":\"nucatrace-map\"", "{\"format\":\"other\"", "\"format\"" },
		{ "\"version\":1", "\"version\":2", "\"version\" 2" },
		{ "\"version\":1", "\"versio\":1", "missing key \"version\"" },
		{ "\"chain\":[", "\"chain\":{\"a\":1},\"x\":[", "\"chain\" is not an array" },
		{ "\"chain\":[", "\"chain\":[1,", "\"noise\" has 2 entries, \"chain\" 3" },
		{ "\"sm_count\":2", "\"sm_count\":3", "\"gpu.sm_count\" is 3 but \"chain\" has 2" },
		{ "\"chain\":[600", "\"chain\":[\"x\"", "\"chain[0]\" is not a number" },
		{ "\"noise\":[", "\"noise\":[1,", "\"noise\" has 3 entries" },
		{ "\"noise\":[1e-300", "\"noise\":[true", "\"noise[0]\" is not a number" },
		{ "\"latency\":[[", "\"latency\":[[1,", "\"lines.latency[0]\"" },
		{ "550.6666666666666", "\"1\"", "\"lines.latency[1][0]\" is not a number" },
		{ "\"latency\":[[", "\"latency\":[[1],[2],[", "\"lines.latency\"" },
		{ "1200.3", "{}", "\"first_touch.first[1][1]\" is not a number" },
		{ "590.25,", "[1],", "\"first_touch.repeat[0][0]\" is not a number" },
		{ "\"repeat\":[[", "\"repeat\":[3,[", "\"first_touch.repeat\" is not an array of 2 rows" },
		{ "\"offset\":[21474836480", "\"offset\":[1.5", "\"lines.offset[0]\" is not an integer" },
		{ "\"lines\":{\"offset\":[", "\"lines\":{\"offsets\":[", "\"lines.offset\" is missing" },
		{ "\"cc\":\"9.0\"", "\"cc\":\"9\"", "\"gpu.cc\"" },
		{ "\"cc\":\"9.0\"", "\"cc\":9.0", "\"gpu.cc\"" },
		{ "\"uuid\":", "\"uid\":", "missing key \"gpu.uuid\"" },
		{ "\"sm_count\":2", "\"sm_count\":\"2\"", "\"gpu.sm_count\" is not an integer" },
		{ "\"chain_loads\":4096", "\"chain_loads\":4096.5", "\"params.chain_loads\"" },
		{ "\"chain_loads\":4096", "\"chain_loads\":40960000000", "\"params.chain_loads\"" },
		{ "\"statistic\":\"median\"", "\"statistic\":\"median-of-means\"", "too long" },
		{ "\"sm_clock_mhz\":", "\"sm_clock_mhz\":\"fast\",\"x\":", "\"sm_clock_mhz\" is not a number" },
		{ "\"created_at_unix\":", "\"created_at_unix\":\"x\",\"x\":", "\"created_at_unix\"" },
		{ "\"created_at\":\"", "\"created_at\":\"yesterday\",\"x\":\"", "\"created_at\"" },
		{ "\"gpu\":{", "\"gpu\":[],\"x\":{", "\"gpu\" is not an object" },
	};
	char *base = valid_text(state, nt_map_write_json);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(state, nt_map_read_json, base, &cases[i]);
	free(base);
}

static void test_csv_malformed(void **state)
{
	static const struct bad_case cases[] = {
		{ NULL, "50", "truncated" },
		{ NULL, "90", "truncated" },
		{ "590.249999997\n", "590.2", "line 45: no newline at the end (truncated?)" },
		{ "590.249999997\n", "590.249999997\nchain,0,,1\n", "duplicate" },
		{ "repeat,1,1,", "repeat,1,1,1\nchain,0,,1\n#", "duplicate" },
		{ "# format=nucatrace-map-csv", "# format=other", "format" },
		{ "# version=1", "# version=7", "version '7'" },
		{ "# uuid=", "# uid=", "missing header key 'uuid'" },
		{ "# n_sm=2", "# n_sm=3", "sm_count" },
		{ "# sm_count=2", "# sm_count=two", "line 5: bad value for 'sm_count'" },
		{ "part,sm,line,value", "sm,part,line,value", "line" },
		{ "chain,0,,600", "chain,0,,abc", "line 28: not a number: 'abc'" },
		{ "chain,0,,", "chain,9,,", "bad sm '9'" },
		{ "chain,0,,", "chain,0,1,", "bad line '1'" },
		{ "line,0,0,", "line,0,2,", "bad line '2'" },
		{ "offset,,0,", "offset,,0,1.5\noffset,,9,", "not an integer" },
		{ "noise,0,,", "nois,0,,", "unknown or undeclared part 'nois'" },
		{ "noise,0,,", "noise,0,,1,2\nnoise,0,,", "4 columns" },
		{ "# parts=noise,", "# parts=noise,lines,bogus,", "unknown part 'bogus'" },
	};
	char *base = valid_text(state, write_csv);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(state, nt_map_read_csv, base, &cases[i]);
	free(base);
}

/* valid_text()'s map with a probe part of two configurations. */
static char *probe_text(void **state)
{
	char *path = path_in(state, "valid-probe"), *text;
	struct nt_map *m = sample_map(2, 2, ALL_PARTS, 0);

	assert_int_equal(nt_map_set_probe(m, 2), 0);
	m->probe[0] = (struct nt_map_probe){ 32, 10, 264, 100.5, 130.25 };
	m->probe[1] = (struct nt_map_probe){ 1024, 1000, 132, NAN, 1e5 };
	m->probe_cost[0] = 233.5;
	m->probe_cost[2] = 12.75;
	m->probe_cost[3] = 13;
	save(path, nt_map_write_json, m, 0);
	text = slurp(path, NULL);
	nt_map_free(m);
	free(path);
	return text;
}

#define PROBE0 "{\"threads\":32,\"iters\":10,\"blocks\":264,\"body_native\":100.5," \
	       "\"body_traced\":130.25,\"cost\":[233.5,null]}"

/* The layout mapio.h documents; keys of a newer writer inside it skipped. */
static void test_probe_layout(void **state)
{
	char *base = probe_text(state), *path = path_in(state, "newer.json"), *text;
	struct nt_map *m = NULL;
	struct nt_err err = { "" };

	assert_non_null(strstr(base, "\"first_touch\":{"));
	assert_non_null(strstr(base, "]]},\"probe\":[" PROBE0 ",{\"threads\":1024,\"iters\":1000,"
			       "\"blocks\":132,\"body_native\":null,\"body_traced\":100000,"
			       "\"cost\":[12.75,13]}]}"));
	text = mutate(base, "\"threads\":1024", "\"later\":{\"x\":[]},\"threads\":1024");
	write_file(path, text, strlen(text));
	if (nt_map_read_json(path, &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m->n_probe, 2);
	assert_int_equal(m->probe[1].threads, 1024);
	assert_true(isnan(m->probe[1].body_native) && isnan(m->probe_cost[1]));
	assert_true(m->probe_cost[3] == 13);
	nt_map_free(m);
	free(text);
	free(base);
	free(path);
}

/* Every way a probe part can be wrong, named by its key. */
static void test_probe_refused(void **state)
{
	static const struct bad_case cases[] = {
		{ "[233.5,null]", "[233.5]", "\"probe[0].cost\" is not an array of 2 numbers (one per SM)" },
		{ "[233.5,", "[-5,", "\"probe[0].cost[0]\" is -5: not a latency of 0..1000000 cycles" },
		{ "[12.75,", "[\"x\",", "\"probe[1].cost[0]\" is not a number" },
		{ "[12.75,13]", "{\"a\":1}", "\"probe[1].cost\" is not an array of 2" },
		{ "\"cost\":[233.5", "\"costs\":[233.5", "missing key \"probe[0].cost\"" },
		{ "\"iters\":10,", "\"iter\":10,", "missing key \"probe[0].iters\"" },
		{ "\"threads\":32", "\"threads\":0", "\"probe[0].threads\" is not an integer of 1..1024" },
		{ "\"threads\":1024", "\"threads\":1025", "\"probe[1].threads\" is not an integer" },
		{ "\"iters\":10,", "\"iters\":1.5,", "\"probe[0].iters\" is not an integer of 0..1000000" },
		{ "\"blocks\":264", "\"blocks\":\"264\"", "\"probe[0].blocks\" is not an integer" },
		{ "\"blocks\":132", "\"blocks\":-1", "\"probe[1].blocks\" is not an integer of 0..1000000" },
		{ "\"body_native\":100.5", "\"body_native\":true", "\"probe[0].body_native\" is not a number" },
		{ "\"body_traced\":100000", "\"body_traced\":2e6", "\"probe[1].body_traced\" is 2e+06" },
		{ "\"probe\":[{", "\"probe\":[3,{", "\"probe[0]\" is not an object" },
		{ "\"probe\":[{", "\"probe\":[\"x\",{", "\"probe[0]\" is not an object" },
		{ "\"probe\":[", "\"probe\":{},\"x\":[", "\"probe\" is not an array" },
		{ "\"probe\":[", "\"probe\":[],\"x\":[", "\"probe\" is empty" },
		{ "\"probe\":[", "\"probe\":[" PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 ","
		  PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 "," PROBE0 ","
		  PROBE0 "," PROBE0 ",", "\"probe\" has 17 entries; nucatrace reads maps of at most 16 probe "
		  "configurations" },
	};
	char *base = probe_text(state);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(state, nt_map_read_json, base, &cases[i]);
	free(base);
}

/* Latencies, sizes and times beyond map.h's limits: a damaged or hostile
 * file must not reach the printers or force a huge allocation. */
static void test_json_out_of_range(void **state)
{
	static const struct bad_case cases[] = {
		{ "\"chain\":[600", "\"chain\":[1e200", "\"chain[0]\" is 1e+200: not a latency of 0..1000000" },
		{ "\"chain\":[600", "\"chain\":[-1", "\"chain[0]\" is -1: not a latency" },
		{ "\"noise\":[1e-300", "\"noise\":[2e6", "\"noise[0]\" is 2e+06" },
		{ "550.6666666666666", "1e300", "\"lines.latency[1][0]\" is 1e+300" },
		{ "1200.3", "-5", "\"first_touch.first[1][1]\" is -5" },
		{ "\"created_at_unix\":", "\"created_at_unix\":100000000000000000,\"x\":",
		  "\"created_at_unix\" 100000000000000000 is not a time in the years 1970..9999" },
		{ "\"created_at_unix\":", "\"created_at_unix\":-1,\"x\":", "is not a time" },
		{ "\"uuid\":\"GPU-", "\"uuid\":\"\",\"x\":\"GPU-", "GPU UUID \"\" is not one" },
		{ "\"uuid\":\"GPU-", "\"uuid\":\"GPU-\\u001b[31m", "is not one" },
		{ "\"uuid\":\"GPU-", "\"uuid\":\"GPU-../../x", "is not one" },
		{ "\"sm_clock_mhz\":", "\"sm_clock_mhz\":1e999,\"x\":", "sm_clock_mhz inf is not a clock" },
		{ "\"sm_clock_mhz\":", "\"sm_clock_mhz\":-5,\"x\":", "sm_clock_mhz -5 is not a clock" },
		{ "\"chain\":[600", "\"chain\":[null", "no SM has a chain latency" },
	};
	char *base = valid_text(state, nt_map_write_json), *many = malloc(4 * 5000 + 32);
	struct bad_case big;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(state, nt_map_read_json, base, &cases[i]);
	assert_non_null(many);
	strcpy(many, "\"chain\":[");
	for (int i = 0; i < NT_MAP_MAX_SM - 1; i++)
		strcat(many, "1,");
	big = (struct bad_case){ "\"chain\":[", many, "\"chain\" has 1025 entries; nucatrace reads "
				 "maps of at most 1024 SMs" };
	expect_refused(state, nt_map_read_json, base, &big);
	strcpy(many, "\"offset\":[");
	for (int i = 0; i < NT_MAP_MAX_LINES - 1; i++)
		strcat(many, "0,");
	big = (struct bad_case){ "\"offset\":[", many, "\"lines.offset\" has 4097 entries" };
	expect_refused(state, nt_map_read_json, base, &big);
	free(many);
	free(base);
}

static void test_csv_out_of_range(void **state)
{
	static const struct bad_case cases[] = {
		{ "chain,0,,600", "chain,0,,1e200", "line 28: chain '1e200' is not a latency of 0..1000000" },
		{ "chain,0,,600", "chain,0,,inf", "line 28: chain 'inf' is not a latency" },
		{ "noise,0,,", "noise,0,,-3\nnoise,0,,", "noise '-3' is not a latency" },
		{ "line,0,0,550", "line,0,0,1000001", "line '1000001' is not a latency" },
		{ "# n_sm=2", "# n_sm=5000000", "n_sm=5000000: nucatrace reads maps of at most 1024 SMs" },
		{ "# n_line=2", "# n_line=100000", "n_line=100000: nucatrace reads maps of at most 4096 lines" },
		{ "# created_at=1764461400", "# created_at=100000000000000000",
		  "created_at is not a time in the years 1970..9999: '100000000000000000'" },
		{ "# uuid=GPU-", "# uuid=GPU-\x07", "is not one" },
		{ "# uuid=GPU-", "# uuid=\n# x=GPU-", "GPU UUID \"\" is not one" },
		{ "# sm_clock_mhz=", "# sm_clock_mhz=1e999\n# x=", "sm_clock_mhz inf is not a clock" },
		{ "chain,0,,600", "chain,0,,", "no SM has a chain latency" },
	};
	char *base = valid_text(state, write_csv);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_refused(state, nt_map_read_csv, base, &cases[i]);
	free(base);
}

/* Keys from a newer writer are skipped, in any order. */
static void test_json_unknown_keys(void **state)
{
	char *base = valid_text(state, nt_map_write_json), *path = path_in(state, "newer.json");
	char *text = mutate(base, "\"format\":", "\"later\":{\"a\":[1,{}]},\"format\":");
	char *text2 = mutate(text, "\"uuid\":", "\"pci_bus\":3,\"uuid\":");
	struct nt_map *m = NULL, *want = sample_map(2, 2, ALL_PARTS, 0);
	struct nt_err err = { "" };

	write_file(path, text2, strlen(text2));
	if (nt_map_read_json(path, &m, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(want, m);
	nt_map_free(m);
	nt_map_free(want);
	free(text2);
	free(text);
	free(base);
	free(path);
}

/* Text that is not UTF-8 is kept as U+FFFD, so an accepted map reads
 * back the same after it is written (it did not: the writer's U+FFFD
 * made "command" too long to read; found by tests/fuzz/map_json.c). */
static void test_text_not_utf8(void **state)
{
	char *base = valid_text(state, nt_map_write_json), *path = path_in(state, "bad-utf8.json");
	char long_bad[200], *text, *text2;
	struct nt_map *m = NULL, *back = NULL;
	struct nt_err err = { "" };
	FILE *f;

	memset(long_bad, 0xff, sizeof(long_bad) - 1);
	long_bad[sizeof(long_bad) - 1] = '\0';
	text = mutate(base, "\"host\":\"", "\"host\":\"\xc3(\xff");
	write_file(path, text, strlen(text));
	if (nt_map_read_json(path, &m, &err))
		fail_msg("%s", err.msg);
	assert_memory_equal(m->host, "\xef\xbf\xbd(\xef\xbf\xbd", 7);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(nt_map_write_json(f, m, 1), 0);
	assert_int_equal(fclose(f), 0);
	if (nt_map_read_json(path, &back, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(back->host, m->host);
	nt_map_free(m);
	nt_map_free(back);
	/* 199 such bytes would be 597 as U+FFFD: too long, refused at once */
	text2 = malloc(strlen(base) + sizeof(long_bad) + 16);
	assert_non_null(text2);
	sprintf(text2, "%.*s\"command\":\"%s", (int)(strstr(base, "\"command\":\"") - base), base, long_bad);
	strcat(text2, strstr(base, "\"command\":\"") + strlen("\"command\":\""));
	write_file(path, text2, strlen(text2));
	assert_int_equal(nt_map_read_json(path, &m, &err), -1);
	assert_non_null(strstr(err.msg, "\"command\" is too long"));
	free(text2);
	free(text);
	free(base);
	free(path);
}

static void test_missing_file(void **state)
{
	char *path = path_in(state, "nope");
	struct nt_map *m = (struct nt_map *)1;
	struct nt_err err = { "" };

	assert_int_equal(nt_map_read_json(path, &m, &err), -1);
	assert_null(m);
	assert_non_null(strstr(err.msg, path));
	m = (struct nt_map *)1;
	assert_int_equal(nt_map_read_csv(path, &m, &err), -1);
	assert_null(m);
	assert_non_null(strstr(err.msg, path));
	write_file(path, "", 0);
	assert_int_equal(nt_map_read_json(path, &m, &err), -1);
	assert_non_null(strstr(err.msg, "not valid JSON"));
	assert_int_equal(nt_map_read_csv(path, &m, &err), -1);
	assert_non_null(strstr(err.msg, path));
	free(path);
}

static void test_invalid_map_not_written(void **state)
{
	struct nt_map *m = sample_map(2, 2, NT_MAP_FIRST_TOUCH, 0);
	FILE *f = fopen("/dev/null", "w");
	double *keep = m->ft_repeat;

	(void)state;
	assert_non_null(f);
	m->ft_repeat = NULL;
	assert_int_equal(nt_map_write_json(f, m, 0), -1);
	assert_int_equal(nt_map_write_csv(f, m), -1);
	m->ft_repeat = keep;
	fclose(f);
	nt_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_json_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_awkward_doubles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_out_of_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_unknown_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_not_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test(test_invalid_map_not_written),
		cmocka_unit_test(test_json_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
