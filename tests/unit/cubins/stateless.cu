/*
 * Objects a cubin defines that hold no state of the program's, for
 * tests/unit/test_cubin.c: the string literals of assert() and printf()
 * (__unnamed_1, $str...) and libcu++'s empty constant objects (its
 * customization points cuda::std::begin and the like, cuda::std::ignore,
 * in_place).  Each of 9 PyTorch 2.11 sm_90 cubins sampled on the H200
 * defined such objects, and every symbol of theirs that was printed was
 * one (docs/results/2026-12-03-graph-twins.md); counted as variables,
 * they kept nearly every PyTorch kernel from a twin.
 */
#include <cassert>
#include <cstdio>
#include <cuda/std/iterator>
#include <cuda/std/tuple>
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
