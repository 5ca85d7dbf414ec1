/*
 * Synthetic traces for `make bench-report` and the job view's tests.
 *
 *   gen_trace FILE LAUNCHES BLOCKS
 *	one trace: LAUNCHES launches of BLOCKS blocks each on a 132-SM
 *	device with a random map, block times 8 us + 20 ns per cycle of the
 *	SM's latency, dispatched as the hardware does (each block to the
 *	slot that frees first).
 *
 *   gen_trace --ranks N [--map FILE]... [--steps S] [--launches K]
 *	       [--blocks B] [--slope NS] [--slow-rank R] [--slow-slope NS]
 *	       [--traced A-B] [--drop R:L] [--extra R] [--cmdline S] [--quiet] DIR
 *	the N rank traces of one data-parallel job, DIR/nucatrace-synth-
 *	<1000+r>-rank<r>.sqlite (meta rank r, one cmdline and exe): S steps,
 *	each K compute launches of B blocks (gemm, elementwise, gemm, ...)
 *	then an all-reduce named as NCCL 2.19+ names it.  Rank r's GPU has
 *	the r-th map (cycled; default tests/data/maps' 707dd6a3 and 2cf08462,
 *	the two H200s of one machine).  A gemm block takes 6 us + slope x
 *	(its SM's latency - the map's fastest SM) + up to 0.4 us of noise
 *	(slope: --slope, 10 ns per cycle; --slow-slope, 40, on --slow-rank,
 *	default the last): so on the slow rank, blocks on slow SMs take
 *	longer, by construction.  An elementwise block takes 3 us + noise.
 *	Every rank starts a step at the same moment; its all-reduce starts
 *	2 us after its compute ends and ends on every rank 30 us after the
 *	last one's starts.  Each rank's GPU clock is offset by r x 7.777 ms
 *	(the job view must not compare clocks).  --traced A-B writes only the
 *	launches numbered A..B (a sampling window); --drop R:L leaves out
 *	launch L of rank R (a dropped launch); --extra R makes rank R launch
 *	one more elementwise kernel first, so its launch numbers are one
 *	ahead of the others'.  --cmdline sets meta cmdline (default
 *	"python3 -u train_ddp.py --steps 6").  Prints, per step, each
 *	rank's summed compute makespans and who was last by how much (what
 *	the report's job view must find), unless --quiet.
 *
 * Deterministic: the same arguments, the same files.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/map.h"
#include "map/mapio.h"
#include "trace/trace.h"

#define N_SM 132
#define MAX_SLOTS 8
#define MAX_RANKS 64
#define MAX_MAPS 8

static int fail(const char *what, const struct nt_err *err)
{
	fprintf(stderr, "gen_trace: %s: %s\n", what, err->msg);
	return 1;
}

static double uniform(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

/* The hardware's dispatch: each block, in block-id order, to the slot
 * that frees first (the lowest slot among equals), a min-heap of slots. */
struct slots {
	int n;
	int64_t at[N_SM * MAX_SLOTS];
	int slot[N_SM * MAX_SLOTS];
};

static int before(const struct slots *h, int a, int b)
{
	return h->at[a] < h->at[b] || (h->at[a] == h->at[b] && h->slot[a] < h->slot[b]);
}

static void swap(struct slots *h, int a, int b)
{
	int64_t t = h->at[a];
	int s = h->slot[a];

	h->at[a] = h->at[b], h->slot[a] = h->slot[b];
	h->at[b] = t, h->slot[b] = s;
}

static void slots_reset(struct slots *h, int n, int64_t now)
{
	h->n = n;
	for (int i = 0; i < n; i++)
		h->at[i] = now, h->slot[i] = i;
}

/* The top slot freed again at t. */
static void slots_refill(struct slots *h, int64_t t)
{
	int i = 0;

	h->at[0] = t;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && before(h, l, m))
			m = l;
		if (r < h->n && before(h, r, m))
			m = r;
		if (m == i)
			return;
		swap(h, i, m);
		i = m;
	}
}

/* Block durations come from dur(sm, arg).  Fills b[0..n-1] from `now`
 * (start 200 ns after the slot frees), returns the last end. */
