/*
 * What each Compute Sanitizer patch site costs, and why: a CUDA injection
 * library that patches the block-entry and/or block-exit site into every
 * module as it loads, with callbacks from tests/gpu/sitecost_patch.cu
 * (tests/gpu/sitecost.sh drives it; PAPER.md, "Which patch site costs
 * what", has the question).
 *
 *   SITECOST_PATCH=FATBIN      the callbacks (sitecost_patch.fatbin); required
 *   SITECOST_SITES=enter|exit|both                          (both)
 *   SITECOST_CB=empty|ts|error (empty)
 *       empty: callbacks that return at once, no callback data
 *       ts:    timing callbacks: the functions named in SITECOST_FUNCS
 *              (comma list) get a record buffer as callback data
 *              (sitecost.h), written to $SITECOST_TS_OUT when their
 *              context goes (or at exit); SITECOST_TS_MAX records
 *              (8M) at most; SITECOST_TS_MEM=device (default) or host
 *              (mapped pinned memory) for the records
 *       error: the exit callback returns SANITIZER_PATCH_ERROR
 *   SITECOST_DUMP=DIR          dump code: each function of SITECOST_DUMP_FUNCS
 *              before (FUNC.unpatched.bin) and after (FUNC.patched.bin)
 *              patching, the callbacks (CB.bin), and the ranges of
 *              SITECOST_DUMP_RANGES (0xPC:SIZE,...: a second pass at
 *              addresses found in the first); DIR/index.txt lists them.
 *              Code is read with cuMemcpyDtoH, else
 *              sanitizerMemcpyDeviceToHost, else (SITECOST_DUMP_KERNEL=1
 *              only: it may fault) with a kernel of ours that loads it.
 *
 * Compiled on the GPU machine against NVIDIA's headers (the prototypes
 * below come from them); links nothing: the Sanitizer
 * ($NUCATRACE_SANITIZER_LIB, else the toolkit's libsanitizer-public.so)
 * and the driver are opened with dlopen.
 *
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/compute-sanitizer/include \
 *       -I/usr/local/cuda/include -I. -o sitecost.so tests/gpu/sitecost.c -ldl
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <sanitizer.h>

#include "tests/gpu/sitecost.h"

/* The entry points, one row each: the Sanitizer's by name, the driver's
 * by macro name and exported symbol. */
#define SC_SAN_FUNCS(X) \
	X(sanitizerSubscribe) X(sanitizerEnableCallback) X(sanitizerGetResultString) \
	X(sanitizerAddPatches) X(sanitizerPatchInstructions) X(sanitizerPatchModule) \
	X(sanitizerSetCallbackData) X(sanitizerGetFunctionPcAndSize) X(sanitizerGetCallbackPcAndSize) \
	X(sanitizerGetFunctionLoadedStatus) X(sanitizerAlloc) X(sanitizerMemset) \
	X(sanitizerMemcpyHostToDeviceAsync) X(sanitizerMemcpyDeviceToHost)
#define SC_CU_FUNCS(X) \
	X(cuGetErrorName, "cuGetErrorName") X(cuModuleGetFunction, "cuModuleGetFunction") \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2") X(cuMemHostAlloc, "cuMemHostAlloc") \
	X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2") X(cuMemAlloc, "cuMemAlloc_v2") \
	X(cuCtxPushCurrent, "cuCtxPushCurrent_v2") X(cuCtxPopCurrent, "cuCtxPopCurrent_v2") \
	X(cuModuleLoadData, "cuModuleLoadData") X(cuLaunchKernel, "cuLaunchKernel") \
	X(cuCtxSynchronize, "cuCtxSynchronize")

#define SC_DECL_SAN(name) static __typeof__(name) *p_##name;
#define SC_DECL_CU(name, sym) static __typeof__(name) *p_##name;
SC_SAN_FUNCS(SC_DECL_SAN)
SC_CU_FUNCS(SC_DECL_CU)

enum { SITE_ENTER = 1, SITE_EXIT = 2 };
enum { CB_EMPTY, CB_TS, CB_ERROR };

