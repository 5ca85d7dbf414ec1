/*
 * recpool.h - the block record buffers of one CUDA context, handed out
 * to traced launches: pure bookkeeping, the memory itself comes from the
 * caller's ops (the sanitizer backend allocates it on the GPU, the unit
 * tests with malloc).
 *
 * Memory is in slabs.  A slab holds `slots` block slots, each a scratch
 * entry (device memory, kernels/blockrec.h), a record (pinned host
 * memory) and its device copy, and one launch descriptor (device memory) per unit of
 * NT_RECPOOL_UNIT slots.  A traced launch of n blocks takes a run of
 * ceil(n / NT_RECPOOL_UNIT) consecutive units of one slab and the
 * descriptor of the run's first unit, and gives them back once its
 * records are read.  Runs are found next-fit from where the last one
 * ended, so launches that finish in the order they started reuse memory
 * like a ring.
 *
 * The pool never allocates: when no slab has room, take() says
 * NT_RECPOOL_GROW with the size of slab to make (the first slab's size or
 * the run's if larger, or all slots made so far: doubling, within
 * max_slots), and at the cap it first takes empty slabs out for the
 * caller to free; the caller makes the slab with no lock held (making
 * one waits for the GPU, and a callback of another thread may hold what
 * the driver needs) and hands it over with nt_recpool_add().  take() says
 * NT_RECPOOL_FULL when the run does not fit now but would once launches
 * give theirs back (the caller may wait), and NT_RECPOOL_TOO_BIG when it
 * never can.
 *
 * Not thread-safe: the caller holds its lock around every call.
 */
#ifndef NT_RECPOOL_H
#define NT_RECPOOL_H

#include <stdint.h>

#include "kernels/blockrec.h"

#define NT_RECPOOL_UNIT 8

struct nt_recslab_mem {
	struct nt_blk_scratch *scratch;	/* [slots], zeroed */
	struct nt_block_rec *rec;	/* [slots], zeroed */
	/* [slots], device memory: the records of launches whose blocks
	 * write them on the device, copied to rec[] once they are done */
	struct nt_block_rec *drec;
	struct nt_launch_desc *desc;	/* [slots / NT_RECPOOL_UNIT] */
};

/* What a caller must do for NT_RECPOOL_GROW: free these slabs, make one
 * of `slots` slots (a multiple of NT_RECPOOL_UNIT), add it, take again. */
#define NT_RECPOOL_MAX_FREED 8
struct nt_recpool_grow {
	uint32_t slots;
	int n_freed;
	struct nt_recslab_mem freed[NT_RECPOOL_MAX_FREED];
};

/* A launch's share. */
struct nt_recrun {
	int slab;
	uint32_t unit, units;
	uint32_t blocks;
	struct nt_blk_scratch *scratch;	/* [blocks] */
	struct nt_block_rec *rec;	/* [blocks] */
	struct nt_block_rec *drec;	/* [blocks] */
	struct nt_launch_desc *desc;
};

enum nt_recpool_status {
	NT_RECPOOL_OK = 0,
	NT_RECPOOL_GROW,	/* make a slab (struct nt_recpool_grow) and take again */
	NT_RECPOOL_FULL,	/* no room now: retry after runs come back */
	NT_RECPOOL_TOO_BIG,	/* more blocks than max_slots */
	NT_RECPOOL_NO_MEMORY,	/* out of host memory for the bookkeeping */
};

struct nt_recpool_stats {
	int slabs;
	uint64_t slots, used;	/* slots made, slots in runs */
	uint64_t grown;		/* slabs made over the pool's life */
};

struct nt_recpool;

/* first_slots and max_slots are rounded up to whole units; NULL when out
 * of memory. */
struct nt_recpool *nt_recpool_new(uint32_t first_slots, uint32_t max_slots);
enum nt_recpool_status nt_recpool_take(struct nt_recpool *p, uint32_t blocks, struct nt_recrun *run,
				       struct nt_recpool_grow *grow);
/* 1 when take() of `blocks` would not say NT_RECPOOL_FULL now (it fits,
 * the pool may grow, or it never fits), 0 when it would: changes
 * nothing. */
int nt_recpool_room(const struct nt_recpool *p, uint32_t blocks);
/* A slab made for NT_RECPOOL_GROW: 0, or -1 when it no longer fits under
 * the cap (another caller grew the pool meanwhile): free it. */
int nt_recpool_add(struct nt_recpool *p, uint32_t slots, const struct nt_recslab_mem *mem);
void nt_recpool_give(struct nt_recpool *p, const struct nt_recrun *run);
void nt_recpool_stats(const struct nt_recpool *p, struct nt_recpool_stats *out);
/* Free the pool; each slab's memory goes to release(arg, mem) (no run
 * may be in use on the GPU). */
void nt_recpool_free(struct nt_recpool *p, void (*release)(void *arg, struct nt_recslab_mem *mem), void *arg);

#endif