static int64_t dispatch(struct slots *h, struct nt_trace_block *b, long n, int slots, int64_t now,
			int64_t (*dur)(int sm, void *arg), void *arg)
{
	int64_t last = now;

	slots_reset(h, N_SM * slots, now);
	for (long i = 0; i < n; i++) {
		b[i].block = i;
		b[i].sm = h->slot[0] % N_SM;
		b[i].warps = 8;
		b[i].t_start_ns = h->at[0] + 200;
		b[i].t_end_ns = b[i].t_start_ns + dur(b[i].sm, arg);
		b[i].c_start = b[i].t_start_ns * 2;
		b[i].c_end = b[i].t_end_ns * 2;
		slots_refill(h, b[i].t_end_ns);
		if (b[i].t_end_ns > last)
			last = b[i].t_end_ns;
	}
	return last;
}

static const struct nt_trace_device device_template = {
	.device = 0, .name = "synthetic H200", .sm_count = N_SM, .cc_major = 9, .l2_bytes = 62914560,
	.clock_khz = 1980000, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32, .regs_per_sm = 65536,
	.smem_per_sm = 233472,
};

static struct nt_trace_launch launch_row(int64_t l, int64_t kid, long blocks, int slots)
{
	return (struct nt_trace_launch){ .launch = l, .kernel = kid, .device = 0, .grid_x = (int32_t)blocks,
					 .grid_y = 1, .grid_z = 1, .block_x = 256, .block_y = 1, .block_z = 1,
					 .dyn_smem = 0, .max_blocks_per_sm = slots, .traced = 1, .blocks = blocks,
					 .correlation = -1, .graph = -1, .graph_node = -1, .graph_launch = -1 };
}

/* b's span into the launch row, and the launch with its blocks written. */
static int put_launch(struct nt_trace *t, struct nt_trace_launch *tl, const struct nt_trace_block *b, long n,
		      struct nt_err *err)
{
	tl->t_start_ns = b[0].t_start_ns;
	tl->t_end_ns = b[0].t_end_ns;
	for (long i = 1; i < n; i++) {
		tl->t_start_ns = b[i].t_start_ns < tl->t_start_ns ? b[i].t_start_ns : tl->t_start_ns;
		tl->t_end_ns = b[i].t_end_ns > tl->t_end_ns ? b[i].t_end_ns : tl->t_end_ns;
	}
	if (nt_trace_begin(t, err) || nt_trace_add_launch(t, tl, err) ||
	    nt_trace_add_blocks(t, tl->launch, b, n, err) || nt_trace_commit(t, err))
		return -1;
	return 0;
}

/* one trace (make bench-report) */

struct single {
	const struct nt_map *m;
	uint64_t rng;
};

static int64_t single_dur(int sm, void *arg)
{
	struct single *s = arg;

	return 8000 + (int64_t)(20.0 * s->m->chain[sm]) + (int64_t)(400.0 * uniform(&s->rng));
}

static int one_trace(const char *path, long launches, long blocks)
{
	static struct slots h;
	struct nt_trace_device dev = device_template;
	struct nt_trace_kernel k = { .mangled = "_Z9syntheticPfi", .registers = 32, .max_threads = -1 };
	struct single s = { .rng = 0x9E3779B97F4A7C15ULL };
	struct nt_trace_block *b = malloc(blocks * sizeof(*b));
	struct nt_map *m = nt_map_new(N_SM, 0, 0);
	struct nt_trace *t;
	struct nt_err err;
	int64_t kid, now = 1000000000;

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
	for (int i = 0; i < N_SM; i++)
		m->chain[i] = 272.0 + 24.0 * uniform(&s.rng);
	s.m = m;
	if (nt_trace_create(path, &t, &err))
		return fail("create", &err);
	if (nt_trace_begin(t, &err) || nt_trace_add_device(t, &dev, &err) || nt_trace_add_map(t, m, &err) ||
	    nt_trace_add_kernel(t, &k, &kid, &err) || nt_trace_commit(t, &err))
		return fail("set-up", &err);
	for (long l = 1; l <= launches; l++) {
		struct nt_trace_launch tl = launch_row(l, kid, blocks, MAX_SLOTS);

		now = dispatch(&h, b, blocks, MAX_SLOTS, now, single_dur, &s) + 5000;
		if (put_launch(t, &tl, b, blocks, &err))
			return fail("launch", &err);
	}
	if (nt_trace_finish(t, &err))
		return fail("finish", &err);
	nt_trace_close(t);
	nt_map_free(m);
	free(b);
	return 0;
}

/* the ranks of a job */