static struct {
	int sites, cb;
	const void *image;		/* the patch fatbin */
	const char *enter_cb, *exit_cb;
	const char *ts_funcs, *ts_out;
	size_t ts_cap;
	int ts_host;
	const char *dump_dir, *dump_funcs, *dump_ranges;
	int dump_kernel;
	Sanitizer_SubscriberHandle sub;
} cfg;

/* Per context: patches added, the records buffer, our peek kernel. */
struct ctx_state {
	CUcontext ctx;
	int added, broken;
	struct sc_cb_buf hdr;		/* host copy of what the callbacks see */
	void *hdr_dev;			/* ... its device copy: the callback data */
	void *recs_host;		/* SITECOST_TS_MEM=host: the records */
	int ts_ready, ts_failed, flushed;
	CUfunction peek;
	int peek_tried;
};

#define MAX_CTX 16
static struct ctx_state contexts[MAX_CTX];
static int n_ctx, n_patched, n_failed, n_flushed;
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
/* Set while a module of ours loads (the patches, the peek kernel): its
 * load callback, on this thread, leaves it alone. */
static __thread int loading_own;

static const char *san_err(SanitizerResult r)
{
	const char *s = NULL;

	if (!p_sanitizerGetResultString || p_sanitizerGetResultString(r, &s) || !s)
		return "unknown Sanitizer error";
	return s;
}

static const char *cu_err(CUresult r)
{
	const char *s = NULL;

	if (!p_cuGetErrorName || p_cuGetErrorName(r, &s) || !s)
		return "unknown CUDA error";
	return s;
}

static struct ctx_state *ctx_get(CUcontext ctx)
{
	for (int i = 0; i < n_ctx; i++)
		if (contexts[i].ctx == ctx)
			return &contexts[i];
	if (n_ctx == MAX_CTX)
		return NULL;
	contexts[n_ctx].ctx = ctx;
	return &contexts[n_ctx++];
}

/* Calls fn(name, arg) for each name of a comma list. */
static void each_name(const char *list, void (*fn)(const char *, void *), void *arg)
{
	char name[256];

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n && n < sizeof(name)) {
			memcpy(name, list, n);
			name[n] = 0;
			fn(name, arg);
		}
		list += n + (list[n] == ',');
	}
}

/* ---- reading device code ------------------------------------------ */

/* PTX of a kernel that copies n 32-bit words from src (any address,
 * generic loads) to dst. */
static const char peek_ptx[] =
	".version 7.8\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry sc_peek(.param .u64 src, .param .u64 dst, .param .u32 n)\n"
	"{\n"
	"	.reg .pred %p;\n"
	"	.reg .b32 %r<5>;\n"
	"	.reg .b64 %rd<6>;\n"
	"	ld.param.u64 %rd0, [src];\n"
	"	ld.param.u64 %rd1, [dst];\n"
	"	ld.param.u32 %r0, [n];\n"
	"	mov.u32 %r1, %tid.x;\n"
	"	mov.u32 %r2, %ntid.x;\n"
	"LOOP:\n"
	"	setp.ge.u32 %p, %r1, %r0;\n"
	"	@%p bra DONE;\n"
	"	mul.wide.u32 %rd2, %r1, 4;\n"
	"	add.s64 %rd3, %rd0, %rd2;\n"
	"	add.s64 %rd4, %rd1, %rd2;\n"
	"	ld.volatile.u32 %r3, [%rd3];\n"
	"	st.u32 [%rd4], %r3;\n"
	"	add.u32 %r1, %r1, %r2;\n"
	"	bra LOOP;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static int peek(struct ctx_state *cs, uint64_t pc, size_t size, void *dst, char *err, size_t errlen)
{
	CUdeviceptr buf;
	unsigned n = (unsigned)((size + 3) / 4);
	void *args[3] = { &pc, &buf, &n };
	CUmodule mod;
	CUresult r;

	if (!cs->peek_tried) {
		cs->peek_tried = 1;
		loading_own = 1;
		r = p_cuModuleLoadData(&mod, peek_ptx);
		loading_own = 0;
		if (!r)
			r = p_cuModuleGetFunction(&cs->peek, mod, "sc_peek");
		if (r) {
			snprintf(err, errlen, "peek kernel: cannot load (%s)", cu_err(r));
			return -1;
		}
	}
	if (!cs->peek) {
		snprintf(err, errlen, "peek kernel: not loaded");
		return -1;
	}
	if ((r = p_cuMemAlloc(&buf, (size_t)n * 4)) ||
	    (r = p_cuLaunchKernel(cs->peek, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL)) ||
	    (r = p_cuCtxSynchronize()) || (r = p_cuMemcpyDtoH(dst, buf, size))) {
		snprintf(err, errlen, "peek kernel: %s", cu_err(r));
		return -1;
	}
	/* buf is left allocated: a few KB, and freeing is one more call that
	 * could fail in a callback. */
	return 0;
}

