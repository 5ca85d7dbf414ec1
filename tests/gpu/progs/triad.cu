// A STREAM-style triad with tiny blocks: a[i] = b[i] + s * c[i] over 2^26
// floats, 256-thread blocks (262,144 blocks per launch), each launch timed
// with events; the kind of kernel whose blocks are shortest.
//
//   triad [LAUNCHES] [LOG2_N]
//
// Prints "triad MS ms" (median event time of one launch), "wall S s" (the
// wall time of all launches, queued back to back, then one sync) and a
// checksum of a[] that an untraced and a traced run must share.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "triad.cuh"

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 400;
	int lg = argc > 2 ? atoi(argv[2]) : 26;
	size_t n = (size_t)1 << lg;
	unsigned blocks = (unsigned)((n + 255) / 256);
	float *a, *b, *c;
	std::vector<cudaEvent_t> ev(2 * launches);
	std::vector<float> ms(launches);

	CHECK(cudaMalloc(&a, n * sizeof(float)));
	CHECK(cudaMalloc(&b, n * sizeof(float)));
	CHECK(cudaMalloc(&c, n * sizeof(float)));
	fill<<<blocks, 256>>>(b, 1.0f, n);
	fill<<<blocks, 256>>>(c, 2.0f, n);
	for (auto &e : ev)
		CHECK(cudaEventCreate(&e));
	triad<<<blocks, 256>>>(a, b, c, 3.0f, n);
	CHECK(cudaDeviceSynchronize());
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < launches; i++) {
		CHECK(cudaEventRecord(ev[2 * i]));
		triad<<<blocks, 256>>>(a, b, c, 3.0f + (float)(i % 7), n);
		CHECK(cudaEventRecord(ev[2 * i + 1]));
	}
	CHECK(cudaDeviceSynchronize());
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	for (int i = 0; i < launches; i++)
		CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
	std::vector<float> h(4096);
	CHECK(cudaMemcpy(h.data(), a + n / 2, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (float v : h)
		sum += v;
	std::sort(ms.begin(), ms.end());
	printf("checksum %.6f\n", sum);
	printf("triad %.6f ms\n", ms[launches / 2]);
	printf("wall %.6f s\n", wall);
	return 0;
}
