/*
 * The "kernels" backend: the CUPTI Activity API's concurrent-kernel
 * records, one per launch, for every launch: start and end on the GPU,
 * grid, block, cluster, registers, shared memory, stream, correlation and
 * graph ids.  No per-block data; the lowest overhead.  CUPTI fills
 * buffers we hand it and gives them back from its own thread; the records
 * are queued for the collector's thread, which writes them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "backend.h"
#include "collector.h"

#define BUFFER_BYTES (4u << 20)

static struct {
	void *lib;
#define NT_CUPTI(name) __typeof__(name) *name;
#include "cupti.def"
#undef NT_CUPTI
} cupti;

static const char *cupti_error(CUptiResult r)
{
	static _Thread_local char buf[48];
	const char *s = NULL;

	if (cupti.cuptiGetResultString && !cupti.cuptiGetResultString(r, &s) && s)
		return s;
	snprintf(buf, sizeof(buf), "CUPTI error %d", (int)r);
	return buf;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int saved = errno;

	nt_collector_touch();
	/* Zeroed here (calloc maps fresh zero pages), so that CUPTI need not
	 * clear the buffer in the program's thread. */
	*buffer = calloc(1, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0;
	*max_records = 0;
	errno = saved;
}

static void kernel_record(const CUpti_ActivityKernel10 *k)
{
	struct nt_kernel_record r = { 0 };

	r.l.kernel = k->name ? k->name : "?";
	r.l.device = (int)k->deviceId;
	r.l.context = k->contextId;
	r.l.stream = k->streamId;
	r.l.grid[0] = k->gridX, r.l.grid[1] = k->gridY, r.l.grid[2] = k->gridZ;
	r.l.block[0] = k->blockX, r.l.block[1] = k->blockY, r.l.block[2] = k->blockZ;
	r.l.cluster[0] = k->clusterX, r.l.cluster[1] = k->clusterY, r.l.cluster[2] = k->clusterZ;
	r.l.dyn_smem = k->dynamicSharedMemory;
	r.start_ns = k->start;
	r.end_ns = k->end;
	r.correlation = k->correlationId;
	r.l.graph = k->graphId ? (int64_t)k->graphId : -1;
	r.l.graph_node = k->graphNodeId ? (int64_t)k->graphNodeId : -1;
	r.l.graph_launch = -1;
	r.registers = k->registersPerThread;
	r.static_smem = k->staticSharedMemory;
	r.dyn_smem = k->dynamicSharedMemory;
	r.local_bytes = k->localMemoryPerThread;
	nt_collector_kernel(&r);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	int saved = errno;

	(void)ctx, (void)stream, (void)size;
	while (cupti.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			kernel_record((const CUpti_ActivityKernel10 *)rec);
	free(buffer);
	errno = saved;
}

/* $NUCATRACE_CUPTI_LIB, else the toolkit's usual places, else the
 * loader's search path. */
static void *load_library(char *tried, size_t len)
{
	static const char *const rel[] = { "extras/CUPTI/lib64/libcupti.so.13",
					   "targets/x86_64-linux/lib/libcupti.so.13", "lib64/libcupti.so.13" };
	const char *env = getenv("NUCATRACE_CUPTI_LIB"), *home = getenv("CUDA_HOME");
	char path[4096];
	void *h;

	if (env && *env) {
		snprintf(tried, len, "%s", env);
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", home && *home ? home : "/usr/local/cuda", rel[i]);
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	snprintf(tried, len, "%s/{extras/CUPTI/lib64,targets/x86_64-linux/lib,lib64}/libcupti.so.13, "
		 "libcupti.so.13", home && *home ? home : "/usr/local/cuda");
	return dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
}

static int cupti_start(const struct nt_config *cfg, struct nt_err *err)
{
	char tried[1024] = "";
	CUptiResult r;

	(void)cfg;
	cupti.lib = load_library(tried, sizeof(tried));
	if (!cupti.lib)
		return nt_err_set(err, "no CUPTI library (tried %s)", tried);
#define NT_CUPTI(name)                                                       \
	*(void **)&cupti.name = dlsym(cupti.lib, #name);                     \
	if (!cupti.name)                                                     \
		return nt_err_set(err, "the CUPTI library lacks %s", #name);
#include "cupti.def"
#undef NT_CUPTI
	{
		uint8_t zeroed = 1;
		size_t len = sizeof(zeroed);

		/* Not fatal: CUPTI then zeroes buffers itself. */
		cupti.cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &len, &zeroed);
	}
	if ((r = cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) ||
	    (r = cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) ||
	    /* Records reach the trace at least every second, not only at exit. */
	    (r = cupti.cuptiActivityFlushPeriod(1000))) {
		/* Leave nothing half-started. */
		cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		return nt_err_set(err, "cannot enable CUPTI kernel records: %s%s", cupti_error(r),
				  r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
					  ? " (another profiler or the Compute Sanitizer is attached)" : "");
	}
	return 0;
}

/* At exit: hand over what CUPTI still holds, finished or not. */
static void cupti_stop(void)
{
	if (cupti.cuptiActivityFlushAll)
		cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

const struct nt_backend nt_backend_kernels = {
	.name = "kernels",
	.start = cupti_start,
	.stop = cupti_stop,
};
