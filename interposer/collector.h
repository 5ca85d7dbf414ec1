/*
 * collector.h - what every collection backend hands to, and the one
 * place that turns it into a trace file.
 *
 * A backend (backend_sanitizer.c, later backend_cupti.c) runs inside the
 * host program's CUDA calls; it does the least it can there and reports
 * launches here.  A traced launch comes with a buffer of per-block
 * records that the GPU fills while the kernel runs (blockrec.h); a
 * background thread polls pending launches, and once every record of a
 * launch is complete writes the launch and its blocks to the trace in
 * batched transactions, then gives the buffer back to the backend
 * (release).  Nothing here synchronises with the device.
 *
 * Thread safety: every function may be called from any thread.
 * Lifecycle: nt_collector_start() once, at initialisation; then
 * nt_collector_note_*() from callbacks; nt_collector_stop() at exit
 * (waits a bounded time for pending launches, writes the summary).
 */
#ifndef NT_COLLECTOR_H
#define NT_COLLECTOR_H

#include <stdint.h>

#include "util/err.h"
#include "kernels/blockrec.h"

struct nt_config {
	char mode[16];		/* blocks | kernels | auto */
	char sampling[512];	/* policy string, sampling.h */
	const char *output_dir, *output_pattern;	/* NULL: defaults */
	const char *store;	/* map store, NULL: default */
	uint32_t buffer_blocks;	/* per-context record buffer, in blocks */
	double exit_wait_s;	/* how long exit waits for pending launches */
	int quiet;		/* no summary on stderr */
};

/* One kernel launch as a backend sees it. */
struct nt_launch_info {
	const char *kernel;	/* mangled name */
	int device;		/* CUDA ordinal */
	uint64_t context, stream;
	uint32_t grid[3], block[3], cluster[3];
	int64_t dyn_smem;	/* bytes; -1 when the backend did not see it */
};

/* One finished launch as the kernels backend (CUPTI) reports it. */
struct nt_kernel_record {
	struct nt_launch_info l;
	uint64_t start_ns, end_ns;	/* GPU timestamps */
	uint64_t correlation, graph, graph_node;
	int registers, static_smem, dyn_smem, local_bytes;
};

int nt_collector_start(const struct nt_config *cfg, const char *backend, struct nt_err *err);

/* fn (which should stop the backend and the collector, and be safe to
 * call twice) is registered with atexit() when the first launch is seen:
 * later than the CUDA runtime's own exit handlers, so it runs before
 * them, while the driver still answers questions about devices. */
void nt_collector_exit_hook(void (*fn)(void));

/* A backend saw CUDA activity (a launch or a buffer request): registers
 * the exit hook and starts the collector's thread. */
void nt_collector_touch(void);

/* Should this launch be traced (sampling policy)?  Counts the launch
 * either way and returns its per-process sequence number in *seq. */
int nt_collector_sample(const struct nt_launch_info *l, uint64_t *seq);

/* A traced launch whose n records will appear in rec[] with tag.
 * release(cookie) is called (from the collector's thread) once the
 * records have been read, or the launch was abandoned.  Returns -1,
 * without calling release, when the collector cannot take it (stopping,
 * out of memory): the caller, which may hold its own lock, undoes its
 * set-up itself. */
int nt_collector_traced(uint64_t seq, const struct nt_launch_info *l,
			const volatile struct nt_block_rec *rec, uint32_t n, uint32_t tag,
			void (*release)(void *cookie), void *cookie);

/* A kernels-mode record: queued (copied), written by the collector's
 * thread.  Counts as a launch. */
void nt_collector_kernel(const struct nt_kernel_record *r);

/* A launch that was meant to be traced but could not be. */
void nt_collector_dropped(uint64_t seq, const struct nt_launch_info *l, const char *reason);

/* Wait (bounded) until no launch of this context is pending: before the
 * context and its buffers go away. */
void nt_collector_flush_context(uint64_t context);

void nt_collector_stop(void);

/* Warn on stderr, once per distinct message site; never more than a
 * handful of lines in all. */
void nt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
