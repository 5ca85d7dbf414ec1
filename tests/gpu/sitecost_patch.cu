// Device callbacks of the sitecost investigation (tests/gpu/sitecost.sh),
// patched at every block's entry and exit by tests/gpu/sitecost.c.  Built
// as a tools patch:
//
//   nvcc --compile-as-tools-patch -fatbin -arch=sm_90 -I. -o sitecost_patch.fatbin tests/gpu/sitecost_patch.cu
//
// The callbacks run in every active thread of a warp that reaches the
// site.  *_empty return at once: what the sites cost with nothing done.
// *_ts note when each warp got there (sitecost.h), one lane per warp.
// sc_exit_error returns SANITIZER_PATCH_ERROR (1), which the API
// documents as exiting the whole warp at once: whether the cost of the
// exit site lies after our callback returns.
#include "sitecost.h"
#include "kernels/sreg.cuh"	// smid(), gtime()

typedef unsigned long long u64;

// SanitizerPatchResult: 0 is SANITIZER_PATCH_SUCCESS, 1 SANITIZER_PATCH_ERROR.
typedef unsigned int sc_patch_result;

extern "C" __device__ __noinline__ sc_patch_result sc_enter_empty(void *userdata, u64 pc)
{
	return 0;
}

extern "C" __device__ __noinline__ sc_patch_result sc_exit_empty(void *userdata, u64 pc)
{
	return 0;
}

extern "C" __device__ __noinline__ sc_patch_result sc_exit_error(void *userdata, u64 pc)
{
	return 1;
}

__device__ __forceinline__ unsigned lane_id(void)
{
	unsigned l;
	asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
	return l;
}

__device__ __forceinline__ u64 grid_id(void)
{
	u64 g;
	asm volatile("mov.u64 %0, %%gridid;" : "=l"(g));
	return g;
}

__device__ __forceinline__ void note(void *userdata, u64 pc, unsigned kind)
{
	struct sc_cb_buf *b = (struct sc_cb_buf *)userdata;
	unsigned mask = __activemask(), i;
	struct sc_cb_rec r;

	// the timestamps first, before anything of ours can delay them
	r.gtime = gtime();
	r.clock = clock64();
	if (!b || lane_id() != (unsigned)(__ffs(mask) - 1))
		return;
	if (*(volatile unsigned *)&b->count >= b->cap) {
		if (*(volatile unsigned *)&b->dropped != 0xffffffffu)
			atomicAdd(&b->dropped, 1u);
		return;
	}
	i = atomicAdd(&b->count, 1u);
	if (i >= b->cap) {
		if (*(volatile unsigned *)&b->dropped != 0xffffffffu)
			atomicAdd(&b->dropped, 1u);
		return;
	}
	r.gridid = grid_id();
	r.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	r.mask = mask;
	r.pc = (unsigned)pc;
	r.warp = (unsigned short)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32);
	r.smid = (unsigned short)smid();
	r.kind = (unsigned char)kind;
	b->recs[i] = r;
}

extern "C" __device__ __noinline__ sc_patch_result sc_enter_ts(void *userdata, u64 pc)
{
	note(userdata, pc, SC_KIND_ENTER);
	return 0;
}

extern "C" __device__ __noinline__ sc_patch_result sc_exit_ts(void *userdata, u64 pc)
{
	note(userdata, pc, SC_KIND_EXIT);
	return 0;
}