/* Reads size bytes of device code at pc into dst; 0 and how it worked,
 * or -1 and why each way failed.  cs's context is current. */
static int read_code(struct ctx_state *cs, uint64_t pc, size_t size, void *dst, const char **how,
		     char *err, size_t errlen)
{
	CUresult cr;
	SanitizerResult sr;
	int len;

	if (!(cr = p_cuMemcpyDtoH(dst, (CUdeviceptr)pc, size))) {
		*how = "cuMemcpyDtoH";
		return 0;
	}
	if (!(sr = p_sanitizerMemcpyDeviceToHost(dst, (void *)(uintptr_t)pc, size, NULL))) {
		*how = "sanitizerMemcpyDeviceToHost";
		return 0;
	}
	len = snprintf(err, errlen, "cuMemcpyDtoH: %s; sanitizerMemcpyDeviceToHost: %s", cu_err(cr), san_err(sr));
	if (!cfg.dump_kernel)
		return -1;
	if (len > 0 && (size_t)len < errlen - 2) {
		err[len++] = ';', err[len++] = ' ';
		if (!peek(cs, pc, size, dst, err + len, errlen - len)) {
			*how = "peek-kernel";
			return 0;
		}
	}
	return -1;
}

static void dump(struct ctx_state *cs, const char *file, uint64_t pc, uint64_t size, const char *extra)
{
	char path[4096], err[512] = "";
	const char *how = NULL;
	void *buf = NULL;
	FILE *f, *idx;
	int ok = 0;

	if (size > (64u << 20)) {
		snprintf(err, sizeof(err), "size %llu is not believable", (unsigned long long)size);
	} else if (!(buf = malloc(size ? size : 1))) {
		snprintf(err, sizeof(err), "out of memory");
	} else if (!read_code(cs, pc, size, buf, &how, err, sizeof(err))) {
		snprintf(path, sizeof(path), "%s/%s", cfg.dump_dir, file);
		if ((f = fopen(path, "wb")) && fwrite(buf, 1, size, f) == size && !fclose(f))
			ok = 1;
		else
			snprintf(err, sizeof(err), "cannot write '%s' in the dump folder", file);
	}
	fprintf(stderr, "sitecost: dump %s pc 0x%llx size %llu %s %s%s\n", file, (unsigned long long)pc,
		(unsigned long long)size, ok ? "ok" : "failed", ok ? how : err, extra ? extra : "");
	snprintf(path, sizeof(path), "%s/index.txt", cfg.dump_dir);
	if ((idx = fopen(path, "a"))) {
		fprintf(idx, "%s 0x%llx %llu %s %s%s\n", file, (unsigned long long)pc, (unsigned long long)size,
			ok ? "ok" : "failed", ok ? how : err, extra ? extra : "");
		fclose(idx);
	}
	free(buf);
}

struct dump_arg {
	struct ctx_state *cs;
	CUmodule mod;
	const char *stage;	/* "unpatched" or "patched" */
};

static void dump_function(const char *name, void *arg)
{
	struct dump_arg *a = arg;
	Sanitizer_FunctionLoadedStatus st = SANITIZER_FUNCTION_NOT_LOADED;
	char file[320], extra[64];
	uint64_t pc = 0, size = 0;
	SanitizerResult r;
	CUfunction f;

	/* not of this module; else loads it (lazy loading) */
	if (p_cuModuleGetFunction(&f, a->mod, name))
		return;
	if (p_sanitizerGetFunctionLoadedStatus(f, &st))
		st = (Sanitizer_FunctionLoadedStatus)-1;
	snprintf(extra, sizeof(extra), " loaded-status %d", (int)st);
	snprintf(file, sizeof(file), "%s.%s.bin", name, a->stage);
	if ((r = p_sanitizerGetFunctionPcAndSize(a->mod, name, &pc, &size))) {
		fprintf(stderr, "sitecost: dump %s failed sanitizerGetFunctionPcAndSize: %s\n", file, san_err(r));
		return;
	}
	dump(a->cs, file, pc, size, extra);
}

