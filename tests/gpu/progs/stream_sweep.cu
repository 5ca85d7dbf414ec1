// A STREAM-style size sweep with tiny blocks (issue 32): the triad
// a[i] = b[i] + s * c[i] at 2^LO .. 2^HI floats, 128-thread blocks (2^24
// floats: 131,072 blocks a launch, as a public STREAM benchmark's), REPS
// launches per size, each timed with events.
//
//   stream_sweep [REPS] [LO] [HI]      (defaults 200 18 26)
//
// Prints per size "size LOG2_N blocks B us MEDIAN_US GBs GB_PER_S" (the
// median launch; 12 bytes a float moved), then "wall S s" (from the first
// launch to the last sync) and a checksum of a[] that an untraced and a
// traced run must share.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "triad.cuh"

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	int lo = argc > 2 ? atoi(argv[2]) : 18;
	int hi = argc > 3 ? atoi(argv[3]) : 26;
	size_t nmax = (size_t)1 << hi;
	float *a, *b, *c;
	std::vector<cudaEvent_t> ev(2 * reps);
	std::vector<float> ms(reps);
	double sum = 0;

	if (reps < 1 || lo < 10 || hi > 30 || lo > hi) {
		fprintf(stderr, "usage: stream_sweep [REPS] [LO] [HI] (10 <= LO <= HI <= 30)\n");
		return 2;
	}
	CHECK(cudaMalloc(&a, nmax * sizeof(float)));
	CHECK(cudaMalloc(&b, nmax * sizeof(float)));
	CHECK(cudaMalloc(&c, nmax * sizeof(float)));
	fill<<<(unsigned)((nmax + 127) / 128), 128>>>(b, 1.0f, nmax);
	fill<<<(unsigned)((nmax + 127) / 128), 128>>>(c, 2.0f, nmax);
	for (auto &e : ev)
		CHECK(cudaEventCreate(&e));
	CHECK(cudaDeviceSynchronize());
	auto t0 = std::chrono::steady_clock::now();
	for (int lg = lo; lg <= hi; lg++) {
		size_t n = (size_t)1 << lg;
		unsigned blocks = (unsigned)((n + 127) / 128);

		for (int i = 0; i < reps; i++) {
			CHECK(cudaEventRecord(ev[2 * i]));
			triad<<<blocks, 128>>>(a, b, c, 3.0f + (float)(i % 7), n);
			CHECK(cudaEventRecord(ev[2 * i + 1]));
		}
		CHECK(cudaDeviceSynchronize());
		for (int i = 0; i < reps; i++)
			CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
		std::sort(ms.begin(), ms.end());
		printf("size %d blocks %u us %.2f GBs %.1f\n", lg, blocks, 1e3 * ms[reps / 2],
		       12.0 * (double)n / (ms[reps / 2] * 1e6));
	}
	auto t1 = std::chrono::steady_clock::now();
	printf("wall %.4f s\n", std::chrono::duration<double>(t1 - t0).count());
	{
		std::vector<float> h(4096);

		CHECK(cudaMemcpy(h.data(), a, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
		for (float v : h)
			sum += v;
		printf("checksum %.6f\n", sum);
	}
	return 0;
}
