/*
 * sampling.h - which kernel launches the interposer traces block by block,
 * and the windows in which it does so.
 *
 * A traced launch runs instrumented code: the interposer patches the
 * kernel's module before the launch and takes the patches out again
 * later, and each switch waits for the GPU.  So tracing happens in
 * windows of consecutive launches: a module is patched when a traced
 * launch of the window first needs it, and every patched module is
 * unpatched when the window closes; between windows every launch runs
 * the program's own code.  A launch of a patched module that is not
 * traced runs the instrumented code too (slower, recording nothing):
 * short windows cost more switches, long ones more slow launches.
 *
 * A policy is a string of terms separated by commas (no spaces inside a
 * term; spaces around one are ignored).  Which launches:
 *
 *   all        every launch
 *   none       no launch (alone: no other term may come with it)
 *   first=N    the first N launches of each distinct kernel
 *   every=K    every K-th launch of each kernel, counting from its first
 *              (its launches 0, K, 2K, ...)
 *   match=GLOB only kernels whose mangled or demangled name matches the
 *              fnmatch(3) glob; may repeat (any one matching will do);
 *              a glob cannot hold a ','
 *   max=N      at most N traced launches in all
 *
 * and when (the windows):
 *
 *   window=N   windows of N consecutive launches (of every kernel; a
 *              launch whose pick moves on, nt_sampling_retry, does not
 *              count, here or in blocks=); one window, unless budget=
 *              allows more; the per-kernel counts of first= and every=
 *              then count only launches inside windows
 *   skip=N     no window opens during the first N launches (warm-up)
 *   idle=N     a window also closes after N launches in a row with none
 *              traced (default NT_SAMPLING_IDLE), and at once when max= is
 *              reached
 *   blocks=N   a window also closes once its traced launches hold N
 *              blocks or more (what a window costs grows with its blocks:
 *              instrumented, then written into the trace at about a
 *              million a second), each phase of a window with phases
 *              (nt_sampling_phases) N of its own; a launch of more than N
 *              blocks is never traced (NT_SAMPLE_TOO_BIG)
 *   gpu=S      a window (each phase of one) also closes once its traced
 *              launches that have finished took S seconds of GPU time
 *              (nt_sampling_gpu_time: first block start to last block
 *              end, instrumented), at the first decision after that: a
 *              launch's time is known only once it has run, so the
 *              launches in flight then are traced still; S a decimal in
 *              (0, 3600]
 *   budget=P   a window opens only while the time spent in windows
 *              (opening to the end of the unpatching) would be at most P
 *              percent of the time since the first launch once the window
 *              opening closes, taken to cost as much as a closed window
 *              did on average; P a decimal in (0, 100]
 *
 * N and K are positive decimal integers; each term but match= may appear
 * once.  A launch is traced when it is in a window, its kernel passes the
 * match filter (when there is one), `all` is given or `first` or `every`
 * selects it, and fewer than `max` launches were traced before.  With
 * none of all/first/every, `all` is meant ("match=*gemm*" traces every
 * launch of the GEMMs; "max=100" the first 100 launches).  Kernels are
 * told apart by mangled name.
 *
 * Without window=, windows follow the selected launches: one opens at a
 * launch the terms select (once skip= and budget= allow it) and closes
 * after idle= launches with none selected, or at the first launch not
 * selected once no kernel traced in it has first= launches to come, or
 * once NT_SAMPLING_QUOTA_IDLE launches in a row were not selected,
 * whatever idle= says (only all keeps a window open through launches it
 * does not select); first= and every= count every launch of the kernel,
 * inside windows or not.
 * A selected launch that the interposer cannot trace yet (its module is
 * instrumented only before a later launch) hands its selection to the
 * kernel's next launch (nt_sampling_retry), and the window waits for it.
 *
 * NT_SAMPLING_DEFAULT, one window of 1,000 consecutive launches after the
 * first 1,000 (past warm-up), and more as the run goes on, taking at most
 * 1% of its time, is what a long training job wants: every kernel of a
 * step, whole steps, at a bounded cost.  The cost is bounded in records
 * too: a window (each phase) holds at most a million blocks, about a
 * second of writing them into the trace (0.9-1.6 million a second on the
 * H200 hosts) and about eight steps of our PyTorch training loop, and a
 * launch of more is not traced (a STREAM-style sweep of 131,072-block
 * launches: about 7 launches a phase, not 1,000; issue 32).  A quarter of
 * that took a 1.7 s sweep's wall time from 1.70x to 1.02x plain, but left
 * the training step with 7 kernels fitted on inferred times, not 38
 * (docs/results/2026-12-03-record-budget.md): until records are written
 * faster, the default keeps the step.  The blocks backend's default mixed mode makes each window two
 * phases, nt_sampling_phases: 1,000 launches at block entry only, then
 * 1,000 in full.  docs/interposer.md has the measured trade-offs of this
 * and the per-kernel policies.
 *
 * Lifecycle: nt_sampling_parse() -> nt_sampling_decide() per launch
 * (with nt_sampling_window_done() after each close) -> nt_sampling_free().
 * NOT thread-safe: decide() counts, so the caller holds a lock around it.
 */