enum { K_GEMM, K_ELEMENTWISE, K_ALLREDUCE, N_KERNELS };
static const struct {
	const char *mangled, *demangled;
	int slots;
} kernels[N_KERNELS] = {
	{ "_Z4gemmPKfS0_Pfi", "gemm(float const*, float const*, float*, int)", 2 },
	{ "_Z11elementwisePfi", "elementwise(float*, int)", 4 },
	{ "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	  "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 1 },
};
#define ALLREDUCE_BLOCKS 16

struct rank {
	struct nt_trace *t;
	struct nt_map *m;
	double fastest, slope;
	int64_t kid[N_KERNELS];
	int64_t offset;		/* its GPU clock against the others' */
	int64_t shift;		/* its launch numbers against the others' */
	uint64_t rng;
	int kind;		/* of the launch being dispatched */
	double compute;		/* this step's summed compute makespans */
	int64_t arrive;		/* its all-reduce's start, on the common clock */
};

/* Blocks dispatched on the common clock, moved to the rank's GPU clock
 * (cycles at 2 GHz). */
static void on_clock(struct nt_trace_block *b, long n, int64_t offset)
{
	for (long q = 0; q < n; q++) {
		b[q].t_start_ns += offset, b[q].t_end_ns += offset;
		b[q].c_start = 2 * b[q].t_start_ns, b[q].c_end = 2 * b[q].t_end_ns;
	}
}

static int64_t rank_dur(int sm, void *arg)
{
	struct rank *k = arg;
	double noise = 400.0 * uniform(&k->rng);

	if (k->kind == K_ELEMENTWISE)
		return 3000 + (int64_t)noise;
	return 6000 + (int64_t)(k->slope * (k->m->chain[sm] - k->fastest) + noise);
}

/* A map file's chain part, for the trace to carry. */
static struct nt_map *chain_only(const char *path)
{
	struct nt_map *full, *m;
	struct nt_err err;

	if (nt_map_read_json(path, &full, &err)) {
		fail(path, &err);
		return NULL;
	}
	if ((m = nt_map_new(full->n_sm, 0, 0))) {
		m->gpu = full->gpu;
		m->params = full->params;
		m->created_at = full->created_at;
		memcpy(m->tool_version, full->tool_version, sizeof(m->tool_version));
		memcpy(m->host, full->host, sizeof(m->host));
		memcpy(m->command, full->command, sizeof(m->command));
		m->sm_clock_mhz = full->sm_clock_mhz;
		memcpy(m->chain, full->chain, full->n_sm * sizeof(*m->chain));
	}
	nt_map_free(full);
	return m;
}

static int rank_open(struct rank *k, int r, const char *dir, const char *map_path, double slope,
		     const char *cmdline)
{
	struct nt_trace_device dev = device_template;
	char path[4096], buf[32];
	struct nt_err err;

	if (!(k->m = chain_only(map_path)))
		return -1;
	k->fastest = INFINITY;
	for (int s = 0; s < k->m->n_sm && s < N_SM; s++)
		if (!isnan(k->m->chain[s]) && k->m->chain[s] < k->fastest)
			k->fastest = k->m->chain[s];
	k->slope = slope;
	k->offset = (int64_t)r * 7777777;
	k->rng = 0x9E3779B97F4A7C15ULL + (uint64_t)r;
	memcpy(dev.uuid, k->m->gpu.uuid, sizeof(dev.uuid));
	snprintf(path, sizeof(path), "%s/nucatrace-synth-%d-rank%d.sqlite", dir, 1000 + r, r);
	if (nt_trace_create(path, &k->t, &err))
		return fail("create", &err);
	snprintf(buf, sizeof(buf), "%d", r);
	if (nt_trace_begin(k->t, &err) || nt_trace_set_meta(k->t, "rank", buf, &err) ||
	    nt_trace_set_meta(k->t, "cmdline", cmdline, &err) ||
	    nt_trace_set_meta(k->t, "exe", "/usr/bin/python3.12", &err) ||
	    nt_trace_set_meta(k->t, "host", "synth", &err) || nt_trace_set_meta(k->t, "backend", "blocks", &err) ||
	    nt_trace_add_device(k->t, &dev, &err) || nt_trace_add_map(k->t, k->m, &err))
		return fail("set-up", &err);
	snprintf(buf, sizeof(buf), "%d", 1000 + r);
	if (nt_trace_set_meta(k->t, "pid", buf, &err))
		return fail("set-up", &err);
	for (int i = 0; i < N_KERNELS; i++) {
		struct nt_trace_kernel kr = { .mangled = kernels[i].mangled, .demangled = kernels[i].demangled,
					      .registers = 32, .max_threads = -1 };

		if (nt_trace_add_kernel(k->t, &kr, &k->kid[i], &err))
			return fail("set-up", &err);
	}
	return nt_trace_commit(k->t, &err) ? fail("set-up", &err) : 0;
}

