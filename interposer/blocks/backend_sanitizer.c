/*
 * The "blocks" backend: the Compute Sanitizer patching API inserts our
 * device callbacks (kernels/patch.cu) at every block's entry and exit of
 * the kernels of a patched module.  Patched code is slow even when it
 * records nothing, so a module is patched only while a sampling window
 * needs it (trace/sampling.h, san_modules.c): every other launch runs the
 * program's own code.
 *
 * Per launch (these callbacks, on the program's thread):
 *   driver API ENTER (cuLaunchKernel and its kin, before the driver's
 *                  locks): modules asked for are patched, a window closed
 *                  meanwhile is closed, events for native timing are made
 *   LAUNCH_BEGIN   counts and samples it; a traced launch whose module is
 *                  patched gets a run of record buffer (san_buffers.c) and
 *                  its descriptor as per-launch data (else it asks for its
 *                  module, unless a live graph exec runs that module,
 *                  san_execs.c, and is dropped); an untraced launch of a
 *                  patched module gets no data; an untraced launch of a
 *                  traced configuration may be timed natively (san_native.c)
 *   LAUNCH_END     the launch is queued: no longer in flight
 * Per graph launch: GRAPHS LAUNCH_BEGIN, then NODE_LAUNCH_BEGIN for each
 * kernel node (sampled as a launch; a traced node's descriptor is filed
 * in its exec and kernel's table, san_nodes.c, which becomes the kernel's
 * per-function data, taken by all its nodes when the graph is queued),
 * then GRAPHS LAUNCH_END (per-function data back to none; a window closed
 * meanwhile is closed, its modules unpatched, at the next launch's entry,
 * plain or graph).  A node is traced only when its module
 * is patched: it never asks for it, since a module that a live graph
 * exec runs is never patched (an exec keeps the code its modules had when
 * it was made: san_execs.c).  An untraced kernel node
 * of a patched module gets NULL data (node_without_data); a module that
 * launches from the device is never patched (san_modules.c).  Between
 * windows, while the policy can open none, none of these callbacks comes:
 * they are off (maybe_dark(), san_dark.c).
 *
 * No callback ever waits for another thread (the driver may hold its own
 * locks while it calls us): a window closes only when no other launch is
 * between its begin and end (inflight.h), else at a later launch.
 *
 * Where a module may be switched.  On the H200 (CUDA 13.0, driver 580)
 * sanitizerAddPatches and sanitizerPatchModule called during the launch
 * that first loads its kernel (lazy loading, CUDA's default) waited for
 * ever on a lock that launch held, in one thread as in eight; switching
 * from a thread of our own while the program launched ran kernels into
 * "illegal instruction" and lost traced launches' records
 * (docs/results/2026-12-01-switch-safety.md); and sanitizerPatchModule in the
 * launch callback of a kernel launched before waited for ever as well,
 * for a driver lock the launch held, in PyTorch's optimizer step on a
 * stream of its own (session 12, run 5).  So the patches are added to a
 * context as its modules load, modules are patched as they load while
 * the policy traces from the first launch (nt_sampling_from_start), and
 * otherwise every switch happens at a plain launch's entry into the
 * driver (its driver API callback, before the launch callbacks):
 * switch_before_launch() patches the modules earlier traced launches
 * asked for (those launches are dropped: the first launch of a module's
 * kernels in a window is not traced, the kernel's next one is instead)
 * and closes windows.  Never in a graph launch's callbacks (there
 * patching hung too), nor at its entry (cuGraphLaunch's API callback):
 * there a GPU-bound replay loop of PyTorch's captured step, patched as a
 * replay entered the driver, ran a later replay into "illegal
 * instruction" twice in two runs, with the replay's stream waited for
 * before the patch as well (session 17, runs 4 and 5).  A graph launch's
 * entry only closes windows (unpatching), and turns the callbacks off
 * between windows.  And only while one thread at
 * a time uses CUDA: with other threads in the driver a switch in a launch
 * callback hung (8 threads x 4 streams: the launch held the driver's lock
 * and wanted the sanitizer's, another thread the other way round), so a
 * switch waits until no other thread was seen in a callback for
 * QUIET_S seconds (a window then closes late or opens at a later launch;
 * a program whose threads launch all the time keeps its modules as they
 * are: patched ones stay patched, running instrumented code).  Threads
 * are seen by their launches and resource calls (streams, memory,
 * modules), and only once the call's callback comes: a thread that only
 * copies or waits, or one quiet for QUIET_S that enters the driver just
 * as a switch begins, is the remaining risk (docs/interposer.md).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

/* The driver API's parameter structs (cuLaunchKernel_params ...), which
 * the sanitizer's API callbacks hand over: NVIDIA's generated_cuda_meta.h,
 * included through cupti.h, which defines the old types it needs.  No
 * CUPTI function is called from this backend. */
#include <cupti.h>

#include "interposer/backend.h"
#include "interposer/collector.h"
#include "interposer/graphroute.h"
#include "gpu/cudrv.h"
#include "inflight.h"
#include "interposer/kattrs.h"
#include "san.h"
#include "trace/sampling.h"
#include "util/clock.h"

/* What this thread is doing inside the driver. */
static _Thread_local struct {
	int launch;		/* a plain launch between begin and end */
	int closing;		/* ... or graph launch, begun during a switch */
	int native;		/* ... timed natively */
	struct nt_san_hold *ended;	/* ... traced, records on the device: its end to be marked */
	CUstream stream;
	int graph;		/* a graph launch between begin and end */
	int graph_lock;		/* ... holding graph_lock: its nodes may trace */
	int graph_upload;
	int conditional;	/* ... a conditional node seen in it */
	int exec_seen;		/* ... its exec's launch id noted */
	CUfunction *data;	/* functions given per-function data in it */
	const void **tables;	/* ... the node table each was given */
	int n_data, cap_data;
	int untabled;		/* ... a node's entry could not be cleared: none */
	int capturing;		/* ... its stream capturing: 1, not: 0, not asked yet: -1 */
	CUgraphExec exec;	/* the graph launch's */
	uint32_t launch_id;	/* ... its launchId */
	int synced;		/* ... its stream waited for (san_nodes.c) */
	int took;		/* ... record buffers taken for a node */
	int64_t exec_nodes;	/* ... its exec's kernel nodes at its last launch seen (0: none) */
	unsigned nodes;		/* ... kernel node callbacks in it so far */
	int moved;		/* ... on another stream than the exec's last */
	int routing;		/* a routed graph launch's entry under way (route_begin) */
	int routed;		/* ... done: its cuGraphLaunch callback leaves it alone */
	int relaxed;		/* capture mode relaxed in this callback */
	CUstreamCaptureMode mode;	/* ... what it was */
	int instantiating;	/* instantiations of this thread under way ... */
	CUgraphExec made_exec;	/* ... the exec made in the last */
	int depth;		/* callbacks of this thread under way (one may
				 * come inside a call of ours) */
	int in_call;		/* a launch call of the program under way (API entry to exit) */
	unsigned callbacks;	/* this thread's outermost ones, for the timed one in TIME_EVERY */
	unsigned counted;	/* ... those the timed ones stood for so far */
	uint64_t slow_ns;	/* waiting or switching in the current callback (nt_san_slow) */
} tl;

/* Before a call of ours that stream capture deems potentially unsafe
 * (san.h): relaxed until the outermost callback returns. */
static void relax(void)
{
	if (!tl.relaxed)
		tl.relaxed = nt_san_relax(&tl.mode);
}

static struct nt_inflight inflight;

/* Which thread last called us, and when another one did (ns). */
#define QUIET_S 0.01
static _Thread_local int my_tid;
static int last_tid, n_tids;
static int64_t other_at;

static void seen_thread(void)
{
	if (!my_tid)
		my_tid = __atomic_add_fetch(&n_tids, 1, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&last_tid, my_tid, __ATOMIC_RELAXED) != my_tid)
		__atomic_store_n(&other_at, (int64_t)(nt_now_s() * 1e9), __ATOMIC_RELAXED);
}

/* 1 when no other thread has called us lately. */
static int threads_quiet(void)
{
	return __atomic_load_n(&n_tids, __ATOMIC_RELAXED) == 1 ||
	       nt_now_s() * 1e9 - (double)__atomic_load_n(&other_at, __ATOMIC_RELAXED) >= QUIET_S * 1e9;
}


/* The dynamic shared memory of the launch this thread is making: the
 * driver API callback (entry of cuLaunchKernel & co.) comes just before
 * the launch callback, on the same thread. */
static _Thread_local int64_t pending_dyn_smem = -1;

/* Graph launches that may trace take turns: per-function data is one
 * per function, and two graphs' nodes must not swap theirs. */
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;

/* Graph execs and nodes by number, in order of first sight; for an exec
 * the stream of its last launch. */