#ifndef NT_SAMPLING_H
#define NT_SAMPLING_H

#include <stdint.h>

#include "util/err.h"

#define NT_SAMPLING_DEFAULT "all,window=1000,skip=1000,blocks=1000000,budget=1"
#define NT_SAMPLING_IDLE 256
#define NT_SAMPLING_QUOTA_IDLE 16

/* nt_sampling_decide()'s answer, a bit set. */
enum {
	NT_SAMPLE_TRACE = 1,	/* trace this launch (patching its module if need be) */
	NT_SAMPLE_CLOSE = 2,	/* before this launch, the open window closed:
				 * unpatch every module, then call
				 * nt_sampling_window_done() */
	NT_SAMPLE_TOO_BIG = 4,	/* picked, in the open window, but its grid alone holds
				 * more than blocks= blocks: not traced (the caller
				 * says so: NT_SAMPLING_TOO_BIG) */
};

struct nt_sampling_stats {
	int64_t launches;	/* decided */
	int64_t windows;	/* opened */
	int64_t in_windows;	/* launches inside windows */
	int64_t traced;
	double window_s;	/* time spent in windows, closed ones and the open one */
	int64_t last_window;	/* launches in the last window (the open one so far) */
};

struct nt_sampling;

/* Parse policy (NULL: NT_SAMPLING_DEFAULT); -1 with a message naming the
 * bad term. */
int nt_sampling_parse(const char *policy, struct nt_sampling **out, struct nt_err *err);

/* What to do with this launch, made at time now (seconds on any clock
 * that does not go back); counts it.  demangled may be NULL.  When memory
 * runs out the launch is not traced. */
int nt_sampling_decide(struct nt_sampling *s, const char *mangled, const char *demangled, double now);
/* The same for a launch of `blocks` blocks (0: unknown): with blocks=, a
 * launch of more blocks than that is not traced (NT_SAMPLE_TOO_BIG). */
int nt_sampling_decide_grid(struct nt_sampling *s, const char *mangled, const char *demangled, int64_t blocks,
			    double now);
#define NT_SAMPLING_TOO_BIG "grid of more blocks than a window may hold (the policy's blocks=)"

/* Close the open window at the next decision (NT_SAMPLE_CLOSE then),
 * whatever its terms say: its records cannot be moved as fast as they
 * come (the blocks backend's record buffers are full), and a policy that
 * does not wait (nt_sampling_waits) would rather stop tracing than hold
 * the program back. */
void nt_sampling_close_now(struct nt_sampling *s);
/* 1 when a traced launch should wait for record space rather than close
 * the window: a policy without window= (`all`, first=, ...: what it asks
 * for it means); 0 with window= (the default: a window is a sample). */
int nt_sampling_waits(const struct nt_sampling *s);

/* The modules of the window closed at the last NT_SAMPLE_CLOSE are
 * unpatched, at time now: the switch counts towards budget=. */
void nt_sampling_window_done(struct nt_sampling *s, double now);

/* 1 when decide() would like the demangled name of this kernel: the
 * policy has match= terms and the kernel is new (its match is decided
 * once, at first sight).  Lets the caller demangle only then. */
int nt_sampling_needs_demangled(struct nt_sampling *s, const char *mangled);

/* 1 when the policy may ever trace a launch of this kernel (its match=
 * terms; demangled may be NULL), without counting one: a module none of
 * whose kernels it may trace is never instrumented. */
int nt_sampling_may_trace(struct nt_sampling *s, const char *mangled, const char *demangled);

/* 1 while the first window is open or may open at the next launch (no
 * skip=, none closed yet): the caller instruments modules as they load,
 * before their first launch (a kernel's first launch cannot patch its
 * module: docs/interposer.md). */
int nt_sampling_from_start(const struct nt_sampling *s);
/* 1 when one of the next n launches (n >= 1), of any kernels, would open
 * a window or the window's next phase (the policy picks every launch:
 * `all` without match=, as the default does).  nt_sampling_open_ahead()
 * opens it now, before those launches are decided, and says so (1): the
 * blocks backend opens a window at a graph launch's entry into the
 * driver (n: its kernel nodes), where a graph exec can still be pointed
 * at instrumented code, rather than at a node's callback, where it
 * cannot (docs/interposer.md).  So a graph launch that holds the launch
 * past skip= opens the window at its first node. */
