/*
 * A synthetic trace for `make bench-report`: LAUNCHES launches of
 * BLOCKS blocks each on a 132-SM device with a map, block times that
 * depend on the SM's latency, dispatched as the hardware does (each block
 * to the slot that frees first).  usage: gen_trace FILE LAUNCHES BLOCKS
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/map.h"
#include "trace/trace.h"

#define N_SM 132
#define SLOTS 8

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static int fail(const char *what, const struct nt_err *err)
{
	fprintf(stderr, "gen_trace: %s: %s\n", what, err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	static int64_t free_at[N_SM * SLOTS];
	struct nt_trace_device dev = { .device = 0, .name = "synthetic H200", .sm_count = N_SM,
				       .cc_major = 9, .l2_bytes = 62914560, .clock_khz = 1980000,
				       .max_threads_per_sm = 2048, .max_blocks_per_sm = 32,
				       .regs_per_sm = 65536, .smem_per_sm = 233472 };
	struct nt_trace_kernel k = { .mangled = "_Z9syntheticPfi", .registers = 32, .static_smem = 0,
				     .const_bytes = 0, .local_bytes = 0, .max_threads = -1 };
	struct nt_trace_block *b;
	struct nt_trace *t;
	struct nt_map *m;
	struct nt_err err;
	int64_t kid, now = 1000000000;
	long launches, blocks;

	if (argc != 4 || (launches = atol(argv[2])) <= 0 || (blocks = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: gen_trace FILE LAUNCHES BLOCKS\n");
		return 2;
	}
	b = malloc(blocks * sizeof(*b));
	m = nt_map_new(N_SM, 0, 0);
	if (!b || !m)
		return 1;
	snprintf(dev.uuid, sizeof(dev.uuid), "GPU-00000000-0000-0000-0000-000000000001");
	m->gpu.sm_count = N_SM;
	memcpy(m->gpu.uuid, dev.uuid, sizeof(dev.uuid));
	snprintf(m->gpu.name, sizeof(m->gpu.name), "synthetic H200");
	m->gpu.cc_major = 9;
	m->created_at = 1795996800;
	m->params.chain_bytes = 2 << 20;
	m->params.chain_loads = 4096;
	m->params.chain_reps = 5;
	snprintf(m->params.statistic, sizeof(m->params.statistic), "min");
	for (int s = 0; s < N_SM; s++)
		m->chain[s] = 272.0 + 24.0 * uniform();
	if (nt_trace_create(argv[1], &t, &err))
		return fail("create", &err);
	if (nt_trace_begin(t, &err) || nt_trace_add_device(t, &dev, &err) || nt_trace_add_map(t, m, &err) ||
	    nt_trace_add_kernel(t, &k, &kid, &err) || nt_trace_commit(t, &err))
		return fail("set-up", &err);
	for (long l = 1; l <= launches; l++) {
		struct nt_trace_launch tl = { .launch = l, .kernel = kid, .device = 0,
					      .grid_x = (int32_t)blocks, .grid_y = 1, .grid_z = 1,
					      .block_x = 256, .block_y = 1, .block_z = 1,
					      .dyn_smem = 0, .max_blocks_per_sm = SLOTS, .traced = 1,
					      .blocks = blocks, .correlation = -1, .graph = -1,
					      .graph_node = -1, .graph_launch = -1 };
		int64_t first = INT64_MAX, last = 0;

		for (int i = 0; i < N_SM * SLOTS; i++)
			free_at[i] = now;
		for (long i = 0; i < blocks; i++) {
			int best = 0;

			for (int s = 1; s < N_SM * SLOTS; s++)
				if (free_at[s] < free_at[best])
					best = s;
			b[i].block = i;
			b[i].sm = best % N_SM;
			b[i].warps = 8;
			b[i].t_start_ns = free_at[best] + 200;
			b[i].t_end_ns = b[i].t_start_ns + 8000 + (int64_t)(20.0 * m->chain[b[i].sm]) +
					(int64_t)(400.0 * uniform());
			b[i].c_start = b[i].t_start_ns * 2;
			b[i].c_end = b[i].t_end_ns * 2;
			free_at[best] = b[i].t_end_ns;
			if (b[i].t_start_ns < first)
				first = b[i].t_start_ns;
			if (b[i].t_end_ns > last)
				last = b[i].t_end_ns;
		}
		tl.t_start_ns = first;
		tl.t_end_ns = last;
		now = last + 5000;
		if (nt_trace_begin(t, &err) || nt_trace_add_launch(t, &tl, &err) ||
		    nt_trace_add_blocks(t, l, b, blocks, &err) || nt_trace_commit(t, &err))
			return fail("launch", &err);
	}
	if (nt_trace_finish(t, &err))
		return fail("finish", &err);
	nt_trace_close(t);
	nt_map_free(m);
	free(b);
	return 0;
}
