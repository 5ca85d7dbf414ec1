/*
 * collector.h - what every collection backend hands to, and the one
 * place that turns it into a trace file.
 *
 * A backend (backend_sanitizer.c, backend_cupti.c) runs inside the host
 * program's CUDA calls; it does the least it can there and reports
 * launches here.  The collector owns the sampling policy (which launches
 * are traced, in which windows: trace/sampling.h).  A traced launch comes
 * with a run of per-block records that the GPU fills while the kernel
 * runs (kernels/blockrec.h); a background thread polls pending launches,
 * and once every record of a launch is complete writes the launch and
 * its blocks to the trace in batched transactions, then gives the run
 * back to the backend (release).  The same thread polls the events of
 * native timings.  Nothing here synchronises with the device.
 *
 * Thread safety: every function may be called from any thread.
 * Lifecycle: nt_collector_start() once, at initialisation; then
 * nt_collector_*() from callbacks; nt_collector_stop() at exit (waits a
 * bounded time for pending launches, writes the summary).
 */
#ifndef NT_COLLECTOR_H
#define NT_COLLECTOR_H

#include <stdint.h>

#include "config.h"
#include "kernels/blockrec.h"
#include "launch.h"
#include "util/err.h"
#include "warn.h"

int nt_collector_start(const struct nt_config *cfg, const char *backend, struct nt_err *err);

/* fn (which should stop the backend and the collector, and be safe to
 * call twice) is registered with atexit() when the first launch is seen:
 * later than the CUDA runtime's own exit handlers, so it runs before
 * them, while the driver still answers questions about devices. */
void nt_collector_exit_hook(void (*fn)(void));

/* A backend saw CUDA activity (a launch or a buffer request): registers
 * the exit hook and starts the collector's thread. */
void nt_collector_touch(void);

/* The sampling policy's answer for this launch (NT_SAMPLE_TRACE,
 * NT_SAMPLE_CLOSE: trace/sampling.h); counts the launch and gives its
 * per-process sequence number in *seq. */
int nt_collector_sample(const struct nt_launch_info *l, uint64_t *seq);

/* 1 once no launch can be traced any more (policy none, max= reached,
 * or stopping): then nt_collector_count() is enough per launch. */
int nt_collector_exhausted(void);
/* The collector's calls into the driver, between enter and leave (it
 * waits while a switch is under way), and the blocks backend's module
 * switches, between begin (0: not now, the collector is in the driver)
 * and end, exclude each other.  A switch waits up to wait_s seconds for
 * the collector to leave the driver (0 where the caller may hold a
 * driver lock); after a wait that ran out, none waits until a switch
 * begins. */
void nt_collector_driver_enter(void);
void nt_collector_driver_leave(void);
/* enter, or 0 at once (not entered) while a switch is marked: a launch
 * waiting for record space inside its callback holds one, and the
 * collector must go on with what needs no driver call rather than wait
 * for it (nt_san_take). */
int nt_collector_driver_try_enter(void);
int nt_collector_switch_begin(double wait_s);
void nt_collector_switch_end(void);
/* Wait up to wait_s seconds until the collector is not in the driver: a
 * call it began before is over (1), or 0 when it ran out. */
int nt_collector_driver_wait(double wait_s);
/* nt_sampling_from_start() of the policy (0 when not started). */
int nt_collector_from_start(void);
/* nt_sampling_may_trace() of the kernel of that mangled name (1 when not
 * started). */
int nt_collector_may_trace(const char *mangled);
uint64_t nt_collector_count(void);

/* The launch l just sampled to be traced could not be, for a reason its
 * kernel's next launch will not have: nt_sampling_retry(). */
void nt_collector_retry(const struct nt_launch_info *l);
/* The window closed at the last NT_SAMPLE_CLOSE is over: its modules are
 * unpatched (counts towards the policy's budget=). */
void nt_collector_window_done(void);
/* 1 while the sampling policy has a window open. */
int nt_collector_window_open(void);
/* nt_sampling_opens_next() and nt_sampling_open_ahead() of the policy
 * for the next `launches` launches (0 when not started or stopping): a
 * window opened at a graph launch's entry into the driver, before its
 * nodes are sampled. */
int nt_collector_would_open(int64_t launches);
int nt_collector_open_ahead(int64_t launches);
/* nt_sampling_hold() of the policy: 1, or 0 when not started or
 * stopping (nothing held). */
int nt_collector_hold_open(int on);
/* nt_sampling_left() of the policy (-1, -1 when not started or
 * stopping). */
void nt_collector_left(int64_t *launches, int64_t *blocks);
/* 1 when a module patched now gets the block entry site alone (the
 * blocks mode, and in mixed mode the window's phase: config.h), as of
 * the last launch sampled. */
int nt_collector_entry_phase(void);
/* nt_sampling_waits() of the policy (1 when not started): whether a
 * launch out of record space waits for it, or the window closes
 * (nt_collector_close_now) and the launch is dropped. */
int nt_collector_waits(void);
void nt_collector_close_now(void);

/* Launch callbacks off between windows (the blocks backend): when the
 * sampling policy next needs to see launches (nt_sampling_next_open: a
 * time on nt_now_s()'s clock, INFINITY for never, or now when it needs
 * every launch, or once the collector is stopping; *last_window: the
 * launches of the last window).  The
 * backend then turns its launch callbacks off and calls dark_begin;
 * the collector's thread calls wake() once, at `until` (never after stop
 * begins), and the backend calls dark_end when they are back on.  The
 * spans go into the summary and the trace's meta: launches meanwhile are
 * not counted. */
