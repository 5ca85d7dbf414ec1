/* calibrate's probe-cost launches (probecost.h). */
#include "gpu/probecost.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/probe.h"

extern const unsigned char nt_probe_fatbin[];

int nt_probe_cost_configs(struct nt_map_probe *cfg, int n_sm)
{
	static const int threads[] = { 32, 256, 1024 }, iters[] = { 0, 2000 };
	int n = 0;

	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++)
		for (size_t i = 0; i < sizeof(iters) / sizeof(iters[0]); i++) {
			memset(&cfg[n], 0, sizeof(cfg[n]));
			cfg[n].threads = threads[t];
			cfg[n].iters = iters[i];
			cfg[n].blocks = n_sm * NT_PROBE_BLOCKS_PER_SM;
			n++;
		}
	return n;
}

struct run {
	struct nt_cuda *cu;
	struct nt_err *err;
	CUfunction f;
	CUdeviceptr recs;
	uint64_t *host;
};

/* One launch of cfg; its records into bodies (NULL: not kept). */
static int launch(struct run *r, const struct nt_map_probe *cfg, struct nt_probe_body *bodies)
{
	size_t words = (size_t)cfg->blocks * NT_COST_WORDS;
	int iters = cfg->iters;
	void *args[] = { &r->recs, &iters };

	NT_CU_TRY(r->cu, r->err, r->cu->cuMemsetD8(r->recs, 0xff, words * 8));
	NT_CU_TRY(r->cu, r->err, r->cu->cuLaunchKernel(r->f, cfg->blocks, 1, 1, cfg->threads, 1, 1, 0, NULL,
						       args, NULL));
	NT_CU_TRY(r->cu, r->err, r->cu->cuCtxSynchronize());
	if (!bodies)
		return 0;
	NT_CU_TRY(r->cu, r->err, r->cu->cuMemcpyDtoH(r->host, r->recs, words * 8));
	for (int b = 0; b < cfg->blocks; b++) {
		const uint64_t *w = &r->host[(size_t)b * NT_COST_WORDS];
		int none = w[2] == NT_REC_NONE;

		bodies[b].start = none ? 0 : (int64_t)w[0];
		bodies[b].end = none ? 0 : (int64_t)~w[1];
		bodies[b].sm = none ? -1 : (int32_t)w[2];
		bodies[b].pad = 0;
	}
	return 0;
}

static int run_all(struct run *r, const struct nt_map_probe *cfg, int n, struct nt_probe_body **bodies)
{
	for (int i = 0; i < n; i++) {
		if (!(bodies[i] = malloc((size_t)cfg[i].blocks * sizeof(**bodies))))
			return nt_err_set(r->err, "out of memory");
		if (launch(r, &cfg[i], NULL) || launch(r, &cfg[i], bodies[i]))
			return -1;
	}
	return 0;
}

int nt_probe_cost_run(struct nt_cuda *cu, int ordinal, const struct nt_map_probe *cfg, int n,
		      struct nt_probe_body **bodies, struct nt_err *err)
{
	struct run r = { cu, err, NULL, 0, NULL };
	CUdevice dev;
	CUcontext ctx = NULL;
	CUmodule mod = NULL;
	size_t most = 0;
	int ret = -1;
	CUresult e;

	for (int i = 0; i < n; i++) {
		bodies[i] = NULL;
		if ((size_t)cfg[i].blocks > most)
			most = cfg[i].blocks;
	}
	if ((e = cu->cuDeviceGet(&dev, ordinal)) || (e = cu->cuDevicePrimaryCtxRetain(&ctx, dev))) {
		nt_cuda_fail(cu, err, e, "probe cost: opening the device");
		return -1;
	}
	if ((e = cu->cuCtxSetCurrent(ctx)) || (e = cu->cuModuleLoadData(&mod, nt_probe_fatbin)) ||
	    (e = cu->cuModuleGetFunction(&r.f, mod, "nt_probe_cost")) ||
	    (e = cu->cuMemAlloc(&r.recs, most * NT_COST_WORDS * 8))) {
		nt_cuda_fail(cu, err, e, "probe cost: loading the kernel");
		goto out;
	}
	if (!(r.host = malloc(most * NT_COST_WORDS * 8))) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	ret = run_all(&r, cfg, n, bodies);
out:
	if (ret)
		for (int i = 0; i < n; i++)
			free(bodies[i]), bodies[i] = NULL;
	free(r.host);
	if (r.recs)
		cu->cuMemFree(r.recs);
	if (mod)
		cu->cuModuleUnload(mod);
	cu->cuDevicePrimaryCtxRelease(dev);
	return ret;
}