static void dump_callback(const char *name, void *arg)
{
	struct ctx_state *cs = arg;
	uint64_t pc = 0, size = 0;
	char file[320];
	SanitizerResult r;

	snprintf(file, sizeof(file), "%s.bin", name);
	if ((r = p_sanitizerGetCallbackPcAndSize(cs->ctx, name, &pc, &size)))
		fprintf(stderr, "sitecost: dump %s failed sanitizerGetCallbackPcAndSize: %s\n", file, san_err(r));
	else
		dump(cs, file, pc, size, NULL);
}

static void dump_range(const char *spec, void *arg)
{
	unsigned long long pc, size;
	char file[64];

	if (sscanf(spec, "%llx:%llu", &pc, &size) != 2 || !size || size > (1u << 20)) {
		fprintf(stderr, "sitecost: SITECOST_DUMP_RANGES: cannot read '%s' (0xPC:SIZE)\n", spec);
		return;
	}
	snprintf(file, sizeof(file), "range-0x%llx.bin", pc);
	dump(arg, file, pc, size, NULL);
}

/* ---- timing records ----------------------------------------------- */

/* The records buffer of cs's context (current), made once. */
static int ts_buffer(struct ctx_state *cs)
{
	size_t bytes = cfg.ts_cap * sizeof(struct sc_cb_rec);
	struct sc_cb_buf check;
	void *recs = NULL;
	SanitizerResult sr;
	CUresult cr;

	if (cs->ts_ready || cs->ts_failed)
		return cs->ts_ready ? 0 : -1;
	cs->ts_failed = 1;
	if (cfg.ts_host) {
		CUdeviceptr d;

		if ((cr = p_cuMemHostAlloc(&cs->recs_host, bytes, CU_MEMHOSTALLOC_DEVICEMAP)) ||
		    (cr = p_cuMemHostGetDevicePointer(&d, cs->recs_host, 0))) {
			fprintf(stderr, "sitecost: cannot allocate %zu bytes of mapped host memory: %s\n", bytes,
				cu_err(cr));
			return -1;
		}
		memset(cs->recs_host, 0, bytes);
		recs = (void *)(uintptr_t)d;
	} else if ((sr = p_sanitizerAlloc(cs->ctx, &recs, bytes)) || (sr = p_sanitizerMemset(recs, 0, bytes, NULL))) {
		fprintf(stderr, "sitecost: cannot allocate %zu bytes of device memory: %s\n", bytes, san_err(sr));
		return -1;
	}
	memset(&cs->hdr, 0, sizeof(cs->hdr));
	cs->hdr.cap = (sc_u32)cfg.ts_cap;
	cs->hdr.recs = recs;
	if ((sr = p_sanitizerAlloc(cs->ctx, &cs->hdr_dev, sizeof(cs->hdr))) ||
	    (sr = p_sanitizerMemcpyHostToDeviceAsync(cs->hdr_dev, &cs->hdr, sizeof(cs->hdr), NULL)) ||
	    (sr = p_sanitizerMemcpyDeviceToHost(&check, cs->hdr_dev, sizeof(check), NULL))) {
		fprintf(stderr, "sitecost: cannot set up the records' header: %s\n", san_err(sr));
		return -1;
	}
	if (check.cap != cs->hdr.cap || check.recs != recs) {
		fprintf(stderr, "sitecost: the records' header did not reach the device\n");
		return -1;
	}
	fprintf(stderr, "sitecost: %zu records (%zu MB, %s memory) for context %p\n", cfg.ts_cap, bytes >> 20,
		cfg.ts_host ? "mapped host" : "device", (void *)cs->ctx);
	cs->ts_failed = 0;
	cs->ts_ready = 1;
	return 0;
}

struct ts_arg {
	struct ctx_state *cs;
	CUmodule mod;
};

