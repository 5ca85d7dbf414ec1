/*
 * The program's graph launches routed through libnucatrace (graphroute.h).
 *
 * Where a graph launch's function comes from, and how it is taken:
 *   - the CUDA runtime (static or shared) looks up cuGetProcAddress with
 *     dlsym on its own handle of libcuda, then every driver function
 *     with it: this library's dlsym answers with a cuGetProcAddress of
 *     its own, which answers cuGraphLaunch with a routed launch;
 *   - a program or library that looks up cuGraphLaunch (or its _ptsz
 *     form) with dlsym gets a routed launch too;
 *   - a program linked to libcuda calls cuGraphLaunch, cuGraphLaunch_ptsz
 *     and cuGetProcAddress by name: this library, preloaded, exports them.
 * Every other dlsym call is passed on to glibc's as a tail call, so that
 * glibc sees its caller's address (RTLD_NEXT and RTLD_DEFAULT depend on
 * it); a lookup of one of the names above on RTLD_NEXT or RTLD_DEFAULT
 * is passed on as well, and finds this library's exports where it should.
 *
 * With NUCATRACE_GRAPH_ROUTE other than shadow, or tracing off or in
 * kernels mode, nothing is wrapped: the lookups get the driver's own
 * functions, and the exported names call the driver's at once.
 *
 * A lookup answer is one of SLOTS wrappers, one per distinct driver
 * function handed out (the legacy and per-thread stream forms); beyond
 * that, the driver's own.  Each wrapper calls what it wraps with the
 * program's arguments whenever no route is set (graphroute.h).
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
static void *driver;			/* the handle they were looked up on */
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

/* Routing wanted: NUCATRACE_GRAPH_ROUTE=shadow, with a mode that may
 * trace blocks. */
static int wanted(void)
{
	static int want = -1;

	if (want < 0) {
		const char *r = getenv(NT_GRAPH_ROUTE_ENV), *m = getenv("NUCATRACE_MODE");

		want = r && !strcmp(r, "shadow") && !(m && (!strcmp(m, "off") || !strcmp(m, "kernels")));
	}
	return want;
}

/* A routed launch under way on this thread: a launch inside it (the
 * driver's own call of an exported name) goes straight on. */
static _Thread_local int in_launch;

static CUresult launch(const struct slot *s, CUgraphExec exec, CUstream stream)
{
	const struct nt_graph_route *r = __atomic_load_n(&route, __ATOMIC_ACQUIRE);
	CUgraphExec run;
	CUresult res;

	if (!r || in_launch)
		return s->real(exec, stream);
	in_launch = 1;
	run = r->begin(exec, stream, s->ptsz);
	res = s->real(run, stream);
	if (res != CUDA_SUCCESS && run != exec) {
		/* what the program's own launch gives is what it sees */
		r->failed(exec, run, res);
		res = s->real(exec, stream);
	}
	r->end();
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

/* A driver symbol, from the handle the program found it on (else the
 * next library after this one). */
static void *driver_sym(const char *name)
{
	void *h = __atomic_load_n(&driver, __ATOMIC_ACQUIRE);

	return real_dlsym(h ? h : RTLD_NEXT, name);
}

/* The answer for a lookup of graph launch function f (its per-thread
 * stream form when ptsz, or when it is the driver's _ptsz one): a
 * wrapper of it, or f when routing is not wanted or the slots are
 * taken by others. */
static void *wrap(void *f, int ptsz)
{
	void *w = f;

	if (!f || !wanted())
		return f;
	ptsz = ptsz || f == driver_sym("cuGraphLaunch_ptsz");
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

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags);
static CUresult lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
		       CUdriverProcAddressQueryResult *status);

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
	} else if (!strcmp(symbol, "cuGetProcAddress") && wanted()) {
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

	if (!f || !wanted())
		return f;
	if (!strcmp(name, "cuGraphLaunch"))
		return wrap(f, 0);
	if (!strcmp(name, "cuGraphLaunch_ptsz"))
		return wrap(f, 1);
	__atomic_store_n(&driver, handle, __ATOMIC_RELEASE);
	if (!strcmp(name, "cuGetProcAddress_v2")) {
		__atomic_store_n(&real_lookup2, (lookup2_fn)f, __ATOMIC_RELEASE);
		return (void *)lookup2;
	}
	__atomic_store_n(&real_lookup, (lookup_fn)f, __ATOMIC_RELEASE);
	return (void *)lookup;
}

EXPORT void *dlsym(void *handle, const char *name);
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

/* The next definition of name after this library's (libcuda's), once. */
static void *next(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		if (!__atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE))
			find_real_dlsym();
		if ((f = real_dlsym(RTLD_NEXT, name)))
			__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	static void *f;
	struct slot s = { (launch_fn)next(&f, "cuGraphLaunch"), 0 };

	if (!s.real)
		return CUDA_ERROR_NOT_INITIALIZED;	/* no libcuda after this library */
	return wanted() ? launch(&s, exec, stream) : s.real(exec, stream);
}

EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream);
CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream stream)
{
	static void *f;
	struct slot s = { (launch_fn)next(&f, "cuGraphLaunch_ptsz"), 1 };

	if (!s.real)
		return CUDA_ERROR_NOT_INITIALIZED;
	return wanted() ? launch(&s, exec, stream) : s.real(exec, stream);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
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

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
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
