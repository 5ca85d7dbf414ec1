/* calib.h and kernels/probe.h: what can be checked without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpu/calib.h"
#include "kernels/probe.h"

/* calib.o refers to the probe kernels, which only the nucatrace binary
 * links; no test here launches them. */
const unsigned char nt_probe_fatbin[1];

/* The host clears the records with cuMemsetD8(0xff): a record no block
 * wrote must read as NT_REC_NONE in every 64-bit word. */
static void test_unwritten_record_is_none(void **state)
{
	unsigned long long rec[NT_REC_HEAD];

	(void)state;
	memset(rec, 0xff, sizeof(rec));
	for (int w = 0; w < NT_REC_HEAD; w++)
		assert_true(rec[w] == NT_REC_NONE);
}

static void test_footprint_holds_lines(void **state)
{
	struct nt_calib_opts o;
	struct nt_err err = { "" };

	(void)state;
	nt_calib_defaults(&o);
	assert_int_equal(nt_calib_check_opts(&o, 60LL << 20, &err), 0);
	assert_int_equal(nt_calib_check_opts(&o, 256 * NT_LINE_BYTES, &err), 0);
	/* 127 bytes a line: place_lines() would divide by zero */
	assert_int_equal(nt_calib_check_opts(&o, 256 * 127, &err), -1);
	assert_string_equal(err.msg, "the L2 of 32512 bytes cannot hold 256 lines of 128 bytes: "
			    "use fewer lines (--lines)");
	assert_int_equal(nt_calib_check_opts(&o, 0, &err), -1);
	o.footprint = 4096;
	assert_int_equal(nt_calib_check_opts(&o, 60LL << 20, &err), -1);
	assert_non_null(strstr(err.msg, "footprint of 4096 bytes cannot hold 256 lines"));
	/* without the line parts the footprint does not matter */
	o.parts = NT_MAP_NOISE;
	assert_int_equal(nt_calib_check_opts(&o, 0, &err), 0);
	o.parts = NT_MAP_FIRST_TOUCH;
	assert_int_equal(nt_calib_check_opts(&o, 0, &err), -1);
	nt_calib_defaults(&o);
	o.n_lines = 1;
	assert_int_equal(nt_calib_check_opts(&o, 60LL << 20, &err), -1);
	assert_non_null(strstr(err.msg, "line count 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwritten_record_is_none),
		cmocka_unit_test(test_footprint_holds_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
