/* Runs the latency probes of kernels/probe.cu on one GPU (calib.h). */
#include "util/clock.h"
#include "gpu/calib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/probe.h"

extern const unsigned char nt_probe_fatbin[];

/* One device, its probe module and the buffers every stage shares. */
struct probe_ctx {
	struct nt_cuda *cu;
	struct nt_err *err;
	const struct nt_calib_opts *o;
	struct nt_calib_stats *st;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f_chain, f_lines, f_first, f_spin;
	unsigned smem;
	int n_sm;
	CUdeviceptr ticket, out;
	size_t out_words;	/* per record */
	unsigned long long *host;	/* n_sm records */
};

static void progress(const struct probe_ctx *pc, const char *stage)
{
	if (pc->o->progress)
		pc->o->progress(stage);
}

void nt_calib_defaults(struct nt_calib_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->parts = NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH;
	o->chain_bytes = 2 << 20;
	o->chain_loads = 4096;
	o->chain_reps = 5;
	o->n_lines = 256;
	o->line_loads = 64;
	o->line_reps = 3;
	o->ft_reps = 8;
	o->max_tries = 8;
	o->seed = 0x6e75636174726163ULL;
}

/* xorshift64*: reproducible buffers from opts->seed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int cmp_u64(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

/* The statistic over n repetitions, in cycles per load. */
static double rep_stat(const unsigned long long *v, int n, int median, int loads)
{
	unsigned long long t[64];

	if (n > 64)
		n = 64;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_u64);
	if (!median)
		return (double)t[0] / loads;
	return (n % 2 ? (double)t[n / 2] : 0.5 * ((double)t[n / 2 - 1] + t[n / 2])) / loads;
}

static int launch(struct probe_ctx *pc, CUfunction f, struct nt_probe_args *a)
{
	void *params[] = { a };

	pc->st->launches++;
	NT_CU_TRY(pc->cu, pc->err, pc->cu->cuMemsetD8(pc->ticket, 0, 2 * sizeof(unsigned)));
	NT_CU_TRY(pc->cu, pc->err, pc->cu->cuMemsetD8(pc->out, 0xff, pc->n_sm * pc->out_words * 8));
	NT_CU_TRY(pc->cu, pc->err, pc->cu->cuLaunchKernel(f, pc->n_sm, 1, 1, NT_PROBE_THREADS, 1, 1, pc->smem, NULL,
					   params, NULL));
	NT_CU_TRY(pc->cu, pc->err, pc->cu->cuCtxSynchronize());
	NT_CU_TRY(pc->cu, pc->err, pc->cu->cuMemcpyDtoH(pc->host, pc->out, pc->n_sm * pc->out_words * 8));
	return 0;
}

static int smid_ok(struct probe_ctx *pc, unsigned long long smid)
{
	if (smid < (unsigned long long)pc->n_sm)
		return 1;
	nt_err_set(pc->err, "a block ran on smid %llu but the device reports %d SMs: "
		   "non-contiguous SM ids are not supported", smid, pc->n_sm);
	return 0;
}

/* "SMs 3, 77 got no block" for the unmeasured entries of have[]. */
static int missing_error(struct probe_ctx *pc, const char *what, const char *have)
{
	char list[256] = "";
	size_t len = 0;
	int missing = 0;

	for (int s = 0; s < pc->n_sm; s++) {
		if (have[s])
			continue;
		if (missing++ < 16 && len < sizeof(list) - 8)
			len += snprintf(list + len, sizeof(list) - len, "%s%d", len ? ", " : "", s);
	}
	return nt_err_set(pc->err, "%s: %d SM(s) got no block in %d launches (%s%s); is other "
			  "work running on the GPU?", what, missing, pc->o->max_tries, list,
			  missing > 16 ? ", ..." : "");
}

/* Launch f until every SM has delivered a record; store(rec, smid, arg)
 * takes one record.  Returns the median SM clock (MHz) of the records. */
