/*
 * santime.so - where the interposer's host time goes, call by call: a
 * stand-in for libsanitizer-public.so that forwards every entry point
 * nucatrace uses (interposer/blocks/sanitizer.def) to the real library
 * and times it, and times each callback the real library makes into
 * nucatrace, by domain and callback id, less the entry points called
 * inside it.  At exit it writes, to stderr, per entry point and per
 * callback: calls, total seconds, mean and largest microseconds.
 *
 *   NUCATRACE_SANITIZER_LIB=build/tests/gpu/santime.so nucatrace run -- PROG
 *
 * The real library is $SANTIME_REAL, else the toolkit's
 * compute-sanitizer/libsanitizer-public.so under $CUDA_HOME or
 * /usr/local/cuda.  Only for measurements: a clock read on each side of
 * every call.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "interposer/blocks/sanitizer_abi.h"

struct tally {
	const char *name;
	unsigned long calls;
	double s, max;
};

static void *real;
static __thread double nested;	/* entry point time inside this thread's callback */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void add(struct tally *t, double s)
{
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	/* doubles: a lock-free sum is good enough for one main thread */
	t->s += s;
	if (s > t->max)
		t->max = s;
}

static void *sym(const char *name)
{
	if (!real) {
		const char *env = getenv("SANTIME_REAL"), *cuda = getenv("CUDA_HOME");
		char path[4096];

		if (!env) {
			snprintf(path, sizeof(path), "%s/compute-sanitizer/libsanitizer-public.so",
				 cuda ? cuda : "/usr/local/cuda");
			env = path;
		}
		if (!(real = dlopen(env, RTLD_NOW | RTLD_LOCAL))) {
			fprintf(stderr, "santime: %s\n", dlerror());
			abort();
		}
	}
	return dlsym(real, name);
}

#define N_API 32
static struct tally api[N_API];
static int n_api;

/* W(name, (parameters), (arguments)): the timed forwarder of name. */
#define W(fname, params, args)                                                         \
	nt_san_result fname params                                                     \
	{                                                                              \
		static nt_san_result (*fn_) params;                                    \
		static struct tally *t_;                                               \
		double t0_, s_;                                                        \
		nt_san_result r_;                                                      \
                                                                                       \
		if (!fn_) {                                                            \
			*(void **)&fn_ = sym(#fname);                                  \
			t_ = &api[__atomic_fetch_add(&n_api, 1, __ATOMIC_RELAXED)];    \
			t_->name = #fname;                                             \
		}                                                                      \
		t0_ = now();                                                           \
		r_ = fn_ args;                                                         \
		s_ = now() - t0_;                                                      \
		add(t_, s_);                                                           \
		nested += s_;                                                          \
		return r_;                                                             \
	}

W(sanitizerUnsubscribe, (nt_san_subscriber s), (s))
W(sanitizerEnableDomain, (uint32_t e, nt_san_subscriber s, nt_san_domain d), (e, s, d))
W(sanitizerEnableCallback, (uint32_t e, nt_san_subscriber s, nt_san_domain d, uint32_t c), (e, s, d, c))
W(sanitizerGetResultString, (nt_san_result r, const char **str), (r, str))
W(sanitizerAddPatches, (const void *image, CUcontext ctx), (image, ctx))
W(sanitizerPatchInstructions, (nt_san_instruction id, CUmodule m, const char *cb), (id, m, cb))
W(sanitizerPatchModule, (CUmodule m), (m))
W(sanitizerUnpatchModule, (CUmodule m), (m))
W(sanitizerSetCallbackData, (CUfunction k, const void *u), (k, u))
W(sanitizerSetLaunchCallbackData, (nt_san_launch l, CUfunction k, nt_san_stream s, const void *u), (l, k, s, u))
W(sanitizerAlloc, (CUcontext ctx, void **p, size_t n), (ctx, p, n))
W(sanitizerAllocHost, (CUcontext ctx, void **p, size_t n), (ctx, p, n))
W(sanitizerFree, (CUcontext ctx, void *p), (ctx, p))
W(sanitizerFreeHost, (CUcontext ctx, void *p), (ctx, p))
W(sanitizerMemcpyHostToDeviceAsync, (void *d, void *s, size_t n, nt_san_stream st), (d, s, n, st))
W(sanitizerMemcpyDeviceToHost, (void *d, void *s, size_t n, nt_san_stream st), (d, s, n, st))
W(sanitizerMemset, (void *p, int v, size_t n, nt_san_stream st), (p, v, n, st))
W(sanitizerStreamSynchronize, (nt_san_stream st), (st))
W(sanitizerGetStreamHandle, (CUcontext ctx, CUstream s, nt_san_stream *h), (ctx, s, h))

/* Callbacks by domain (up to 15) and id (up to 1023). */
static struct tally cbs[16][1024];
static nt_san_callback user_cb;

static void timed(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	double t0 = now(), saved = nested, s;

	nested = 0;
	user_cb(userdata, domain, cbid, data);
	s = now() - t0 - nested;
	nested = saved;
	if (domain >= 0 && domain < 16 && cbid < 1024)
		add(&cbs[domain][cbid], s);
}

nt_san_result sanitizerSubscribe(nt_san_subscriber *s, nt_san_callback cb, void *userdata)
{
	static nt_san_result (*fn)(nt_san_subscriber *, nt_san_callback, void *);

	if (!fn)
		*(void **)&fn = sym("sanitizerSubscribe");
	user_cb = cb;
	return fn(s, timed, userdata);
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "santime: entry point: calls, s, mean us, max us\n");
	for (int i = 0; i < n_api; i++)
		if (api[i].calls)
			fprintf(stderr, "santime:   %-34s %9lu %9.4f %9.2f %9.1f\n", api[i].name, api[i].calls,
				api[i].s, 1e6 * api[i].s / api[i].calls, 1e6 * api[i].max);
	fprintf(stderr, "santime: callback (domain/cbid; less the entry points inside): calls, s, mean us, max us\n");
	for (int d = 0; d < 16; d++)
		for (int c = 0; c < 1024; c++)
			if (cbs[d][c].calls)
				fprintf(stderr, "santime:   %2d/%-4d %36lu %9.4f %9.2f %9.1f\n", d, c, cbs[d][c].calls,
					cbs[d][c].s, 1e6 * cbs[d][c].s / cbs[d][c].calls, 1e6 * cbs[d][c].max);
}
