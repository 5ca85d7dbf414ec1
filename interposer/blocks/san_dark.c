/*
 * The launch callbacks (san.h): on from the start, off between sampling
 * windows while the policy can open none.
 *
 * A launch callback costs the program even when it returns at once: on
 * the H200 host a training loop's step ran 12-27% slower with them on and
 * nothing traced, most of it in the sanitizer's own dispatch, not ours
 * (docs/results/2026-12-02-probe-cost.md, run 4).  The policy's windows
 * take at most budget= of the run's time (trace/sampling.h), so between
 * them there is nothing to decide until a known time, or ever: the
 * callbacks go off, and the collector's thread turns them back on then.
 *
 * The order of the switches keeps a launch's callbacks in pairs as far
 * as they can be: off, the calls that begin a launch go first and those
 * that end one last; on, the other way round.  A launch caught between
 * its begin and its end still finds its end missing or its begin missing;
 * the backend takes either (a begin with no end is ended at the thread's
 * next begin; an end with no begin does nothing).
 */
#include "san.h"

#include <pthread.h>

#include "interposer/collector.h"
#include "interposer/graphroute.h"
#include "interposer/warn.h"

struct cb {
	nt_san_domain domain;
	uint32_t cbid;
};

/* In the order they go off. */
static const struct cb launch_cbs[] = {
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernel },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernelEx },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuGraphLaunch },
	{ NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuGraphLaunch_ptsz },
	{ NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN },
	{ NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN },
	{ NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_BEGIN },
	{ NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_END },
	{ NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_END },
};
#define N_CBS (int)(sizeof(launch_cbs) / sizeof(launch_cbs[0]))

/* Our calls to sanitizerEnableCallback, one at a time (the API leaves
 * serialising them to the subscriber); dark and broken under it. */
static pthread_mutex_t flip = PTHREAD_MUTEX_INITIALIZER;
static int dark;		/* the launch callbacks are off */
static unsigned spans;		/* ... so many times so far (atomic) */
static int broken;		/* a switch failed: they stay as they are */

/* Turn them all on (off): 0, or the first failure with every one back as
 * it was. */
static nt_san_result set_all(int on)
{
	nt_san_result r = NT_SAN_SUCCESS;
	int i, done;

	for (done = 0; done < N_CBS && !r; done++) {
		i = on ? N_CBS - 1 - done : done;
		r = nt_san.sanitizerEnableCallback(on, nt_san.sub, launch_cbs[i].domain, launch_cbs[i].cbid);
	}
	if (!r)
		return r;
	for (done -= 2; done >= 0; done--) {	/* undo those that went through */
		i = on ? N_CBS - 1 - done : done;
		nt_san.sanitizerEnableCallback(!on, nt_san.sub, launch_cbs[i].domain, launch_cbs[i].cbid);
	}
	return r;
}

nt_san_result nt_san_launch_callbacks_on(void)
{
	nt_san_result r;

	pthread_mutex_lock(&flip);
	r = set_all(1);
	__atomic_store_n(&dark, 0, __ATOMIC_RELAXED);
	nt_graph_route_quiet(0);
	pthread_mutex_unlock(&flip);
	return r;
}

/* On the collector's thread, at the time dark() was given. */
static void wake(void)
{
	nt_san_result r;

	pthread_mutex_lock(&flip);
	if (dark && !broken) {
		if (!(r = set_all(1))) {
			__atomic_store_n(&dark, 0, __ATOMIC_RELAXED);
			nt_graph_route_quiet(0);
			nt_collector_dark_end();
		} else {
			broken = 1;
			nt_warn("cannot turn the launch callbacks back on (%s): no more sampling windows in this "
				"process", nt_san_error(r));
		}
	}
	pthread_mutex_unlock(&flip);
}

int nt_san_dark(double until)
{
	nt_san_result r;
	int off = 0;

	/* never waits: another thread switching is switching for us */
	if (pthread_mutex_trylock(&flip))
		return 0;
	if (!dark && !broken) {
		if (!(r = set_all(0))) {
			__atomic_store_n(&dark, 1, __ATOMIC_RELAXED);
			nt_graph_route_quiet(1);	/* no begin for routed graph launches either */
			off = 1;
			__atomic_add_fetch(&spans, 1, __ATOMIC_RELAXED);
			nt_collector_dark_begin(until, wake);
		} else {
			broken = 1;
			nt_warn("cannot turn the launch callbacks off between sampling windows (%s): they stay "
				"on", nt_san_error(r));
		}
	}
	pthread_mutex_unlock(&flip);
	return off;
}

unsigned nt_san_dark_spans(void)
{
	return __atomic_load_n(&spans, __ATOMIC_RELAXED);
}

int nt_san_dark_now(void)
{
	return __atomic_load_n(&dark, __ATOMIC_RELAXED);
}

void nt_san_dark_reset(void)
{
	pthread_mutex_init(&flip, NULL);
}