static int cover_all(struct probe_ctx *pc, CUfunction f, struct nt_probe_args *a, const char *what,
		     void (*store)(const unsigned long long *rec, int sm, void *arg), void *arg,
		     double *clock_mhz)
{
	char *have = calloc(pc->n_sm, 1);
	double *mhz = malloc(pc->n_sm * sizeof(*mhz));
	int got = 0, ret = -1;

	if (!have || !mhz) {
		nt_err_set(pc->err, "out of memory");
		goto out;
	}
	for (int i = 0; i < pc->n_sm; i++)
		mhz[i] = NAN;
	for (int t = 0; t < pc->o->max_tries && got < pc->n_sm; t++) {
		if (launch(pc, f, a))
			goto out;
		for (int b = 0; b < pc->n_sm; b++) {
			const unsigned long long *rec = pc->host + b * pc->out_words;

			if (rec[0] == NT_REC_NONE)
				continue;
			if (!smid_ok(pc, rec[0]))
				goto out;
			if (have[rec[0]])
				continue;
			have[rec[0]] = 1;
			got++;
			mhz[rec[0]] = rec[3] ? (double)rec[2] / (double)rec[3] * 1e3 : NAN;
			store(rec, (int)rec[0], arg);
		}
	}
	if (got < pc->n_sm) {
		missing_error(pc, what, have);
		goto out;
	}
	if (clock_mhz) {
		*clock_mhz = nt_median(mhz, pc->n_sm);
		pc->st->clock_min_mhz = pc->st->clock_max_mhz = *clock_mhz;
		for (int s = 0; s < pc->n_sm; s++) {
			if (mhz[s] < pc->st->clock_min_mhz)
				pc->st->clock_min_mhz = mhz[s];
			if (mhz[s] > pc->st->clock_max_mhz)
				pc->st->clock_max_mhz = mhz[s];
		}
	}
	ret = 0;
out:
	free(have);
	free(mhz);
	return ret;
}

static int probe_open(struct probe_ctx *pc, int ordinal)
{
	struct nt_cuda *cu = pc->cu;
	const struct nt_calib_opts *o = pc->o;
	size_t words;
	int optin, blocks;

	NT_CU_TRY(pc->cu, pc->err, cu->cuDeviceGet(&pc->dev, ordinal));
	NT_CU_TRY(pc->cu, pc->err, cu->cuDevicePrimaryCtxRetain(&pc->ctx, pc->dev));
	NT_CU_TRY(pc->cu, pc->err, cu->cuCtxSetCurrent(pc->ctx));
	NT_CU_TRY(pc->cu, pc->err, cu->cuModuleLoadData(&pc->mod, nt_probe_fatbin));
	NT_CU_TRY(pc->cu, pc->err, cu->cuModuleGetFunction(&pc->f_chain, pc->mod, "nt_probe_chain"));
	NT_CU_TRY(pc->cu, pc->err, cu->cuModuleGetFunction(&pc->f_lines, pc->mod, "nt_probe_lines"));
	NT_CU_TRY(pc->cu, pc->err, cu->cuModuleGetFunction(&pc->f_first, pc->mod, "nt_probe_first"));
	NT_CU_TRY(pc->cu, pc->err, cu->cuModuleGetFunction(&pc->f_spin, pc->mod, "nt_probe_spin"));
	/* As much shared memory as one block may have: a second block cannot
	 * fit beside it, so each SM runs exactly one. */
	NT_CU_TRY(pc->cu, pc->err, cu->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
					    pc->dev));
	pc->smem = optin;
	CUfunction fs[] = { pc->f_chain, pc->f_lines, pc->f_first, pc->f_spin };
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		NT_CU_TRY(pc->cu, pc->err, cu->cuFuncSetAttribute(fs[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
						  pc->smem));
		NT_CU_TRY(pc->cu, pc->err, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fs[i],
									   NT_PROBE_THREADS, pc->smem));
		if (blocks != 1)
			return nt_err_set(pc->err, "probe kernels fit %d blocks per SM with %u bytes of "
					  "shared memory; need exactly 1", blocks, pc->smem);
	}
	/* Sized for every part whichever are measured: the chain buffer,
	 * allocated next, then lands where a full calibration's does.  Its
	 * physical placement moves the chain map by up to ~0.7 cycle per SM
	 * (docs/fingerprint.md), so a quick map and a full one compare only
	 * when they allocate alike. */
	words = NT_REC_HEAD + (size_t)o->chain_reps;
	if (words < NT_REC_HEAD + (size_t)o->n_lines * o->line_reps)
		words = NT_REC_HEAD + (size_t)o->n_lines * o->line_reps;
	if (words < NT_REC_HEAD + (size_t)o->n_lines * (o->ft_reps + 2))
		words = NT_REC_HEAD + (size_t)o->n_lines * (o->ft_reps + 2);
	pc->out_words = words;
	pc->host = malloc(pc->n_sm * words * 8);
	if (!pc->host)
		return nt_err_set(pc->err, "out of memory");
	NT_CU_TRY(pc->cu, pc->err, cu->cuMemAlloc(&pc->ticket, 64));
	NT_CU_TRY(pc->cu, pc->err, cu->cuMemAlloc(&pc->out, pc->n_sm * words * 8));
	return 0;
}

