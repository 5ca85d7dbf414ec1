/* The device side of `nucatrace localize --eval`: buffers and kernels
 * (localize.h; the kernels are kernels/localize_eval.cu). */
#include "analysis/localize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/calib.h"
#include "kernels/localize_eval.h"
#include "kernels/probe.h"

extern const unsigned char nt_loc_fatbin[];

struct nt_loc_gpu {
	struct nt_cuda *cu;
	struct nt_err *err;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f_eval, f_spin;
	unsigned smem[2];	/* dynamic shared memory of f_eval, f_spin */
	int n_sm;
	CUdeviceptr ticket, out, chain, footprint, table;
	double clock_mhz;
	double bias;		/* cycles per load added to the templates (probe_bias) */
	struct nt_loc_eval_rec *host;
};

static int launch(struct nt_loc_gpu *g, CUfunction f, unsigned smem, struct nt_loc_eval_args *a)
{
	void *params[] = { a };

	NT_CU_TRY(g->cu, g->err, g->cu->cuMemsetD8(g->ticket, 0, 2 * sizeof(unsigned)));
	NT_CU_TRY(g->cu, g->err, g->cu->cuMemsetD8(g->out, 0xff, (size_t)g->n_sm * sizeof(*g->host)));
	NT_CU_TRY(g->cu, g->err, g->cu->cuLaunchKernel(f, g->n_sm, 1, 1, NT_LOC_EVAL_THREADS, 1, 1, smem, NULL,
					params, NULL));
	NT_CU_TRY(g->cu, g->err, g->cu->cuCtxSynchronize());
	NT_CU_TRY(g->cu, g->err, g->cu->cuMemcpyDtoH(g->host, g->out, (size_t)g->n_sm * sizeof(*g->host)));
	return 0;
}

/* Each block alone on its SM: all the shared memory a block may have,
 * less the kernel's static shared memory (the probe's 8-byte sink). */
static int one_block_per_sm(struct nt_loc_gpu *g, CUfunction f, unsigned *smem)
{
	int optin, stat, blocks;

	NT_CU_TRY(g->cu, g->err, g->cu->cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
					      g->dev));
	NT_CU_TRY(g->cu, g->err, g->cu->cuFuncGetAttribute(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
	*smem = (unsigned)(optin - stat);
	NT_CU_TRY(g->cu, g->err, g->cu->cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)*smem));
	NT_CU_TRY(g->cu, g->err, g->cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, NT_LOC_EVAL_THREADS,
								     *smem));
	if (blocks != 1)
		return nt_err_set(g->err, "localize kernels fit %d blocks per SM with %u bytes of shared "
				  "memory; need exactly 1", blocks, *smem);
	return 0;
}

/* As calibrate's warm-up: spin until two successive clock readings agree
 * within 1%. */
static int warm_clock(struct nt_loc_gpu *g)
{
	struct nt_loc_eval_args a = { .out = g->out, .ticket = g->ticket, .spin_us = 20000 };
	double prev = 0, *mhz = malloc((size_t)g->n_sm * sizeof(*mhz));

	if (!mhz)
		return nt_err_set(g->err, "out of memory");
	for (int i = 0; i < 25; i++) {
		double m;

		if (launch(g, g->f_spin, g->smem[1], &a)) {
			free(mhz);
			return -1;
		}
		for (int b = 0; b < g->n_sm; b++)
			mhz[b] = g->host[b].smid0 != NT_LOC_REC_NONE && g->host[b].ns ?
				 g->host[b].cycles * 1e3 / g->host[b].ns : NAN;
		m = nt_median(mhz, g->n_sm);
		g->clock_mhz = m;
		if (i >= 2 && fabs(m - prev) < 0.01 * m)
			break;
		prev = m;
	}
	free(mhz);
	return 0;
}

/* Every line of the table holds its own address, all 128 bytes of it. */
static int write_lines(struct nt_loc_gpu *g, const struct nt_loc_table *t)
{
	unsigned long long line[NT_LINE_BYTES / 8];

	for (int k = 0; k < t->n_line; k++) {
		for (size_t w = 0; w < NT_LINE_BYTES / 8; w++)
			line[w] = g->footprint + t->offset[k];
		NT_CU_TRY(g->cu, g->err, g->cu->cuMemcpyHtoD(g->footprint + t->offset[k], line, sizeof(line)));
	}
	return 0;
}

