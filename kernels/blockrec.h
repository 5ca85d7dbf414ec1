/*
 * blockrec.h - what the block-tracing device callbacks (patch.cu) and
 * the interposer's sanitizer backend share.
 *
 * Per traced launch the host hands the callbacks a struct nt_launch_desc
 * (in device memory, through sanitizerSetLaunchCallbackData).  For each
 * block of the grid there is
 *   - a struct nt_blk_scratch in device memory, zero before the launch:
 *     the first warp to enter counts itself and notes SM, %globaltimer
 *     and %clock64; every exiting warp adds its active threads;
 *   - a struct nt_block_rec in pinned host memory, written once by the
 *     last warp to leave, which then puts the scratch back to zero (so
 *     the buffer is ready for the next launch without a memset).
 * A record is complete when its tag equals the launch's tag (written
 * last, after a system-scope fence); the host never has to clear the
 * records, and a stale record from an earlier launch in the same slot
 * cannot pass for a new one.
 */
#ifndef NT_BLOCKREC_H
#define NT_BLOCKREC_H

struct nt_blk_scratch {
	unsigned int warps_in;
	unsigned int threads_out;
	unsigned int smid;
	unsigned int pad;
	unsigned long long t_start, c_start;
};

struct nt_block_rec {
	unsigned long long t_start, t_end;	/* %globaltimer, ns */
	unsigned long long c_start, c_end;	/* %clock64 of the block's SM */
	unsigned int smid;
	unsigned int warps;			/* warps that entered */
	unsigned int tag;			/* == the launch's tag when complete */
	unsigned int pad;
};

struct nt_launch_desc {
	struct nt_blk_scratch *scratch;		/* [blocks], device memory */
	struct nt_block_rec *rec;		/* [blocks], pinned host memory */
	unsigned int threads;			/* threads per block */
	unsigned int grid_x, grid_y;
	unsigned int tag;
	/* Blocks the buffers hold: a block beyond (another launch that
	 * picked up this descriptor) records nothing, never out of bounds. */
	unsigned int blocks;
	unsigned int pad;
};

#endif
