/*
 * The "blocks" backend: the Compute Sanitizer patching API inserts our
 * device callbacks (kernels/patch.cu) at every block's entry and exit.
 *
 * Per context we keep one record buffer: scratch in device memory and
 * records in pinned host memory, both buffer_blocks long, handed out in
 * chunks of CHUNK blocks to traced launches; plus NDESC launch
 * descriptors in device memory.  A launch that finds no room is dropped
 * (counted), never waited for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

/* The driver API's parameter structs (cuLaunchKernel_params ...), which
 * the sanitizer's API callbacks hand over: NVIDIA's generated_cuda_meta.h,
 * included through cupti.h, which defines the old types it needs.  No
 * CUPTI function is called from this backend. */
#include <cupti.h>

#include "backend.h"
#include "collector.h"
#include "gpu/cudrv.h"
#include "kattrs.h"
#include "sanitizer_abi.h"

#define CHUNK 64
#define NDESC 1024

extern const unsigned char nt_patch_fatbin[];

static struct {
	void *lib;
#define NT_SAN(name, params) nt_san_result (*name) params;
#include "sanitizer.def"
#undef NT_SAN
	nt_san_subscriber sub;
	uint32_t buffer_blocks;
	pthread_mutex_t lock;
	unsigned tag;
} san = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct ctx_buf {
	CUcontext ctx;
	int broken;			/* allocation failed: trace nothing here */
	int patches;			/* patch module loaded into the context */
	uint32_t chunks;
	unsigned char *chunk_used;
	unsigned char desc_used[NDESC];
	struct nt_blk_scratch *scratch;
	struct nt_block_rec *rec;
	struct nt_launch_desc *desc;
	UT_hash_handle hh;
};

struct mod_state {
	CUmodule mod;
	int patched;
	UT_hash_handle hh;
};

/* What a traced launch holds, given back by release(). */
struct hold {
	struct ctx_buf *cb;
	uint32_t chunk, nchunks, desc;
};

/* The dynamic shared memory of the launch this thread is making: the
 * driver API callback (entry of cuLaunchKernel & co.) comes just before
 * the launch callback, on the same thread. */
static _Thread_local int64_t pending_dyn_smem = -1;

static struct ctx_buf *contexts;
static struct mod_state *modules;

static const char *san_error(nt_san_result r)
{
	static _Thread_local char buf[32];
	const char *s = NULL;

	if (san.sanitizerGetResultString && !san.sanitizerGetResultString(r, &s) && s)
		return s;
	snprintf(buf, sizeof(buf), "sanitizer error %d", (int)r);
	return buf;
}

static struct ctx_buf *ctx_get(CUcontext ctx)
{
	struct ctx_buf *cb;

	HASH_FIND_PTR(contexts, &ctx, cb);
	if (cb)
		return cb;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return NULL;
	cb->ctx = ctx;
	HASH_ADD_PTR(contexts, ctx, cb);
	return cb;
}

/* A context's buffers, zeroed on `stream` and ready on every stream once
 * this returns.  Made when the context is created (on_context_created),
 * when nothing of the program's is queued yet, so the wait is for our own
 * memsets; the first traced launch makes them, on its stream, only for a
 * context created before we subscribed. */
static int ctx_buffers(struct ctx_buf *cb, nt_san_stream stream)
{
	size_t n = san.buffer_blocks;
	nt_san_result r;

	if (cb->rec || cb->broken)
		return cb->broken ? -1 : 0;
	cb->chunks = (uint32_t)(n / CHUNK);
	cb->chunk_used = calloc(cb->chunks, 1);
	if (!cb->chunk_used ||
	    (r = san.sanitizerAlloc(cb->ctx, (void **)&cb->scratch, n * sizeof(*cb->scratch))) ||
	    (r = san.sanitizerMemset(cb->scratch, 0, n * sizeof(*cb->scratch), stream)) ||
	    (r = san.sanitizerAllocHost(cb->ctx, (void **)&cb->rec, n * sizeof(*cb->rec))) ||
	    (r = san.sanitizerAlloc(cb->ctx, (void **)&cb->desc, NDESC * sizeof(*cb->desc))) ||
	    /* A descriptor read before its copy lands is all zero: the
	     * device callbacks then do nothing. */
	    (r = san.sanitizerMemset(cb->desc, 0, NDESC * sizeof(*cb->desc), stream)) ||
	    /* Once per context: zeroed scratch and descriptors must be in
	     * place before launches on any stream use them. */
	    (r = san.sanitizerStreamSynchronize(stream))) {
		nt_warn("cannot allocate block record buffers (%zu blocks); this context is not "
			"traced", n);
		cb->broken = 1;
		return -1;
	}
	memset(cb->rec, 0, n * sizeof(*cb->rec));
	return 0;
}