struct graph_id {
	const void *handle;
	int64_t id;
	nt_san_stream stream;
	int launched;		/* stream is set */
	uint32_t last_launch;	/* an exec's: its last launch id ... */
	int seen;		/* ... when it has one */
	unsigned dark;		/* ... nt_san_dark_spans() then: launches made
				 * while the callbacks were off went unseen */
	unsigned nodes;		/* ... its kernel node callbacks in its last launch seen */
	UT_hash_handle hh;
};
static struct graph_id *graph_execs, *graph_nodes;

/* handle's entry in table, made when missing (nt_san.lock held); NULL
 * when out of memory. */
static int64_t next_exec_id, next_node_id;

static struct graph_id *graph_id_get(struct graph_id **table, const void *handle)
{
	struct graph_id *g;

	HASH_FIND_PTR(*table, &handle, g);
	if (!g && (g = calloc(1, sizeof(*g)))) {
		g->handle = handle;
		g->id = table == &graph_execs ? next_exec_id++ : next_node_id++;
		HASH_ADD_PTR(*table, handle, g);
	}
	return g;
}

/* The first node callback of a graph launch of exec, its launch id
 * `launch`.  An exec's launch ids grow from 1 (0: its upload), so one
 * that does not grow means a new exec with the handle of a destroyed one
 * (on the H200 each exec of graphs_device.cu's `execs` part, made,
 * launched once and destroyed, had launch id 1): it gets a graph number
 * of its own, and the old one's node tables go (san_nodes.c; else the new
 * exec's nodes found a table that had been handed out "in this launch"
 * and recorded nothing).  So does an exec first seen after the launch
 * callbacks were off: a new exec under an old handle may have been
 * launched more often meanwhile than the old one had been (the same exec
 * then gets a new number too: its replays on either side of the span
 * count as two graphs). */
static void exec_launch(CUgraphExec exec, uint32_t launch)
{
	struct graph_id *g;
	int reused = 0;

	pthread_mutex_lock(&nt_san.lock);
	if ((g = graph_id_get(&graph_execs, exec))) {
		unsigned dark = nt_san_dark_spans();

		reused = g->seen && (launch <= g->last_launch || g->dark != dark);
		g->dark = dark;
		if (reused)	/* its stream is this launch's, noted by exec_moved() */
			g->id = next_exec_id++;
		g->last_launch = launch;
		g->seen = 1;
		tl.exec_nodes = reused ? 0 : g->nodes;
	}
	pthread_mutex_unlock(&nt_san.lock);
	if (reused) {
		tl.moved = 0;	/* a new exec: no last launch */
		nt_san_nodes_forget_exec(exec);
	}
}

static int64_t id_of(struct graph_id **table, const void *handle)
{
	struct graph_id *g;
	int64_t id;

	pthread_mutex_lock(&nt_san.lock);
	g = graph_id_get(table, handle);
	id = g ? g->id : -1;
	pthread_mutex_unlock(&nt_san.lock);
	return id;
}

static int any_patched(void)
{
	int p;

	pthread_mutex_lock(&nt_san.lock);
	p = nt_san_any_patched();
	pthread_mutex_unlock(&nt_san.lock);
	return p;
}

/* After nt_inflight_try_switch/try_close, at a launch's entry into the
 * driver: 1 and the switch may go on (end it with switch_end), or 0 and
 * it is given up, when our own thread stays in the driver for longer
 * than SWITCH_WAIT_S. */
#define SWITCH_WAIT_S 0.05
static int switch_begin(void)
{
	if (nt_collector_switch_begin(SWITCH_WAIT_S))
		return 1;
	nt_inflight_closed(&inflight);
	return 0;
}

static void switch_end(void)
{
	nt_collector_switch_end();
	nt_inflight_closed(&inflight);
}

/* Launches so far when the last window's modules were unpatched. */
static uint64_t closed_at;

static uint64_t launches_since_close(void)
{
	return nt_collector_seen() - __atomic_load_n(&closed_at, __ATOMIC_RELAXED);
}

/* Close the window sampling closed, if no launch is in flight: at a
 * launch's entry into the driver, plain or graph (switch_before_launch),
 * never inside a launch's callbacks.  Unpatching at a graph launch's
 * entry is safe where patching is not: an exec made while its module was
 * patched ran right once the module was unpatched (session 18, run 2),
 * and no module a live exec runs is patched again (san_execs.c). */
static void try_close(void)
{
	int closed;

	if (!nt_inflight_try_close(&inflight, 0))
		return;
	if (nt_collector_window_open()) {
		/* another opened since the close was decided (at a graph
		 * launch's node, say): it goes on with the modules as they
		 * are, and with what it asked for */
		nt_inflight_closed(&inflight);
		nt_collector_window_done();
		return;
	}
	if (!switch_begin()) {	/* our own thread is in the driver: later */
		nt_inflight_want_close(&inflight);
		return;
	}
	/* execs at twins back on the program's code first: a twin is not
	 * unpatched under an exec that runs it */
	nt_san_twin_point_back_all();
	closed = !nt_san_unpatch_all();
	if (closed) {	/* before the switch ends: maybe_dark() must see it */
		nt_san_nodes_retire();
		nt_collector_window_done();
		__atomic_store_n(&closed_at, nt_collector_seen(), __ATOMIC_RELAXED);
	}
	switch_end();
	if (!closed)
		nt_inflight_want_close(&inflight);	/* a module was being patched */
}

/* Make sure mod is patched (the caller's launch in flight); the reason
 * it is not, or NULL.  A plain launch does not patch it in its own
 * callback: there sanitizerPatchModule waited for a driver lock that the
 * launch held, for ever (PyTorch's optimizer step on a stream of its own,
 * session 12, run 5).  It asks for it instead, and switch_before_launch()
 * patches it as the next launch enters the driver, before its locks.  A
 * graph node never asks: its exec lives, and a module a live exec runs
 * is never patched (san_execs.c). */
static const char LATER[] =
	"its module is instrumented before a later launch (modules are patched outside launches)";

static const char *patch(CUmodule mod, int *entry_only)
{
	const char *why = NULL;

	pthread_mutex_lock(&nt_san.lock);
	if (nt_san_module_patched(mod))
		*entry_only = nt_san_module_entry_only(mod);	/* how its records come */
	else if (!(why = tl.graph ? nt_san_unpatchable(mod) : nt_san_want(mod)))
		why = !tl.graph ? LATER : nt_san_twin_why(mod) ? nt_san_twin_why(mod) : NT_SAN_HELD;
	pthread_mutex_unlock(&nt_san.lock);
	return why;
}

/* A traced launch dropped with why: when its module is patched before
 * the kernel's next launch, that one is traced instead (the sampling's
 * pick moves to it). */
static void dropped(uint64_t seq, const struct nt_launch_info *l, const char *why)
{
	nt_collector_dropped(seq, l, why);
	if (why == LATER)
		nt_collector_retry(l);
}

/* At a launch's entry into the driver (its API callback, before the
 * launch callbacks): a window's close, and the modules traced launches
 * asked for, when this thread is the only one using CUDA lately and no
 * launch is in flight; at a graph launch's (graph), only the close: a
 * patch there ran later replays into "illegal instruction" (session 17,
 * runs 4 and 5). */
static void switch_before_launch(int graph)
{
	try_close();
	if (graph || !nt_san_any_wanted() || !nt_collector_window_open() || !nt_inflight_try_switch(&inflight, 0))
		return;
	if (!switch_begin())
		return;
	nt_san_patch_wanted();
	switch_end();
}

/* The launch callbacks off between windows (san_dark.c), looked at
 * every DARK_EVERY launches at a launch's entry into the driver (plain or
 * graph: a program that only replays graphs pays for every kernel node's
 * callback, about 1.4 us each, session 14, run 3):
 * once the last window's modules are unpatched and as many launches
 * have come since as it had, DARK_GRACE at least (the native timings of
 * its configurations come from them, san_native.c), when the policy can
 * open no window for DARK_MIN_S or more (budget=) or ever.  Not while a
 * launch is in flight (its end would never come), and only while no
 * other thread has called us lately (threads_quiet(), as for switches):
 * a launch another thread begins as they go off misses its end, and
 * counts as in flight until that thread's next launch after they are
 * back on (no switch happens meanwhile). */
#define DARK_EVERY 64
#define DARK_GRACE 2000
#define DARK_MIN_S 0.5
static uint64_t dark_look;

