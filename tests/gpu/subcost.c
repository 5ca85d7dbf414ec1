/*
 * What attaching to the Compute Sanitizer costs, callback domain by
 * callback domain, with nothing patched: a CUDA injection library that
 * subscribes with a callback that returns at once and enables what
 * $SUBCOST names (comma-separated):
 *
 *   none            subscribe only
 *   resource        the resource domain (libnucatrace: modules, contexts)
 *   launch          LAUNCH_BEGIN and LAUNCH_END (libnucatrace: sampling)
 *   driver-launch   the driver API's cuLaunchKernel (libnucatrace: the
 *                   dynamic shared memory)
 *   graphs          the graphs domain's three launch callbacks
 *   res-N           the resource domain's callback N only (cbid N of
 *                   sanitizer_callbacks.h's Sanitizer_CallbackIdResource)
 *   ours            the four resource callbacks libnucatrace handled in
 *                   session 11's run 2: context created and destroyed,
 *                   module loaded and unloaded (it has left context
 *                   created out since: that one cost the 3.5%)
 *   res-dark        the three of those it keeps on between sampling
 *                   windows (context destroyed, module loaded and
 *                   unloaded)
 *   exec-created    the graphs domain's GRAPHEXEC_CREATED (kept on too)
 *   driver-one      one driver API callback, cuGraphExecDestroy (it
 *                   keeps on about twenty such: graph execs made,
 *                   changed and destroyed)
 *   dark            res-dark, exec-created and driver-one: what stays
 *                   on between windows, but for the other driver calls
 *   procaddr        the driver's cuGetProcAddress (and _v2) at their
 *                   exit, where the function cuGraphLaunch's lookup
 *                   returns is replaced by a wrapper that counts its
 *                   calls and calls it: whether a graph launch can be
 *                   routed through a tool (a shadow exec in the
 *                   program's exec's place, issue 33), and what that
 *                   costs a replay
 *
 * The triad with nothing patched ran 3.5% slower per launch under
 * libnucatrace's `none` (docs/results/2026-12-01-switch-safety.md): running
 * it under each set says which part of the subscription costs that.
 *
 *   CUDA_INJECTION64_PATH=build/tests/gpu/subcost.so SUBCOST=launch build/tests/gpu/triad 200
 *
 * The library is $NUCATRACE_SANITIZER_LIB, else
 * /usr/local/cuda/compute-sanitizer/libsanitizer-public.so.  Prints what
 * it enabled and, at exit, how many callbacks came.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu/subscribe.h"

static unsigned long calls;

/* procaddr: lookups seen, cuGraphLaunch's among them, and the wrapped
 * functions (two: a lookup per default-stream kind) with their calls */
#define CBID_cuGetProcAddress 626
#define CBID_cuGetProcAddress_v2 677
struct lookup_params {	/* cuGetProcAddress(_v2)_params' first four */
	const char *symbol;
	void **pfn;
	int cudaVersion;
	uint64_t flags;
};
typedef CUresult (*graph_launch_fn)(CUgraphExec, CUstream);
static unsigned long lookups, graph_lookups, wrapped_calls[2];
static graph_launch_fn real[2];
static int wrapping;

static CUresult wrapper0(CUgraphExec e, CUstream s)
{
	__atomic_add_fetch(&wrapped_calls[0], 1, __ATOMIC_RELAXED);
	return real[0](e, s);
}

static CUresult wrapper1(CUgraphExec e, CUstream s)
{
	__atomic_add_fetch(&wrapped_calls[1], 1, __ATOMIC_RELAXED);
	return real[1](e, s);
}

static void on_lookup(const struct nt_san_api_data *d)
{
	const struct lookup_params *p = d->functionParams;
	static graph_launch_fn const wrappers[2] = { wrapper0, wrapper1 };

	__atomic_add_fetch(&lookups, 1, __ATOMIC_RELAXED);
	if (d->callbackSite != NT_SAN_API_EXIT || !p->symbol || strcmp(p->symbol, "cuGraphLaunch"))
		return;
	graph_lookups++;
	if (!p->pfn || !*p->pfn || *(const CUresult *)d->functionReturnValue != CUDA_SUCCESS)
		return;
	for (int i = 0; i < 2; i++) {
		if (!real[i])
			real[i] = (graph_launch_fn)*p->pfn;
		if (real[i] == (graph_launch_fn)*p->pfn) {
			*p->pfn = (void *)wrappers[i];
			fprintf(stderr, "subcost: cuGraphLaunch (cuda %d, flags %llu) wrapped (%d)\n",
				p->cudaVersion, (unsigned long long)p->flags, i);
			return;
		}
	}
}

static void on_callback(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	(void)userdata;
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (wrapping && domain == NT_SAN_CB_DOMAIN_DRIVER_API &&
	    (cbid == CBID_cuGetProcAddress || cbid == CBID_cuGetProcAddress_v2))
		on_lookup(data);
}

static void report(void)
{
	fprintf(stderr, "subcost: %lu callbacks\n", calls);
	if (wrapping)
		fprintf(stderr, "subcost: procaddr: %lu lookups, %lu of cuGraphLaunch, wrapped calls %lu + %lu\n",
			lookups, graph_lookups, wrapped_calls[0], wrapped_calls[1]);
}

static int has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
	const char *what = getenv("SUBCOST");
	struct test_san s;
	domain_fn domain;
	callback_fn callback;
	nt_san_subscriber sub;
	int bad = 0;

	if (!what)
		what = "none";
	if (test_subscribe("subcost", on_callback, &s))
		return 0;
	domain = s.domain, callback = s.callback, sub = s.sub;
	if (has(what, "resource"))
		bad |= domain(1, sub, NT_SAN_CB_DOMAIN_RESOURCE);
	if (has(what, "ours"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_CONTEXT_CREATION_FINISHED) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_MODULE_LOADED) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
	if (has(what, "res-dark") || has(what, "dark"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_MODULE_LOADED) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
	if (has(what, "exec-created") || has(what, "dark"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED);
	if (has(what, "driver-one") || has(what, "dark"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuGraphExecDestroy);
	for (const char *p = what; (p = strstr(p, "res-")); p += 4)
		if ((p == what || p[-1] == ',') && p[4] >= '0' && p[4] <= '9')
			bad |= callback(1, sub, NT_SAN_CB_DOMAIN_RESOURCE, (uint32_t)strtoul(p + 4, NULL, 10));
	if (has(what, "launch"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_BEGIN) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_END);
	if (has(what, "driver-launch"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernel);
	if (has(what, "procaddr")) {
		wrapping = 1;
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_DRIVER_API, CBID_cuGetProcAddress) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_DRIVER_API, CBID_cuGetProcAddress_v2);
	}
	if (has(what, "graphs"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_END);
	fprintf(stderr, "subcost: subscribed, enabled '%s'%s\n", what, bad ? " (some failed)" : "");
	atexit(report);
	return 1;
}
