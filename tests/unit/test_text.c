/* text.h: UTF-8 checks and text made safe for a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_utf8_len(void **state)
{
	(void)state;
	assert_int_equal(nt_utf8_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xc3\xbc", 2), 2);
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xe2\x82\xac", 2), 0);	/* cut */
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xc0\xaf", 2), 0);	/* overlong */
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);	/* surrogate */
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);	/* > U+10FFFF */
	assert_int_equal(nt_utf8_len((const unsigned char *)"\xff", 1), 0);
	assert_int_equal(nt_utf8_len((const unsigned char *)"\x80", 1), 0);
}

static void test_safe(void **state)
{
	char buf[NT_TEXT_ROOM(64)];

	(void)state;
	assert_string_equal(nt_text_safe(buf, sizeof(buf), "plain (int*)", 0), "plain (int*)");
	assert_string_equal(nt_text_safe(buf, sizeof(buf), NULL, 0), "");
	/* ESC, BEL, newline, CR, DEL, C1 CSI (U+009B) */
	assert_string_equal(nt_text_safe(buf, sizeof(buf), "a\x1b[31mb\x07\n\r\x7f\xc2\x9b" "c", 0),
			    "a?[31mb?????c");
	/* not UTF-8: U+FFFD per byte; valid characters pass */
	assert_string_equal(nt_text_safe(buf, sizeof(buf), "x\xff\xfe\xc3(\xc3\xbc", 0),
			    "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(\xc3\xbc");
	/* cut at max characters, never in a character */
	assert_string_equal(nt_text_safe(buf, sizeof(buf), "\xc3\xbc\xc3\xbc\xc3\xbc", 2), "\xc3\xbc\xc3\xbc...");
	assert_string_equal(nt_text_safe(buf, sizeof(buf), "abc", 3), "abc");
	/* a small buffer cuts too, whole characters, with "..." */
	assert_string_equal(nt_text_safe(buf, 9, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", 0), "\xe2\x82\xac...");
	assert_string_equal(nt_text_safe(buf, 2, "abc", 0), "");
}

static void test_put(void **state)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	assert_non_null(f);
	nt_text_put(f, "k\x1b]0;x\x07\xff");
	nt_text_put(f, NULL);
	fclose(f);
	assert_string_equal(out, "k?]0;x?\xef\xbf\xbd");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_len),
		cmocka_unit_test(test_safe),
		cmocka_unit_test(test_put),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
