/*
 * Unit tests for core/gpu/occupancy.c.  The "driver" cases are what
 * cuOccupancyMaxActiveBlocksPerMultiprocessor returned on an H200
 * (cc 9.0, driver 580) for kernels of those register counts and static
 * shared sizes; a sweep of 1856 such launches (block sizes 32..1024,
 * dynamic shared 0..200000 B, 10..250 registers) agreed with
 * nt_occupancy() on every one.  The others follow the rules of the
 * toolkit's cuda_occupancy.h by hand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "gpu/occupancy.h"

struct occ_case {
	int threads, regs;
	int64_t smem, dyn;
	int blocks;
	unsigned bound;
};

static void run_cases(int major, int minor, const struct occ_case *c, size_t n)
{
	struct nt_sm_limits l;
	struct nt_occupancy o;
	struct nt_err err = { "" };

	assert_int_equal(nt_sm_limits_for(major, minor, &l, &err), 0);
	for (size_t i = 0; i < n; i++) {
		struct nt_launch_res r = { c[i].threads, c[i].regs, c[i].smem, c[i].dyn };

		assert_int_equal(nt_occupancy(&l, &r, &o, &err), 0);
		if (o.blocks != c[i].blocks || o.bound != c[i].bound)
			fail_msg("cc %d.%d, %d threads, %d regs, %lld + %lld B: %d blocks (bound 0x%x), want %d (0x%x)",
				 major, minor, c[i].threads, c[i].regs, (long long)c[i].smem, (long long)c[i].dyn,
				 o.blocks, o.bound, c[i].blocks, c[i].bound);
	}
}

enum { T = NT_OCC_THREADS, B = NT_OCC_BLOCKS, R = NT_OCC_REGISTERS, S = NT_OCC_SMEM };

static void test_limits(void **state)
{
	struct nt_sm_limits l;
	struct nt_err err = { "" };

	assert_int_equal(nt_sm_limits_for(9, 0, &l, &err), 0);
	assert_int_equal(l.regs_per_sm, 65536);
	assert_int_equal(l.max_threads_per_sm, 2048);
	assert_int_equal(l.max_blocks_per_sm, 32);
	assert_int_equal(l.smem_per_sm, 228 * 1024);	/* H200: 233472 */
	assert_int_equal(l.smem_per_block_optin, 227 * 1024);	/* 232448 */
	assert_int_equal(l.reserved_smem_per_block, 1024);
	assert_int_equal(l.smem_alloc_unit, 128);
	assert_int_equal(nt_sm_limits_for(7, 5, &l, &err), 0);
	assert_int_equal(l.smem_alloc_unit, 256);
	assert_int_equal(l.reserved_smem_per_block, 0);
	assert_int_equal(l.max_blocks_per_sm, 16);
	assert_int_equal(nt_sm_limits_for(8, 9, &l, &err), 0);
	assert_int_equal(l.max_blocks_per_sm, 24);
	assert_int_equal(l.max_threads_per_sm, 1536);

	assert_int_equal(nt_sm_limits_for(10, 0, &l, &err), -1);
	assert_non_null(strstr(err.msg, "10.0"));
	assert_non_null(strstr(err.msg, "unknown"));
	assert_int_equal(l.regs_per_sm, 0);
	assert_int_equal(nt_sm_limits_for(7, 0, &l, NULL), -1);
	assert_int_equal(nt_sm_limits_for(6, 1, &l, NULL), -1);
}

/* cuOccupancyMaxActiveBlocksPerMultiprocessor on an H200. */
static void test_h200_driver(void **state)
{
	static const struct occ_case c[] = {
		{ 256, 10, 0, 0, 8, T },
		{ 1024, 10, 0, 0, 2, T },
		{ 32, 10, 4096, 0, 32, B },
		{ 96, 10, 4096, 0, 21, T },
		{ 64, 10, 4096, 8192, 17, S },
		{ 128, 10, 4096, 100000, 2, S },
		{ 32, 10, 12000, 0, 17, S },
		{ 32, 10, 12000, 49152, 3, S },
		{ 32, 80, 0, 0, 24, R },
		{ 96, 80, 0, 0, 8, R },	/* 6 warps per sub-partition: 24 / 3 */
		{ 256, 80, 0, 0, 3, R },
		{ 640, 80, 0, 49152, 1, R },
		{ 96, 72, 0, 0, 9, R },	/* 7 warps per sub-partition: 28 / 3 */
		{ 32, 72, 0, 49152, 4, S },
		{ 32, 250, 0, 0, 8, R },
		{ 96, 250, 0, 0, 2, R },
		{ 256, 250, 0, 0, 1, R },
	};

	run_cases(9, 0, c, sizeof(c) / sizeof(c[0]));
}

