/*
 * entryrec.h - reading an entry-only block record (kernels/blockrec.h)
 * on the host: whether all of it has arrived, and what it says.  Pure
 * functions, tested on the CPU (tests/unit/test_entryrec.c).
 *
 * The GPU writes the record's words in any order, with no fence: a word
 * is the launch's when its upper half is the tag, and the record is
 * complete when every word is.  Each word is read once, atomically
 * (8-byte aligned loads), so a word that passed the check cannot change
 * between the check and its use: a launch's slot is written again only
 * by a later launch, after this one's records were read.
 */
#ifndef NT_ENTRYREC_H
#define NT_ENTRYREC_H

#include <stdint.h>

#include "kernels/blockrec.h"
#include "trace/trace.h"

static inline uint64_t nt_entry_word(const volatile struct nt_entry_rec *r, int i)
{
	return __atomic_load_n(&r->w[i], __ATOMIC_ACQUIRE);
}

/* 1 when every word of r carries tag. */
static inline int nt_entry_complete(const volatile struct nt_entry_rec *r, uint32_t tag)
{
	for (int i = 0; i < NT_ENTRY_WORDS; i++)
		if ((uint32_t)(nt_entry_word(r, i) >> 32) != tag)
			return 0;
	return 1;
}

/* A complete record as a trace row (b->block and b->launch untouched):
 * no end, so t_end_ns and c_end are NT_TRACE_UNKNOWN and warps 0. */
static inline void nt_entry_decode(const volatile struct nt_entry_rec *r, struct nt_trace_block *b)
{
	uint64_t lo = (uint32_t)nt_entry_word(r, NT_ENTRY_T_LO), hi = (uint32_t)nt_entry_word(r, NT_ENTRY_T_HI);

	b->t_start_ns = (int64_t)(hi << 32 | lo);
	lo = (uint32_t)nt_entry_word(r, NT_ENTRY_C_LO);
	hi = (uint32_t)nt_entry_word(r, NT_ENTRY_SM_C_HI);
	b->c_start = (int64_t)((hi & 0xffffff) << 32 | lo);
	b->sm = (int32_t)(hi >> 24);
	b->t_end_ns = b->c_end = NT_TRACE_UNKNOWN;
	b->warps = 0;
}

#endif