struct job {
	int n, slow, steps, launches, quiet;
	long blocks;
	int64_t traced_from, traced_to;
	int drop_rank, extra;
	int64_t drop_launch;
	struct rank *rk;
	struct nt_trace_block *b;
	struct slots h;
};

/* Rank r's launch l (its own number) goes into its trace. */
static int written(const struct job *j, int r, int64_t l)
{
	return l >= j->traced_from && l <= j->traced_to && !(r == j->drop_rank && l == j->drop_launch);
}

/* One step on every rank, from `now` on the common clock: the next
 * step's start. */
static int64_t step(struct job *j, int s, int64_t now, int64_t *launch)
{
	int64_t first = *launch, end = 0;
	struct nt_err err;
	int last = 0, next = -1;

	for (int r = 0; r < j->n; r++) {
		struct rank *k = &j->rk[r];
		int64_t t = now;

		k->compute = 0;
		for (int i = 0; i < j->launches; i++) {
			int kind = i % 2 ? K_ELEMENTWISE : K_GEMM;
			long n = kind == K_GEMM ? j->blocks : j->blocks / 2;
			struct nt_trace_launch tl = launch_row(first + i + k->shift, k->kid[kind], n, kernels[kind].slots);
			int64_t done;

			k->kind = kind;
			done = dispatch(&j->h, j->b, n, kernels[kind].slots, t, rank_dur, k);
			on_clock(j->b, n, k->offset);
			k->compute += (double)(done - (t + 200));
			if (written(j, r, tl.launch) && put_launch(k->t, &tl, j->b, n, &err))
				return fail("launch", &err), -1;
			t = done + 1000;
		}
		k->arrive = t + 1000;
		if (k->arrive + 30000 > end)
			end = k->arrive + 30000;
	}
	for (int r = 0; r < j->n; r++) {	/* the all-reduce: from each arrival to the common end */
		struct rank *k = &j->rk[r];
		struct nt_trace_launch tl = launch_row(first + j->launches + k->shift, k->kid[K_ALLREDUCE],
						       ALLREDUCE_BLOCKS, 1);

		for (int q = 0; q < ALLREDUCE_BLOCKS; q++)
			j->b[q] = (struct nt_trace_block){ .block = q, .sm = q * 8, .warps = 8,
							   .t_start_ns = k->arrive + 100 + 10 * q, .t_end_ns = end - 100 };
		on_clock(j->b, ALLREDUCE_BLOCKS, k->offset);
		if (written(j, r, tl.launch) && put_launch(k->t, &tl, j->b, ALLREDUCE_BLOCKS, &err))
			return fail("launch", &err), -1;
		if (k->compute > j->rk[last].compute)
			last = r;
	}
	for (int r = 0; r < j->n; r++)
		if (r != last && (next < 0 || j->rk[r].compute > j->rk[next].compute))
			next = r;
	if (!j->quiet) {
		printf("step %d (all-reduce at launch %lld): compute", s, (long long)(first + j->launches));
		for (int r = 0; r < j->n; r++)
			printf(" %.0f", j->rk[r].compute);
		printf(" ns; rank %d last by %.0f ns\n", last, j->rk[last].compute - j->rk[next].compute);
	}
	*launch = first + j->launches + 1;
	return end + 3000;
}

/* --extra: one elementwise launch before the steps, numbered 1. */
static int extra_launch(struct job *j, struct rank *k, int64_t now)
{
	long n = j->blocks / 2;
	struct nt_trace_launch tl = launch_row(1, k->kid[K_ELEMENTWISE], n, kernels[K_ELEMENTWISE].slots);
	struct nt_err err;

	k->shift = 1;
	k->kind = K_ELEMENTWISE;
	dispatch(&j->h, j->b, n, kernels[K_ELEMENTWISE].slots, now - 500000, rank_dur, k);
	on_clock(j->b, n, k->offset);
	return written(j, (int)(k - j->rk), 1) && put_launch(k->t, &tl, j->b, n, &err) ? fail("launch", &err) : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gen_trace FILE LAUNCHES BLOCKS\n"
			"       gen_trace --ranks N [--map FILE]... [--steps S] [--launches K] [--blocks B]\n"
			"                 [--slope NS] [--slow-rank R] [--slow-slope NS] [--traced A-B]\n"
			"                 [--drop R:L] [--extra R] [--cmdline S] [--quiet] DIR\n");
	exit(2);
}

