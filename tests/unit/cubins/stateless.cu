/*
 * Objects a cubin defines that hold no state of the program's, for
 * tests/unit/test_cubin.c: the string literals of assert() and printf()
 * (__unnamed_1, $str...) and libcu++'s empty constant objects (its
 * customization points cuda::std::begin and the like, cuda::std::ignore,
 * in_place).  Each of 9 PyTorch 2.11 sm_90 cubins sampled on the H200
 * defined such objects, and every symbol of theirs that was printed was
 * one (docs/results/2026-12-03-graph-twins.md); counted as variables,
 * they kept nearly every PyTorch kernel from a twin.  Also Thrust's
 * empty objects (thrust::seq, thrust::device, placeholders: one byte
 * each), a function's static __constant__ table (_ZZ..., in a
 * constant bank: no kernel can write it, no host code can name it),
 * an empty object in namespace cute (as CuTe's cute::product, which
 * flash attention's cubins define) and the math library's
 * __cudart_i2opi_f (sinf's argument reduction), which kept modules of
 * PyTorch's captured training step from twins on the H200
 * (docs/results/2026-12-04-graph-windows.md).
 */
#include <cassert>
#include <cstdio>
#include <cuda/std/iterator>
#include <cuda/std/tuple>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>

__device__ __noinline__ float from_table(int i)
{
	static __constant__ float tab[4] = { 1.f, 2.f, 3.f, 4.f };

	return tab[i & 3];
}

extern "C" __global__ void thrustuse(float *y)
{
	thrust::fill(thrust::seq, y, y + 4, from_table(threadIdx.x));
}

namespace cute {
struct product_fn {
	__device__ int operator()(int a, int b) const { return a * b; }
};
__device__ constexpr product_fn product{};
}

template <class F> __device__ __noinline__ int apply(const F &f, int a)
{
	return f(a, a);
}

extern "C" __global__ void cuteuse(float *y, int n)
{
	y[threadIdx.x] = sinf(y[threadIdx.x] * 1e6f) + apply(cute::product, n);
}
extern "C" __global__ void libuse(float *y, int n)
{
	float a[4] = { 1, 2, 3, 4 };
	float s = 0;
	for (float *p = cuda::std::begin(a); p != cuda::std::end(a); ++p)
		s += *p;
	cuda::std::ignore = s;
	assert(n > 0);
	if (n == 12345)
		printf("odd %d\n", n);
	y[threadIdx.x] = s;
}
