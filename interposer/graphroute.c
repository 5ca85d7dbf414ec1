/*
 * The program's graph launches routed through libnucatrace (graphroute.h).
 *
 * Where a graph launch's function comes from, and how it is taken:
 *   - the CUDA runtime (static or shared) looks up cuGetProcAddress with
 *     dlsym on its own handle of libcuda, then cuGetProcAddress with
 *     that, then every driver function with the answer (the static
 *     runtime of CUDA 13 on an H100, 2026-12-06): this library's dlsym
 *     answers with a cuGetProcAddress of its own, which answers
 *     cuGetProcAddress with itself (of the form asked for) and
 *     cuGraphLaunch with a routed launch;
 *   - a program or library that looks up cuGraphLaunch (or its _ptsz
 *     form) with dlsym gets a routed launch too;
 *   - a program linked to libcuda calls cuGraphLaunch, cuGraphLaunch_ptsz
 *     and cuGetProcAddress by name: this library, preloaded, exports them.
 * Every other dlsym call is passed on to glibc's as a tail call, so that
 * glibc sees its caller's address (RTLD_NEXT and RTLD_DEFAULT depend on
 * it); a lookup of one of the names above on RTLD_NEXT or RTLD_DEFAULT
 * is passed on as well, and finds this library's exports where it should.
 *
 * With NUCATRACE_GRAPH_ROUTE=update, or tracing off or in
 * kernels mode, nothing is wrapped: the lookups get the driver's own
 * functions, and the exported names call the driver's at once.
 *
 * A lookup answer is one of SLOTS wrappers, one per distinct driver
 * function handed out (the legacy and per-thread stream forms); beyond
 * that, the driver's own.  Each wrapper calls what it wraps with the
 * program's arguments whenever no route is set or the route is quiet
 * (graphroute.h).  A function of this library is never taken for the
 * driver's (ours()), and the exported names find the driver even where
 * it is loaded RTLD_LOCAL (next()).
 */
#include "graphroute.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#undef cuGetProcAddress
#undef cuGraphLaunch

#define EXPORT __attribute__((visibility("default")))

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*lookup_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*lookup2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

static dlsym_fn real_dlsym;
static lookup_fn real_lookup;		/* the driver's cuGetProcAddress (CUDA 11's) */
static lookup2_fn real_lookup2;		/* ... cuGetProcAddress_v2 */
static const struct nt_graph_route *route;
static unsigned long routed;		/* lookups answered with a wrapper */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct slot {
	launch_fn real;
	int ptsz;
};

/* glibc's dlsym: the GLIBC_2.34 version (libc), else the one before
 * (libdl): x86-64's, aarch64's. */
static void find_real_dlsym(void)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17" };
	dlsym_fn f = NULL;

	for (size_t i = 0; !f && i < sizeof(versions) / sizeof(versions[0]); i++)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
	__atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
}

/* Routing wanted: NUCATRACE_GRAPH_ROUTE other than update (config.c
 * takes any other value for shadow, the default), with a mode that may
 * trace blocks. */
static int wanted(void)
{
	static int want = -1;

	if (want < 0) {
		const char *r = getenv(NT_GRAPH_ROUTE_ENV), *m = getenv("NUCATRACE_MODE");

		want = !(r && !strcmp(r, "update")) && !(m && (!strcmp(m, "off") || !strcmp(m, "kernels")));
	}
	return want;
}

/* A routed launch under way on this thread: a launch inside it (the
 * driver's own call of an exported name) goes straight on. */
static _Thread_local int in_launch;
static int quiet;	/* nt_graph_route_quiet() */

/* The last routed launch of an exec: its stream (CU_STREAM_PER_THREAD
 * for the per-thread default stream), and whether another exec ran in
 * its place.  Direct-mapped by the exec's handle: an entry that names
 * another exec (a collision, or one not launched yet) knows nothing.
 * Fields are written one by one without a lock; a reader takes an entry
 * only when its exec reads the same before and after the rest. */
#define LASTS 1024
static struct last {
	CUgraphExec exec;
	CUstream stream;
	int other;
} lasts[LASTS];

static struct last *last_of(CUgraphExec exec)
{
	uintptr_t h = (uintptr_t)exec;

	return &lasts[(h ^ (h >> 10) ^ (h >> 20)) % LASTS];
}

static int last_get(CUgraphExec exec, struct last *out)
{
	struct last *l = last_of(exec);

	if (__atomic_load_n(&l->exec, __ATOMIC_ACQUIRE) != exec)
		return 0;
	out->stream = __atomic_load_n(&l->stream, __ATOMIC_RELAXED);
	out->other = __atomic_load_n(&l->other, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&l->exec, __ATOMIC_RELAXED) == exec;
}

static void last_set(CUgraphExec exec, CUstream stream, int other)
{
	struct last *l = last_of(exec);

	__atomic_store_n(&l->exec, NULL, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&l->stream, stream, __ATOMIC_RELAXED);
	__atomic_store_n(&l->other, other, __ATOMIC_RELAXED);
	__atomic_store_n(&l->exec, exec, __ATOMIC_RELEASE);
}

