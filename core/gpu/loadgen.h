/*
 * loadgen.h - a sustained full-GPU load (`calibrate --stability`).
 *
 * nt_loadgen_open() loads the load kernel (kernels/load.cu, its own
 * embedded module) into the device's primary context, makes that context
 * current, sizes the launch so that it fills every SM at once (the
 * occupancy API's blocks per SM times the SM count, NT_LOAD_THREADS
 * threads a block: full occupancy where registers allow) and allocates a
 * buffer of several L2 sizes for it to stream over.  nt_loadgen_run()
 * keeps the GPU busy for a given wall time with launches of at most
 * launch_s each, back to back, and returns when the last one has ended:
 * the host is never more than one launch away from control.  What each
 * launch did comes back in its block records: which SMs ran a block,
 * the SM clock under load (%clock64 against %globaltimer, per block),
 * bytes moved and FMAs done.  nt_loadgen_close() frees everything (NULL
 * is fine).
 */
#ifndef NT_LOADGEN_H
#define NT_LOADGEN_H

#include <stdint.h>

#include "gpu/cudrv.h"
#include "util/err.h"

/* Defaults: 150 ms a launch; a buffer of 4 L2 sizes, at least 64 MiB. */
#define NT_LOADGEN_LAUNCH_S 0.15
#define NT_LOADGEN_L2_TIMES 4
#define NT_LOADGEN_MIN_BYTES (64LL << 20)

struct nt_loadgen;

struct nt_loadgen_info {
	int blocks;		/* per launch: blocks_per_sm * SMs */
	int blocks_per_sm;
	int threads;		/* per block */
	int max_sm_threads;	/* what an SM can hold (full occupancy) */
	int64_t bytes;		/* the buffer */
	double launch_s;	/* longest launch */
};

/* What one nt_loadgen_run() did. */
struct nt_loadgen_stats {
	int launches;
	double seconds;		/* wall time, host side */
	double bytes, fmas;	/* moved (read + written) and done, all launches */
	double gpu_seconds;	/* sum of the launches' median block run time */
	int sms_min;		/* fewest SMs that ran a block in one launch */
	double clock_mhz;	/* median over the blocks of the last launch */
	double clock_min_mhz, clock_max_mhz;	/* over the launches' medians */
};

/* bytes 0: NT_LOADGEN_L2_TIMES x the L2, at least NT_LOADGEN_MIN_BYTES.
 * launch_s 0: NT_LOADGEN_LAUNCH_S; at most 1 s. */
int nt_loadgen_open(struct nt_cuda *cu, int ordinal, int64_t bytes, double launch_s,
		    struct nt_loadgen **out, struct nt_err *err);
const struct nt_loadgen_info *nt_loadgen_info(const struct nt_loadgen *g);
int nt_loadgen_run(struct nt_loadgen *g, double seconds, struct nt_loadgen_stats *st,
		   struct nt_err *err);
void nt_loadgen_close(struct nt_loadgen *g);

#endif
