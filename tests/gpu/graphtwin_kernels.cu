// Kernels of the graph-exec experiment (tests/gpu/graphtwin.c, issue 33),
// loaded from a cubin as a module more than once:
//
//   nvcc -cubin -arch=sm_90 -o graphtwin_kernels.cubin tests/gpu/graphtwin_kernels.cu
//
// bump touches only its arguments, so any loaded copy of the module runs
// it the same.  tally also adds to a module-scope __device__ variable and
// copies it out: a copy of the module (a twin) has a variable of its own,
// so the program's module would not see the twin's additions.
extern "C" __global__ void bump(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = y[i] * 0.5f + a;
}

__device__ unsigned long long tally_sum;

extern "C" __global__ void tally(unsigned long long *out)
{
	if (threadIdx.x == 0)
		atomicAdd(&tally_sum, 1ULL);
	__syncthreads();
	if (blockIdx.x == 0 && threadIdx.x == 0)
		*out = tally_sum;
}
