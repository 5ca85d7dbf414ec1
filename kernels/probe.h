/*
 * probe.h - what the host and the latency probe kernels (probe.cu) share.
 *
 * Every probe kernel is launched with one warp per block and enough
 * dynamic shared memory that at most one block is resident per SM.  Only
 * lane 0 works.  Blocks that measure take turns through two counters in
 * device memory (ticket[0]: next ticket to hand out, ticket[1]: ticket
 * now being served), so exactly one SM loads the memory system at a
 * time; waiting blocks sleep in proportion to their distance from the
 * head of the queue, so polling adds next to no traffic.
 *
 * Each block writes one record of NT_REC_HEAD + n_values 64-bit words at
 * out + blockIdx.x * stride:
 *   [0] smid  [1] ticket (order of measurement)  [2] clock64 cycles and
 *   [3] %globaltimer ns spanned by the timed part (their ratio is the SM
 *   clock during the measurement), then the values: cycles per timed
 *   repetition (chain), per line and repetition (lines), or per line
 *   first access followed by reps repeats (first touch).
 * A block that did not measure leaves smid = NT_REC_NONE.
 */
#ifndef NT_PROBE_H
#define NT_PROBE_H

#define NT_PROBE_THREADS 32
#define NT_REC_HEAD 4
/* All bits set: the host clears the records with 0xff bytes. */
#define NT_REC_NONE (~0ULL)
#define NT_LINE_BYTES 128

/* nt_probe_cost (no ticket, no shared memory, any block size): a record
 * of NT_COST_WORDS words per block, cleared with 0xff bytes: the body's
 * first clock64, the complement of its last, the SM. */
#define NT_COST_WORDS 3

struct nt_probe_args {
	unsigned long long base;	/* chain: first line; lines: footprint base */
	unsigned long long offsets;	/* lines: device array of n_lines byte offsets */
	unsigned long long ticket;	/* device unsigned int[2] */
	unsigned long long out;		/* device records */
	unsigned long long cold;	/* first touch: never-touched lines for a DRAM reference */
	int loads;			/* timed loads per repetition (chain, lines) */
	int reps;			/* timed repetitions */
	int warm;			/* untimed loads first */
	int n_lines;
	int target_sm;			/* first touch: the SM that measures */
	int stride;			/* record stride in 64-bit words */
};

#endif
