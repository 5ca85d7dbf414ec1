/*
 * san.h - what the files of the blocks backend share; nothing else
 * includes it.
 *
 *   san_lib.c      the Compute Sanitizer library: loading, the entry
 *                  points (sanitizer.def), error strings
 *   san_modules.c  the program's modules: patched on demand, unpatched
 *                  when a sampling window closes
 *   san_buffers.c  per context, the record buffers (recpool.h) that
 *                  traced launches take and the collector gives back
 *   san_native.c   native timing of untraced launches with events
 *   san_fetch.c    plain launches' records kept on the device: the events
 *                  that mark a launch's end, and the copies to the host
 *   san_nodes.c    CUDA graph nodes: a table per graph exec and kernel
 *                  from a node's grid id to its descriptor
 *   san_execs.c    the live graph execs and the modules they run, which
 *                  are never patched
 *   san_dark.c     the launch callbacks, off between sampling windows
 *   backend_sanitizer.c  the callbacks: launches, graph launches,
 *                  resources
 *
 * Locks, outermost first: nt_san.lock (the tables here), then the
 * collector's own; san_nodes.c's mutex is taken with neither held (and
 * not held while it waits for a stream).  No callback waits for another thread of the program
 * (the driver may hold its own locks while it calls us: inflight.h); a
 * launch out of record space waits for the collector's thread, which
 * polls no event meanwhile (its only other driver calls are the device
 * queries at a device's first traced launch).
 */
#ifndef NT_SAN_H
#define NT_SAN_H

#include <pthread.h>
#include <stdint.h>

#include "interposer/config.h"
#include "interposer/launch.h"
#include "sanitizer_abi.h"
#include "util/err.h"

struct nt_launch_desc;

struct nt_san {
	void *lib;
#define NT_SAN(name, params) nt_san_result (*name) params;
#include "sanitizer.def"
#undef NT_SAN
	nt_san_subscriber sub;
	pthread_mutex_t lock;
	struct nt_config cfg;
};

extern struct nt_san nt_san;

/* ctx noted among the *n contexts in ctxs, once (room for it taken as
 * given): the contexts a wait for the device must cover. */
static inline void nt_san_note_ctx(CUcontext *ctxs, int *n, CUcontext ctx)
{
	for (int i = 0; i < *n; i++)
		if (ctxs[i] == ctx)
			return;
	ctxs[(*n)++] = ctx;
}

/* san_lib.c */
int nt_san_load(struct nt_err *err);
const char *nt_san_error(nt_san_result r);
/* The driver API, bound once at start; NULL when it could not be. */
struct nt_cuda;
void nt_san_bind_cuda(void);
const struct nt_cuda *nt_san_cuda(void);
/* Stream capture and our own calls.  Allocating, synchronising, querying
 * an event and patching a module are among the calls stream capture
 * deems potentially unsafe: while any thread captures in
 * CU_STREAM_CAPTURE_MODE_GLOBAL (PyTorch's mode), such a call from a
 * thread in that mode fails and invalidates the capture, and the program
 * fails at its end (session 14: the training step's capture under the
 * default policy, our collector's cuEventQuery).  Ours touch no captured
 * stream, so around them the calling thread's mode is relaxed:
 * nt_san_relax() saves it (1 when it did), nt_san_unrelax() puts it back. */
int nt_san_relax(CUstreamCaptureMode *saved);
void nt_san_unrelax(CUstreamCaptureMode saved);

/* san_modules.c: with nt_san.lock held unless said otherwise. */
void nt_san_module_loaded(CUcontext ctx, CUmodule mod, int device_launches);
/* At a module's load (nt_san.lock not held): the block callbacks into
 * its context, once. */
void nt_san_context_patches(CUcontext ctx);
/* The context is going away, and its modules with it (its handle may
 * come back for another). */
void nt_san_context_forget(CUcontext ctx);
void nt_san_module_unloading(CUmodule mod);
int nt_san_module_patched(CUmodule mod);
/* 1 when mod is patched with the block entry site alone (the blocks
 * mode's phase when it was patched: nt_collector_entry_phase). */
int nt_san_module_entry_only(CUmodule mod);
int nt_san_any_patched(void);
/* Patch mod (nt_san.lock not held; in its module callback, or at a
 * launch's entry into the driver with no launch in flight, never in a
 * launch's callbacks): 0, or -1 with the reason in *why. */