static void probe_close(struct probe_ctx *pc)
{
	struct nt_cuda *cu = pc->cu;

	if (pc->out)
		cu->cuMemFree(pc->out);
	if (pc->ticket)
		cu->cuMemFree(pc->ticket);
	if (pc->mod)
		cu->cuModuleUnload(pc->mod);
	if (pc->ctx)
		cu->cuDevicePrimaryCtxRelease(pc->dev);
	free(pc->host);
}

/* Spin every SM until two successive clock readings agree within 1%. */
static int warm_clock(struct probe_ctx *pc)
{
	struct nt_probe_args a = { .out = pc->out, .loads = 20000, .stride = (int)pc->out_words };
	double prev = 0, mhz[512];
	double t0 = nt_now_s();

	progress(pc, "warming up the SM clock");
	for (int i = 0; i < 25; i++) {
		double m;

		if (launch(pc, pc->f_spin, &a))
			return -1;
		for (int b = 0; b < pc->n_sm && b < 512; b++) {
			const unsigned long long *rec = pc->host + b * pc->out_words;

			mhz[b] = rec[3] && rec[3] != NT_REC_NONE ? rec[2] * 1e3 / rec[3] : NAN;
		}
		m = nt_median(mhz, pc->n_sm < 512 ? pc->n_sm : 512);
		pc->st->warm_clock_mhz = m;
		if (i >= 2 && fabs(m - prev) < 0.01 * m)
			break;
		prev = m;
	}
	pc->st->wall_warmup = nt_now_s() - t0;
	return 0;
}

struct chain_store {
	const struct nt_calib_opts *o;
	double *dst;
};

static void store_chain(const unsigned long long *rec, int sm, void *arg)
{
	struct chain_store *cs = arg;

	cs->dst[sm] = rep_stat(rec + NT_REC_HEAD, cs->o->chain_reps, cs->o->median,
			       cs->o->chain_loads);
}

/* A random cyclic permutation (Sattolo) of the buffer's lines: each
 * line's first word holds the device address of the next. */
static int build_chain(struct probe_ctx *pc, CUdeviceptr buf)
{
	int64_t n = pc->o->chain_bytes / NT_LINE_BYTES;
	unsigned long long *h = calloc(pc->o->chain_bytes / 8, 8);
	uint64_t *perm = malloc(n * sizeof(*perm)), s = pc->o->seed;
	int ret = -1;

	if (!h || !perm) {
		nt_err_set(pc->err, "out of memory for a %lld-byte chain", (long long)pc->o->chain_bytes);
		goto out;
	}
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = rnd(&s) % i;
		uint64_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int64_t i = 0; i < n; i++)
		h[i * (NT_LINE_BYTES / 8)] = buf + perm[i] * NT_LINE_BYTES;
	if (pc->cu->cuMemcpyHtoD(buf, h, pc->o->chain_bytes)) {
		nt_err_set(pc->err, "cannot copy the chain to the device");
		goto out;
	}
	ret = 0;
out:
	free(h);
	free(perm);
	return ret;
}

static int run_chain(struct probe_ctx *pc, CUdeviceptr buf, double *dst, double *mhz)
{
	struct chain_store cs = { pc->o, dst };
	struct nt_probe_args a = {
		.base = buf, .ticket = pc->ticket, .out = pc->out, .loads = pc->o->chain_loads,
		.reps = pc->o->chain_reps, .warm = pc->o->chain_loads, .stride = (int)pc->out_words,
	};

	return cover_all(pc, pc->f_chain, &a, "chain map", store_chain, &cs, mhz);
}

/* Line offsets: one line in each of n_lines equal slots of the footprint,
 * at a random line within the slot, so the address bits that pick the
 * L2 partition and slice vary from line to line. */
static void place_lines(struct nt_map *m, int64_t footprint, uint64_t seed)
{
	int64_t slot = footprint / m->n_line / NT_LINE_BYTES;

	for (int l = 0; l < m->n_line; l++)
		m->line_offset[l] = ((int64_t)l * slot + (int64_t)(rnd(&seed) % slot)) * NT_LINE_BYTES;
}

