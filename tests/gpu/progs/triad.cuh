// The STREAM triad and its fill, shared by triad.cu and stream_sweep.cu:
// one element a thread, any block size.
#ifndef NT_TRIAD_CUH
#define NT_TRIAD_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void triad(float *a, const float *b, const float *c, float s, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = b[i] + s * c[i];
}

__global__ void fill(float *x, float v, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = v + (float)(i % 1000) * 1e-3f;
}

#endif