int nt_san_patch(CUmodule mod, const char **why);
/* A module a traced launch needed (nt_san.lock held), patched by
 * nt_san_patch_wanted() before a later launch in the window, outside the
 * launch's callbacks (nt_san.lock not held): NULL, or the reason it never
 * will be.  Closing a window (nt_san_unpatch_all) forgets what was asked
 * for. */
const char *nt_san_want(CUmodule mod);
/* Why mod can never be patched (nt_san.lock held), or NULL. */
const char *nt_san_unpatchable(CUmodule mod);
int nt_san_any_wanted(void);
void nt_san_patch_wanted(void);
/* NUCATRACE_LAZY_SETTLE=1 (an experiment, issue 33): at a plain launch's
 * entry into the driver (nt_san.lock not held, no launch in flight), f
 * (a CUfunction, or a CUkernel the launch names) loaded now if it is not
 * yet and its module is patched, after a wait for the GPU: not inside
 * the launch, while earlier launches of its module may run. */
void nt_san_lazy_settle(CUfunction f);
/* At a graph launch's entry (no capture, no launch in flight): where
 * retired graph node tables fill half the room live tables leave under
 * NUCATRACE_GRAPH_TABLES (nt_san_nodes_pressed), the contexts holding
 * them are waited for and they are freed, as a switch's wait would;
 * under --sample all no switch comes. */
void nt_san_tables_press(void);
/* A child after fork(). */
void nt_san_modules_reset(void);
/* Unpatch every patched module (at a launch's entry into the driver, no
 * launch in flight); the time goes to the collector.  -1 (nothing done)
 * while a module is being patched. */
int nt_san_unpatch_all(void);


/* san_buffers.c */
void nt_san_context_destroyed(CUcontext ctx);
/* A record run for a traced launch of `blocks` blocks on ctx, its
 * descriptor (naming the launch's grid id, kernels/blockrec.h) copied on
 * stream when upload (a graph node's goes into its exec's table instead,
 * san_nodes.c): may wait up to nt_san.cfg.wait_s for room, when may_wait and
 * the policy waits (nt_collector_waits: else the window closes and the
 * launch is dropped), nt_san.lock not held.  replays > 0: a graph node's
 * run for that many launches of its exec (kernels/blockrec.h: blocks *
 * replays records, the scratch's launch counts zeroed on stream).  The
 * hold for nt_collector_traced(), or NULL with the reason in *why. */
struct nt_san_hold *nt_san_take(CUcontext ctx, nt_san_stream stream, uint64_t grid, uint32_t blocks,
				uint32_t threads, uint32_t grid_x, uint32_t grid_y, CUevent done, int entry_only,
				uint32_t replays, int may_wait, int upload, const char **why);
/* With an event `done` (san_fetch.c), the blocks write their records to
 * the run's device copy, copied to its host records once done has
 * passed; the hold owns the event from then on (given back at release).
 * Once the launch is the collector's, nt_san_hold_await_end(); at the
 * launch's end nt_san_hold_ended() records the event on its stream (and
 * frees the hold if it was released meanwhile). */
void nt_san_hold_await_end(struct nt_san_hold *h);
void nt_san_hold_ended(struct nt_san_hold *h, CUstream stream);
/* The collector's fetch (collector.h) for a hold. */
int nt_san_hold_fetch(void *hold);
/* 1 when a launch of `blocks` would find room in ctx's record buffers
 * now, or never can (nt_recpool_room); 0 when it would wait. */
int nt_san_room(CUcontext ctx, uint32_t blocks);
/* Where the records of its launch `run` (0 unless replays) go, and their tag. */
const volatile struct nt_block_rec *nt_san_hold_records(const struct nt_san_hold *h, uint32_t run, uint32_t *tag);
/* Slots that runs for several launches may hold together (a quarter of
 * a context's NUCATRACE_BUFFER_MAX), and those left of it now. */