/* Write every line (all 128 bytes, so the L2 holds whole sectors) with
 * its own address, through the copy engine. */
static int write_lines(struct probe_ctx *pc, const struct nt_map *m, CUdeviceptr base)
{
	unsigned long long line[NT_LINE_BYTES / 8];

	for (int l = 0; l < m->n_line; l++) {
		for (size_t w = 0; w < NT_LINE_BYTES / 8; w++)
			line[w] = base + m->line_offset[l];
		NT_CU_TRY(pc->cu, pc->err, pc->cu->cuMemcpyHtoD(base + m->line_offset[l], line, sizeof(line)));
	}
	return 0;
}

struct lines_store {
	const struct nt_calib_opts *o;
	struct nt_map *m;
};

static void store_lines(const unsigned long long *rec, int sm, void *arg)
{
	struct lines_store *ls = arg;
	const struct nt_calib_opts *o = ls->o;

	for (int l = 0; l < ls->m->n_line; l++)
		*nt_map_at(ls->m->line_lat, ls->m, sm, l) =
			rep_stat(rec + NT_REC_HEAD + (size_t)l * o->line_reps, o->line_reps, o->median,
				 o->line_loads);
}

static int run_lines(struct probe_ctx *pc, struct nt_map *m, CUdeviceptr base, CUdeviceptr offs)
{
	struct lines_store ls = { pc->o, m };
	struct nt_probe_args a = {
		.base = base, .offsets = offs, .ticket = pc->ticket, .out = pc->out,
		.loads = pc->o->line_loads, .reps = pc->o->line_reps, .warm = 8,
		.n_lines = m->n_line, .stride = (int)pc->out_words,
	};

	if (write_lines(pc, m, base))
		return -1;
	return cover_all(pc, pc->f_lines, &a, "line matrix", store_lines, &ls, NULL);
}

static int run_first_touch(struct probe_ctx *pc, struct nt_map *m, CUdeviceptr base,
			   CUdeviceptr offs, CUdeviceptr cold)
{
	const struct nt_calib_opts *o = pc->o;
	int per_line = 1 + o->ft_reps, n = m->n_line;
	double *dram = malloc((size_t)pc->n_sm * n * sizeof(*dram));
	struct nt_probe_args a = {
		.base = base, .offsets = offs, .ticket = pc->ticket, .out = pc->out, .cold = cold,
		.reps = o->ft_reps, .n_lines = n, .stride = 0,
	};

	if (!dram)
		return nt_err_set(pc->err, "out of memory");
	for (int sm = 0; sm < pc->n_sm; sm++) {
		const unsigned long long *v = pc->host + NT_REC_HEAD;
		int t;

		a.target_sm = sm;
		for (t = 0; t < o->max_tries; t++) {
			if (write_lines(pc, m, base) || launch(pc, pc->f_first, &a))
				goto fail;
			if (pc->host[0] == (unsigned long long)sm)
				break;
		}
		if (t == o->max_tries) {
			nt_err_set(pc->err, "first touch: SM %d got no block in %d launches; is other "
				   "work running on the GPU?", sm, o->max_tries);
			goto fail;
		}
		for (int l = 0; l < n; l++) {
			*nt_map_at(m->ft_first, m, sm, l) = (double)v[(size_t)l * per_line];
			*nt_map_at(m->ft_repeat, m, sm, l) =
				rep_stat(v + (size_t)l * per_line + 1, o->ft_reps, o->median, 1);
			dram[(size_t)sm * n + l] = (double)v[(size_t)n * per_line + l];
		}
	}
	pc->st->dram_median = nt_median(dram, pc->n_sm * n);
	free(dram);
	return 0;
fail:
	free(dram);
	return -1;
}

