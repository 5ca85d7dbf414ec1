// sreg.cuh - the special registers the embedded kernels read (probe.cu,
// load.cu, localize_eval.cu), one definition each.  PTX manual: %smid
// need not be contiguous and can change after preemption, so read it
// where it is recorded; %clock64 counts the SM's cycles; %globaltimer is
// nanoseconds, common to the GPU.  The clobbers keep the compiler from
// moving the reads across memory operations.
#ifndef NT_SREG_CUH
#define NT_SREG_CUH

__device__ __forceinline__ unsigned smid(void)
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

__device__ __forceinline__ unsigned long long clk(void)
{
	unsigned long long c;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
	return c;
}

__device__ __forceinline__ unsigned long long gtime(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
	return t;
}

#endif
