/*
 * blockrec.h - what the block-tracing device callbacks (patch.cu) and
 * the interposer's sanitizer backend share.
 *
 * Per traced launch the host hands the callbacks a struct nt_launch_desc
 * (in device memory, through sanitizerSetLaunchCallbackData; a graph's
 * node launches through a table, below).  For each
 * block of the grid there is
 *   - a struct nt_blk_scratch in device memory, zero before the launch:
 *     the first warp to enter counts itself and notes SM, %globaltimer
 *     and %clock64; every exiting warp adds its active threads;
 *   - a struct nt_block_rec, written once by the last warp to leave,
 *     which then puts the scratch back to zero (so the buffer is ready
 *     for the next launch without a memset).  A plain launch's records
 *     are in device memory (on_device), copied to the host once an event
 *     after the launch has passed (interposer/blocks/san_buffers.c); a graph
 *     node's, or a plain launch's that found no event, in pinned host
 *     memory, read while the launch runs.
 * A record is complete when its tag equals the launch's tag (in host
 * memory written last, after a system-scope fence); the host never has to
 * clear the records, and a stale record from an earlier launch in the
 * same slot cannot pass for a new one.
 */
#ifndef NT_BLOCKREC_H
#define NT_BLOCKREC_H

struct nt_blk_scratch {
	unsigned int warps_in;
	unsigned int threads_out;
	unsigned int smid;
	/* With replays (below): the launches of this block's node so far,
	 * counted by the block's first warp in; zeroed by the host when it
	 * hands the buffers to a node, never reset by the device. */
	unsigned int runs;
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

/*
 * Entry-only tracing (NUCATRACE_BLOCKS=entry): only the block-entry
 * site is patched, so a block's record is written as it starts, by its
 * thread 0, and holds no end.  It is written with no fence and no atomic,
 * as two 16-byte stores: each 8-byte word carries the launch's tag in its
 * upper half beside 32 bits of the record (the same trick as NCCL's LL
 * protocol), so a word is either all old or all new, in any order the
 * reader sees them: the record is complete when every word has the tag.
 * The words: %globaltimer's low and high halves, %clock64's low half, and
 * the SM (8 bits) under %clock64's bits 32..55 (2^56 cycles: over a year).
 * The record of block i lies at (struct nt_entry_rec *)rec + i, where rec
 * is the launch's descriptor's (either kind of records: an entry-only
 * record is the smaller).
 */
enum { NT_ENTRY_T_LO, NT_ENTRY_T_HI, NT_ENTRY_C_LO, NT_ENTRY_SM_C_HI, NT_ENTRY_WORDS };

struct nt_entry_rec {
	unsigned long long w[NT_ENTRY_WORDS];
};

#define NT_ENTRY_WORD(tag, v) (((unsigned long long)(tag) << 32) | (unsigned int)(v))
/* the fourth word's 32 bits */
#define NT_ENTRY_SM_C(sm, c) (((unsigned int)(sm) << 24) | ((unsigned int)((c) >> 32) & 0xffffffu))

struct nt_node_entry;

/* Every descriptor the host makes carries it (below: nt_desc_ours). */
#define NT_DESC_MAGIC 0x4e54444553430001ull	/* "NTDESC", 1 */

struct nt_launch_desc {
	unsigned long long magic;		/* NT_DESC_MAGIC */
	struct nt_blk_scratch *scratch;		/* [blocks], device memory */
	struct nt_block_rec *rec;		/* [blocks], pinned host memory */
	unsigned int threads;			/* threads per block */
	unsigned int grid_x, grid_y;
	unsigned int tag;
	/* Blocks the buffers hold: a block beyond (another launch that
	 * picked up this descriptor) records nothing, never out of bounds. */
	unsigned int blocks;
	/* With nodes: a graph node table's descriptor (below), 2^(64 -
	 * node_shift) entries; the other fields are unused. */
	unsigned int node_shift;
	/* rec is in device memory, read by the host only once the launch is
	 * done (an event after it): the exit writes it with no system-scope
	 * fence.  0: pinned host memory, read while the launch runs. */
	unsigned int on_device;
	/* 0: the descriptor is one launch's.  n > 0: a graph node's for n
	 * launches of its exec, which run one after another (the driver
	 * orders an exec's launches): the block's r-th launch (its scratch
	 * entry's runs) writes record r * blocks + its index, with tag +
	 * r; from the n-th on it records nothing.  So a node traced in
	 * replay after replay needs nothing from the host between them
	 * (interposer/blocks/san_nodes.c). */
	unsigned int replays;
	const struct nt_node_entry *nodes;
	/* The %gridid of the launch it describes (a graph node's: the same
	 * at every launch of its exec).  A grid with another one records
	 * nothing: a grid launched from the device (a dynamic-parallelism
	 * child, a node of a graph launched from the device) may be handed
	 * a host launch's data (for device graphs the Sanitizer API guide
	 * says "a userdata from a different node"). */
	unsigned long long grid;
};

/*
 * CUDA graph kernel nodes (interposer/blocks/san_nodes.c).  Every node of one
 * kernel in a graph launch takes the same per-function data, the value
 * it has when the graph is queued, so for graph nodes that data is a
 * table's descriptor, one table per graph exec: the block's own
 * descriptor is the one its table holds under its grid's %gridid + 1
 * (unique among the node launches of one graph launch), found by open
 * addressing from slot ((%gridid + 1) * NT_NODE_HASH) >> node_shift,
 * probing upwards.  The entry holds the descriptor itself (one copy
 * from the host when it is filed, for one launch of the node or, with
 * replays, several); an empty key (0), or a descriptor naming
 * another grid (the host's "none": grid ~0): the node launch records
 * nothing.
 */
struct nt_node_entry {
	unsigned long long key;			/* %gridid + 1; 0: empty */
	struct nt_launch_desc desc;
};

#define NT_NODE_HASH 0x9e3779b97f4a7c15ull

/* The lookup, shared by the device callbacks (patch.cu), the host that
 * fills the tables (interposer/blocks/san_nodes.c) and the simulated GPU of the
 * CPU tests (tests/fault/fakesanitizer_gpu.c). */
#ifdef __CUDACC__
#define NT_NODE_FN __device__ __forceinline__
#else
#define NT_NODE_FN static inline
#endif

/* Where key's probes begin in a table of 2^(64 - shift) entries. */
NT_NODE_FN unsigned nt_node_slot(unsigned long long key, unsigned shift)
{
	return (unsigned)((key * NT_NODE_HASH) >> shift);
}

/* 1 when d is read as a descriptor: aligned, and marked as the host
 * marks its own.  A patched kernel is handed whatever data the Sanitizer
 * holds for it where none was set (a graph node's, on the H200, a pointer
 * that faulted with "misaligned address": session 12); the host sets
 * data for every launch it can, and this keeps the callbacks from reading
 * through any other pointer that leads to mapped memory (one that leads
 * nowhere mapped still faults: nothing here can tell). */
NT_NODE_FN int nt_desc_ours(const struct nt_launch_desc *d)
{
	return d && !((unsigned long long)d & 7) && d->magic == NT_DESC_MAGIC;
}

/* A launch's own descriptor, for a block of grid gridid given d: d
 * itself, or for a node table the descriptor it files under gridid + 1,
 * when that descriptor is gridid's; NULL: none (or d is not ours). */
NT_NODE_FN const struct nt_launch_desc *nt_node_find(const struct nt_launch_desc *d, unsigned long long gridid)
{
	unsigned long long key = gridid + 1;
	unsigned mask, i;

	if (!nt_desc_ours(d))
		return 0;
	if (d->nodes) {
		mask = (unsigned)((1ull << (64 - d->node_shift)) - 1);
		i = nt_node_slot(key, d->node_shift);
		for (unsigned n = 0; n <= mask; n++, i = (i + 1) & mask) {
			unsigned long long k = d->nodes[i].key;

			if (!k || k == key)
				break;
		}
		d = d->nodes[i].key == key && d->nodes[i].desc.magic == NT_DESC_MAGIC ? &d->nodes[i].desc : 0;
	}
	return d && d->grid == gridid ? d : 0;
}

#endif
