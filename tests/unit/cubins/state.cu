/*
 * Module-scope variables for tests/unit/test_cubin.c: a twin copy of a
 * module would have its own (interposer/blocks/san_twins.c), so the parser
 * counts them.  One of each kind: __constant__ (.nv.constant3),
 * __device__ uninitialised (.nv.global) and initialised (.nv.global.init),
 * __managed__ (.nv.global); the kernels' __shared__ array is not one.
 * And a function's static __device__ counter (_ZZ..., .nv.global): the
 * kernels may write it, so it is one too.
 */
__constant__ float table[16];
__device__ int counter;
__device__ int primed = 5;
__managed__ int shared_with_host;

extern "C" __global__ void reads_state(float *y)
{
	__shared__ float s[32];

	s[threadIdx.x] = table[threadIdx.x] + counter + primed + shared_with_host;
	__syncthreads();
	y[threadIdx.x] = s[31 - threadIdx.x];
}

extern "C" __global__ void counts(int *y)
{
	static __device__ int calls;

	y[threadIdx.x] = atomicAdd(&calls, 1);
}

extern "C" __global__ void stateless(float *y)
{
	y[threadIdx.x] *= 2;
}