static CUresult launch(const struct slot *s, CUgraphExec exec, CUstream stream)
{
	const struct nt_graph_route *r = __atomic_load_n(&route, __ATOMIC_ACQUIRE);
	CUstream key = !stream && s->ptsz ? CU_STREAM_PER_THREAD : stream;
	struct last was;
	int known = last_get(exec, &was);
	/* another exec ran in exec's place on another stream */
	int moved = r && known && was.other && was.stream != key;
	CUgraphExec given;
	CUresult res;
	int other;

	if (!r || __atomic_load_n(&quiet, __ATOMIC_RELAXED) || in_launch) {
		/* the common case, between windows: no thread-local, no store */
		if (moved)
			r->fence(key);
		res = s->real(exec, stream);
		if (res == CUDA_SUCCESS && (!known || was.stream != key || was.other))
			last_set(exec, key, 0);
		return res;
	}
	in_launch = 1;
	given = r->begin(exec, key, known && was.stream == key);
	other = given != exec;
	if (!other && moved)
		r->fence(key);
	res = s->real(given, stream);
	if (res != CUDA_SUCCESS && other) {
		/* what the program's own launch gives is what it sees */
		CUresult refusal = res;

		other = 0;
		if ((res = s->real(exec, stream)) == CUDA_SUCCESS)
			r->failed(exec, refusal);
	}
	if (res == CUDA_SUCCESS)
		last_set(exec, key, other);
	r->end(exec, given);
	in_launch = 0;
	return res;
}

#define SLOTS 4
static struct slot slots[SLOTS];
#define WRAPPER(i) \
	static CUresult launch##i(CUgraphExec exec, CUstream stream) { return launch(&slots[i], exec, stream); }
WRAPPER(0)
WRAPPER(1)
WRAPPER(2)
WRAPPER(3)
static const launch_fn wrappers[SLOTS] = { launch0, launch1, launch2, launch3 };

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags);
static CUresult lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status);
static CUresult exp_launch(CUgraphExec exec, CUstream stream);
static CUresult exp_launch_ptsz(CUgraphExec exec, CUstream stream);
static CUresult exp_lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			    CUdriverProcAddressQueryResult *status);
static CUresult exp_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags);

/* f is one of this library's own functions (a lookup may find them: this
 * library stands before libcuda), which are never taken for the driver's:
 * a wrapper that calls itself would never return. */
static int ours(void *f)
{
	if (f == (void *)lookup || f == (void *)lookup2 || f == (void *)exp_launch || f == (void *)exp_launch_ptsz ||
	    f == (void *)exp_lookup || f == (void *)exp_lookup2)
		return 1;
	for (int i = 0; i < SLOTS; i++)
		if (f == (void *)wrappers[i])
			return 1;
	return 0;
}

/* The answer for a lookup of graph launch function f (its per-thread
 * stream form when ptsz): a wrapper of it, or f when routing is not
 * wanted, f is ours or the slots are taken by others. */
static void *wrap(void *f, int ptsz)
{
	void *w = f;

	if (!f || !wanted() || ours(f))
		return f;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < SLOTS; i++) {
		if (!slots[i].real) {
			slots[i].ptsz = ptsz;
			__atomic_store_n(&slots[i].real, (launch_fn)f, __ATOMIC_RELEASE);
		}
		if (slots[i].real == (launch_fn)f) {
			w = (void *)wrappers[i];
			routed++;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return w;
}

/* The driver's answer for symbol (asked for its form of CUDA version),
 * routed when it is the graph launch; when it is cuGetProcAddress itself
 * (a program may look the lookup up with itself, and the rest with
 * that), this library's lookup of the same form: cuGetProcAddress_v2's
 * from CUDA 12.0 on (cuda.h), CUDA 11's before. */
static void answer(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	if (!symbol || !pfn || !*pfn || symbol[0] != 'c' || symbol[1] != 'u')
		return;
	if (!strcmp(symbol, "cuGraphLaunch")) {
		*pfn = wrap(*pfn, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
	} else if (!strcmp(symbol, "cuGetProcAddress") && wanted() && !ours(*pfn)) {
		if (version >= 12000) {
			__atomic_store_n(&real_lookup2, (lookup2_fn)*pfn, __ATOMIC_RELEASE);
			*pfn = (void *)lookup2;
		} else {
			__atomic_store_n(&real_lookup, (lookup_fn)*pfn, __ATOMIC_RELEASE);
			*pfn = (void *)lookup;
		}
	}
}

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	CUresult r = real_lookup(symbol, pfn, version, flags);

	if (r == CUDA_SUCCESS)
		answer(symbol, pfn, version, flags);
	return r;
}

static CUresult lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status)
{
	CUresult r = real_lookup2(symbol, pfn, version, flags, status);

	if (r == CUDA_SUCCESS)
		answer(symbol, pfn, version, flags);
	return r;
}

