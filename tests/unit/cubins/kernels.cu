/*
 * Kernels of known static attributes for tests/unit/test_cubin.c, which
 * parses the cubins that `make test-unit` builds from this file
 * ($(BUILD)/tests/kernels_sm{80,90}.cubin).  extern "C" keeps the names
 * unmangled except for `mangled`, which checks that C++ names survive.
 * Register counts and shared sizes are pinned in the test for the nvcc
 * the project builds with; change them together.
 */

/* 1024 floats = 4096 B of static shared memory. */
extern "C" __global__ void smem4k(float *out)
{
	__shared__ float s[1024];

	s[threadIdx.x] = out[threadIdx.x];
	__syncthreads();
	out[threadIdx.x] = s[1023 - threadIdx.x];
}

/* __launch_bounds__ declares the max threads per block. */
extern "C" __global__ void __launch_bounds__(128) bounded(int *out)
{
	out[blockIdx.x * 128 + threadIdx.x] = threadIdx.x;
}

/* Many independent live values: a high register count. */
extern "C" __global__ void manyregs(const double *in, double *out, int n)
{
	double acc[32];

#pragma unroll
	for (int i = 0; i < 32; i++)
		acc[i] = in[threadIdx.x + i * n];
	for (int k = 0; k < n; k++)
#pragma unroll
		for (int i = 0; i < 32; i++)
			acc[i] = acc[i] * acc[(i + 1) & 31] + in[k];
	double s = 0;
#pragma unroll
	for (int i = 0; i < 32; i++)
		s += acc[i] * (i + 1);
	out[threadIdx.x] = s;
}

/* A local array indexed by a run-time value must live in the stack frame. */
extern "C" __global__ void stack(int *out, int k)
{
	int a[256];

	for (int i = 0; i < 256; i++)
		a[i] = i * out[i];
	for (int i = 0; i < 256; i++)
		a[out[i] & 255] += i;
	out[threadIdx.x] = a[k & 255];
}

/* A compile-time cluster shape (sm_90 only). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster2(int *out)
{
	out[blockIdx.x] = blockIdx.x;
}
#endif

/* A C++ name, a constant-bank parameter block of known size. */
struct params {
	int v[40];	/* 160 B of kernel parameters */
};

__global__ void mangled(params p, int *out)
{
	out[threadIdx.x] = p.v[threadIdx.x % 40];
}