/* By the calculator's rules. */
static void test_rules(void **state)
{
	static const struct occ_case h100[] = {
		{ 256, 32, 0, 0, 8, T | R },
		{ 256, 64, 0, 0, 4, R },
		{ 256, 128, 0, 0, 2, R },
		{ 256, 32, 0, 100 * 1024, 2, S },
		{ 256, 32, 0, 227 * 1024, 1, S },
		{ 256, 32, 0, 227 * 1024 + 1, 0, S },	/* over the opt-in limit */
		{ 256, 255, 0, 0, 1, R },
		{ 256, 256, 0, 0, 0, R },		/* no such kernel */
		{ 1024, 64, 0, 0, 1, R },		/* exactly the 64K per block */
		{ 1024, 72, 0, 0, 0, R },		/* 72 * 32 * 32 > 64K */
		{ 288, 192, 0, 0, 0, R },		/* 9 warps fit, 12 (whole sub-partitions) do not */
		{ 2048, 16, 0, 0, 1, T },
		{ 2080, 16, 0, 0, 0, T },
		{ 32, 0, 0, 0, 32, B },			/* unknown registers: no register limit */
	};
	static const struct occ_case ga102[] = {	/* 8.6: 1536 threads, 16 blocks, 100 KiB */
		{ 256, 32, 0, 0, 6, T },
		{ 64, 32, 0, 0, 16, B },
		{ 128, 32, 48 * 1024, 0, 2, S },
	};
	static const struct occ_case tu102[] = {	/* 7.5: 1024 threads, no reserve, 256-B units */
		{ 128, 32, 0, 0, 8, T },
		{ 64, 32, 0, 0, 16, T | B },
		{ 64, 32, 32 * 1024, 0, 2, S },
		{ 64, 32, 16 * 1024 + 1, 0, 3, S },	/* 16640 B each */
	};
	struct nt_sm_limits l;
	struct nt_occupancy o;
	struct nt_launch_res r = { 32, 0, 0, 0 };

	run_cases(9, 0, h100, sizeof(h100) / sizeof(h100[0]));
	run_cases(8, 6, ga102, sizeof(ga102) / sizeof(ga102[0]));
	run_cases(7, 5, tu102, sizeof(tu102) / sizeof(tu102[0]));

	/* No shared memory and no reserve: shared memory never binds. */
	nt_sm_limits_for(7, 5, &l, NULL);
	assert_int_equal(nt_occupancy(&l, &r, &o, NULL), 0);
	assert_int_equal(o.by_smem, INT_MAX);
	assert_int_equal(o.by_registers, INT_MAX);
	assert_int_equal(o.smem_per_block, 0);

	/* What was allocated, rounding and reserve included. */
	nt_sm_limits_for(9, 0, &l, NULL);
	r = (struct nt_launch_res){ 96, 80, 4000, 1 };
	assert_int_equal(nt_occupancy(&l, &r, &o, NULL), 0);
	assert_int_equal(o.smem_per_block, 5120);
	assert_int_equal(o.regs_per_block, 3 * 2560);
}

/* Device attributes override the table, e.g. a GPU we do not know. */
static void test_override(void **state)
{
	struct nt_sm_limits l;
	struct nt_occupancy o;
	struct nt_launch_res r = { 256, 32, 0, 0 };

	assert_int_equal(nt_sm_limits_for(12, 0, &l, NULL), -1);
	l = (struct nt_sm_limits){ 1536, 24, 65536, 65536, 256, 4, 100 * 1024, 99 * 1024, 1024, 128 };
	assert_int_equal(nt_occupancy(&l, &r, &o, NULL), 0);
	assert_int_equal(o.blocks, 6);
	nt_sm_limits_for(9, 0, &l, NULL);
	l.smem_per_sm = 100 * 1024;	/* a program's carveout */
	r.dynamic_smem = 40 * 1024;
	assert_int_equal(nt_occupancy(&l, &r, &o, NULL), 0);
	assert_int_equal(o.blocks, 2);
	assert_int_equal(o.bound, NT_OCC_SMEM);
}

static void test_bad_input(void **state)
{
	struct nt_sm_limits l, zero = { 0 };
	struct nt_occupancy o;
	struct nt_err err = { "" };
	struct nt_launch_res r = { 0, 32, 0, 0 };

	nt_sm_limits_for(9, 0, &l, NULL);
	assert_int_equal(nt_occupancy(&l, &r, &o, &err), -1);
	assert_non_null(strstr(err.msg, "0 threads"));
	r.threads = 128;
	r.dynamic_smem = -1;
	assert_int_equal(nt_occupancy(&l, &r, &o, NULL), -1);
	r.dynamic_smem = 0;
	assert_int_equal(nt_occupancy(&zero, &r, &o, &err), -1);
	assert_non_null(strstr(err.msg, "not set"));
}

static void test_names(void **state)
{
	assert_string_equal(nt_occ_limit_name(NT_OCC_THREADS | NT_OCC_REGISTERS), "threads");
	assert_string_equal(nt_occ_limit_name(NT_OCC_BLOCKS), "blocks");
	assert_string_equal(nt_occ_limit_name(NT_OCC_REGISTERS), "registers");
	assert_string_equal(nt_occ_limit_name(NT_OCC_SMEM), "shared memory");
	assert_string_equal(nt_occ_limit_name(0), "none");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_h200_driver),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
