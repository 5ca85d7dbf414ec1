/*
 * load.h - what the host (core/gpu/loadgen.c) and the load kernel
 * (load.cu) share.
 *
 * The load kernel heats the whole GPU for `calibrate --stability`: it is
 * launched with exactly as many blocks of NT_LOAD_THREADS threads as fit
 * on the GPU at once (the occupancy API's blocks per SM times the SM
 * count), so every SM runs at full occupancy in a single wave.  Each
 * thread streams over a buffer several times the L2's size (every access
 * misses the L2: L2 and DRAM traffic), two float4 elements per step,
 * read, NT_LOAD_FMA_DEPTH dependent FMAs on each of their 8 floats, written
 * back.  It stops when %globaltimer says `ns` have passed since the
 * thread started, or, should %globaltimer not advance, when %clock64 has
 * counted 5 cycles per requested ns (2.5x the time at 2 GHz), so a launch
 * always ends and the host gets control back.
 *
 * Each block writes one record of NT_LOAD_REC 64-bit words at
 * out + blockIdx.x * NT_LOAD_REC: [0] smid, [1] %clock64 cycles and
 * [2] %globaltimer ns that thread 0 ran (their ratio is the SM clock
 * under load), [3] steps done by all threads of the block (each step is
 * 2 elements: 64 bytes moved, 8 * NT_LOAD_FMA_DEPTH FMAs).  The host
 * clears the records to all ones first, so a block that never ran leaves
 * smid = ~0.
 */
#ifndef NT_LOAD_H
#define NT_LOAD_H

#define NT_LOAD_THREADS 256
#define NT_LOAD_FMA_DEPTH 64
#define NT_LOAD_REC 4
#define NT_LOAD_STEP_BYTES 64	/* 2 float4 read and written */
#define NT_LOAD_STEP_FMAS (8 * NT_LOAD_FMA_DEPTH)

struct nt_load_args {
	unsigned long long buf;		/* device float4[n4], 16-byte aligned */
	unsigned long long n4;		/* elements; at least 2 x the grid's threads */
	unsigned long long ns;		/* how long each thread runs */
	unsigned long long out;		/* device records, NT_LOAD_REC words a block */
};

#endif
