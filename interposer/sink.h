/*
 * sink.h - the collector's end: the trace file and the exit summary.
 *
 * Everything that touches SQLite, the driver's device queries or the
 * map store runs on the collector's thread: nt_sink_launch(),
 * nt_sink_tick() and nt_sink_close().  nt_sink_drop() may be called from
 * any thread (it only queues).  The file is created at the first write,
 * so a process that never launches a kernel leaves no trace behind.
 */
#ifndef NT_SINK_H
#define NT_SINK_H

#include <stdint.h>
#include <stdio.h>

#include "collector.h"
#include "util/err.h"

struct nt_sink;

struct nt_sink *nt_sink_new(const struct nt_config *cfg, const char *backend, const char *sampling,
			    struct nt_err *err);

/* A finished traced launch and its n block records. */
int nt_sink_launch(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l,
		   const volatile struct nt_block_rec *rec, uint32_t n);

/* A kernels-mode launch, seq-th of the process (in the order CUPTI
 * delivered them; graph replays share a correlation id, so it cannot
 * be the key): no block records. */
int nt_sink_kernel(struct nt_sink *s, uint64_t seq, const struct nt_kernel_record *r);

void nt_sink_drop(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l, const char *reason);

/* Write queued drops; commit when the batch is old or large. */
void nt_sink_tick(struct nt_sink *s);

/* Commit, mark the trace complete, print the summary to f (NULL: none)
 * and free everything.  launches: all launches the process made. */
void nt_sink_close(struct nt_sink *s, uint64_t launches, FILE *f);

#endif
