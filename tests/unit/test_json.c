/* json.h: layout, escaping, numbers, misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/json.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *buf;
	size_t len;
	FILE *f;
	struct nt_json j;
};

static void out_open(struct out *o, int pretty)
{
	memset(o, 0, sizeof(*o));
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	nt_json_init(&o->j, o->f, pretty);
}

/* Finish, check the result, and clean up. */
static void out_check(struct out *o, int want_ret, const char *want)
{
	assert_int_equal(nt_json_finish(&o->j), want_ret);
	fclose(o->f);
	if (want)
		assert_string_equal(o->buf, want);
	free(o->buf);
}

static void test_compact(void **state)
{
	struct out o;
	const double v[] = { 1.5, NAN, -2 };

	(void)state;
	out_open(&o, 0);
	nt_json_begin_object(&o.j);
	nt_json_key(&o.j, "a");
	nt_json_int(&o.j, 1);
	nt_json_key(&o.j, "b");
	nt_json_begin_array(&o.j);
	nt_json_str(&o.j, "x");
	nt_json_bool(&o.j, 1);
	nt_json_bool(&o.j, 0);
	nt_json_null(&o.j);
	nt_json_begin_object(&o.j);
	nt_json_end_object(&o.j);
	nt_json_begin_array(&o.j);
	nt_json_end_array(&o.j);
	nt_json_end_array(&o.j);
	nt_json_key(&o.j, "v");
	nt_json_double_array(&o.j, v, 3);
	nt_json_key(&o.j, "s");
	nt_json_str(&o.j, NULL);
	nt_json_end_object(&o.j);
	out_check(&o, 0, "{\"a\":1,\"b\":[\"x\",true,false,null,{},[]],\"v\":[1.5,null,-2],\"s\":null}");
}

static void test_pretty(void **state)
{
	struct out o;
	const int64_t off[] = { 0, 128 };
	const double row[] = { 1, 2 };

	(void)state;
	out_open(&o, 1);
	nt_json_begin_object(&o.j);
	nt_json_key(&o.j, "off");
	nt_json_int_array(&o.j, off, 2);
	nt_json_key(&o.j, "m");
	nt_json_begin_array(&o.j);
	nt_json_double_array(&o.j, row, 2);
	nt_json_double_array(&o.j, row, 0);
	nt_json_end_array(&o.j);
	nt_json_key(&o.j, "e");
	nt_json_begin_object(&o.j);
	nt_json_end_object(&o.j);
	nt_json_end_object(&o.j);
	out_check(&o, 0, "{\n  \"off\": [0, 128],\n  \"m\": [\n    [1, 2],\n    []\n  ],\n  \"e\": {}\n}\n");
}

static void test_escapes(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);
	nt_json_begin_array(&o.j);
	nt_json_str(&o.j, "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f");
	/* é, 中, 😀 pass through */
	nt_json_str(&o.j, "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
	/* stray byte, overlong '/', surrogate, truncated sequence, > U+10FFFF */
	nt_json_str(&o.j, "a\xff" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x82" "e\xf4\x90\x80\x80");
	nt_json_strn(&o.j, "n\0ul", 4);
	nt_json_end_array(&o.j);
	out_check(&o, 0, "[\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\","
		  "\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\","
		  "\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffde"
		  "\\ufffd\\ufffd\\ufffd\\ufffd\","
		  "\"n\\u0000ul\"]");
}

static void test_numbers(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);
	nt_json_begin_array(&o.j);
	nt_json_int(&o.j, INT64_MIN);
	nt_json_int(&o.j, INT64_MAX);
	nt_json_double(&o.j, 0.1 + 0.2);
	nt_json_double(&o.j, 612.5);
	nt_json_double(&o.j, 1e21);
	nt_json_double(&o.j, NAN);
	nt_json_double(&o.j, INFINITY);
	nt_json_double(&o.j, -INFINITY);
	nt_json_end_array(&o.j);
	out_check(&o, 0, "[-9223372036854775808,9223372036854775807,0.3,612.5,1e+21,null,null,null]");
}

static void test_exact_doubles(void **state)
{
	const double v[] = { 0.1 + 0.2, 1.0 / 3, 612.5, 5e-324, DBL_MAX, -DBL_MIN, 1e-300, 123456789.123 };
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		nt_json_format_double(buf, sizeof(buf), v[i], 0);
		assert_true(strtod(buf, NULL) == v[i]);
	}
	nt_json_format_double(buf, sizeof(buf), 612.5, 0);
	assert_string_equal(buf, "612.5");	/* the shortest, not %.17g */
	nt_json_format_double(buf, sizeof(buf), 0.1 + 0.2, 0);
	assert_string_equal(buf, "0.30000000000000004");
	nt_json_format_double(buf, sizeof(buf), NAN, 0);
	assert_string_equal(buf, "nan");
}

static void test_misuse(void **state)
{
	struct out o;

	(void)state;
	out_open(&o, 0);	/* value without a key */
	nt_json_begin_object(&o.j);
	nt_json_int(&o.j, 1);
	nt_json_end_object(&o.j);
	out_check(&o, -1, NULL);

	out_open(&o, 0);	/* key in an array */
	nt_json_begin_array(&o.j);
	nt_json_key(&o.j, "k");
	nt_json_int(&o.j, 1);
	nt_json_end_array(&o.j);
	out_check(&o, -1, NULL);

	out_open(&o, 0);	/* mismatched end */
	nt_json_begin_array(&o.j);
	nt_json_end_object(&o.j);
	out_check(&o, -1, NULL);

	out_open(&o, 0);	/* left open */
	nt_json_begin_object(&o.j);
	out_check(&o, -1, NULL);

	out_open(&o, 0);	/* key without a value */
	nt_json_begin_object(&o.j);
	nt_json_key(&o.j, "k");
	nt_json_end_object(&o.j);
	out_check(&o, -1, NULL);

	out_open(&o, 0);	/* too deep */
	for (int i = 0; i <= NT_JSON_MAX_DEPTH; i++)
		nt_json_begin_array(&o.j);
	for (int i = 0; i <= NT_JSON_MAX_DEPTH; i++)
		nt_json_end_array(&o.j);
	out_check(&o, -1, NULL);
}

static void test_write_error(void **state)
{
	struct nt_json j;
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f)
		skip();
	nt_json_init(&j, f, 0);
	nt_json_str(&j, "x");
	assert_int_equal(nt_json_finish(&j), -1);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_exact_doubles),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