/* The size of calibrate's record buffer for map m (calib.c, probe_open):
 * allocated in its place so that the footprint after it lands where
 * calibrate's did. */
static size_t calib_out_bytes(const struct nt_map *m)
{
	struct nt_calib_opts o;
	size_t words = NT_REC_HEAD + (size_t)m->params.chain_reps;

	nt_calib_defaults(&o);
	if (m->line_lat && words < NT_REC_HEAD + (size_t)m->n_line * m->params.line_reps)
		words = NT_REC_HEAD + (size_t)m->n_line * m->params.line_reps;
	if (m->ft_first && words < NT_REC_HEAD + (size_t)m->n_line * (o.ft_reps + 2))
		words = NT_REC_HEAD + (size_t)m->n_line * (o.ft_reps + 2);
	return (size_t)m->n_sm * words * 8;
}

static int gpu_open(struct nt_loc_gpu *g, int ordinal, const struct nt_map *m, struct nt_loc_table *t)
{
	struct nt_cuda *cu = g->cu;
	size_t out_bytes = calib_out_bytes(m);
	int64_t footprint = m->params.footprint_bytes;

	NT_CU_TRY(g->cu, g->err, cu->cuDeviceGet(&g->dev, ordinal));
	NT_CU_TRY(g->cu, g->err, cu->cuDeviceGetAttribute(&g->n_sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev));
	if (g->n_sm != t->n_sm)
		return nt_err_set(g->err, "device %d has %d SMs, the map %d", ordinal, g->n_sm, t->n_sm);
	for (int k = 0; k < t->n_line; k++)
		if (t->offset[k] % NT_LINE_BYTES || (int64_t)t->offset[k] + NT_LINE_BYTES > footprint)
			return nt_err_set(g->err, "line offset %llu is not a line of the map's %lld-byte "
					  "footprint", t->offset[k], (long long)footprint);
	NT_CU_TRY(g->cu, g->err, cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev));
	NT_CU_TRY(g->cu, g->err, cu->cuCtxSetCurrent(g->ctx));
	NT_CU_TRY(g->cu, g->err, cu->cuModuleLoadData(&g->mod, nt_loc_fatbin));
	NT_CU_TRY(g->cu, g->err, cu->cuModuleGetFunction(&g->f_eval, g->mod, "nt_loc_eval"));
	NT_CU_TRY(g->cu, g->err, cu->cuModuleGetFunction(&g->f_spin, g->mod, "nt_loc_spin"));
	if (one_block_per_sm(g, g->f_eval, &g->smem[0]) || one_block_per_sm(g, g->f_spin, &g->smem[1]))
		return -1;
	g->host = malloc((size_t)g->n_sm * sizeof(*g->host));
	if (!g->host)
		return nt_err_set(g->err, "out of memory");
	/* calibrate's order: ticket, records, clock warm-up, chain, footprint. */
	if (out_bytes < (size_t)g->n_sm * sizeof(*g->host))
		out_bytes = (size_t)g->n_sm * sizeof(*g->host);
	NT_CU_TRY(g->cu, g->err, cu->cuMemAlloc(&g->ticket, 64));
	NT_CU_TRY(g->cu, g->err, cu->cuMemAlloc(&g->out, out_bytes));
	if (warm_clock(g))
		return -1;
	NT_CU_TRY(g->cu, g->err, cu->cuMemAlloc(&g->chain, (size_t)m->params.chain_bytes));
	if (cu->cuMemAlloc(&g->footprint, (size_t)footprint))
		return nt_err_set(g->err, "cannot allocate the map's %lld-byte footprint on device %d",
				  (long long)footprint, ordinal);
	if (write_lines(g, t))
		return -1;
	t->base = g->footprint;
	NT_CU_TRY(g->cu, g->err, cu->cuMemAlloc(&g->table, sizeof(*t)));
	NT_CU_TRY(g->cu, g->err, cu->cuMemcpyHtoD(g->table, t, sizeof(*t)));
	return 0;
}