uint64_t nt_san_replay_share(void);
uint64_t nt_san_replay_room(void);
/* Its descriptor's replays (0: one launch's). */
uint32_t nt_san_hold_replays(const struct nt_san_hold *h);
/* 1 when its records are entry-only ones (struct nt_entry_rec). */
int nt_san_hold_entry_only(const struct nt_san_hold *h);
/* One more reference: nt_san_release() gives the run back at the last. */
void nt_san_hold_ref(struct nt_san_hold *h);
/* The descriptor: in device memory when uploaded, else the host's copy. */
const void *nt_san_hold_desc(const struct nt_san_hold *h);
/* The collector's release(), or the caller's undo (nt_san.lock not held). */
void nt_san_release(void *hold);

/* san_nodes.c: graph kernel nodes' data (kernels/blockrec.h), called by
 * the thread that holds the backend's graph_lock, nt_san.lock not held.
 * *synced: 0 at a graph launch's begin, 1 once its stream was waited for
 * (the first write into a table that an earlier launch was handed waits).
 * For the traced node launch with grid gridid in launch `launch` of graph
 * exec exec on stream: desc (the host's, nt_san_hold_desc) filed in
 * exec's table of ctx; the table's descriptor, to be the per-function
 * data of every kernel of ctx with a node traced in this launch (a table
 * that grew is a new one, and *grown_from the old one, else NULL: the
 * kernels given the old one in this launch must take it), or NULL with
 * the reason in *why. */
const void *nt_san_node_file(CUcontext ctx, CUgraphExec exec, uint32_t launch, nt_san_stream stream,
			     uint64_t gridid, const struct nt_launch_desc *desc, struct nt_san_hold *hold,
			     int *synced, const void **grown_from, const char **why);
/* The node's next launch, when its entry names a run for several
 * launches (desc->replays, nt_san_node_file's hold) of the same shape as
 * want (blocks, threads, grid), in entry_only's records, with one left:
 * its number in *run, the hold in *hold with a reference for the caller,
 * and the table to hand out (nothing is written: the blocks find their
 * records by their own launch count); NULL when there is none. */
const void *nt_san_node_reuse(CUcontext ctx, CUgraphExec exec, uint32_t launch, uint64_t gridid,
			      const struct nt_launch_desc *want, int entry_only, struct nt_san_hold **hold,
			      uint32_t *run);
/* 1 when the node's entry holds a descriptor (nt_san_node_clear would
 * write). */
int nt_san_node_filed(CUcontext ctx, CUgraphExec exec, uint64_t gridid);
/* A node not traced in this launch (or filed, and not traced after all):
 * its entry back to none, when it holds a descriptor.  -1 when that
 * failed (no kernel may then be handed the table in this launch). */
int nt_san_node_clear(CUcontext ctx, CUgraphExec exec, uint32_t launch, nt_san_stream stream, uint64_t gridid,
		      int *synced);
/* exec was updated in place: its nodes' grid ids may have changed, and
 * its table is emptied before the next launch writes it. */
void nt_san_nodes_exec_changed(CUgraphExec exec);
/* The context is going away: its tables and their device memory. */
void nt_san_nodes_forget(CUcontext ctx);
/* exec is being destroyed, or its handle now names another exec: the
 * old one's tables go, their entries letting go of their runs (as at a
 * window's close; its launches traced keep theirs), their device memory
 * retired (its last launch may still read them). */
void nt_san_nodes_forget_exec(CUgraphExec exec);
/* Tables' device blocks retired so far: a mark for nt_san_nodes_reclaim,
 * taken before a wait for a context's work. */
uint64_t nt_san_nodes_mark(void);
/* Every launch of ctx queued before the mark was taken is done (the
 * context waited for since): its blocks retired by then are freed. */
void nt_san_nodes_reclaim(CUcontext ctx, uint64_t mark);
/* Retired blocks should be freed now, having filled half the room that
 * live tables leave under NUCATRACE_GRAPH_TABLES (more after a wait that
 * freed too little): the contexts that hold them, up to max, in ctxs
 * (NULL: only whether there are any), and how many; else 0.  Asked at a
 * graph launch's entry; the caller waits for the contexts
 * (nt_san_nodes_reclaim), then calls nt_san_nodes_pressed_done. */
int nt_san_nodes_pressed(CUcontext *ctxs, int max);
void nt_san_nodes_pressed_done(void);
/* A window's modules were unpatched: the entries let go of their runs
 * (each launch traced keeps its own reference; a node whose table is
 * handed out was traced, or its entry cleared, so no block writes into
 * a run let go).  The entries stay filed: a launch traces or clears them
 * before handing their table out again. */
