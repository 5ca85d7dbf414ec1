/*
 * workers.h - the same job on n items, spread over a few threads.
 *
 * nt_workers_run() calls fn(i, arg) once for every i in 0..n-1 from up to
 * `threads` threads (the calling thread is one of them) and returns when
 * every call has returned.  Items are handed out in order, one at a time,
 * so a slow item does not hold up the others.  fn must only touch what
 * item i owns (and read what no call writes): which thread runs an item,
 * and in which order items finish, differ from run to run.
 *
 * A nonzero return from fn stops the handing out of items after it (the
 * calls under way finish); the result is the lowest i whose call failed,
 * or -1 when none did.  Every item below a failed one was run, so the
 * lowest failure is the same whatever the number of threads: callers
 * report that one and their output does not depend on the threads.
 *
 * threads <= 0 means one per online CPU (nt_workers_cpus()); never more
 * threads than items.  When a thread cannot be started, the ones already
 * started (at least the caller) do the work.
 */
#ifndef NT_WORKERS_H
#define NT_WORKERS_H

int nt_workers_run(int n, int threads, int (*fn)(int i, void *arg), void *arg);

/* Online CPUs, at least 1. */
int nt_workers_cpus(void);

#endif