/* The probe reads more cycles per load than calibrate did, the same for
 * every SM and line (its own timing around 64 loads: +4.66 cycles, 5th
 * to 95th percentile of SMs 4.59 - 4.71, on GPU-443e086d, 2026-12-01),
 * and the classifier's offset prior (tau) is far narrower than that, so
 * uncorrected it picks the TPC whose map happens to sit 4.7 cycles up.
 * Measured here, on the host's side, where %smid may be read: one launch
 * with the blocks taking turns, the median over SMs of the median over
 * lines of probe - map, added to every template and the table uploaded
 * again.  The kernel-side probe still never reads %smid. */
static int probe_bias(struct nt_loc_gpu *g, struct nt_loc_table *t)
{
	struct nt_loc_eval_args a = { .table = g->table, .ticket = g->ticket, .out = g->out, .serial = 1 };
	double *v = malloc((size_t)g->n_sm * sizeof(*v)), e[NT_LOC_MAX_LINES];
	int n = 0;

	if (!v)
		return nt_err_set(g->err, "out of memory");
	if (launch(g, g->f_eval, g->smem[0], &a)) {
		free(v);
		return -1;
	}
	for (int b = 0; b < g->n_sm; b++) {
		const struct nt_loc_eval_rec *r = &g->host[b];

		if (r->smid0 == NT_LOC_REC_NONE || r->smid0 != r->smid1 ||
		    r->smid0 >= (unsigned long long)t->n_sm || t->group[r->smid0] == NT_LOC_NO_GROUP)
			continue;
		for (int k = 0; k < t->n_line; k++)
			e[k] = r->res.x[k] - t->tmpl[r->smid0][k];
		v[n++] = nt_median(e, t->n_line);
	}
	if (!n) {
		free(v);
		return nt_err_set(g->err, "the probe ran on no SM of the map");
	}
	g->bias = nt_median(v, n);
	free(v);
	for (int s = 0; s < t->n_sm; s++)
		for (int k = 0; t->group[s] != NT_LOC_NO_GROUP && k < t->n_line; k++)
			t->tmpl[s][k] += (float)g->bias;
	NT_CU_TRY(g->cu, g->err, g->cu->cuMemcpyHtoD(g->table, t, sizeof(*t)));
	return 0;
}

double nt_loc_gpu_bias(const struct nt_loc_gpu *g)
{
	return g->bias;
}

int nt_loc_gpu_open(struct nt_cuda *cu, int ordinal, const struct nt_map *m,
		    struct nt_loc_table *t, struct nt_loc_gpu **out, struct nt_err *err)
{
	struct nt_loc_gpu *g;

	*out = NULL;
	if (nt_loc_check(t, err))
		return -1;
	if (m->params.chain_bytes < NT_LINE_BYTES || m->params.footprint_bytes < NT_LINE_BYTES)
		return nt_err_set(err, "the map does not say its chain and footprint sizes");
	g = calloc(1, sizeof(*g));
	if (!g)
		return nt_err_set(err, "out of memory");
	g->cu = cu;
	g->err = err;
	if (gpu_open(g, ordinal, m, t) || probe_bias(g, t)) {
		nt_loc_gpu_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

int nt_loc_gpu_run(struct nt_loc_gpu *g, int serial, struct nt_loc_eval_rec *recs,
		   struct nt_err *err)
{
	struct nt_loc_eval_args a = {
		.table = g->table, .ticket = g->ticket, .out = g->out, .serial = serial,
	};

	g->err = err;
	if (launch(g, g->f_eval, g->smem[0], &a))
		return -1;
	memcpy(recs, g->host, (size_t)g->n_sm * sizeof(*recs));
	return 0;
}

double nt_loc_gpu_clock_mhz(const struct nt_loc_gpu *g)
{
	return g->clock_mhz;
}

static void mem_free(struct nt_cuda *cu, CUdeviceptr p)
{
	if (p)
		cu->cuMemFree(p);
}

void nt_loc_gpu_close(struct nt_loc_gpu *g)
{
	if (!g)
		return;
	mem_free(g->cu, g->table);
	mem_free(g->cu, g->footprint);
	mem_free(g->cu, g->chain);
	mem_free(g->cu, g->out);
	mem_free(g->cu, g->ticket);
	if (g->mod)
		g->cu->cuModuleUnload(g->mod);
	if (g->ctx)
		g->cu->cuDevicePrimaryCtxRelease(g->dev);
	free(g->host);
	free(g);
}