void nt_san_nodes_retire(void);
/* A child after fork(). */
void nt_san_nodes_reset(void);

/* san_native.c: time untraced launches of traced configurations. */
void nt_san_native_want(const struct nt_launch_info *l, CUfunction f);
/* At launch begin of an untraced launch running native code: 1 when an
 * event was recorded before it (finish with nt_san_native_end). */
int nt_san_native_begin(const struct nt_launch_info *l, CUfunction f, CUstream stream, uint64_t seq);
void nt_san_native_end(CUstream stream);
/* 1 when a launch to be timed natively found no events: the next
 * launch's entry should make some (nt_san_native_prepare). */
int nt_san_native_needed(void);
/* 1 while a traced configuration has fewer native times than it wants. */
int nt_san_native_unmet(void);
/* At a launch's entry into the driver, before its locks (not on a
 * capturing stream): makes the events native timing will need in the
 * current context (none are made in launch callbacks). */
void nt_san_native_prepare(void);
/* The context is going away: its events leave the pool and its timings
 * in flight are dropped (nothing destroyed: in a callback; they go with
 * the context).  Waits (briefly) for a query the collector began. */
void nt_san_native_forget(CUcontext ctx);
/* A child after fork(). */
void nt_san_native_reset(void);

/* san_fetch.c: a pooled event of ctx to mark a traced launch's end (in
 * its callbacks: none is made there; NULL when none is left, and the next
 * launch's entry makes more, nt_san_fetch_prepare); given back on the
 * collector's thread (ctx_dead: its context is gone, and the event with
 * it).  nt_san_fetch_done: 1 when it has passed, 0 not yet, -1 failed.
 * nt_san_fetch_copy: bytes from the device to the host on the context's
 * own copy stream, waited for: on the collector's thread (0 or -1, the
 * first failure warned and fetching off), or with app on a launch's
 * thread inside its callback, ctx current (-1, quietly, when that is not
 * so or the stream is not made yet: nt_san_fetch_prepare makes it). */
CUevent nt_san_fetch_event(CUcontext ctx);
int nt_san_fetch_needed(void);
void nt_san_fetch_prepare(void);
void nt_san_fetch_give(CUcontext ctx, CUevent e, int ctx_dead);
int nt_san_fetch_done(CUevent e);
int nt_san_fetch_copy(CUcontext ctx, void *dst, const void *src, size_t bytes, int app);
void nt_san_fetch_forget(CUcontext ctx);
void nt_san_fetch_reset(void);

/* san_execs.c: graph execs and the modules they run (nt_san.lock not
 * held, but for nt_san_exec_holds).  An exec is made (the graphs
 * domain's callback: its modules unknown yet), instantiated from graph
 * (the instantiation's exit: its modules listed), updated (graph, or one
 * kernel as a function f or library kernel k of context kctx: their
 * modules added), gone (destroyed, or its context is). */
void nt_san_exec_made(CUcontext ctx, CUgraphExec exec);
void nt_san_exec_instantiated(CUcontext ctx, CUgraphExec exec, CUgraph graph);
void nt_san_exec_updated(CUcontext ctx, CUgraphExec exec, CUgraph graph, CUfunction f, CUkernel k,
			 CUcontext kctx);
/* A call that makes or changes an exec enters the driver (1), or returns
 * (0): see nt_san_exec_holds. */
void nt_san_exec_call(int enter);
void nt_san_exec_gone(CUgraphExec exec);
void nt_san_execs_forget(CUcontext ctx);
/* Why mod (of context ctx) must not be patched now: a live exec runs it,
 * or one whose modules are not all known lives in ctx, or another thread
 * is making or changing one; NULL when it may be (nt_san.lock held). */
const char *nt_san_exec_holds(CUmodule mod, CUcontext ctx);
/* ... its first reason, and a graph node's whose module is not patched */
extern const char NT_SAN_HELD[];
/* Calls fn(node, params, arg) for each kernel node of graph, child graphs'
 * too (san_execs.c): 0, or -1 when a node cannot be listed (a failed
 * query, a conditional node, whose bodies have no getter, out of memory)
 * or fn returned nonzero; the walk stops there.  *memory (unless NULL)
 * set to 1 when a node it passed allocates or frees memory. */