static int ranks(int argc, char **argv)
{
	static struct job j;
	const char *maps[MAX_MAPS], *dir = NULL, *cmdline = "python3 -u train_ddp.py --steps 6";
	double slope = 10, slow_slope = 40;
	int n_maps = 0, ret = 1;
	int64_t now = 1000000000, launch = 1;
	struct nt_err err;

	j = (struct job){ .n = 0, .slow = -1, .steps = 6, .launches = 3, .blocks = 1056, .traced_from = 1,
			  .traced_to = INT64_MAX, .drop_rank = -1, .extra = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quiet")) {
			j.quiet = 1;
			continue;
		}
		if (*a != '-') {
			dir = a;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--ranks"))
			j.n = atoi(v);
		else if (!strcmp(a, "--map") && n_maps < MAX_MAPS)
			maps[n_maps++] = v;
		else if (!strcmp(a, "--steps"))
			j.steps = atoi(v);
		else if (!strcmp(a, "--launches"))
			j.launches = atoi(v);
		else if (!strcmp(a, "--blocks"))
			j.blocks = atol(v);
		else if (!strcmp(a, "--slope"))
			slope = atof(v);
		else if (!strcmp(a, "--slow-rank"))
			j.slow = atoi(v);
		else if (!strcmp(a, "--slow-slope"))
			slow_slope = atof(v);
		else if (!strcmp(a, "--traced"))
			sscanf(v, "%lld-%lld", (long long *)&j.traced_from, (long long *)&j.traced_to);
		else if (!strcmp(a, "--drop"))
			sscanf(v, "%d:%lld", &j.drop_rank, (long long *)&j.drop_launch);
		else if (!strcmp(a, "--extra"))
			j.extra = atoi(v);
		else if (!strcmp(a, "--cmdline"))
			cmdline = v;
		else
			usage();
	}
	if (!dir || j.n < 2 || j.n > MAX_RANKS || j.steps < 1 || j.launches < 1 || j.blocks < 2)
		usage();
	if (!n_maps) {
		maps[n_maps++] = "tests/data/maps/h200-707dd6a3-a.json";
		maps[n_maps++] = "tests/data/maps/h200-2cf08462-a.json";
	}
	if (j.slow < 0)
		j.slow = j.n - 1;
	j.rk = calloc(j.n, sizeof(*j.rk));
	j.b = malloc((j.blocks > ALLREDUCE_BLOCKS ? j.blocks : ALLREDUCE_BLOCKS) * sizeof(*j.b));
	if (!j.rk || !j.b)
		return 1;
	for (int r = 0; r < j.n; r++)
		if (rank_open(&j.rk[r], r, dir, maps[r % n_maps], r == j.slow ? slow_slope : slope, cmdline) ||
		    (r == j.extra && extra_launch(&j, &j.rk[r], now)))
			goto out;
	for (int s = 1; s <= j.steps; s++)
		if ((now = step(&j, s, now, &launch)) < 0)
			goto out;
	for (int r = 0; r < j.n; r++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", (long long)(launch - 1 + j.rk[r].shift));
		if (nt_trace_set_meta(j.rk[r].t, "launches", buf, &err) || nt_trace_finish(j.rk[r].t, &err)) {
			fail("finish", &err);
			goto out;
		}
	}
	ret = 0;
out:
	for (int r = 0; r < j.n; r++) {
		nt_trace_close(j.rk[r].t);
		nt_map_free(j.rk[r].m);
	}
	free(j.rk);
	free(j.b);
	return ret;
}

int main(int argc, char **argv)
{
	long launches = 0, blocks = 0;

	if (argc > 1 && !strcmp(argv[1], "--ranks"))
		return ranks(argc, argv);
	if (argc != 4 || (launches = atol(argv[2])) <= 0 || (blocks = atol(argv[3])) <= 0)
		usage();
	return one_trace(argv[1], launches, blocks);
}