int nt_sampling_opens_next(const struct nt_sampling *s, int64_t n, double now);
int nt_sampling_open_ahead(struct nt_sampling *s, int64_t n, double now);
/* nt_sampling_hold(s, 1): until nt_sampling_hold(s, 0), no decision
 * opens a window or its next phase (a window open stays open, closes as
 * it would, and goes on into the next at once where budget= allows it)
 * when the policy opens ahead (as nt_sampling_opens_next);
 * under other policies it does nothing.  The blocks backend holds while
 * the nodes of a graph launch whose exec it could have pointed at
 * instrumented twins are decided: a window that opened at one of them
 * (budget= allowing it only by then) dropped that replay's nodes from
 * it on: on the H200, 2, 3 and 4 node launches in 3 runs of the
 * graph-update check, 4 in another (docs/results/2026-12-04-graph-windows.md). */
void nt_sampling_hold(struct nt_sampling *s, int on);
/* The launch of this kernel just decided NT_SAMPLE_TRACE could not be
 * traced for a reason its next launch will not have (its module is
 * instrumented before it): the pick moves to the kernel's next launch,
 * which a window without window= stays open for (until idle=; a pick
 * whose window closes first is gone).  Once per kernel and window; the
 * launch (of `blocks` blocks) then counts as not traced (max=) and not
 * towards window= or blocks=. */
void nt_sampling_retry(struct nt_sampling *s, const char *mangled, int64_t blocks);

/* A launch decide() chose to trace has this many blocks (its grid): they
 * count towards blocks= of the open window. */
void nt_sampling_blocks(struct nt_sampling *s, int64_t blocks);
/* What the policy may still trace after the launch just decided, as far
 * as it tells in advance: launches (in the open window's phase under
 * window=, at most max= in all) and blocks (of the open phase under
 * blocks=); -1: no bound.  Under first= and every=, which pick a
 * kernel's launches one by one, launches is 0. */
void nt_sampling_left(const struct nt_sampling *s, int64_t *launches, int64_t *blocks);
/* The open window's phase, for nt_sampling_gpu_time (-1 when none is
 * open): taken when a launch is traced. */
int64_t nt_sampling_phase_id(const struct nt_sampling *s);
/* A launch traced in phase_id took this many seconds of GPU time: they
 * count towards gpu= while that phase is open (not towards a later one). */
void nt_sampling_gpu_time(struct nt_sampling *s, int64_t phase_id, double seconds);
/* 1 while a window is open. */
int nt_sampling_open(const struct nt_sampling *s);

/* Make each window of window=N n phases (n >= 1; 1, the default: none)
 * of N launches each (n x N in all): when a phase has had its N,
 * decide() closes the window (NT_SAMPLE_CLOSE: the caller unpatches
 * every module, as for any close), and once nt_sampling_window_done()
 * says the close is done, the next launch it picks opens it again in the
 * next phase, whatever skip= and budget= say; the last
 * phase ends with the window.  Only window= ends a phase: a window that
 * closes for another reason (idle=, blocks=, max=) ends in the phase it
 * is in, and a policy without window= has one phase.  How the blocks
 * backend's mixed mode traces window= launches at block entry only, then
 * as many at entry and exit (interposer/config.h): a phase as long as
 * the window the policy asked for sees what it would have seen (a
 * training step, say).  Call once, before the first decide().  Returns
 * the phases a window will have: n, or 1 without window=. */
int nt_sampling_phases(struct nt_sampling *s, int n);
/* The phase (0 ..) of the open window, or of the one a phase's close
 * left to reopen; 0 between windows. */
int nt_sampling_phase(const struct nt_sampling *s);

/* The earliest time (on now's clock) a window may open if no launch is
 * decided until then: now while every launch must be decided (a window
 * is open; skip= has launches to count; without window=, first=, every=
 * and idle= count every launch); INFINITY when none ever will (the policy
 * traces nothing more, or window= without budget= had its one window);
 * else the time budget= allows the next one.  The caller may stop
 * deciding launches until then (they go uncounted): how the blocks
 * backend turns its launch callbacks off between windows. */
double nt_sampling_next_open(const struct nt_sampling *s, double now);
/* 1 when no launch can be traced any more (none, or max= reached). */
int nt_sampling_exhausted(const struct nt_sampling *s);

void nt_sampling_stats(const struct nt_sampling *s, double now, struct nt_sampling_stats *out);

/* The canonical form: terms in the order all|none, first, every, match
 * (as given), max, window, skip, idle, budget; the same policy always
 * gives the same string. */
const char *nt_sampling_string(const struct nt_sampling *s);

void nt_sampling_free(struct nt_sampling *s);

#endif