/* First fit over the chunk map; -1 when no run of nchunks is free. */
static int64_t chunks_take(struct ctx_buf *cb, uint32_t nchunks)
{
	uint32_t run = 0;

	for (uint32_t i = 0; i < cb->chunks; i++) {
		run = cb->chunk_used[i] ? 0 : run + 1;
		if (run == nchunks) {
			uint32_t first = i + 1 - nchunks;

			memset(cb->chunk_used + first, 1, nchunks);
			return first;
		}
	}
	return -1;
}

static int desc_take(struct ctx_buf *cb)
{
	for (int i = 0; i < NDESC; i++)
		if (!cb->desc_used[i]) {
			cb->desc_used[i] = 1;
			return i;
		}
	return -1;
}

static void release(void *cookie)
{
	struct hold *h = cookie;

	pthread_mutex_lock(&san.lock);
	memset(h->cb->chunk_used + h->chunk, 0, h->nchunks);
	h->cb->desc_used[h->desc] = 0;
	pthread_mutex_unlock(&san.lock);
	free(h);
}

static void on_module(const struct nt_san_module_data *d)
{
	struct mod_state *ms;
	struct ctx_buf *cb;
	nt_san_result r = NT_SAN_SUCCESS;

	nt_kattrs_add_module(d->pCubin, d->cubinSize);
	pthread_mutex_lock(&san.lock);
	cb = ctx_get(d->context);
	ms = calloc(1, sizeof(*ms));
	if (!cb || !ms)
		goto out;
	ms->mod = d->module;
	if (!cb->patches && !(r = san.sanitizerAddPatches(nt_patch_fatbin, d->context)))
		cb->patches = 1;
	if (cb->patches &&
	    !(r = san.sanitizerPatchInstructions(NT_SAN_INSTRUCTION_BLOCK_ENTER, d->module, "nt_block_enter")) &&
	    !(r = san.sanitizerPatchInstructions(NT_SAN_INSTRUCTION_BLOCK_EXIT, d->module, "nt_block_exit")) &&
	    !(r = san.sanitizerPatchModule(d->module)))
		ms->patched = 1;
	if (!ms->patched)
		nt_warn("cannot instrument a CUDA module (%s); its kernels are not traced", san_error(r));
	HASH_ADD_PTR(modules, mod, ms);
	ms = NULL;
out:
	free(ms);
	pthread_mutex_unlock(&san.lock);
}

static void on_module_unload(const struct nt_san_module_data *d)
{
	struct mod_state *ms;

	pthread_mutex_lock(&san.lock);
	HASH_FIND_PTR(modules, &d->module, ms);
	if (ms) {
		HASH_DEL(modules, ms);
		free(ms);
	}
	pthread_mutex_unlock(&san.lock);
}

static void launch_info(const struct nt_san_launch_data *d, struct nt_launch_info *l)
{
	l->kernel = d->functionName ? d->functionName : "?";
	l->device = (int)d->device;
	l->context = (uint64_t)(uintptr_t)d->context;
	l->stream = (uint64_t)(uintptr_t)d->stream;
	l->grid[0] = d->gridDim_x, l->grid[1] = d->gridDim_y, l->grid[2] = d->gridDim_z;
	l->block[0] = d->blockDim_x, l->block[1] = d->blockDim_y, l->block[2] = d->blockDim_z;
	l->cluster[0] = d->clusterDim_x, l->cluster[1] = d->clusterDim_y;
	l->cluster[2] = d->clusterDim_z;
	l->dyn_smem = pending_dyn_smem;
	pending_dyn_smem = -1;
}

