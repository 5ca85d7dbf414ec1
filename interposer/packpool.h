/*
 * packpool.h - a few threads that pack block records (core/trace/
 * blockpack.h) beside the collector's thread, so that one big launch's
 * records are packed on several cores.
 *
 * nt_packpool_run() hands out n items to the pool's threads and the
 * calling thread, fn(i, arg, p, scratch) once each, and returns when all
 * have returned; p is the running thread's packer and scratch its
 * NT_BLOCKPACK_MAX records, both its own for the call.  fn must touch
 * only item i's data.  The threads start in nt_packpool_start(), with
 * the caller's signal mask, and end in nt_packpool_free().  Before that,
 * with threads 0, or when none could start, the caller does every item.
 *
 * Start them where the collector's own thread starts, never while a
 * program's thread may be waiting for the collector: on the H200 a
 * pthread_create() on the collector's thread while the program's thread
 * waited in a launch callback for record space never returned (the
 * Compute Sanitizer holds a lock there that thread creation takes).
 *
 * One caller at a time (the collector's thread).  After fork() the
 * child must not use or free its parent's pool (its threads are not
 * there): it leaves it be.
 */
#ifndef NT_PACKPOOL_H
#define NT_PACKPOOL_H

#include <stddef.h>

#include "trace/blockpack.h"

typedef int (*nt_packpool_fn)(size_t i, void *arg, struct nt_blockpack *p, struct nt_trace_block *scratch);

struct nt_packpool;

/* A pool of up to threads helpers (none started yet); NULL when out of
 * memory. */
struct nt_packpool *nt_packpool_new(int threads);

/* Start the helpers (once; later calls do nothing). */
void nt_packpool_start(struct nt_packpool *pp);

/* fn on items 0..n-1: 0, or -1 when some call returned nonzero (every
 * item is still run) or the caller's packer could not be made. */
int nt_packpool_run(struct nt_packpool *pp, size_t n, nt_packpool_fn fn, void *arg);

/* Helper threads this pool has running (for the summary). */
int nt_packpool_threads(const struct nt_packpool *pp);

/* Stops and joins the threads; NULL is fine. */
void nt_packpool_free(struct nt_packpool *pp);

#endif