static void maybe_dark(void)
{
	uint64_t seen = nt_collector_seen(), since;
	int64_t last;
	double until;

	if (nt_san.cfg.count_all || seen < __atomic_load_n(&dark_look, __ATOMIC_RELAXED) ||
	    !__atomic_load_n(&closed_at, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&dark_look, seen + DARK_EVERY, __ATOMIC_RELAXED);
	if (tl.launch || tl.graph || !threads_quiet() || nt_collector_window_open() ||
	    nt_inflight_close_wanted(&inflight) || nt_san_any_wanted() || any_patched())
		return;
	until = nt_collector_next_open(&last);
	since = launches_since_close();
	if (until - nt_now_s() < DARK_MIN_S || since < DARK_GRACE || since < (uint64_t)last)
		return;
	if (!nt_inflight_try_switch(&inflight, 0))
		return;
	if (nt_san_dark(until))
		pending_dyn_smem = -1;	/* this launch's: its begin will not come */
	nt_inflight_closed(&inflight);
}

/* At a launch's entry into the driver (stream: its stream; graph: a
 * graph launch's, cuGraphLaunch): the switches and event making that
 * launch callbacks must not do, when there are any, this thread is the
 * only one using CUDA lately, no launch of its own is in flight, and the
 * stream is not being captured (under global capture mode a call that
 * may synchronise would break the capture).  Events (native timings of
 * the plain launch that follows) only before a plain launch, and at a
 * graph launch's only a window's close (switch_before_launch). */
static void graph_end(void);

/* At a graph launch's entry while a window is open, or when its first
 * node would open one: its exec, made before the window, pointed at
 * instrumented twins of the modules it runs (san_twins.c), so that its
 * nodes are traced in this launch; after switch_before_launch(), which
 * closed a window that had to close.  A window its first node would open
 * is opened here instead (nt_collector_open_ahead): opened at the node's
 * callback, it came after the exec could be pointed, and that replay's
 * nodes were dropped (on the H200, the decode loop's first replay of
 * each window: docs/results/2026-12-03-graph-twins.md). */
static void point_at_twins(CUgraphExec exec, int nodes)
{
	CUcontext ctx = NULL;

	if (!nt_inflight_try_switch(&inflight, 0))
		return;
	if (!nt_collector_window_open() && !nt_collector_open_ahead(nodes)) {
		nt_inflight_closed(&inflight);
		return;
	}
	if (!switch_begin())
		return;
	if (!nt_san_cuda()->cuCtxGetCurrent(&ctx) && ctx)
		nt_san_twin_point(ctx, exec, tl.routing && nt_san.cfg.graph_shadow);
	switch_end();
}

/* Under a policy that waits (--sample all), a launch of `blocks` that
 * would find its context's record buffers full waits for room here, at
 * its entry into the driver, where the program holds no driver lock and
 * the collector's event queries and copies go on.  Waiting in the launch
 * callback instead (nt_san_take) stalled the H200 for NUCATRACE_WAIT a
 * launch once records were kept on the device (session 26): the
 * collector's copies waited for the launch's own locks.  The wait there
 * is what is left for launches of other threads that filled the buffers
 * in between. */
static void wait_for_room(CUstream stream, uint64_t blocks)
{
	const struct nt_cuda *cu;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	CUcontext ctx = NULL;
	double t0, deadline;

	if (!blocks || blocks > UINT32_MAX || !nt_collector_pending() || !nt_collector_window_open() ||
	    !(cu = nt_san_cuda()) ||
	    cu->cuCtxGetCurrent(&ctx) || !ctx || nt_san_room(ctx, (uint32_t)blocks) || !nt_collector_waits() ||
	    cu->cuStreamIsCapturing(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE)
		return;
	t0 = nt_now_s();
	deadline = t0 + nt_san.cfg.wait_s;
	while (!nt_san_room(ctx, (uint32_t)blocks) && nt_collector_pending() && nt_now_s() < deadline)
		if (nt_collector_wait_release(0.2))
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	nt_san_slow(nt_now_s() - t0);
	nt_collector_room_wait(0, nt_now_s() - t0);
}

/* While a graph launch's nodes are decided, no window opens at one of
 * them when its exec could have been pointed at twins at the launch's
 * entry (hold: it can be): it opens at a later entry instead
 * (nt_sampling_hold).  Set at each launch's entry, for the calls' order;
 * `held` spares the plain launches the collector's lock. */
static void hold_open(int hold)
{
	static int held;

	if (hold != __atomic_load_n(&held, __ATOMIC_RELAXED) && nt_collector_hold_open(hold))
		__atomic_store_n(&held, hold, __ATOMIC_RELAXED);
}

static void before_launch(CUstream stream, CUgraphExec exec, int graph, uint64_t blocks, CUfunction fn)
{
	const struct nt_cuda *cu;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	/* a window open, or one that may open here: after the close that
	 * switch_before_launch() does (a phase's, whose next phase opens at
	 * once), or at the next launch (point_at_twins decides) */
	int pointed = 0, closing = nt_inflight_close_wanted(&inflight),
	    twinnable = graph && exec ? nt_san_twin_wanted(exec, &pointed) : 0,
	    nodes = closing || !pointed ? twinnable : 0,
	    twin = nodes && (closing || nt_collector_window_open() || nt_collector_would_open(nodes)),
	    switching = closing || twin ||
			(!graph && nt_san_any_wanted() && nt_collector_window_open()),
	    events = !graph && (nt_san_native_needed() || nt_san_fetch_needed()),
	    lazy = !graph && fn && nt_san.cfg.lazy_settle && nt_collector_window_open(),
	    press = graph && nt_san_nodes_pressed(NULL, 0);

	if (tl.graph || tl.graph_lock)	/* a graph launch of this thread never ended */
		graph_end();
	hold_open(twinnable > 0);
	if (!graph && !tl.launch)
		wait_for_room(stream, blocks);
	if (!switching)
		maybe_dark();
	if ((!switching && !events && !lazy && !press) || tl.graph || tl.launch || !threads_quiet() || !(cu = nt_san_cuda()) ||
	    cu->cuStreamIsCapturing(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE) {
		if (press)
			nt_collector_table_wait(0);
		return;
	}
	relax();
	if (switching)
		switch_before_launch(graph);
	if (twin)
		point_at_twins(exec, nodes);
	if (lazy)
		nt_san_lazy_settle(fn);
	if (press)
		nt_san_tables_press();	/* (after a switch's wait, which frees them too) */
	if (events && nt_san_native_needed())
		nt_san_native_prepare();
	if (events && nt_san_fetch_needed())
		nt_san_fetch_prepare();
}

/* The calls that make, change and destroy graph execs (san_execs.c):
 * made and changed at their exit, once they succeeded; destroyed at the
 * entry, before the handle can name another exec. */
static const uint32_t exec_calls[] = {
	NT_SAN_CBID_DRIVER_cuGraphInstantiate,
	NT_SAN_CBID_DRIVER_cuGraphInstantiate_v2,
	NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags,
	NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams,
	NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams_ptsz,
	NT_SAN_CBID_DRIVER_cuGraphExecUpdate,
	NT_SAN_CBID_DRIVER_cuGraphExecUpdate_v2,
	NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2,
	NT_SAN_CBID_DRIVER_cuGraphExecChildGraphNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecDestroy,
	/* changes to an exec that a twin's update would undo (san_twins.c) */
	NT_SAN_CBID_DRIVER_cuGraphExecMemcpyNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecMemsetNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecHostNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecEventRecordNodeSetEvent,
	NT_SAN_CBID_DRIVER_cuGraphExecEventWaitNodeSetEvent,
	NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresSignalNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresWaitNodeSetParams,
	NT_SAN_CBID_DRIVER_cuGraphNodeSetEnabled,
	NT_SAN_CBID_DRIVER_cuGraphExecBatchMemOpNodeSetParams,
};

/* The exec that one of exec_calls' other changers (memcpy, memset,
 * host, event, semaphore, batch-memop node parameters, a node enabled)
 * changes; NULL for another call.  Each of their parameter structs
 * begins with it. */
static CUgraphExec changed_exec(uint32_t cbid, const void *p)
{
	switch (cbid) {
#define CHANGER(name)               \
	case NT_SAN_CBID_DRIVER_##name: \
		return p ? ((const name##_params *)p)->hGraphExec : NULL;
	CHANGER(cuGraphExecMemcpyNodeSetParams)
	CHANGER(cuGraphExecMemsetNodeSetParams)
	CHANGER(cuGraphExecHostNodeSetParams)
	CHANGER(cuGraphExecEventRecordNodeSetEvent)
	CHANGER(cuGraphExecEventWaitNodeSetEvent)
	CHANGER(cuGraphExecExternalSemaphoresSignalNodeSetParams)
	CHANGER(cuGraphExecExternalSemaphoresWaitNodeSetParams)
	CHANGER(cuGraphNodeSetEnabled)
	CHANGER(cuGraphExecBatchMemOpNodeSetParams)
#undef CHANGER
	default:
		return NULL;
	}
}

/* 1 when cbid is one of exec_calls (and handled).  The modules an exec
 * runs follow it (san_execs.c), and so does its clone (san_twins.c): an
 * exec pointed at twins is pointed back as a call that changes it
 * enters, and the change is mirrored in its clone at the exit, or the
 * exec is never pointed again.  Our own updates (pointing) are left
 * alone. */
static int on_exec_call(uint32_t cbid, const struct nt_san_api_data *d)
{
	const void *p = d->functionParams;
	const CUresult *ret = d->functionReturnValue;
	CUgraphExec *made = NULL, exec = NULL;
	CUgraph graph = NULL;
	CUfunction f = NULL;
	CUkernel k = NULL;
	CUcontext kctx = NULL;
	CUgraphNode node = NULL;	/* a kernel node set anew ... */
	CUDA_KERNEL_NODE_PARAMS kp = { 0 };	/* ... to these */
	int mirror = 0, other = 0;	/* the change is mirrored; one that cannot be */

	if (nt_san_twin_own())	/* an update of ours, or a shadow exec made */
		return 1;
	if (cbid == NT_SAN_CBID_DRIVER_cuGraphExecDestroy) {
		if (d->callbackSite == NT_SAN_API_ENTER && p) {
			nt_san_exec_gone(((const cuGraphExecDestroy_params *)p)->hGraphExec);
			nt_san_twin_exec_gone(((const cuGraphExecDestroy_params *)p)->hGraphExec);
			nt_san_nodes_forget_exec(((const cuGraphExecDestroy_params *)p)->hGraphExec);
		}
		return 1;
	}
	switch (cbid) {
#define MADE(name)                                                  \
	case NT_SAN_CBID_DRIVER_##name:                             \
		made = p ? ((const name##_params *)p)->phGraphExec : NULL; \
		graph = p ? ((const name##_params *)p)->hGraph : NULL;     \
		break;
	MADE(cuGraphInstantiate)
	MADE(cuGraphInstantiate_v2)
	MADE(cuGraphInstantiateWithFlags)
	MADE(cuGraphInstantiateWithParams)
	MADE(cuGraphInstantiateWithParams_ptsz)
#undef MADE
	case NT_SAN_CBID_DRIVER_cuGraphExecUpdate:
		exec = p ? ((const cuGraphExecUpdate_params *)p)->hGraphExec : NULL;
		graph = p ? ((const cuGraphExecUpdate_params *)p)->hGraph : NULL;
		mirror = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuGraphExecUpdate_v2:
		exec = p ? ((const cuGraphExecUpdate_v2_params *)p)->hGraphExec : NULL;
		graph = p ? ((const cuGraphExecUpdate_v2_params *)p)->hGraph : NULL;
		mirror = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams:
		if (p && ((const cuGraphExecKernelNodeSetParams_params *)p)->nodeParams) {
			const CUDA_KERNEL_NODE_PARAMS_v1 *q = ((const cuGraphExecKernelNodeSetParams_params *)p)->nodeParams;

			exec = ((const cuGraphExecKernelNodeSetParams_params *)p)->hGraphExec;
			node = ((const cuGraphExecKernelNodeSetParams_params *)p)->hNode;
			f = q->func;
			kp = (CUDA_KERNEL_NODE_PARAMS){ q->func, q->gridDimX, q->gridDimY, q->gridDimZ, q->blockDimX,
							q->blockDimY, q->blockDimZ, q->sharedMemBytes, q->kernelParams,
							q->extra, NULL, NULL };
			mirror = 1;
		}
		break;
	case NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2:
		if (p && ((const cuGraphExecKernelNodeSetParams_v2_params *)p)->nodeParams) {
			exec = ((const cuGraphExecKernelNodeSetParams_v2_params *)p)->hGraphExec;
			node = ((const cuGraphExecKernelNodeSetParams_v2_params *)p)->hNode;
			kp = *((const cuGraphExecKernelNodeSetParams_v2_params *)p)->nodeParams;
			f = kp.func, k = kp.kern, kctx = kp.ctx;
			mirror = 1;
		}
		break;
	case NT_SAN_CBID_DRIVER_cuGraphExecChildGraphNodeSetParams:
		exec = p ? ((const cuGraphExecChildGraphNodeSetParams_params *)p)->hGraphExec : NULL;
		graph = p ? ((const cuGraphExecChildGraphNodeSetParams_params *)p)->childGraph : NULL;
		other = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuGraphExecNodeSetParams: {
		const CUgraphNodeParams *np = p ? ((const cuGraphExecNodeSetParams_params *)p)->nodeParams : NULL;

		if (np && np->type == CU_GRAPH_NODE_TYPE_KERNEL)
			f = np->kernel.func, k = np->kernel.kern, kctx = np->kernel.ctx;
		else if (np && np->type == CU_GRAPH_NODE_TYPE_GRAPH)
			graph = np->graph.graph;
		exec = p ? ((const cuGraphExecNodeSetParams_params *)p)->hGraphExec : NULL;
		other = 1;
		break;
	}
	default:
		if (!(exec = changed_exec(cbid, p)))
			return 0;
		other = 1;
		break;
	}
	if (d->callbackSite == NT_SAN_API_ENTER) {
		if (exec)
			nt_san_twin_exec_changing(exec);
		nt_san_exec_call(1);
		tl.instantiating += made != NULL;
		tl.made_exec = NULL;
		return 1;
	}
	if (exec)	/* its nodes' grid ids may change */
		nt_san_nodes_exec_changed(exec);
	if (ret && *ret == CUDA_SUCCESS) {
		relax();	/* the driver queries, and a module a kernel's may load */
		if (made && *made) {
			nt_san_exec_instantiated(d->context, *made, graph);
			nt_san_twin_exec_made(d->context, *made, graph);
		} else if (exec && (graph || f || k)) {
			nt_san_exec_updated(d->context, exec, graph, f, k, kctx);
		}
		if (exec && node && mirror)
			nt_san_twin_exec_kernel_set(exec, node, &kp);
		else if (exec && graph && mirror)
			nt_san_twin_exec_updated(d->context, exec, graph);
		else if (exec && (other || mirror))
			nt_san_twin_exec_changed(exec);
	} else if (made && tl.made_exec) {	/* made, then the call failed: no exec */
		nt_san_exec_gone(tl.made_exec);
	}
	if (made && tl.instantiating)
		tl.instantiating--;
	tl.made_exec = NULL;
	nt_san_exec_call(0);
	return 1;
}

/* A graph exec made (the graphs domain's callback, inside its
 * instantiation): opaque until that call's exit lists its modules, gone
 * if the call fails. */
static void on_exec_made(const struct nt_san_graphexec_data *d)
{
	const struct nt_cuda *cu = nt_san_cuda();
	CUcontext ctx = NULL;

	if (!d->graphExec || nt_san_twin_own())	/* a shadow exec of ours */
		return;
	if (!cu || cu->cuCtxGetCurrent(&ctx))
		ctx = NULL;	/* then it holds every context's modules */
	nt_san_exec_made(ctx, d->graphExec);
	if (tl.instantiating)
		tl.made_exec = d->graphExec;
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
	l->graph = l->graph_node = l->graph_launch = -1;
	l->entry_only = 0;
	pending_dyn_smem = -1;
}

static uint64_t grid_of(unsigned x, unsigned y, unsigned z)
{
	return (uint64_t)x * y * z;
}

/* What the parameters of cuLaunchKernel and cuLaunchCooperativeKernel
 * (and their _ptsz forms), of type `type`, say of the launch. */
#define PLAIN_LAUNCH(type)                                               \
	do {                                                             \
		const type *q_ = p;                                      \
                                                                         \
		pending_dyn_smem = q_->sharedMemBytes;                   \
		stream = q_->hStream;                                    \
		fn = q_->f;                                              \
		blocks = grid_of(q_->gridDimX, q_->gridDimY, q_->gridDimZ); \
	} while (0)

/* A graph launch that failed after its nodes' callbacks: their runs
 * for several launches (san_nodes.c) count a launch the blocks never
 * made, so the exec's table is emptied before its next launch writes it
 * and no entry is taken again meanwhile. */
static void graph_launch_failed(uint32_t cbid, const struct nt_san_api_data *d)
{
	const CUresult *ret = d->functionReturnValue;
	CUgraphExec exec;

	if (!ret || *ret == CUDA_SUCCESS)
		return;
	if (cbid == NT_SAN_CBID_DRIVER_cuGraphLaunch)
		exec = ((const cuGraphLaunch_params *)d->functionParams)->hGraph;
	else if (cbid == NT_SAN_CBID_DRIVER_cuGraphLaunch_ptsz)
		exec = ((const cuGraphLaunch_ptsz_params *)d->functionParams)->hGraphExec;
	else
		return;
	nt_san_nodes_exec_changed(exec);
}

static void on_driver_call(uint32_t cbid, const struct nt_san_api_data *d)
{
	const void *p = d->functionParams;
	const CUlaunchConfig *c = NULL;
	CUstream stream = NULL;
	CUgraphExec exec = NULL;
	CUfunction fn = NULL;
	int ptsz = 0, graph = 0;
	uint64_t blocks = 0;

	if (on_exec_call(cbid, d) || !p)
		return;
	if (d->callbackSite != NT_SAN_API_ENTER) {
		tl.in_call = 0;
		graph_launch_failed(cbid, d);
		return;
	}
	switch (cbid) {
	case NT_SAN_CBID_DRIVER_cuLaunchKernel:
		PLAIN_LAUNCH(cuLaunchKernel_params);
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz:
		PLAIN_LAUNCH(cuLaunchKernel_ptsz_params);
		ptsz = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel:
		PLAIN_LAUNCH(cuLaunchCooperativeKernel_params);
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz:
		PLAIN_LAUNCH(cuLaunchCooperativeKernel_ptsz_params);
		ptsz = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchKernelEx:
		c = ((const cuLaunchKernelEx_params *)p)->config;
		break;
	case NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz:
		c = ((const cuLaunchKernelEx_ptsz_params *)p)->config;
		ptsz = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuGraphLaunch:
		stream = ((const cuGraphLaunch_params *)p)->hStream;
		exec = ((const cuGraphLaunch_params *)p)->hGraph;
		graph = 1;
		break;
	case NT_SAN_CBID_DRIVER_cuGraphLaunch_ptsz:
		stream = ((const cuGraphLaunch_ptsz_params *)p)->hStream;
		exec = ((const cuGraphLaunch_ptsz_params *)p)->hGraphExec;
		ptsz = graph = 1;
		break;
	default:
		return;
	}
	if (graph && tl.routed)	/* its entry done (route_begin) */
		return;
	if (cbid == NT_SAN_CBID_DRIVER_cuLaunchKernelEx || cbid == NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz) {
		pending_dyn_smem = c ? (int64_t)c->sharedMemBytes : -1;
		stream = c ? c->hStream : NULL;
		blocks = c ? grid_of(c->gridDimX, c->gridDimY, c->gridDimZ) : 0;
		fn = cbid == NT_SAN_CBID_DRIVER_cuLaunchKernelEx ? ((const cuLaunchKernelEx_params *)p)->f
								 : ((const cuLaunchKernelEx_ptsz_params *)p)->f;
	}
	tl.in_call = 0;	/* (a function loaded in before_launch is ours, not the launch's) */
	before_launch(!stream && ptsz ? CU_STREAM_PER_THREAD : stream, exec, graph, blocks, fn);
	tl.in_call = 1;
}

/* A launch being captured into a graph runs nothing now: its replays are
 * the graph's node launches (stream: the launch's; a graph node's, the
 * stream its graph was launched into, a child graph of the one captured
 * there).  The reason, or NULL. */
static const char *captured(CUstream stream)
{
	const struct nt_cuda *cu = nt_san_cuda();
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!cu)
		return "cannot ask the driver whether the stream is capturing";
	if (cu->cuStreamIsCapturing(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE)
		return "launch captured into a graph (its replays are traced as graph launches)";
	return NULL;
}

static struct nt_san_hold *node_reuse(const struct nt_san_launch_data *d, const struct nt_launch_info *l,
				      int entry_only, uint32_t *run, const char **why);
static uint32_t node_replays(CUcontext ctx, uint64_t blocks);

/* The caller's reference to h let go, h not traced after all.  A node's
 * run for several launches had its scratch zeroed on stream (nt_san_take),
 * maybe not yet done: given back now, its slots could be another launch's
 * when that happens, so the stream is waited for first (and the run kept
 * for good when that fails). */
static void drop_run(struct nt_san_hold *h, nt_san_stream stream)
{
	if (nt_san_hold_replays(h) && nt_san.sanitizerStreamSynchronize(stream))
		return;
	nt_san_release(h);
}

/* Everything a traced launch needs, up to its records in the collector;
 * sets its data with set_data(d, h) (h NULL: none; NULL, or the reason
 * it cannot).  A graph node whose entry in its exec's table names a run
 * for several of its launches with one left takes that instead
 * (node_reuse), and a node that files a new one asks for a run of
 * node_replays() launches.  The reason it cannot be traced, or NULL. */
static const char *trace(const struct nt_san_launch_data *d, nt_san_stream stream,
			 const struct nt_launch_info *l, uint64_t seq,
			 const char *(*set_data)(const struct nt_san_launch_data *d, struct nt_san_hold *h))
{
	uint64_t blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	struct nt_launch_info lt = *l;	/* ... with how its records come */
	const volatile struct nt_block_rec *rec;
	struct nt_san_hold *h = NULL;
	const char *why = NULL;
	uint32_t tag, run = 0;
	/* a plain launch's records stay on the device until an event after
	 * it has passed (san_fetch.c); a graph node's go to the host (its
	 * nodes have no end of their own to mark) */
	CUevent done = NULL;

	if (!blocks || blocks > UINT32_MAX)
		return "grid larger than 2^32 blocks";
	if ((why = patch(d->module, &lt.entry_only)))
		return why;
	relax();	/* record buffers and node tables: allocations, copies, waits */
	if (!tl.graph && tl.launch)
		done = nt_san_fetch_event(d->context);
	if (tl.graph && !(h = node_reuse(d, l, lt.entry_only, &run, &why)) && why)
		return why;
	/* a graph launch's nodes run once it is queued: a node waiting for
	 * the runs earlier nodes of it hold would wait in vain */
	if (!h) {
		if (!(h = nt_san_take(d->context, stream, d->gridId, (uint32_t)blocks,
				      l->block[0] * l->block[1] * l->block[2], l->grid[0], l->grid[1], done,
				      lt.entry_only, tl.graph ? node_replays(d->context, blocks) : 0, !tl.graph || !tl.took,
				      !tl.graph, &why)))
			return why;
		if ((why = set_data(d, h))) {
			drop_run(h, stream);
			return why;
		}
	}
	rec = nt_san_hold_records(h, run, &tag);
	if (nt_collector_traced(seq, &lt, rec, (uint32_t)blocks, tag, done ? nt_san_hold_fetch : NULL, nt_san_release,
				h)) {
		set_data(d, NULL);
		drop_run(h, stream);
		return "collector stopping or out of memory";
	}
	if (done) {	/* marked at the launch's end: end_launch() */
		nt_san_hold_await_end(h);
		tl.ended = h;
		tl.stream = d->stream;
	}
	tl.took |= tl.graph;
	nt_san_native_want(l, d->function);
	return NULL;
}

static const char *launch_data(const struct nt_san_launch_data *d, struct nt_san_hold *h)
{
	return nt_san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream,
						     h ? nt_san_hold_desc(h) : NULL) ?
		"cannot pass the record buffer to the launch" : NULL;
}

/* A graph's kernel node seen by the launch callbacks: on_graph_node()
 * has it. */
static int graph_node(const struct nt_san_launch_data *d)
{
	return d->apiStream || d->hApiStream || d->apiContext;
}

/* This thread's launch is queued (or its begin had no end: it failed). */
static void end_launch(void)
{
	if (tl.native)
		nt_san_native_end(tl.stream);
	if (tl.ended)
		nt_san_hold_ended(tl.ended, tl.stream);
	tl.native = 0;
	tl.ended = NULL;
	if (!tl.launch)
		return;
	tl.launch = 0;
	nt_inflight_leave(&inflight);
}

/* Sampling is exhausted (max=), no module is patched and no window is
 * left to close: a launch is only counted. */
static int sampling_over(void)
{
	return nt_collector_exhausted() && !any_patched() && !nt_collector_window_open();
}

/* ... but a plain launch not for DARK_GRACE launches after the last
 * window's close while a traced configuration still wants native times
 * (else max= left a trace without them). */
static int natives_wanted(void)
{
	return nt_san_native_unmet() && launches_since_close() < DARK_GRACE;
}

static void on_launch_begin(const struct nt_san_launch_data *d)
{
	struct nt_launch_info l;
	const char *why = NULL;
	uint64_t seq;
	int flags;

	if (graph_node(d))
		return;
	end_launch();
	if (tl.graph || tl.graph_lock)	/* a graph launch of this thread never ended */
		graph_end();
	/* (a window still open is closed by one more decision) */
	if (sampling_over() && !natives_wanted()) {
		nt_collector_count();
		pending_dyn_smem = -1;
		return;
	}
	tl.launch = 1;
	tl.closing = nt_inflight_enter(&inflight);
	launch_info(d, &l);
	flags = nt_collector_sample(&l, &seq);
	if (flags & NT_SAMPLE_CLOSE)
		nt_inflight_want_close(&inflight);
	if (tl.closing) {
		/* Another thread is switching modules: no sanitizer call now
		 * (counted: a launch of a module patched before the driver
		 * queues it would run patched code with no data set) */
		nt_collector_switch_overlap();
		if (flags & NT_SAMPLE_TRACE)
			nt_collector_dropped(seq, &l, "another thread was patching or unpatching modules");
		return;
	}
	if (flags & NT_SAMPLE_TRACE) {
		why = captured(d->stream);
		if (!why)
			why = trace(d, d->hStream, &l, seq, launch_data);
		if (why)
			dropped(seq, &l, why);
	}
	if ((!(flags & NT_SAMPLE_TRACE) || why) && any_patched()) {
		/* Patched code may run: it must find no data (not even a
		 * graph node's per-function data). */
		launch_data(d, NULL);
	} else if (!(flags & NT_SAMPLE_TRACE)) {
		tl.stream = d->stream;
		tl.native = nt_san_native_begin(&l, d->function, d->stream, seq);
	}
}

/* f's per-function data for this graph launch (reset at its end). */
static int function_data(CUfunction f, const void *data)
{
	if (nt_san.sanitizerSetCallbackData(f, data))
		return -1;
	if (!data)
		return 0;
	if (tl.n_data == tl.cap_data) {
		int cap = tl.cap_data ? 2 * tl.cap_data : 16;
		CUfunction *more = realloc(tl.data, (size_t)cap * sizeof(*more));
		const void **tabs = more ? realloc(tl.tables, (size_t)cap * sizeof(*tabs)) : NULL;

		if (more)
			tl.data = more;
		if (!tabs) {
			nt_san.sanitizerSetCallbackData(f, NULL);
			return -1;
		}
		tl.tables = tabs;
		tl.cap_data = cap;
	}
	tl.tables[tl.n_data] = data;
	tl.data[tl.n_data++] = f;
	return 0;
}

/* 1 when f was given a node table in this graph launch. */
static int given(CUfunction f)
{
	for (int i = 0; i < tl.n_data; i++)
		if (tl.data[i] == f)
			return 1;
	return 0;
}

/* A graph node launch's stream: the graph launch's. */
static nt_san_stream node_stream(const struct nt_san_launch_data *d)
{
	return d->hApiStream ? d->hApiStream : d->hStream;
}

/* No kernel is handed a node table in this graph launch (a node's entry
 * could not be cleared: the table would hand it a stale descriptor). */
static void untable(void)
{
	for (int i = 0; i < tl.n_data; i++)
		nt_san.sanitizerSetCallbackData(tl.data[i], NULL);
	tl.n_data = 0;
	tl.untabled = 1;
}

/* untable() where a node's entry could not be made right: the entries
 * filed or taken in this launch counted a launch their blocks will not
 * make (their kernels get no table), so none is taken again and the
 * table is emptied at its next write. */
static void untable_broken(void)
{
	untable();
	nt_san_nodes_exec_changed(tl.exec);
}

/* A kernel node of this thread's graph launch is not traced: its entry
 * in the exec's node table (san_nodes.c) back to none.  Not in a launch
 * on another stream than the exec's last, which hands no table out
 * (node_data), and whose wait would not wait for that last launch. */
static void node_untraced(const struct nt_san_launch_data *d)
{
	if (!tl.graph_lock || tl.moved || tl.untabled || !nt_san_node_filed(d->context, tl.exec, d->gridId))
		return;
	relax();	/* a copy, maybe a wait */
	/* A graph launched into a capture: no wait, no copy on its stream
	 * (they would break or join the capture); its nodes are not traced
	 * (captured()), so it hands no table out. */
	if (tl.capturing < 0)	/* (NULL, the legacy stream: the driver is asked too) */
		tl.capturing = captured(d->apiStream) != NULL;
	if (tl.capturing)
		return;
	if (nt_san_node_clear(d->context, tl.exec, tl.launch_id, node_stream(d), d->gridId, &tl.synced))
		untable_broken();
}

/* A node launch's data (san_nodes.c): its descriptor, filed under its
 * gridId in the table of its exec, which becomes the kernel's
 * per-function data. */
static const char *node_data(const struct nt_san_launch_data *d, struct nt_san_hold *h)
{
	const void *table, *grown_from;
	const char *why;

	if (!h) {	/* filed in this launch, not traced after all */
		node_untraced(d);
		return NULL;
	}
	if (tl.moved)
		return "its graph exec was launched on another stream than at its last launch "
		       "(the two launches' node records could mix)";
	if (tl.untabled)
		return "a node not traced in its graph launch could not be cleared from its exec's node table";
	table = nt_san_node_file(d->context, tl.exec, tl.launch_id, node_stream(d), d->gridId, nt_san_hold_desc(h), h,
				 &tl.synced, &grown_from, &why);
	if (!table)
		return why;
	/* the table grew: the kernels given the old one take the new (the
	 * clears after go into the new one only) */
	for (int i = 0; grown_from && i < tl.n_data; i++) {
		if (tl.tables[i] != grown_from)
			continue;
		if (nt_san.sanitizerSetCallbackData(tl.data[i], table)) {
			node_untraced(d);
			untable_broken();
			return "cannot pass the record buffer to the launch";
		}
		tl.tables[i] = table;
	}
	if (!given(d->function) && function_data(d->function, table)) {
		node_untraced(d);
		return "cannot pass the record buffer to the launch";
	}
	return NULL;
}

/* A traced node launch whose entry in its exec's table names a run for
 * several of its launches with one left (san_nodes.c): the run's hold
 * (a reference for the caller) and this launch's number in it, with the
 * table handed to the kernel; nothing is copied and nothing waited for.
 * NULL: none (*why NULL), or it could not be handed (*why). */
static struct nt_san_hold *node_reuse(const struct nt_san_launch_data *d, const struct nt_launch_info *l,
				      int entry_only, uint32_t *run, const char **why)
{
	struct nt_launch_desc want = {
		.blocks = l->grid[0] * l->grid[1] * l->grid[2],
		.threads = l->block[0] * l->block[1] * l->block[2],
		.grid_x = l->grid[0],
		.grid_y = l->grid[1],
	};
	struct nt_san_hold *h;
	const void *table;

	*why = NULL;
	if (tl.moved || tl.untabled ||
	    !(table = nt_san_node_reuse(d->context, tl.exec, tl.launch_id, d->gridId, &want, entry_only, &h, run)))
		return NULL;
	if (!given(d->function) && function_data(d->function, table)) {
		nt_san_release(h);
		*why = "cannot pass the record buffer to the launch";	/* the caller clears the entry */
		return NULL;
	}
	return h;
}

/* Launches of a graph node that a run filed now is for (nt_san_take's
 * replays): this one and as many of its exec's next launches as the
 * policy has launches and blocks left for (nt_sampling_left; the exec's
 * kernel nodes share the launches), at most REPLAYS_MAX (REPLAYS_UNBOUNDED
 * where the policy sets no bound: a run is refiled after as many) and
 * REPLAY_SLOTS blocks, within nt_san_replay_room() and an even share of
 * it among the exec's kernel nodes (so that on a large graph the first
 * nodes do not take it all); 0 (a run for this
 * launch alone) when that is fewer than 2, when the context's buffers
 * have no room for it now (a node after the first of its graph launch
 * may not wait for room), or when the exec's kernel nodes are not known
 * yet (its first launch seen). */
#define REPLAYS_MAX 256
#define REPLAYS_UNBOUNDED 64	/* when the policy sets no bound (--sample all) */
#define REPLAY_SLOTS (1u << 18)
static uint32_t node_replays(CUcontext ctx, uint64_t blocks)
{
	int64_t launches, left_blocks, n = tl.exec_nodes, r = REPLAYS_MAX;

	if (!n || !blocks || blocks > REPLAY_SLOTS / 2 || tl.moved || tl.untabled)	/* (node_data refuses) */
		return 0;
	nt_collector_left(&launches, &left_blocks);	/* after this one */
	if (launches < 0 && left_blocks < 0)
		r = REPLAYS_UNBOUNDED;
	if (launches >= 0 && 1 + launches / n < r)
		r = 1 + launches / n;
	if (left_blocks >= 0 && 1 + left_blocks / (int64_t)blocks < r)
		r = 1 + left_blocks / (int64_t)blocks;
	if ((int64_t)(REPLAY_SLOTS / blocks) < r)
		r = REPLAY_SLOTS / blocks;
	if ((int64_t)(nt_san_replay_room() / blocks) < r)	/* all runs of several launches */
		r = (int64_t)(nt_san_replay_room() / blocks);
	if ((int64_t)(nt_san_replay_share() / ((uint64_t)n * blocks)) < r)	/* this node's share */
		r = (int64_t)(nt_san_replay_share() / ((uint64_t)n * blocks));
	return r < 2 || !nt_san_room(ctx, (uint32_t)(r * blocks)) ? 0 : (uint32_t)r;
}

static void graph_end(void)
{
	struct graph_id *g;

	untable();
	tl.untabled = 0;
	if (tl.exec_seen && tl.nodes) {	/* for node_replays() at its next launch */
		pthread_mutex_lock(&nt_san.lock);
		HASH_FIND_PTR(graph_execs, &tl.exec, g);
		if (g)
			g->nodes = tl.nodes;
		pthread_mutex_unlock(&nt_san.lock);
	}
	tl.nodes = 0;
	if (tl.graph_lock)
		pthread_mutex_unlock(&graph_lock);
	tl.graph_lock = 0;
	if (!tl.graph)
		return;
	tl.graph = tl.closing = 0;
	nt_inflight_leave(&inflight);
}

/* 1 when exec's last launch was on another stream than this one's. */
static int exec_moved(CUgraphExec exec, nt_san_stream stream)
{
	struct graph_id *g;
	int moved = 0;

	pthread_mutex_lock(&nt_san.lock);
	if ((g = graph_id_get(&graph_execs, exec))) {
		moved = g->launched && g->stream != stream;
		g->stream = stream;
		g->launched = 1;
	}
	pthread_mutex_unlock(&nt_san.lock);
	return moved;
}

static void on_graph_launch_begin(const struct nt_san_graph_launch_data *g)
{
	end_launch();
	if (tl.graph)	/* the last one never ended */
		graph_end();
	tl.graph_upload = g->isGraphUpload != 0;
	tl.conditional = 0;
	tl.exec_seen = 0;
	tl.nodes = 0;
	tl.exec_nodes = 0;
	if (sampling_over())
		return;
	tl.graph = 1;
	tl.exec = g->graphExec;
	tl.synced = tl.took = tl.untabled = 0;
	tl.capturing = -1;
	tl.moved = !tl.graph_upload && exec_moved(g->graphExec, g->hStream);
	/* One graph launch at a time may trace: per-function data is one per
	 * function.  Never waited for: a graph launched meanwhile by another
	 * thread is not traced. */
	tl.closing = nt_inflight_enter(&inflight);
	tl.graph_lock = !tl.closing && !pthread_mutex_trylock(&graph_lock);
}

/* A kernel node not traced while a module is patched: its patched code
 * must find no data, and a node's data is not NULL unless set so (with
 * none set, the H200 handed graphs.cu's nodes a pointer that faulted,
 * "misaligned address": session 12, run 4).  The kernel's per-function
 * data, unless another node of it was given a table in this graph launch
 * (whose entries do not name this node: san_nodes.c), and only by the
 * thread that traces graphs (graph_lock); else this launch's data, which
 * fixed the fault as well. */
static void node_without_data(const struct nt_san_launch_data *d)
{
	if (tl.graph_lock) {
		if (!given(d->function))
			nt_san.sanitizerSetCallbackData(d->function, NULL);
	} else {
		nt_san.sanitizerSetLaunchCallbackData(d->hLaunch, d->function, d->hStream, NULL);
	}
}

static void on_graph_node(const struct nt_san_graph_node_data *g)
{
	const struct nt_san_launch_data *d = &g->launchData;
	struct nt_launch_info l;
	const char *why = NULL;
	uint64_t seq;
	int flags;

	if (g->isGraphUpload || tl.graph_upload)
		return;
	if (g->nodeType == CU_GRAPH_NODE_TYPE_CONDITIONAL)
		tl.conditional = 1;
	if (g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL)
		return;
	if (!tl.graph) {
		nt_collector_count();
		return;
	}
	tl.nodes++;
	if (!tl.exec_seen) {
		exec_launch(g->graphExec, g->launchId);
		tl.exec_seen = 1;
	}
	launch_info(d, &l);
	l.dyn_smem = -1;
	l.graph = id_of(&graph_execs, g->graphExec);
	tl.exec = g->graphExec;
	tl.launch_id = g->launchId;
	l.graph_node = id_of(&graph_nodes, g->node);
	l.graph_launch = g->launchId;
	flags = nt_collector_sample(&l, &seq);
	if (flags & NT_SAMPLE_CLOSE)
		nt_inflight_want_close(&inflight);	/* done as a later launch enters the driver */
	if (tl.closing) {
		/* begun during another thread's switch: no sanitizer call */
		nt_collector_switch_overlap();
		if (flags & NT_SAMPLE_TRACE)
			nt_collector_dropped(seq, &l, "another thread was patching or unpatching modules");
		return;
	}
	if (flags & NT_SAMPLE_TRACE) {
		/* A conditional node's body has one node callback per graph
		 * launch and runs 0 or many times (a while loop: 5 runs,
		 * one record each, session 12's run 2); its nodes come
		 * after the conditional node's callback, so every kernel
		 * node after one does without. */
		why = tl.conditional ? "a kernel node after a conditional node in its graph launch (a conditional "
				       "body runs 0 or many times per launch: their records would mix)"
		    : tl.graph_lock ? NULL : "another thread's graph launch was being traced";
		if (!why && d->apiStream)
			why = captured(d->apiStream);
		if (!why)
			why = trace(d, node_stream(d), &l, seq, node_data);
		if (why)
			dropped(seq, &l, why);
	}
	if (!(flags & NT_SAMPLE_TRACE) || why) {
		node_untraced(d);
		if (any_patched())
			node_without_data(d);
	}
}

static void module_loaded(const struct nt_san_module_data *d)
{
	/* only then is it patched as it loads: which of its kernels the
	 * policy may trace (demangled under match=) is asked only then */
	int from_start = nt_collector_from_start(), device_launches, wanted;
	char *variable = NULL;

	nt_kattrs_add_module(d->pCubin, d->cubinSize, &device_launches, from_start ? nt_collector_may_trace : NULL,
			     &wanted, &variable);
	pthread_mutex_lock(&nt_san.lock);
	nt_san_module_loaded(d->context, d->module, device_launches);
	pthread_mutex_unlock(&nt_san.lock);
	if (nt_collector_exhausted()) {
		free(variable);
		return;
	}
	/* for a graph exec made before a window: its twin's image */
	if (!device_launches)
		nt_san_twin_image(d->context, d->module, d->pCubin, d->cubinSize, variable);
	free(variable);
	relax();
	nt_san_context_patches(d->context);
	/* Its kernels' first launches cannot patch it: now, if they may be
	 * traced.  Not a module none of whose kernels the policy may trace
	 * (match=): patched, every launch of its kernels would run
	 * instrumented code, for nothing, until the window closed (idle=
	 * launches with none traced, or never while the matching kernel
	 * comes often enough).  from_start asked again: the first window
	 * may have closed while the patches went into the context, and a
	 * module patched after its close would stay patched until the next. */
	if (wanted && from_start && nt_collector_from_start() && nt_collector_switch_begin(0)) {
		const char *why;

		nt_san_patch(d->module, &why);
		nt_collector_switch_end();
	}
}

static void on_module(const struct nt_san_module_data *d)
{
	uint64_t slow0 = tl.slow_ns;
	double t0 = nt_now_s(), dt;

	module_loaded(d);
	dt = nt_now_s() - t0;
	nt_collector_module_loaded(dt);
	tl.slow_ns = slow0 + (uint64_t)(dt * 1e9);	/* a patch in it, once */
}

/* Functions of a module loaded lazily, at their first launch: counted,
 * and those loaded into a patched module apart (the Sanitizer patches
 * them as they load, inside that launch; meta lazy_into_patched). */
static void on_lazy_loaded(const struct nt_san_lazy_data *d)
{
	int patched, entry_only;

	pthread_mutex_lock(&nt_san.lock);
	patched = nt_san_module_patched(d->module);
	entry_only = patched && nt_san_module_entry_only(d->module);
	pthread_mutex_unlock(&nt_san.lock);
	nt_collector_lazy_loaded(d->numFunctions, patched, entry_only, tl.in_call);
}

static void on_module_unload(const struct nt_san_module_data *d)
{
	pthread_mutex_lock(&nt_san.lock);
	nt_san_module_unloading(d->module);
	pthread_mutex_unlock(&nt_san.lock);
	nt_san_twin_unloading(d->module);
}

/* Callbacks timed for the summary's own time: the first outermost one
 * after TIME_EVERY stands for those since the last timed one (reading
 * the clock twice in every callback cost more than the rest of an
 * untraced launch's callback on the build machine's virtual clock).
 * Prime: a launch is a fixed cycle of 4 callbacks, and 64 timed the same
 * kind every time.  What a callback spent waiting or switching
 * (nt_san_slow) is left out of the scaled time and counted exactly.
 * While a window is open every callback is timed and stands for itself:
 * a traced launch's callbacks (record buffers, descriptors) cost far
 * more than the rest, and scaled by 61 a few of them made 0.9 s of a
 * large-batch run's estimate (session 16, run 2). */
#define TIME_EVERY 61

void nt_san_slow(double seconds)
{
	tl.slow_ns += (uint64_t)(seconds * 1e9);
}

static void callback(void *userdata, nt_san_domain domain, uint32_t cbid, const void *data)
{
	int saved = errno;	/* the program's, inside its CUDA call */
	int outer = !tl.depth, exact = outer && nt_collector_window_open(),
	    timed = exact || (outer && ++tl.callbacks - tl.counted >= TIME_EVERY);
	double t0 = timed ? nt_now_s() : 0;
	uint64_t slow0 = tl.slow_ns;

	(void)userdata;
	tl.depth++;
	seen_thread();
	switch (domain) {
	case NT_SAN_CB_DOMAIN_LAUNCH:
		if (cbid == NT_SAN_CBID_LAUNCH_BEGIN)
			on_launch_begin(data);
		else if (cbid == NT_SAN_CBID_LAUNCH_END && !graph_node(data))
			end_launch();
		break;
	case NT_SAN_CB_DOMAIN_DRIVER_API:
		on_driver_call(cbid, data);
		break;
	case NT_SAN_CB_DOMAIN_GRAPHS:
		if (cbid == NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN)
			on_graph_node(data);
		else if (cbid == NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN)
			on_graph_launch_begin(data);
		else if (cbid == NT_SAN_CBID_GRAPHS_LAUNCH_END)
			graph_end();
		else if (cbid == NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED)
			on_exec_made(data);
		break;
	case NT_SAN_CB_DOMAIN_RESOURCE:
		if (cbid == NT_SAN_CBID_RESOURCE_MODULE_LOADED)
			on_module(data);
		else if (cbid == NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING)
			on_module_unload(data);
		else if (cbid == NT_SAN_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED)
			on_lazy_loaded(data);
		else if (cbid == NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			relax();
			nt_san_context_destroyed(((const struct nt_san_context_data *)data)->context);
			nt_san_context_forget(((const struct nt_san_context_data *)data)->context);
			nt_san_nodes_forget(((const struct nt_san_context_data *)data)->context);
			nt_san_native_forget(((const struct nt_san_context_data *)data)->context);
			nt_san_fetch_forget(((const struct nt_san_context_data *)data)->context);
			nt_san_execs_forget(((const struct nt_san_context_data *)data)->context);
			nt_san_twins_forget(((const struct nt_san_context_data *)data)->context);
		}
		break;
	}
	if (!--tl.depth && tl.relaxed) {
		nt_san_unrelax(tl.mode);
		tl.relaxed = 0;
	}
	if (outer && tl.slow_ns != slow0)
		nt_collector_callback_time(0, 0, tl.slow_ns - slow0);
	if (timed) {
		unsigned n = exact ? 1 : tl.callbacks - tl.counted;
		uint64_t dt = (uint64_t)((nt_now_s() - t0) * 1e9), slow = tl.slow_ns - slow0;

		if (!exact)
			tl.counted = tl.callbacks;
		nt_collector_callback_time(domain == NT_SAN_CB_DOMAIN_LAUNCH, n, n * (dt > slow ? dt - slow : 0));
	}
	if (outer)
		tl.slow_ns = slow0 = 0;
	errno = saved;
}

/* Graph launches routed through libnucatrace (interposer/graphroute.h,
 * NUCATRACE_GRAPH_ROUTE=shadow, the default).  What the cuGraphLaunch callback does
 * at the launch's entry (before_launch) is done here instead, before the
 * driver is called, with the callbacks' bookkeeping: so a window that
 * points the exec at twins does it with a shadow exec (san_twins.c),
 * which is then launched in the exec's place, and the exec itself is
 * never changed.  The launch's own cuGraphLaunch callback then leaves it
 * alone (tl.routed).  While the launch callbacks are off, or sampling is
 * over, nothing: their callback would not come either. */
static CUgraphExec route_begin(CUgraphExec exec, CUstream stream, int same)
{
	int saved = errno, outer = !tl.depth, exact;
	uint64_t slow0 = tl.slow_ns;
	CUgraphExec shadow;
	double t0;

	if (!exec || nt_san_dark_now() || sampling_over())
		return exec;
	exact = outer && nt_collector_window_open();
	t0 = exact ? nt_now_s() : 0;
	tl.depth++;
	seen_thread();
	tl.routing = same;	/* else the exec itself is pointed at twins, if at all */
	before_launch(stream, exec, 1, 0, NULL);
	tl.routing = 0;
	if (!--tl.depth && tl.relaxed) {
		nt_san_unrelax(tl.mode);
		tl.relaxed = 0;
	}
	shadow = same ? nt_san_twin_shadow(exec) : NULL;
	if (shadow && captured(stream)) {
		nt_san_twin_shadow_done();	/* captured, it would run twins in the program's graph */
		shadow = NULL;
	}
	tl.routed = 1;
	if (outer && tl.slow_ns != slow0)
		nt_collector_callback_time(0, 0, tl.slow_ns - slow0);
	if (exact) {
		uint64_t dt = (uint64_t)((nt_now_s() - t0) * 1e9), slow = tl.slow_ns - slow0;

		nt_collector_callback_time(0, 1, dt > slow ? dt - slow : 0);
	}
	if (outer)
		tl.slow_ns = 0;
	errno = saved;
	return shadow ? shadow : exec;
}

/* The driver refused the shadow launched in exec's place (r): the
 * program's exec was launched instead, and no shadow is made again. */
static void route_failed(CUgraphExec exec, CUresult r)
{
	int saved = errno;

	nt_san_twin_shadow_refused(exec, r);
	errno = saved;
}

static void route_end(CUgraphExec exec, CUgraphExec given)
{
	tl.routed = 0;
	if (given != exec)
		nt_san_twin_shadow_done();
}

/* exec's last launch ran its shadow on another stream than stream: the
 * device's work so far is waited for, as the driver would have ordered
 * exec's launch after it (rare: an exec launched on a new stream just
 * after a window); not for a launch being captured, which runs nothing */
static void route_fence(CUstream stream)
{
	const struct nt_cuda *cu = nt_san_cuda();
	CUstreamCaptureMode mode;
	int relaxed, saved = errno;

	if (!cu || captured(stream))
		return;
	relaxed = nt_san_relax(&mode);
	cu->cuCtxSynchronize();
	if (relaxed)
		nt_san_unrelax(mode);
	errno = saved;
}

static const struct nt_graph_route route = { route_begin, route_failed, route_end, route_fence };

/* A child after fork(): its one thread holds none of the locks. */
static void child_reset(void)
{
	pthread_mutex_init(&nt_san.lock, NULL);
	pthread_mutex_init(&graph_lock, NULL);
	nt_san_nodes_reset();
	nt_san_modules_reset();
	nt_san_native_reset();
	nt_san_fetch_reset();
	nt_san_dark_reset();
	memset(&inflight, 0, sizeof(inflight));
	memset(&tl, 0, sizeof(tl));
}

/* Not CONTEXT_CREATION_FINISHED: with it enabled alone every launch of a
 * triad ran 3.5% slower, nothing patched (session 11, run 2); a
 * context's buffers are made at its first traced launch instead. */
static const uint32_t resource_calls[] = {
	NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, NT_SAN_CBID_RESOURCE_MODULE_LOADED,
	NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
};

static int san_start(const struct nt_config *cfg, struct nt_err *err)
{
	nt_san_result r;

	nt_san.cfg = *cfg;
	/* A policy that can trace nothing (none) does not even load the
	 * Compute Sanitizer: it writes no trace and counts nothing.  Callbacks
	 * cost the host even when they return at once (the graphs domain's
	 * node callback about 1.4 us per kernel node of every graph launch:
	 * PyTorch's captured step went from 0.05 to 1.5 ms per replay;
	 * session 14, run 3), and so, it seems, does being subscribed with
	 * none enabled: 0.39-0.72 us per empty launch over bare in three
	 * runs, against -0.18 us with the library loaded and no backend
	 * (docs/results/2026-12-02-dark-callbacks.md, run 3). */
	if (nt_collector_exhausted())
		return 0;
	pthread_atfork(NULL, NULL, child_reset);
	if (nt_san_load(err))
		return -1;
	nt_san_bind_cuda();
	if ((r = nt_san.sanitizerSubscribe(&nt_san.sub, callback, NULL)))
		return nt_err_set(err, "cannot subscribe to the Compute Sanitizer: %s%s", nt_san_error(r),
				  r == NT_SAN_ERROR_MAX_LIMIT_REACHED ? " (" NT_ANOTHER_TOOL ")" : "");
	/* Only the resource callbacks handled (docs/results/2026-12-01-triad-subscription.md). */
	for (size_t i = 0; i < sizeof(resource_calls) / sizeof(resource_calls[0]); i++)
		if ((r = nt_san.sanitizerEnableCallback(1, nt_san.sub, NT_SAN_CB_DOMAIN_RESOURCE, resource_calls[i])))
			goto fail;
	/* Lazy loads, counted only: a Sanitizer without the callback is no
	 * reason to stop. */
	nt_san.sanitizerEnableCallback(1, nt_san.sub, NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED);
	/* Graph execs made, changed and destroyed, always (never dark: an
	 * exec made meanwhile would go unseen; they come seldom). */
	if ((r = nt_san.sanitizerEnableCallback(1, nt_san.sub, NT_SAN_CB_DOMAIN_GRAPHS,
						 NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED)))
		goto fail;
	for (size_t i = 0; i < sizeof(exec_calls) / sizeof(exec_calls[0]); i++)
		if ((r = nt_san.sanitizerEnableCallback(1, nt_san.sub, NT_SAN_CB_DOMAIN_DRIVER_API, exec_calls[i])))
			goto fail;
	/* Of the driver API's other calls only the launches: their parameters
	 * carry the dynamic shared memory, which the launch callback does not. */
	if ((r = nt_san_launch_callbacks_on()))
		goto fail;
	if (cfg->graph_shadow)
		nt_graph_route_set(&route);
	return 0;
fail:
	/* Leave nothing half-started: another backend may try next. */
	nt_san.sanitizerUnsubscribe(nt_san.sub);
	nt_san.sub = NULL;
	return nt_err_set(err, "cannot enable sanitizer callbacks: %s", nt_san_error(r));
}

const struct nt_backend nt_backend_blocks = {
	.name = "blocks",
	.start = san_start,
};
