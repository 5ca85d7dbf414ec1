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

static void on_callback(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static void report(void)
{
	fprintf(stderr, "subcost: %lu callbacks\n", calls);
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
	if (has(what, "graphs"))
		bad |= callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN) |
		       callback(1, sub, NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_END);
	fprintf(stderr, "subcost: subscribed, enabled '%s'%s\n", what, bad ? " (some failed)" : "");
	atexit(report);
	return 1;
}