/* The line-based stages: lines and first touch share one footprint. */
static int run_line_stages(struct probe_ctx *pc, struct nt_map *m)
{
	const struct nt_calib_opts *o = pc->o;
	CUdeviceptr base = 0, offs = 0, cold = 0;
	int64_t footprint = o->footprint ? o->footprint : m->gpu.l2_bytes;
	int ret = -1;
	double t;

	place_lines(m, footprint, o->seed ^ 0x5bd1e995);
	if (pc->cu->cuMemAlloc(&base, footprint) ||
	    pc->cu->cuMemAlloc(&offs, m->n_line * sizeof(int64_t)) ||
	    pc->cu->cuMemAlloc(&cold, (size_t)pc->n_sm * m->n_line * NT_LINE_BYTES)) {
		nt_err_set(pc->err, "cannot allocate a %lld-byte footprint on the device",
			   (long long)footprint);
		goto out;
	}
	if (pc->cu->cuMemcpyHtoD(offs, m->line_offset, m->n_line * sizeof(int64_t))) {
		nt_err_set(pc->err, "cannot copy line offsets to the device");
		goto out;
	}
	if (o->parts & NT_MAP_LINES) {
		progress(pc, "line matrix");
		t = nt_now_s();
		if (run_lines(pc, m, base, offs))
			goto out;
		pc->st->wall_lines = nt_now_s() - t;
	}
	if (o->parts & NT_MAP_FIRST_TOUCH) {
		progress(pc, "first touch");
		t = nt_now_s();
		if (run_first_touch(pc, m, base, offs, cold))
			goto out;
		pc->st->wall_first = nt_now_s() - t;
	}
	ret = 0;
out:
	if (cold)
		pc->cu->cuMemFree(cold);
	if (offs)
		pc->cu->cuMemFree(offs);
	if (base)
		pc->cu->cuMemFree(base);
	return ret;
}

int nt_calib_check_opts(const struct nt_calib_opts *o, int64_t l2_bytes, struct nt_err *err)
{
	int64_t footprint = o->footprint ? o->footprint : l2_bytes;

	if (o->chain_bytes < 64 * NT_LINE_BYTES || o->chain_bytes % NT_LINE_BYTES)
		return nt_err_set(err, "chain size %lld: need a multiple of %d bytes, at least %d",
				  (long long)o->chain_bytes, NT_LINE_BYTES, 64 * NT_LINE_BYTES);
	if (o->chain_loads < 1 || o->chain_reps < 1 || o->chain_reps > 64 || o->line_loads < 1 ||
	    o->line_reps < 1 || o->line_reps > 64 || o->ft_reps < 1 || o->ft_reps > 64 ||
	    o->max_tries < 1)
		return nt_err_set(err, "loads, repetitions (1..64) and tries must be positive");
	if ((o->parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH)) && (o->n_lines < 2 || o->n_lines > 4096))
		return nt_err_set(err, "line count %d: need 2..4096", o->n_lines);
	/* place_lines() puts each line in a slot of footprint / n_lines */
	if ((o->parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH)) &&
	    footprint / o->n_lines < NT_LINE_BYTES)
		return nt_err_set(err, "%s of %lld bytes cannot hold %d lines of %d bytes: use fewer "
				  "lines (--lines)", o->footprint ? "footprint" : "the L2",
				  (long long)footprint, o->n_lines, NT_LINE_BYTES);
	return 0;
}

/* The map's identity and how it is measured. */
static void map_header(struct nt_map *m, const struct nt_gpu *g, const struct nt_calib_opts *o,
		       unsigned lineparts)
{
	m->gpu = *g;
	m->params.chain_bytes = o->chain_bytes;
	m->params.chain_loads = o->chain_loads;
	m->params.chain_reps = o->chain_reps;
	m->params.line_loads = lineparts ? o->line_loads : 0;
	m->params.line_reps = lineparts ? o->line_reps : 0;
	m->params.footprint_bytes = lineparts ? (o->footprint ? o->footprint : g->l2_bytes) : 0;
	strcpy(m->params.statistic, o->median ? "median" : "min");
	m->created_at = time(NULL);
}

/* The chain map into m, and right after it the noise floor when m has
 * a noise part. */
static int chain_and_noise(struct probe_ctx *pc, CUdeviceptr chain, struct nt_map *m)
{
	double *again, t;

	progress(pc, "chain map");
	t = nt_now_s();
	if (run_chain(pc, chain, m->chain, &m->sm_clock_mhz))
		return -1;
	pc->st->wall_chain = nt_now_s() - t;
	if (!m->noise)
		return 0;
	progress(pc, "noise floor (chain map again)");
	t = nt_now_s();
	if (!(again = malloc(pc->n_sm * sizeof(*again))))
		return nt_err_set(pc->err, "out of memory");
	if (run_chain(pc, chain, again, NULL)) {
		free(again);
		return -1;
	}
	for (int s = 0; s < pc->n_sm; s++)
		m->noise[s] = fabs(again[s] - m->chain[s]);
	free(again);
	pc->st->wall_noise = nt_now_s() - t;
	return 0;
}

