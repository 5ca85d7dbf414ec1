// Workloads for make bench (tests/bench/interposer.sh), each printing one
// "name value unit" line:
//   launches N      wall time of N back-to-back launches of an empty kernel
//   chase R         median event time of R launches of an L2-latency-bound
//                   pointer chase (one warp per block, 4 blocks per SM)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void empty(void) {}

__global__ void chase(const unsigned long long *buf, unsigned long long *sink, int steps)
{
	unsigned long long p = (unsigned long long)(buf + (blockIdx.x * 977u % 16384u) * 16);

	for (int i = 0; i < steps; i++)
		asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
	if (p == 1)
		*sink = p;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1000;

	CHECK(cudaFree(0));
	if (argc > 1 && !strcmp(argv[1], "launches")) {
		empty<<<1, 32>>>();
		CHECK(cudaDeviceSynchronize());
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < n; i++)
			empty<<<1, 32>>>();
		CHECK(cudaDeviceSynchronize());
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		printf("launches %.6f s\n", s);
		return 0;
	}
	// 2 MiB of 128-byte lines, each pointing 7 lines on (a cycle): L2-resident.
	size_t lines = 16384;
	std::vector<unsigned long long> h(lines * 16);
	unsigned long long *d, *sink;
	CHECK(cudaMalloc(&d, h.size() * 8));
	CHECK(cudaMalloc(&sink, 8));
	for (size_t i = 0; i < lines; i++)
		h[i * 16] = (unsigned long long)(d + ((i + 7) % lines) * 16);
	CHECK(cudaMemcpy(d, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
	int sms;
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	// All launches queued at once, then one wait: the GPU never idles
	// waiting for the host, so the events time the kernels alone.
	std::vector<float> ms(n);
	std::vector<cudaEvent_t> ev(2 * n);
	for (auto &e : ev)
		CHECK(cudaEventCreate(&e));
	chase<<<sms * 4, 32>>>(d, sink, 2000);
	for (int i = 0; i < n; i++) {
		CHECK(cudaEventRecord(ev[2 * i]));
		chase<<<sms * 4, 32>>>(d, sink, 2000);
		CHECK(cudaEventRecord(ev[2 * i + 1]));
	}
	CHECK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++)
		CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
	std::sort(ms.begin(), ms.end());
	printf("chase %.6f ms\n", ms[n / 2]);
	return 0;
}