static void on_driver_call(uint32_t cbid, const struct nt_san_api_data *d)
{
	const void *p = d->functionParams;

	if (d->callbackSite != NT_SAN_API_ENTER || !p)
		return;
	switch (cbid) {
	case NT_SAN_CBID_DRIVER_cuLaunchKernel:
		pending_dyn_smem = ((const cuLaunchKernel_params *)p)->sharedMemBytes;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz:
		pending_dyn_smem = ((const cuLaunchKernel_ptsz_params *)p)->sharedMemBytes;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel:
		pending_dyn_smem = ((const cuLaunchCooperativeKernel_params *)p)->sharedMemBytes;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz:
		pending_dyn_smem = ((const cuLaunchCooperativeKernel_ptsz_params *)p)->sharedMemBytes;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchKernelEx: {
		const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)p)->config;

		pending_dyn_smem = c ? (int64_t)c->sharedMemBytes : -1;
		break;
	}
	case NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz: {
		const CUlaunchConfig *c = ((const cuLaunchKernelEx_ptsz_params *)p)->config;

		pending_dyn_smem = c ? (int64_t)c->sharedMemBytes : -1;
		break;
	}
	}
}

/* Set up a traced launch; the reason it cannot be traced, or NULL. */
static const char *trace_launch(const struct nt_san_launch_data *d, const struct nt_launch_info *l,
				uint64_t seq)
{
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	struct nt_launch_desc desc;
	struct mod_state *ms;
	struct ctx_buf *cb;
	struct hold *h;
	int64_t chunk;
	int slot;

	HASH_FIND_PTR(modules, &d->module, ms);
	if (!ms || !ms->patched)
		return "module not instrumented";
	cb = ctx_get(d->context);
	if (!cb || ctx_buffers(cb, d->hStream))
		return "no record buffer";
	if (blocks == 0 || blocks > (uint64_t)cb->chunks * CHUNK)
		return "grid larger than the record buffer (NUCATRACE_BUFFER_BLOCKS)";
	h = malloc(sizeof(*h));
	if (!h)
		return "out of memory";
	h->cb = cb;
	h->nchunks = (uint32_t)((blocks + CHUNK - 1) / CHUNK);
	chunk = chunks_take(cb, h->nchunks);
	slot = chunk < 0 ? -1 : desc_take(cb);
	if (slot < 0) {
		if (chunk >= 0)
			memset(cb->chunk_used + chunk, 0, h->nchunks);
		free(h);
		return "record buffer full";
	}
	h->chunk = (uint32_t)chunk;
	h->desc = (uint32_t)slot;
	if (++san.tag == 0)
		san.tag = 1;
	desc.scratch = cb->scratch + chunk * CHUNK;
	desc.rec = cb->rec + chunk * CHUNK;
	desc.threads = l->block[0] * l->block[1] * l->block[2];
	desc.grid_x = l->grid[0];
	desc.grid_y = l->grid[1];
	desc.tag = san.tag;
	if (san.sanitizerMemcpyHostToDeviceAsync(&cb->desc[slot], &desc, sizeof(desc), d->hStream) ||
	    san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream, &cb->desc[slot])) {
		memset(cb->chunk_used + chunk, 0, h->nchunks);
		cb->desc_used[slot] = 0;
		free(h);
		return "cannot pass the record buffer to the launch";
	}
	if (nt_collector_traced(seq, l, desc.rec, (uint32_t)blocks, desc.tag, release, h)) {
		/* The caller gives the launch no data instead (the last call
		 * wins), so the slice is free again; we hold the lock that
		 * release() would take. */
		memset(cb->chunk_used + chunk, 0, h->nchunks);
		cb->desc_used[slot] = 0;
		free(h);
		return "collector stopping or out of memory";
	}
	return NULL;
}