static void ts_function(const char *name, void *arg)
{
	struct ts_arg *a = arg;
	SanitizerResult r;
	CUfunction f;

	if (p_cuModuleGetFunction(&f, a->mod, name))
		return;		/* not in this module */
	if ((r = p_sanitizerSetCallbackData(f, a->cs->hdr_dev)))
		fprintf(stderr, "sitecost: cannot give %s its callback data: %s\n", name, san_err(r));
	else
		fprintf(stderr, "sitecost: %s records into %p\n", name, a->cs->hdr_dev);
}

/* Writes cs's records to $SITECOST_TS_OUT (.N after the first context);
 * cs's context is current. */
static void ts_flush(struct ctx_state *cs, const char *when)
{
	char path[4096], tmp[4200];
	struct sc_cb_buf h;
	sc_u32 head[4];
	size_t n, bytes;
	void *recs = NULL;
	SanitizerResult sr;
	CUresult cr = CUDA_SUCCESS;
	FILE *f;

	if (!cs->ts_ready || cs->flushed)
		return;
	cs->flushed = 1;
	if ((sr = p_sanitizerMemcpyDeviceToHost(&h, cs->hdr_dev, sizeof(h), NULL)) &&
	    (cr = p_cuMemcpyDtoH(&h, (CUdeviceptr)(uintptr_t)cs->hdr_dev, sizeof(h)))) {
		fprintf(stderr, "sitecost: %s: cannot read the records' header (%s; %s)\n", when, san_err(sr),
			cu_err(cr));
		return;
	}
	n = h.count < h.cap ? h.count : h.cap;
	bytes = n * sizeof(struct sc_cb_rec);
	if (cfg.ts_host) {
		recs = cs->recs_host;
	} else if (!(recs = malloc(bytes ? bytes : 1))) {
		fprintf(stderr, "sitecost: %s: out of memory\n", when);
		return;
	} else if (bytes && (sr = p_sanitizerMemcpyDeviceToHost(recs, h.recs, bytes, NULL)) &&
		   (cr = p_cuMemcpyDtoH(recs, (CUdeviceptr)(uintptr_t)h.recs, bytes))) {
		fprintf(stderr, "sitecost: %s: cannot read the records (%s; %s)\n", when, san_err(sr), cu_err(cr));
		free(recs);
		return;
	}
	if (n_flushed)
		snprintf(path, sizeof(path), "%s.%d", cfg.ts_out, n_flushed);
	else
		snprintf(path, sizeof(path), "%s", cfg.ts_out);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	head[0] = (sc_u32)n, head[1] = h.dropped, head[2] = h.cap, head[3] = sizeof(struct sc_cb_rec);
	if (!(f = fopen(tmp, "wb")) || fwrite(SC_CB_MAGIC, 8, 1, f) != 1 || fwrite(head, sizeof(head), 1, f) != 1 ||
	    (n && fwrite(recs, sizeof(struct sc_cb_rec), n, f) != n) || fclose(f) || rename(tmp, path)) {
		fprintf(stderr, "sitecost: %s: cannot write '%s'\n", when, path);
	} else {
		n_flushed++;
		fprintf(stderr, "sitecost: %s: %zu callback records (%u dropped) in %s\n", when, n, h.dropped, path);
	}
	if (!cfg.ts_host)
		free(recs);
}

/* ---- the callbacks ------------------------------------------------ */

static int patch_module(struct ctx_state *cs, CUmodule mod)
{
	SanitizerResult r = SANITIZER_SUCCESS;

	if (cfg.sites & SITE_ENTER)
		r = p_sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_ENTER, mod, cfg.enter_cb);
	if (!r && (cfg.sites & SITE_EXIT))
		r = p_sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, mod, cfg.exit_cb);
	if (!r)
		r = p_sanitizerPatchModule(mod);
	if (r) {
		fprintf(stderr, "sitecost: cannot patch module %p: %s\n", (void *)mod, san_err(r));
		n_failed++;
		return -1;
	}
	n_patched++;
	fprintf(stderr, "sitecost: patched module %p (sites %s%s%s, callbacks %s/%s)\n", (void *)mod,
		cfg.sites & SITE_ENTER ? "enter" : "", cfg.sites == (SITE_ENTER | SITE_EXIT) ? "+" : "",
		cfg.sites & SITE_EXIT ? "exit" : "", cfg.sites & SITE_ENTER ? cfg.enter_cb : "-",
		cfg.sites & SITE_EXIT ? cfg.exit_cb : "-");
	(void)cs;
	return 0;
}

