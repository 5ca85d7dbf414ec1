/*
 * launch.h - what a collection backend reports about a kernel launch:
 * the record types the backends, the collector and the trace writer
 * share.  Plain data, no behaviour.
 */
#ifndef NT_LAUNCH_H
#define NT_LAUNCH_H

#include <stdint.h>

/* One kernel launch as a backend sees it. */
struct nt_launch_info {
	const char *kernel;	/* mangled name */
	int device;		/* CUDA ordinal */
	uint64_t context, stream;
	uint32_t grid[3], block[3], cluster[3];
	int64_t dyn_smem;	/* bytes; -1 when the backend did not see it */
	/* A kernel node of a graph launch: which graph (exec), which node
	 * of it, and which launch of that graph exec; -1 otherwise.  Blocks
	 * mode numbers graphs and nodes itself, in order of first sight;
	 * kernels mode gives CUPTI's ids and no graph launch. */
	int64_t graph, graph_node, graph_launch;
	/* Blocks mode, a traced launch: its module had the block entry
	 * site alone, so its records hold starts only (kernels/blockrec.h). */
	int entry_only;
};

/* One finished launch as the kernels backend (CUPTI) reports it. */
struct nt_kernel_record {
	struct nt_launch_info l;
	uint64_t start_ns, end_ns;	/* GPU timestamps */
	uint64_t correlation;
	int registers, static_smem, dyn_smem, local_bytes;
};

/* The native duration of an untraced launch (no instrumentation), timed
 * with events, for a kernel and configuration that is also traced: what
 * the report compares traced launches with (docs/interposer.md). */
struct nt_native_time {
	struct nt_launch_info l;
	uint64_t seq;		/* the launch's number in the process */
	int64_t ns;
};

#endif