/* Launches that must not be traced this way: a launch being captured
 * into a graph (our descriptor copy would be captured with it, reading
 * freed host memory at every replay) and a graph's kernel nodes.  The
 * reason, or NULL. */
static const char *untraceable(const struct nt_san_launch_data *d)
{
	static struct nt_cuda cu;
	static int loaded = -1;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;

	if (d->apiStream || d->hApiStream || d->apiContext)
		return "graph launch (not traced in blocks mode)";
	pthread_mutex_lock(&san.lock);
	/* The driver is up by now: a launch is being made. */
	if (loaded < 0)
		loaded = nt_cuda_load(&cu, NULL) == 0;
	pthread_mutex_unlock(&san.lock);
	if (!loaded)
		return "cannot ask the driver whether the stream is capturing";
	if (cu.cuStreamIsCapturing(d->stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE)
		return "launch captured into a graph (not traced in blocks mode)";
	return NULL;
}

static void on_launch_begin(const struct nt_san_launch_data *d)
{
	struct nt_launch_info l;
	const char *why;
	uint64_t seq;

	launch_info(d, &l);
	if (!nt_collector_sample(&l, &seq)) {
		/* Patched code runs for every launch: no data, no records. */
		san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream, NULL);
		return;
	}
	why = untraceable(d);
	if (!why) {
		pthread_mutex_lock(&san.lock);
		why = trace_launch(d, &l, seq);
		pthread_mutex_unlock(&san.lock);
	}
	if (why) {
		san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream, NULL);
		nt_collector_dropped(seq, &l, why);
	}
}

/* A kernel node of a graph replay: never traced (yet), but its patched
 * code must get no data rather than whatever the node last had. */
static void on_graph_node(const struct nt_san_graph_node_data *g)
{
	const struct nt_san_launch_data *d = &g->launchData;
	struct nt_launch_info l;
	uint64_t seq;

	if (g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL)
		return;
	san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream, NULL);
	launch_info(d, &l);
	l.dyn_smem = -1;
	if (nt_collector_sample(&l, &seq))
		nt_collector_dropped(seq, &l, "graph launch (not traced in blocks mode)");
}

static void on_context_created(const struct nt_san_context_data *d)
{
	nt_san_stream null_stream;
	struct ctx_buf *cb;

	if (san.sanitizerGetStreamHandle(d->context, NULL, &null_stream))
		return;	/* made at the first traced launch instead */
	pthread_mutex_lock(&san.lock);
	cb = ctx_get(d->context);
	if (cb)
		ctx_buffers(cb, null_stream);
	pthread_mutex_unlock(&san.lock);
}

static void on_context_destroy(const struct nt_san_context_data *d)
{
	struct ctx_buf *cb;

	nt_collector_flush_context((uint64_t)(uintptr_t)d->context);
	pthread_mutex_lock(&san.lock);
	HASH_FIND_PTR(contexts, &d->context, cb);
	if (cb) {
		HASH_DEL(contexts, cb);
		if (cb->rec)
			san.sanitizerFreeHost(cb->ctx, cb->rec);
		if (cb->scratch)
			san.sanitizerFree(cb->ctx, cb->scratch);
		if (cb->desc)
			san.sanitizerFree(cb->ctx, cb->desc);
		/* The struct and its chunk map stay: a launch the collector
		 * gives up on later still calls release() on them. */
		cb->rec = NULL;
		cb->scratch = NULL;
		cb->desc = NULL;
		cb->broken = 1;
	}
	pthread_mutex_unlock(&san.lock);
}

