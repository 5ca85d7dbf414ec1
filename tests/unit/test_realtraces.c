/* The trace reader on traces recorded by libnucatrace.so on an H200
 * (tests/data/traces, README there): the invariants the GPU tests check
 * (tests/gpu/check_trace.py), here in C through core/trace/trace.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace/trace.h"

static struct nt_trace *open_trace(const char *name)
{
	const char *dir = getenv("NT_TEST_DATA");
	struct nt_trace *t = NULL;
	struct nt_err err;
	char path[512];

	snprintf(path, sizeof(path), "%s/traces/h200-abc66725-%s.sqlite", dir ? dir : "tests/data", name);
	if (nt_trace_open(path, &t, &err))
		fail_msg("%s", err.msg);
	return t;
}

struct block_check {
	int64_t n, grid, bad;
	unsigned char *seen;
	int64_t t0, t1;
	int warps;
};

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct block_check *c = arg;

	c->n++;
	if (b->block < 0 || b->block >= c->grid || c->seen[b->block]++ || b->sm < 0 || b->sm >= 132 ||
	    b->t_start_ns > b->t_end_ns || b->t_start_ns < c->t0 || b->t_end_ns > c->t1 ||
	    b->warps != c->warps || b->c_start > b->c_end)
		c->bad++;
	return 0;
}

struct launch_check {
	struct nt_trace *t;
	int launches, traced, with_occupancy, with_regs;
	int64_t blocks;
};

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct launch_check *lc = arg;
	int threads = l->block_x * l->block_y * l->block_z;
	struct block_check c = { .grid = (int64_t)l->grid_x * l->grid_y * l->grid_z,
				 .t0 = l->t_start_ns, .t1 = l->t_end_ns, .warps = (threads + 31) / 32 };
	struct nt_err err;

	lc->launches++;
	lc->with_occupancy += l->max_blocks_per_sm > 0;
	lc->with_regs += k && k->registers > 0;
	assert_true(l->t_start_ns < l->t_end_ns);
	if (!l->traced)
		return 0;
	lc->traced++;
	c.seen = calloc(c.grid, 1);
	assert_non_null(c.seen);
	assert_int_equal(nt_trace_foreach_block(lc->t, l->launch, on_block, &c, &err), 0);
	/* exactly one record per block of the grid */
	assert_int_equal(c.n, c.grid);
	assert_int_equal(c.n, l->blocks);
	assert_int_equal(c.bad, 0);
	lc->blocks += c.n;
	free(c.seen);
	return 0;
}

static void check(const char *name, int launches, int traced, int64_t blocks)
{
	struct nt_trace *t = open_trace(name);
	struct launch_check lc = { .t = t };
	struct nt_map *m = NULL;
	struct nt_err err;
	char buf[64];

	assert_int_equal(nt_trace_foreach_launch(t, on_launch, &lc, &err), 0);
	assert_int_equal(lc.launches, launches);
	assert_int_equal(lc.traced, traced);
	assert_int_equal(lc.blocks, blocks);
	assert_int_equal(lc.with_occupancy, launches);	/* dynamic smem + cubin or CUPTI */
	assert_int_equal(lc.with_regs, launches);
	assert_int_equal(nt_trace_get_meta(t, "complete", buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "1");
	/* nucatrace run calibrated the GPU first: the map travels with the trace */
	assert_int_equal(nt_trace_get_map(t, "GPU-abc66725-5d0d-d932-f66a-78b0c1d33c17", &m, &err), 0);
	assert_int_equal(m->n_sm, 132);
	assert_non_null(m->line_lat);
	nt_map_free(m);
	nt_trace_close(t);
}

static void test_chase_all_launches(void **state)
{
	(void)state;
	check("chase", 21, 21, 21 * 528);
}

static void test_torch_gemm_sampled(void **state)
{
	(void)state;
	check("torch-gemm", 10, 10, 27456);
}

static void test_torch_gemm_kernels_mode(void **state)
{
	struct nt_err err;
	char buf[32];
	struct nt_trace *t = open_trace("torch-gemm-kernels");

	(void)state;
	assert_int_equal(nt_trace_get_meta(t, "backend", buf, sizeof(buf), &err), 0);
	assert_string_equal(buf, "kernels");
	nt_trace_close(t);
	check("torch-gemm-kernels", 64, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chase_all_launches),
		cmocka_unit_test(test_torch_gemm_sampled),
		cmocka_unit_test(test_torch_gemm_kernels_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