static void on_module_loaded(const Sanitizer_ResourceModuleData *d)
{
	struct ctx_state *cs;
	SanitizerResult r;
	CUcontext popped;
	int pushed;

	if (loading_own)
		return;
	pthread_mutex_lock(&lock);
	if (!(cs = ctx_get(d->context))) {
		fprintf(stderr, "sitecost: more than %d contexts; module %p left alone\n", MAX_CTX, (void *)d->module);
		goto out;
	}
	if (!cs->added && !cs->broken) {
		loading_own = 1;
		r = p_sanitizerAddPatches(cfg.image, d->context);
		loading_own = 0;
		if (r) {
			fprintf(stderr, "sitecost: cannot add the patches to context %p: %s\n", (void *)d->context,
				san_err(r));
			cs->broken = 1;
		} else {
			cs->added = 1;
		}
	}
	if (!cs->added)
		goto out;
	pushed = !p_cuCtxPushCurrent(d->context);
	if (cfg.dump_dir) {
		struct dump_arg a = { cs, d->module, "unpatched" };

		each_name(cfg.dump_funcs, dump_function, &a);
	}
	if (!patch_module(cs, d->module)) {
		if (cfg.dump_dir) {
			struct dump_arg a = { cs, d->module, "patched" };

			each_name(cfg.dump_funcs, dump_function, &a);
			if (cfg.sites & SITE_ENTER)
				dump_callback(cfg.enter_cb, cs);
			if (cfg.sites & SITE_EXIT)
				dump_callback(cfg.exit_cb, cs);
			/* No API gives where the patched code's trampolines lie
			 * (sanitizer_patching.h has the function's and the
			 * callback's pc and size only): the ranges come from a
			 * first pass's disassembly. */
			each_name(cfg.dump_ranges, dump_range, cs);
		}
		if (cfg.cb == CB_TS && !ts_buffer(cs)) {
			struct ts_arg a = { cs, d->module };

			each_name(cfg.ts_funcs, ts_function, &a);
		}
	}
	if (pushed)
		p_cuCtxPopCurrent(&popped);
out:
	pthread_mutex_unlock(&lock);
}

static void on_context_destroy(const Sanitizer_ResourceContextData *d)
{
	struct ctx_state *cs = NULL;
	CUcontext popped;
	int pushed;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_ctx; i++)
		if (contexts[i].ctx == d->context)
			cs = &contexts[i];
	if (cs && cs->ts_ready && !cs->flushed) {
		pushed = !p_cuCtxPushCurrent(d->context);
		ts_flush(cs, "context destroyed");
		if (pushed)
			p_cuCtxPopCurrent(&popped);
	}
	pthread_mutex_unlock(&lock);
}

static void SANITIZERAPI on_callback(void *userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
				     const void *data)
{
	(void)userdata;
	if (domain != SANITIZER_CB_DOMAIN_RESOURCE)
		return;
	if (cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED)
		on_module_loaded(data);
	else if (cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
		on_context_destroy(data);
}

static void finish(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n_ctx; i++)
		if (contexts[i].ts_ready && !contexts[i].flushed) {
			CUcontext popped;
			int pushed = !p_cuCtxPushCurrent(contexts[i].ctx);

			ts_flush(&contexts[i], "at exit");
			if (pushed)
				p_cuCtxPopCurrent(&popped);
		}
	fprintf(stderr, "sitecost: %d modules patched, %d failed\n", n_patched, n_failed);
	pthread_mutex_unlock(&lock);
}

/* ---- set up ------------------------------------------------------- */

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	void *buf = NULL;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc(n)) &&
	    fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

static int load_entry_points(void)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	void *san = dlopen(lib ? lib : "/usr/local/cuda/compute-sanitizer/libsanitizer-public.so",
			   RTLD_NOW | RTLD_LOCAL);
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	int bad = 0;

	if (!cu)
		cu = dlopen("libcuda.so.1", RTLD_NOW);
	if (!san || !cu) {
		fprintf(stderr, "sitecost: %s\n", dlerror());
		return -1;
	}