/* dlsym(handle, name) of one of the names this library answers for. */
static void *dlsym_answer(void *handle, const char *name)
{
	void *f = real_dlsym(handle, name);

	if (!f || !wanted() || ours(f))
		return f;
	if (!strcmp(name, "cuGraphLaunch"))
		return wrap(f, 0);
	if (!strcmp(name, "cuGraphLaunch_ptsz"))
		return wrap(f, 1);
	if (!strcmp(name, "cuGetProcAddress_v2")) {
		__atomic_store_n(&real_lookup2, (lookup2_fn)f, __ATOMIC_RELEASE);
		return (void *)lookup2;
	}
	__atomic_store_n(&real_lookup, (lookup_fn)f, __ATOMIC_RELEASE);
	return (void *)lookup;
}

/* glibc's dlsym finds the object its caller is in from its return
 * address (for RTLD_NEXT): it must be the caller's, so the call below is
 * a tail call, with sibling calls optimised here whatever CFLAGS say
 * (test 0276 fails otherwise). */
EXPORT void *dlsym(void *handle, const char *name);
__attribute__((optimize("O2", "optimize-sibling-calls")))
void *dlsym(void *handle, const char *name)
{
	if (!__atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE) && (find_real_dlsym(), !real_dlsym))
		return NULL;	/* no glibc dlsym to pass it to (never seen) */
	if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && name[0] == 'c' && name[1] == 'u' &&
	    (!strcmp(name, "cuGetProcAddress_v2") || !strcmp(name, "cuGetProcAddress") ||
	     !strcmp(name, "cuGraphLaunch") || !strcmp(name, "cuGraphLaunch_ptsz")))
		return dlsym_answer(handle, name);
	return real_dlsym(handle, name);	/* a tail call: the caller's address stays */
}

/* ---- the driver's names, for programs linked to libcuda ------------------ */

/* The next definition of name after this library's (libcuda's), once;
 * where libcuda is not in the global scope (loaded by a library opened
 * with RTLD_LOCAL, which still finds this library's names first), the
 * loaded driver's (NUCATRACE_LIBCUDA's, else libcuda.so.1). */
static void *next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE), *h;

	if (!f) {
		if (!__atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE))
			find_real_dlsym();
		if (!real_dlsym)
			return NULL;
		if (!(f = real_dlsym(RTLD_NEXT, name))) {
			const char *lib = getenv("NUCATRACE_LIBCUDA");

			if ((h = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))) {
				f = real_dlsym(h, name);
				dlclose(h);	/* it stays loaded: it was before */
			}
		}
		if (f && !ours(f))
			__atomic_store_n(cache, f, __ATOMIC_RELEASE);
		else
			f = NULL;
	}
	return f;
}

/* The exported names are aliases of these (ours() compares with them:
 * the exported names' addresses are the first definition's in the
 * process, this library's only when it is preloaded). */
static CUresult exp_launch(CUgraphExec exec, CUstream stream)
{
	static void *f;
	struct slot s = { (launch_fn)next(&f, "cuGraphLaunch"), 0 };

	if (!s.real)
		return CUDA_ERROR_NOT_INITIALIZED;	/* no libcuda loaded */
	return wanted() ? launch(&s, exec, stream) : s.real(exec, stream);
}

static CUresult exp_launch_ptsz(CUgraphExec exec, CUstream stream)
{
	static void *f;
	struct slot s = { (launch_fn)next(&f, "cuGraphLaunch_ptsz"), 1 };

	if (!s.real)
		return CUDA_ERROR_NOT_INITIALIZED;
	return wanted() ? launch(&s, exec, stream) : s.real(exec, stream);
}

static CUresult exp_lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			    CUdriverProcAddressQueryResult *status)
{
	static void *f;
	lookup2_fn real = (lookup2_fn)next(&f, "cuGetProcAddress_v2");
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((r = real(symbol, pfn, version, flags, status)) == CUDA_SUCCESS)
		answer(symbol, pfn, version, flags);
	return r;
}

static CUresult exp_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	static void *f;
	lookup_fn real = (lookup_fn)next(&f, "cuGetProcAddress");
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if ((r = real(symbol, pfn, version, flags)) == CUDA_SUCCESS)
		answer(symbol, pfn, version, flags);
	return r;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) __attribute__((alias("exp_launch")));
EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream) __attribute__((alias("exp_launch_ptsz")));
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status) __attribute__((alias("exp_lookup2")));
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
	__attribute__((alias("exp_lookup")));

void nt_graph_route_quiet(int q)
{
	__atomic_store_n(&quiet, q, __ATOMIC_RELAXED);
}

void nt_graph_route_set(const struct nt_graph_route *r)
{
	__atomic_store_n(&route, r, __ATOMIC_RELEASE);
}

unsigned long nt_graph_routed(void)
{
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = routed;
	pthread_mutex_unlock(&lock);
	return n;
}
