// Device callbacks the Compute Sanitizer inserts at every block's entry
// and exit (see blockrec.h).  Built with -Xptxas --compile-as-tools-patch
// into a fatbin that the interposer hands to sanitizerAddPatches.
// Callbacks run in every active thread of a warp; one lane per warp does
// the work.
#include "blockrec.h"

typedef unsigned long long u64;

// SanitizerPatchResult: 0 is SANITIZER_PATCH_SUCCESS.
typedef unsigned int nt_patch_result;

__device__ __forceinline__ unsigned lane(void)
{
	unsigned l;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
	return l;
}

__device__ __forceinline__ unsigned smid(void)
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

__device__ __forceinline__ u64 gtime(void)
{
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// The launch's own descriptor (blockrec.h: for a graph node launch, the
// one its table files under %gridid + 1; either must name this grid);
// NULL: none.
__device__ __forceinline__ const nt_launch_desc *own_desc(const nt_launch_desc *d)
{
	u64 gridid;

	if (!d)
		return d;
	asm volatile("mov.u64 %0, %%gridid;" : "=l"(gridid));
	return nt_node_find(d, gridid);
}

__device__ __forceinline__ unsigned block_id(const nt_launch_desc *d)
{
	return blockIdx.x + d->grid_x * (blockIdx.y + d->grid_y * blockIdx.z);
}

extern "C" __device__ __noinline__ nt_patch_result nt_block_enter(void *userdata, u64 pc)
{
	const nt_launch_desc *d;
	unsigned mask = __activemask();
	nt_blk_scratch *s;
	u64 t, c;

	if (!userdata || lane() != (unsigned)(__ffs(mask) - 1))
		return 0;
	d = own_desc((const nt_launch_desc *)userdata);
	if (!d || !d->scratch || block_id(d) >= d->blocks)
		return 0;
	t = gtime();
	c = clock64();
	s = &d->scratch[block_id(d)];
	if (atomicAdd(&s->warps_in, 1u) == 0) {
		s->t_start = t;
		s->c_start = c;
		s->smid = smid();
		if (d->replays)	/* this launch of the node: runs - 1 */
			((volatile nt_blk_scratch *)s)->runs++;
	}
	return 0;
}

extern "C" __device__ __noinline__ nt_patch_result nt_block_exit(void *userdata, u64 pc)
{
	const nt_launch_desc *d;
	unsigned mask = __activemask(), n = __popc(mask), id, run;
	volatile nt_blk_scratch *s;
	volatile nt_block_rec *r;

	if (!userdata || lane() != (unsigned)(__ffs(mask) - 1))
		return 0;
	d = own_desc((const nt_launch_desc *)userdata);
	if (!d || !d->scratch || !d->rec)
		return 0;
	id = block_id(d);
	if (id >= d->blocks)
		return 0;
	s = &d->scratch[id];
	// Our start note (if we were first) is visible before we count out:
	// the warps of one block share an SM, so the block's scope will do.
	__threadfence_block();
	if (atomicAdd((unsigned *)&s->threads_out, n) + n != d->threads)
		return 0;
	__threadfence_block();
	run = d->replays ? s->runs - 1 : 0;
	if (d->replays && run >= d->replays) {	/* past the launches it has records for */
		s->warps_in = 0;
		s->threads_out = 0;
		return 0;
	}
	r = &d->rec[(u64)run * d->blocks + id];
	r->t_end = gtime();
	r->c_end = clock64();
	r->t_start = s->t_start;
	r->c_start = s->c_start;
	r->smid = s->smid;
	r->warps = s->warps_in;
	s->warps_in = 0;
	s->threads_out = 0;
	// In host memory the host reads while the launch runs: the tag last.
	// On the device it is read once the launch is done.
	if (!d->on_device)
		__threadfence_system();
	r->tag = d->tag + run;
	return 0;
}

// Entry-only tracing (blockrec.h): patched alone, without the exit site
// that costs about 5 us a block.  Thread 0 writes the block's record as
// it starts: four words, each with the launch's tag, in two 16-byte
// stores, no fence, no atomic (a graph node's descriptor for several
// launches adds a load and a store of the block's launch count, after
// the clocks are read).
extern "C" __device__ __noinline__ nt_patch_result nt_block_enter_only(void *userdata, u64 pc)
{
	const nt_launch_desc *d;
	nt_entry_rec *r;
	u64 t, c;
	unsigned tag, id, run = 0;

	if (!userdata || (threadIdx.x | threadIdx.y | threadIdx.z))
		return 0;
	d = own_desc((const nt_launch_desc *)userdata);
	if (!d || !d->rec)
		return 0;
	id = block_id(d);
	if (id >= d->blocks)
		return 0;
	t = gtime();
	c = clock64();
	if (d->replays) {	/* a graph node's for several launches: which one */
		volatile unsigned *runs;

		if (!d->scratch)
			return 0;
		runs = &d->scratch[id].runs;
		run = *runs;
		*runs = run + 1;
		if (run >= d->replays)
			return 0;
	}
	tag = d->tag + run;
	r = (nt_entry_rec *)d->rec + (u64)run * d->blocks + id;
	asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(&r->w[NT_ENTRY_T_LO]),
		     "l"(NT_ENTRY_WORD(tag, t)), "l"(NT_ENTRY_WORD(tag, t >> 32)) : "memory");
	asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(&r->w[NT_ENTRY_C_LO]),
		     "l"(NT_ENTRY_WORD(tag, c)), "l"(NT_ENTRY_WORD(tag, NT_ENTRY_SM_C(smid(), c))) : "memory");
	return 0;
}

// Callbacks that do nothing, patched instead of the above under
// NUCATRACE_PATCH_NULL=1 (an experiment, issue 33: does a fault under
// instrumentation come from these callbacks' memory accesses, or from
// the patching itself?).  No record is written.
extern "C" __device__ __noinline__ nt_patch_result nt_block_enter_null(void *userdata, u64 pc)
{
	return 0;
}

extern "C" __device__ __noinline__ nt_patch_result nt_block_exit_null(void *userdata, u64 pc)
{
	return 0;
}