#define SC_LOAD_SAN(name) \
	if (!(p_##name = (__typeof__(p_##name))dlsym(san, #name))) { \
		fprintf(stderr, "sitecost: no %s in the Sanitizer\n", #name); \
		bad = 1; \
	}
#define SC_LOAD_CU(name, sym) \
	if (!(p_##name = (__typeof__(p_##name))dlsym(cu, sym))) { \
		fprintf(stderr, "sitecost: no %s in the driver\n", sym); \
		bad = 1; \
	}
	SC_SAN_FUNCS(SC_LOAD_SAN)
	SC_CU_FUNCS(SC_LOAD_CU)
	return bad ? -1 : 0;
}

static int configure(void)
{
	const char *sites = getenv("SITECOST_SITES"), *cb = getenv("SITECOST_CB"), *patch = getenv("SITECOST_PATCH");
	const char *max = getenv("SITECOST_TS_MAX"), *mem = getenv("SITECOST_TS_MEM"), *dk = getenv("SITECOST_DUMP_KERNEL");

	if (!sites || !strcmp(sites, "both"))
		cfg.sites = SITE_ENTER | SITE_EXIT;
	else if (!strcmp(sites, "enter"))
		cfg.sites = SITE_ENTER;
	else if (!strcmp(sites, "exit"))
		cfg.sites = SITE_EXIT;
	if (!cb || !strcmp(cb, "empty"))
		cfg.cb = CB_EMPTY;
	else if (!strcmp(cb, "ts"))
		cfg.cb = CB_TS;
	else if (!strcmp(cb, "error"))
		cfg.cb = CB_ERROR;
	else
		cfg.cb = -1;
	if (!cfg.sites || cfg.cb < 0) {
		fprintf(stderr, "sitecost: SITECOST_SITES is enter, exit or both; SITECOST_CB empty, ts or error\n");
		return -1;
	}
	cfg.enter_cb = cfg.cb == CB_TS ? "sc_enter_ts" : "sc_enter_empty";
	cfg.exit_cb = cfg.cb == CB_TS ? "sc_exit_ts" : cfg.cb == CB_ERROR ? "sc_exit_error" : "sc_exit_empty";
	if (!patch || !(cfg.image = read_file(patch))) {
		fprintf(stderr, "sitecost: cannot read the patches (SITECOST_PATCH=%s)\n", patch ? patch : "");
		return -1;
	}
	cfg.ts_funcs = getenv("SITECOST_FUNCS");
	cfg.ts_out = getenv("SITECOST_TS_OUT");
	cfg.ts_cap = max ? strtoul(max, NULL, 0) : 8u << 20;
	cfg.ts_host = mem && !strcmp(mem, "host");
	if (cfg.cb == CB_TS && (!cfg.ts_funcs || !cfg.ts_out || !cfg.ts_cap || cfg.ts_cap > 0x7fffffffu)) {
		fprintf(stderr, "sitecost: SITECOST_CB=ts needs SITECOST_FUNCS, SITECOST_TS_OUT and a sane SITECOST_TS_MAX\n");
		return -1;
	}
	cfg.dump_dir = getenv("SITECOST_DUMP");
	cfg.dump_funcs = getenv("SITECOST_DUMP_FUNCS");
	cfg.dump_ranges = getenv("SITECOST_DUMP_RANGES");
	cfg.dump_kernel = dk && !strcmp(dk, "1");
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	if (configure() || load_entry_points())
		return 0;
	if (p_sanitizerSubscribe(&cfg.sub, on_callback, NULL) ||
	    p_sanitizerEnableCallback(1, cfg.sub, SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CBID_RESOURCE_MODULE_LOADED) ||
	    p_sanitizerEnableCallback(1, cfg.sub, SANITIZER_CB_DOMAIN_RESOURCE,
				      SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)) {
		fprintf(stderr, "sitecost: cannot subscribe to the Sanitizer\n");
		return 0;
	}
	fprintf(stderr, "sitecost: attached: sites %s, callbacks %s/%s%s%s\n", getenv("SITECOST_SITES") ?
		getenv("SITECOST_SITES") : "both", cfg.enter_cb, cfg.exit_cb, cfg.dump_dir ? ", dumping to " : "",
		cfg.dump_dir ? cfg.dump_dir : "");
	atexit(finish);
	return 1;
}
