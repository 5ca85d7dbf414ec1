/*
 * Can a preloaded library route a program's graph launches through
 * itself, so that a sampling window could launch a shadow exec in the
 * program's exec's place without ever changing the program's exec
 * (issue 33: the Compute Sanitizer makes an exec updated to other
 * functions and back about 0.5 us a replay slower for good,
 * docs/results/2026-12-05-dark-cost.md)?  The CUDA runtime finds the
 * driver's functions through cuGetProcAddress, which it finds with
 * dlsym on its handle of libcuda: an LD_PRELOAD library cannot take
 * those by exporting the names.  This one, preloaded, takes them at the
 * three places a launch's function can come from, and counts:
 *
 *   dlsym           the process's calls of dlsym for cuGetProcAddress
 *                   (and _v2) are answered with a wrapper of it, which
 *                   answers lookups of cuGraphLaunch with a wrapper of
 *                   what the driver returned
 *   cuGetProcAddress_v2
 *                   exported (cuda.h's name for cuGetProcAddress): a
 *                   program that calls it by name
 *   cuGraphLaunch, cuGraphLaunch_ptsz
 *                   exported: a program linked to libcuda (driver API)
 *
 * Each wrapper calls what it wraps with the same arguments: the program
 * runs as without it.  At exit it prints, to stderr, what it saw (in a
 * process that looked any of them up):
 *
 *   LD_PRELOAD=build/tests/gpu/launchhook.so build/tests/gpu/decode 20000
 *
 * Every other dlsym call is passed on as a tail call, so that glibc
 * sees its caller's address (RTLD_NEXT and RTLD_DEFAULT depend on it).
 * glibc's own dlsym is found with dlvsym (GLIBC_2.34, else the x86-64
 * GLIBC_2.2.5 version).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*lookup_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*lookup2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*graph_launch_fn)(CUgraphExec, CUstream);

#define EXPORT __attribute__((visibility("default")))

static dlsym_fn real_dlsym;
static lookup_fn real_lookup;
static lookup2_fn real_lookup2;
static graph_launch_fn real_launch[2];	/* the driver's cuGraphLaunch and _ptsz, as looked up */
static unsigned long n_dlsym_lookups, n_lookups, n_graph_lookups, n_direct, calls[2];

static void real_dlsym_init(void)
{
	if (!real_dlsym)
		real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real_dlsym)
		real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

static CUresult launch0(CUgraphExec e, CUstream s)
{
	__atomic_add_fetch(&calls[0], 1, __ATOMIC_RELAXED);
	return real_launch[0](e, s);
}

static CUresult launch1(CUgraphExec e, CUstream s)
{
	__atomic_add_fetch(&calls[1], 1, __ATOMIC_RELAXED);
	return real_launch[1](e, s);
}

/* A lookup's answer: a cuGraphLaunch the driver returned, wrapped. */
static void wrap(const char *symbol, void **pfn, cuuint64_t flags)
{
	static graph_launch_fn const wrappers[2] = { launch0, launch1 };

	__atomic_add_fetch(&n_lookups, 1, __ATOMIC_RELAXED);
	if (!symbol || !pfn || !*pfn || strcmp(symbol, "cuGraphLaunch"))
		return;
	n_graph_lookups++;
	for (int i = 0; i < 2; i++) {
		if (!real_launch[i])
			real_launch[i] = (graph_launch_fn)*pfn;
		if (real_launch[i] == (graph_launch_fn)*pfn) {
			*pfn = (void *)wrappers[i];
			fprintf(stderr, "launchhook: cuGraphLaunch (flags %llu) wrapped (%d)\n",
				(unsigned long long)flags, i);
			return;
		}
	}
}

static CUresult my_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	CUresult r = real_lookup(symbol, pfn, version, flags);

	if (r == CUDA_SUCCESS)
		wrap(symbol, pfn, flags);
	return r;
}

static CUresult my_lookup2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			   CUdriverProcAddressQueryResult *status)
{
	CUresult r = real_lookup2(symbol, pfn, version, flags, status);

	if (r == CUDA_SUCCESS)
		wrap(symbol, pfn, flags);
	return r;
}

EXPORT void *dlsym(void *handle, const char *name);
EXPORT void *dlsym(void *handle, const char *name)
{
	real_dlsym_init();
	if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && !strncmp(name, "cuGetProcAddress", 16)) {
		void *f = real_dlsym(handle, name);

		__atomic_add_fetch(&n_dlsym_lookups, 1, __ATOMIC_RELAXED);
		if (f && !strcmp(name, "cuGetProcAddress_v2")) {
			real_lookup2 = (lookup2_fn)f;
			return (void *)my_lookup2;
		}
		if (f && !strcmp(name, "cuGetProcAddress")) {
			real_lookup = (lookup_fn)f;
			return (void *)my_lookup;
		}
		return f;
	}
	return real_dlsym(handle, name);	/* a tail call: the caller's address stays */
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	real_dlsym_init();
	if (!real_lookup2)
		real_lookup2 = (lookup2_fn)real_dlsym(RTLD_NEXT, "cuGetProcAddress_v2");
	if (!real_lookup2)
		return CUDA_ERROR_NOT_FOUND;
	return my_lookup2(symbol, pfn, version, flags, status);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s);
EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	static graph_launch_fn real;

	real_dlsym_init();
	if (!real)
		real = (graph_launch_fn)real_dlsym(RTLD_NEXT, "cuGraphLaunch");
	__atomic_add_fetch(&n_direct, 1, __ATOMIC_RELAXED);
	return real ? real(e, s) : CUDA_ERROR_NOT_FOUND;
}

__attribute__((destructor)) static void report(void)
{
	if (!n_dlsym_lookups && !n_lookups && !n_direct)
		return;	/* a process without CUDA (a shell, a helper) */
	fprintf(stderr,
		"launchhook: dlsym of cuGetProcAddress* %lu, lookups %lu (of cuGraphLaunch %lu), "
		"wrapped launches %lu + %lu, direct cuGraphLaunch %lu\n",
		n_dlsym_lookups, n_lookups, n_graph_lookups, calls[0], calls[1], n_direct);
}