double nt_collector_next_open(int64_t *last_window);
void nt_collector_dark_begin(double until, void (*wake)(void));
void nt_collector_dark_end(void);
/* Launches so far (nt_collector_count() without counting one). */
uint64_t nt_collector_seen(void);

/* Time the backend spent switching modules, for the summary and the
 * trace's meta: patch (1) or unpatch (0), seconds. */
void nt_collector_switched(int patch, double seconds);
/* A wait for the GPU's work before a batch of switches, and its time. */
void nt_collector_settled(double seconds);
/* A launch or graph launch began while another thread was switching
 * modules (it makes no sanitizer call). */
void nt_collector_switch_overlap(void);
/* Functions loaded lazily (CUDA's default module loading), and of them
 * those loaded into a module that was patched just then (entry_only:
 * with the entry site alone), where (meta lazy_into_patched_at; in_launch:
 * inside a launch call of the program). */
void nt_collector_lazy_loaded(uint32_t functions, int patched, int entry_only, int in_launch);
/* NUCATRACE_LAZY_SETTLE: a function loaded at a launch's entry, after a
 * wait for the GPU (kernel: the launch named it by a CUkernel handle). */
void nt_collector_lazy_settled(int kernel);
/* A wait at a graph launch's entry to free retired graph node tables
 * (they had filled half the room under NUCATRACE_GRAPH_TABLES), made,
 * or wanted and not made there (another thread in the driver, the
 * stream capturing, a launch in flight). */
void nt_collector_table_wait(int made);
/* A graph exec was made (made 1), or one turned out to run kernels that
 * could not all be listed (unlisted 1): for the summary and the meta. */
void nt_collector_graph_exec(int made, int unlisted);
/* Instrumented twins (interposer/blocks/san_twins.c): a module's cubin
 * kept (bytes, compressed), a twin loaded, a graph exec pointed at twins
 * for a window. */
void nt_collector_twin_image(size_t bytes, size_t compressed);
/* A module a window wanted a twin of has module-scope variables (one
 * named variable): counted once a module, the first few names kept. */
void nt_collector_twin_refused(const char *variable);
void nt_collector_twin_loaded(void);
void nt_collector_twin_pointed(int shadow);	/* shadow: by a shadow exec */
/* A launch waited seconds for record space (in_callback: inside its
 * launch callback, not at its entry into the driver): for the summary
 * and the meta. */
void nt_collector_room_wait(int in_callback, double seconds);
/* A module-load callback took seconds (its cubin read, its patching):
 * counted for the exit summary's own time. */
void nt_collector_module_loaded(double seconds);
/* n backend callbacks took about ns, judged by one of them (launch: it
 * was a launch begin or end); no lock, callable from any callback. */
void nt_collector_callback_time(int launch, uint64_t n, uint64_t ns);

/* A traced launch whose n records will appear in rec[] with tag (full
 * records, or entry-only ones with the setting, kernels/blockrec.h).
 * With fetch, they appear only once fetch(cookie) returned 1 (0: not
 * yet; -1: never, the launch is dropped), called on the collector's
 * thread, which enters the driver itself if it needs to, with
 * nt_collector_driver_try_enter (0 when it cannot); a record still
 * incomplete then never will be.  release(cookie) is called (from the
 * collector's thread) once the records have been read, or the launch was
 * abandoned.  Returns -1, without calling release, when the collector
 * cannot take it (stopping, out of memory): the caller, which may hold
 * its own lock, undoes its set-up itself. */
int nt_collector_traced(uint64_t seq, const struct nt_launch_info *l,
			const volatile struct nt_block_rec *rec, uint32_t n, uint32_t tag,
			int (*fetch)(void *cookie), void (*release)(void *cookie), void *cookie);

/* Wait until the collector has finished a pending launch (released its
 * records), at most timeout_s: for a backend out of record space.  0 when
 * something finished, -1 on timeout or when nothing is pending. */
int nt_collector_wait_release(double timeout_s);
/* Traced launches handed over and not yet released. */
int nt_collector_pending(void);

/* A kernels-mode record: queued (copied), written by the collector's
 * thread.  Counts as a launch. */
void nt_collector_kernel(const struct nt_kernel_record *r);

/* A native timing in flight: poll(cookie, &ns) is called from the
 * collector's thread, between nt_collector_driver_enter and leave,
 * until it returns 1 (done, ns set) or -1 (failed); then done(cookie)
 * (always, also when the collector stops first; after a poll still
 * between enter and leave, and it may enter again itself).
 * t->ns is not read.  -1 (done not called) when it cannot be queued. */
int nt_collector_native(const struct nt_native_time *t, int (*poll)(void *cookie, int64_t *ns),
			void (*done)(void *cookie), void *cookie);

/* A launch that was meant to be traced but could not be. */
void nt_collector_dropped(uint64_t seq, const struct nt_launch_info *l, const char *reason);

/* Wait (bounded) until no launch of this context is pending: before the
 * context and its buffers go away. */
void nt_collector_flush_context(uint64_t context);

void nt_collector_stop(void);

#endif
