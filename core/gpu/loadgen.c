/* Runs the load kernel of kernels/load.cu on one GPU (loadgen.h). */
#include "util/clock.h"
#include "gpu/loadgen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/load.h"
#include "map/map.h"

extern const unsigned char nt_load_fatbin[];

struct nt_loadgen {
	struct nt_cuda *cu;
	struct nt_loadgen_info info;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	int n_sm;
	CUdeviceptr buf, out;
	unsigned long long *host;	/* info.blocks records */
	double *mhz, *secs;		/* [info.blocks] scratch */
	char *seen;			/* [n_sm] */
};

static int setup(struct nt_loadgen *g, int ordinal, int64_t bytes, struct nt_err *err)
{
	struct nt_cuda *cu = g->cu;
	struct nt_loadgen_info *in = &g->info;
	int l2, per_sm;
	size_t rec_bytes;

	NT_CU_TRY(g->cu, err, cu->cuDeviceGet(&g->dev, ordinal));
	NT_CU_TRY(g->cu, err, cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev));
	NT_CU_TRY(g->cu, err, cu->cuCtxSetCurrent(g->ctx));
	NT_CU_TRY(g->cu, err, cu->cuDeviceGetAttribute(&g->n_sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
						g->dev));
	NT_CU_TRY(g->cu, err, cu->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g->dev));
	NT_CU_TRY(g->cu, err, cu->cuDeviceGetAttribute(&in->max_sm_threads,
						CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
						g->dev));
	NT_CU_TRY(g->cu, err, cu->cuModuleLoadData(&g->mod, nt_load_fatbin));
	NT_CU_TRY(g->cu, err, cu->cuModuleGetFunction(&g->f, g->mod, "nt_load"));
	NT_CU_TRY(g->cu, err, cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, g->f,
								       NT_LOAD_THREADS, 0));
	if (per_sm < 1)
		return nt_err_set(err, "the load kernel fits no block of %d threads on an SM",
				  NT_LOAD_THREADS);
	in->threads = NT_LOAD_THREADS;
	in->blocks_per_sm = per_sm;
	in->blocks = per_sm * g->n_sm;
	if (!bytes)
		bytes = (int64_t)l2 * NT_LOADGEN_L2_TIMES;
	if (bytes < NT_LOADGEN_MIN_BYTES)
		bytes = NT_LOADGEN_MIN_BYTES;
	/* Whole float4s, and at least two per thread (the kernel's wrap). */
	bytes &= ~(int64_t)15;
	if (bytes / 16 < 2LL * in->blocks * in->threads)
		bytes = 2LL * in->blocks * in->threads * 16;
	in->bytes = bytes;
	rec_bytes = (size_t)in->blocks * NT_LOAD_REC * 8;
	g->host = malloc(rec_bytes);
	g->mhz = malloc(in->blocks * sizeof(*g->mhz));
	g->secs = malloc(in->blocks * sizeof(*g->secs));
	g->seen = malloc(g->n_sm);
	if (!g->host || !g->mhz || !g->secs || !g->seen)
		return nt_err_set(err, "out of memory");
	if (cu->cuMemAlloc(&g->buf, bytes))
		return nt_err_set(err, "cannot allocate %lld bytes on the device for the load",
				  (long long)bytes);
	NT_CU_TRY(g->cu, err, cu->cuMemAlloc(&g->out, rec_bytes));
	NT_CU_TRY(g->cu, err, cu->cuMemsetD8(g->buf, 0, bytes));
	NT_CU_TRY(g->cu, err, cu->cuCtxSynchronize());
	return 0;
}

