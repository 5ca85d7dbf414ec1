/*
 * occupancy.h - how many blocks of a launch fit on one SM at a time.
 *
 * The report's dispatch replay puts blocks into free SM slots as the
 * hardware does, so it needs the number of slots: the CUDA occupancy
 * calculator's answer (cuOccupancyMaxActiveBlocksPerMultiprocessor),
 * computed here on the CPU from the launch and the SM's limits, with the
 * rules of the toolkit's cuda_occupancy.h:
 *
 *   threads    max_threads_per_sm / 32 warps over ceil(threads / 32)
 *   blocks     max_blocks_per_sm
 *   registers  registers * 32 rounded up to reg_alloc_unit per warp;
 *              warps go to warp_alloc_granularity sub-partitions of
 *              regs_per_sm / warp_alloc_granularity registers each; a
 *              block whose warps, rounded up to whole sub-partitions,
 *              need more than max_regs_per_block does not fit
 *   shared     static + dynamic + reserved_smem_per_block rounded up to
 *              smem_alloc_unit, into smem_per_sm (the default carveout,
 *              which leaves all of it to shared memory when needed); more
 *              than smem_per_block_optin + reserved per block does not fit
 *
 * The result is the least of the four, and a mask of the limits that
 * give it (several when they tie).  0 blocks means the launch cannot run
 * on this SM.  Not modelled: a carveout preference set by the program,
 * named-barrier limits (only bind on cc 9.0 above two barriers per
 * block), and cluster scheduling (cudaOccupancyMaxActiveClusters).
 *
 * nt_sm_limits_for() knows compute capability 7.5, 8.0, 8.6, 8.7, 8.9
 * and 9.0 (the CUDA programming guide's table and cuda_occupancy.h);
 * others fail as unknown.  With a device at hand, fill the fields from
 * its attributes instead (or over the defaults):
 *   max_threads_per_sm     CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
 *   max_blocks_per_sm      CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR
 *   regs_per_sm            CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR
 *   max_regs_per_block     CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK
 *   smem_per_sm            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
 *   smem_per_block_optin   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
 *   reserved_smem_per_block CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
 * (the allocation units have no attribute: 256 registers, 4 sub-
 * partitions, 128 B of shared memory from cc 8.0 and 256 B before).
 *
 * Pure functions of their arguments: safe from any thread.
 */
#ifndef NT_OCCUPANCY_H
#define NT_OCCUPANCY_H

#include "util/err.h"

#include <stdint.h>

struct nt_sm_limits {
	int max_threads_per_sm;
	int max_blocks_per_sm;
	int regs_per_sm;
	int max_regs_per_block;
	int reg_alloc_unit;		/* registers per warp allocation: 256 */
	int warp_alloc_granularity;	/* sub-partitions per SM: 4 */
	int smem_per_sm;		/* bytes */
	int smem_per_block_optin;	/* bytes a block may opt in to */
	int reserved_smem_per_block;	/* bytes the driver adds per block: 1 KiB on cc 8.0+ */
	int smem_alloc_unit;		/* bytes: 128 on cc 8.0+, 256 on 7.x */
};

/* What a launch asks of an SM, per block. */
struct nt_launch_res {
	int threads;
	int registers;		/* per thread */
	int64_t static_smem;
	int64_t dynamic_smem;
};

enum nt_occ_limit {
	NT_OCC_THREADS = 1 << 0,
	NT_OCC_BLOCKS = 1 << 1,
	NT_OCC_REGISTERS = 1 << 2,
	NT_OCC_SMEM = 1 << 3,
};

struct nt_occupancy {
	int blocks;		/* resident blocks per SM */
	unsigned bound;		/* enum nt_occ_limit bits that give `blocks` */
	/* each limit alone; INT_MAX where it does not bind at all */
	int by_threads, by_blocks, by_registers, by_smem;
	int64_t smem_per_block;	/* allocated, reserve and rounding included */
	int regs_per_block;	/* allocated */
};

/* Fills `l` for compute capability major.minor; -1 if unknown. */
int nt_sm_limits_for(int cc_major, int cc_minor, struct nt_sm_limits *l, struct nt_err *err);

/* -1 on nonsense input (no threads, negative sizes, limits unset). */
int nt_occupancy(const struct nt_sm_limits *l, const struct nt_launch_res *r,
		 struct nt_occupancy *o, struct nt_err *err);

/* "threads", "blocks", "registers", "shared memory"; the first set bit. */
const char *nt_occ_limit_name(unsigned bound);

#endif
