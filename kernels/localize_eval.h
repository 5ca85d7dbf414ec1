/*
 * localize_eval.h - what the host (core/analysis/localize_gpu.c) and the kernels
 * of `nucatrace localize --eval` (localize_eval.cu) share.
 *
 * Both kernels are launched with one warp per block and enough dynamic
 * shared memory that one block fills an SM, one block per SM, as
 * calibrate's probes (kernels/probe.h).  Block b writes record b:
 *
 *   nt_loc_spin  keeps every SM busy for spin_us microseconds (the SM
 *                clock leaves idle) and records smid0, cycles and ns;
 *   nt_loc_eval  records %smid (smid0), calls nt_localize() (res), and
 *                records %smid again (smid1: the PTX manual allows a
 *                block to move after preemption).  With serial set, the
 *                blocks take turns through ticket[0] (next ticket) and
 *                ticket[1] (now serving), as calibrate's probes do, and
 *                the record keeps the ticket.
 *
 * The host clears the records with 0xff bytes: a block that did not run
 * leaves smid0 = NT_LOC_REC_NONE.
 */
#ifndef NT_LOCALIZE_EVAL_H
#define NT_LOCALIZE_EVAL_H

#include "../include/nucatrace/localize_table.h"

#define NT_LOC_EVAL_THREADS 32
#define NT_LOC_REC_NONE (~0ULL)

struct nt_loc_eval_args {
	unsigned long long table;	/* device struct nt_loc_table */
	unsigned long long ticket;	/* device unsigned int[2] */
	unsigned long long out;		/* device records, one per block */
	int serial;
	int spin_us;
};

struct nt_loc_eval_rec {
	unsigned long long smid0, smid1;
	unsigned long long ticket;
	unsigned long long cycles, ns;	/* nt_loc_spin: clock64 and %globaltimer spanned */
	struct nt_loc_result res;
};

#endif