int nt_calib_run(struct nt_cuda *cu, int ordinal, const struct nt_calib_opts *o,
		 struct nt_map **out, struct nt_calib_stats *st, struct nt_err *err)
{
	struct probe_ctx pc = { .cu = cu, .err = err, .o = o, .st = st };
	unsigned lineparts = o->parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH);
	struct nt_map *m = NULL;
	CUdeviceptr chain = 0;
	struct nt_gpu g;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	st->dram_median = NAN;
	*out = NULL;
	if (nt_gpu_query(cu, ordinal, &g, err) || nt_calib_check_opts(o, g.l2_bytes, err))
		return -1;
	m = nt_map_new(g.sm_count, lineparts ? o->n_lines : 0, o->parts);
	if (!m)
		return nt_err_set(err, "out of memory");
	map_header(m, &g, o, lineparts);
	pc.n_sm = m->gpu.sm_count;
	if (probe_open(&pc, ordinal) || warm_clock(&pc))
		goto out;
	if (cu->cuMemAlloc(&chain, o->chain_bytes)) {
		nt_err_set(err, "cannot allocate a %lld-byte chain on the device", (long long)o->chain_bytes);
		goto out;
	}
	if (build_chain(&pc, chain))
		goto out;
	if (chain_and_noise(&pc, chain, m))
		goto out;
	if (lineparts && run_line_stages(&pc, m))
		goto out;
	*out = m;
	m = NULL;
	ret = 0;
out:
	if (chain)
		cu->cuMemFree(chain);
	probe_close(&pc);
	nt_map_free(m);
	return ret;
}

/* A device held open between chain maps (calib.h). */
struct nt_calib_dev {
	struct probe_ctx pc;
	struct nt_calib_opts o;
	struct nt_calib_stats st;	/* until the first nt_calib_chain() */
	struct nt_gpu g;
	CUdeviceptr chain;
};

int nt_calib_open(struct nt_cuda *cu, int ordinal, const struct nt_calib_opts *o,
		  struct nt_calib_dev **out, struct nt_err *err)
{
	struct nt_calib_dev *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return nt_err_set(err, "out of memory");
	d->o = *o;
	d->o.parts &= NT_MAP_NOISE;
	d->pc = (struct probe_ctx){ .cu = cu, .err = err, .o = &d->o, .st = &d->st };
	if (nt_gpu_query(cu, ordinal, &d->g, err) || nt_calib_check_opts(&d->o, d->g.l2_bytes, err))
		goto fail;
	d->pc.n_sm = d->g.sm_count;
	if (probe_open(&d->pc, ordinal))
		goto fail;
	if (cu->cuMemAlloc(&d->chain, d->o.chain_bytes)) {
		nt_err_set(err, "cannot allocate a %lld-byte chain on the device",
			   (long long)d->o.chain_bytes);
		goto fail;
	}
	if (build_chain(&d->pc, d->chain))
		goto fail;
	d->pc.err = NULL;	/* each nt_calib_chain() brings its own */
	*out = d;
	return 0;
fail:
	nt_calib_close(d);
	return -1;
}

int nt_calib_chain(struct nt_calib_dev *d, int warm, struct nt_map **out, struct nt_calib_stats *st,
		   struct nt_err *err)
{
	struct probe_ctx *pc = &d->pc;
	struct nt_map *m;
	CUresult r;

	memset(st, 0, sizeof(*st));
	st->dram_median = NAN;
	*out = NULL;
	pc->st = st;
	pc->err = err;
	/* The load generator shares the primary context; anything else may
	 * have made another one current. */
	if ((r = pc->cu->cuCtxSetCurrent(pc->ctx)))
		return nt_cuda_fail(pc->cu, err, r, "cuCtxSetCurrent");
	if (!(m = nt_map_new(pc->n_sm, 0, d->o.parts)))
		return nt_err_set(err, "out of memory");
	map_header(m, &d->g, &d->o, 0);
	if ((warm && warm_clock(pc)) || chain_and_noise(pc, d->chain, m)) {
		nt_map_free(m);
		m = NULL;
	}
	/* The caller's stats and message end with this call. */
	pc->st = &d->st;
	pc->err = NULL;
	*out = m;
	return m ? 0 : -1;
}

void nt_calib_close(struct nt_calib_dev *d)
{
	if (!d)
		return;
	if (d->chain)
		d->pc.cu->cuMemFree(d->chain);
	probe_close(&d->pc);
	free(d);
}