typedef int (*nt_san_kernel_node_fn)(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p, void *arg);
int nt_san_graph_kernels(const struct nt_cuda *cu, CUgraph graph, nt_san_kernel_node_fn fn, void *arg, int *memory);
/* san_twins.c: instrumented twins of modules that graph execs made before
 * a window run (issue 33).  nt_san_twin_image() keeps a module's cubin as
 * it loads (its load callback; variable: a module-scope variable's name,
 * or NULL); nt_san_twin_exec_made/_updated/_kernel_set/_changed/_gone
 * follow the program's execs (the exec calls' callbacks: made, updated
 * and changed at their exit, gone at the destroy's entry), and
 * nt_san_twin_exec_changing() points an exec back before the program's
 * call changes it (at that call's entry).  nt_san_twin_point() points
 * exec's kernel nodes at patched twins of their modules (at a graph
 * launch's entry while a window is open, under a switch; shadow: by a
 * shadow exec, where the launch is routed): NULL, or why some could not
 * be; nt_san_twin_shadow(): the shadow exec to launch in exec's place,
 * or NULL (one handed out is not destroyed before the matching
 * nt_san_twin_shadow_done(), after its launch); nt_san_twin_shadow_refused(): the driver refused to launch
 * exec's shadow (r): no more shadows, exec pointed back (outside the
 * driver's calls); nt_san_twin_point_back_all() points every exec back
 * (before a window's modules are unpatched): 0, or -1 when one stays
 * pointed.  nt_san_twin_own(): 1 while this thread makes a driver call of
 * our own (the callbacks leave it alone).  nt_san_twin_wanted(): the
 * kernel nodes of exec's graph when exec can be pointed at twins (0:
 * never), and whether it is now (*pointed; a window's close points every
 * exec back).
 * nt_san_twin_why(): why mod
 * can have no twin when that is its module-scope variables, else NULL
 * (nt_san.lock held). */
void nt_san_twin_image(CUcontext ctx, CUmodule mod, const void *cubin, size_t size, const char *variable);
void nt_san_twin_unloading(CUmodule mod);
void nt_san_twin_exec_made(CUcontext ctx, CUgraphExec exec, CUgraph graph);
void nt_san_twin_exec_updated(CUcontext ctx, CUgraphExec exec, CUgraph graph);
void nt_san_twin_exec_kernel_set(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p);
void nt_san_twin_exec_changed(CUgraphExec exec);
void nt_san_twin_exec_changing(CUgraphExec exec);
void nt_san_twin_exec_gone(CUgraphExec exec);
int nt_san_twin_wanted(CUgraphExec exec, int *pointed);
const char *nt_san_twin_point(CUcontext ctx, CUgraphExec exec, int shadow);
CUgraphExec nt_san_twin_shadow(CUgraphExec exec);
void nt_san_twin_shadow_done(void);
void nt_san_twin_shadow_refused(CUgraphExec exec, CUresult r);
int nt_san_twin_any_pointed(void);
int nt_san_twin_point_back_all(void);
int nt_san_twin_own(void);
const char *nt_san_twin_why(CUmodule mod);
void nt_san_twins_forget(CUcontext ctx);


/* san_dark.c: the callbacks of launches (the driver's launch calls,
 * launch begin and end, graph launches and their nodes).  On: at start;
 * 0 or the failure, with none of them on.  nt_san_dark(until): off now
 * (never waits: 0 when another thread is switching them, or they cannot
 * be), back on at `until` (INFINITY: never) from the collector's thread;
 * call it only with no launch in flight and no module patched. */
nt_san_result nt_san_launch_callbacks_on(void);
int nt_san_dark(double until);
/* How many times they went off so far; whether they are off now. */
unsigned nt_san_dark_spans(void);
int nt_san_dark_now(void);
/* A child after fork(). */
void nt_san_dark_reset(void);

/* ns spent in this thread's current callback waiting or switching (a
 * module load, a patch or unpatch, a wait for record buffers): counted
 * exactly in the summary's own time, not scaled with the sampled
 * ordinary callbacks (backend_sanitizer.c). */
void nt_san_slow(double seconds);

#endif