static void callback(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	int saved = errno;	/* the program's, inside its CUDA call */

	(void)userdata;
	if (domain == NT_SAN_CB_DOMAIN_LAUNCH && cbid == NT_SAN_CBID_LAUNCH_BEGIN)
		on_launch_begin(data);
	else if (domain == NT_SAN_CB_DOMAIN_DRIVER_API)
		on_driver_call(cbid, data);
	else if (domain == NT_SAN_CB_DOMAIN_GRAPHS && cbid == NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN)
		on_graph_node(data);
	else if (domain == NT_SAN_CB_DOMAIN_RESOURCE && cbid == NT_SAN_CBID_RESOURCE_MODULE_LOADED)
		on_module(data);
	else if (domain == NT_SAN_CB_DOMAIN_RESOURCE && cbid == NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING)
		on_module_unload(data);
	else if (domain == NT_SAN_CB_DOMAIN_RESOURCE && cbid == NT_SAN_CBID_RESOURCE_CONTEXT_CREATION_FINISHED)
		on_context_created(data);
	else if (domain == NT_SAN_CB_DOMAIN_RESOURCE && cbid == NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		on_context_destroy(data);
	errno = saved;
}

/* $NUCATRACE_SANITIZER_LIB, else the toolkit's usual places. */
static void *load_library(char *tried, size_t len)
{
	static const char *const dirs[] = { "$CUDA_HOME", "$CUDA_PATH", "/usr/local/cuda", "/opt/cuda" };
	const char *env = getenv("NUCATRACE_SANITIZER_LIB");
	char path[4096];
	size_t used = 0;
	void *h;

	if (env && *env) {
		snprintf(tried, len, "%s", env);
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	tried[0] = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *dir = dirs[i][0] == '$' ? getenv(dirs[i] + 1) : dirs[i];

		if (!dir || !*dir)
			continue;
		snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so", dir);
		if (strstr(tried, path))
			continue;
		if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
		if (used < len)
			used += snprintf(tried + used, len - used, "%s%s", used ? ", " : "", path);
	}
	return NULL;
}

static void child_unlock(void)
{
	pthread_mutex_init(&san.lock, NULL);
}

static const uint32_t launch_calls[] = {
	NT_SAN_CBID_DRIVER_cuLaunchKernel, NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz,
	NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel, NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz,
	NT_SAN_CBID_DRIVER_cuLaunchKernelEx, NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz,
};

static int san_start(const struct nt_config *cfg, struct nt_err *err)
{
	char tried[1024];
	nt_san_result r;

	pthread_atfork(NULL, NULL, child_unlock);
	san.buffer_blocks = cfg->buffer_blocks / CHUNK * CHUNK;
	san.lib = load_library(tried, sizeof(tried));
	if (!san.lib)
		return nt_err_set(err, "no Compute Sanitizer library (tried %s)", tried);
#define NT_SAN(name, params)                                                          \
	*(void **)&san.name = dlsym(san.lib, #name);                                  \
	if (!san.name)                                                                \
		return nt_err_set(err, "the Compute Sanitizer library lacks %s", #name);
#include "sanitizer.def"
#undef NT_SAN
	if ((r = san.sanitizerSubscribe(&san.sub, callback, NULL)))
		return nt_err_set(err, "cannot subscribe to the Compute Sanitizer: %s%s", san_error(r),
				  r == NT_SAN_ERROR_MAX_LIMIT_REACHED ? " (another tool is attached)" : "");
	if ((r = san.sanitizerEnableDomain(1, san.sub, NT_SAN_CB_DOMAIN_RESOURCE)) ||
	    (r = san.sanitizerEnableDomain(1, san.sub, NT_SAN_CB_DOMAIN_LAUNCH)))
		goto fail;
	/* Only the launch calls of the driver API: their parameters carry the
	 * dynamic shared memory, which the launch callback does not. */
	for (size_t i = 0; i < sizeof(launch_calls) / sizeof(launch_calls[0]); i++)
		if ((r = san.sanitizerEnableCallback(1, san.sub, NT_SAN_CB_DOMAIN_DRIVER_API, launch_calls[i])))
			goto fail;
	if ((r = san.sanitizerEnableCallback(1, san.sub, NT_SAN_CB_DOMAIN_GRAPHS,
					     NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN)))
		goto fail;
	return 0;
fail:
	/* Leave nothing half-started: another backend may try next. */
	san.sanitizerUnsubscribe(san.sub);
	san.sub = NULL;
	return nt_err_set(err, "cannot enable sanitizer callbacks: %s", san_error(r));
}

const struct nt_backend nt_backend_blocks = {
	.name = "blocks",
	.start = san_start,
};