int nt_loadgen_open(struct nt_cuda *cu, int ordinal, int64_t bytes, double launch_s,
		    struct nt_loadgen **out, struct nt_err *err)
{
	struct nt_loadgen *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return nt_err_set(err, "out of memory");
	g->cu = cu;
	g->info.launch_s = launch_s > 0 ? (launch_s < 1 ? launch_s : 1) : NT_LOADGEN_LAUNCH_S;
	if (setup(g, ordinal, bytes, err)) {
		nt_loadgen_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

const struct nt_loadgen_info *nt_loadgen_info(const struct nt_loadgen *g)
{
	return &g->info;
}

/* One launch of `seconds`, and what its blocks say into st. */
static int launch(struct nt_loadgen *g, double seconds, struct nt_loadgen_stats *st,
		  struct nt_err *err)
{
	struct nt_load_args a = { .buf = g->buf, .n4 = (unsigned long long)(g->info.bytes / 16),
				  .ns = (unsigned long long)(seconds * 1e9), .out = g->out };
	void *params[] = { &a };
	size_t rec_bytes = (size_t)g->info.blocks * NT_LOAD_REC * 8;
	int sms = 0;
	double mhz;

	NT_CU_TRY(g->cu, err, g->cu->cuMemsetD8(g->out, 0xff, rec_bytes));
	NT_CU_TRY(g->cu, err, g->cu->cuLaunchKernel(g->f, g->info.blocks, 1, 1, g->info.threads, 1, 1, 0,
					     NULL, params, NULL));
	NT_CU_TRY(g->cu, err, g->cu->cuCtxSynchronize());
	NT_CU_TRY(g->cu, err, g->cu->cuMemcpyDtoH(g->host, g->out, rec_bytes));
	st->launches++;
	memset(g->seen, 0, g->n_sm);
	for (int b = 0; b < g->info.blocks; b++) {
		const unsigned long long *rec = g->host + (size_t)b * NT_LOAD_REC;

		g->mhz[b] = g->secs[b] = NAN;
		if (rec[0] == ~0ULL)
			continue;
		if (rec[0] < (unsigned long long)g->n_sm && !g->seen[rec[0]])
			g->seen[rec[0]] = 1, sms++;
		if (rec[2])
			g->mhz[b] = (double)rec[1] / (double)rec[2] * 1e3;
		g->secs[b] = rec[2] * 1e-9;
		st->bytes += (double)rec[3] * NT_LOAD_STEP_BYTES;
		st->fmas += (double)rec[3] * NT_LOAD_STEP_FMAS;
	}
	if (sms < st->sms_min)
		st->sms_min = sms;
	mhz = nt_median(g->mhz, g->info.blocks);
	st->clock_mhz = mhz;
	if (!isnan(mhz)) {
		if (isnan(st->clock_min_mhz) || mhz < st->clock_min_mhz)
			st->clock_min_mhz = mhz;
		if (isnan(st->clock_max_mhz) || mhz > st->clock_max_mhz)
			st->clock_max_mhz = mhz;
	}
	mhz = nt_median(g->secs, g->info.blocks);
	if (!isnan(mhz))
		st->gpu_seconds += mhz;
	return 0;
}

int nt_loadgen_run(struct nt_loadgen *g, double seconds, struct nt_loadgen_stats *st,
		   struct nt_err *err)
{
	double t0 = nt_now_s(), left;

	memset(st, 0, sizeof(*st));
	st->sms_min = g->n_sm;
	st->clock_mhz = st->clock_min_mhz = st->clock_max_mhz = NAN;
	NT_CU_TRY(g->cu, err, g->cu->cuCtxSetCurrent(g->ctx));
	/* Launches shorter than a millisecond are not worth their overhead. */
	while ((left = seconds - (nt_now_s() - t0)) >= 1e-3)
		if (launch(g, left < g->info.launch_s ? left : g->info.launch_s, st, err))
			return -1;
	st->seconds = nt_now_s() - t0;
	return 0;
}

void nt_loadgen_close(struct nt_loadgen *g)
{
	if (!g)
		return;
	if (g->ctx) {
		g->cu->cuCtxSetCurrent(g->ctx);
		if (g->out)
			g->cu->cuMemFree(g->out);
		if (g->buf)
			g->cu->cuMemFree(g->buf);
		if (g->mod)
			g->cu->cuModuleUnload(g->mod);
		g->cu->cuDevicePrimaryCtxRelease(g->dev);
	}
	free(g->host);
	free(g->mhz);
	free(g->secs);
	free(g->seen);
	free(g);
}
