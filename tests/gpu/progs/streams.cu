// 8 host threads x 4 streams each, launching concurrently: every traced
// launch must still get exactly one record per block.
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void work(float *x, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i];
	for (int k = 0; k < iters; k++)
		v = v * 0.999f + 0.001f;
	x[i] = v;
}

static void thread_main(int t, double *result)
{
	const int n = 1 << 16;
	cudaStream_t s[4];
	float *d[4];
	double sum = 0;

	for (int j = 0; j < 4; j++) {
		CHECK(cudaStreamCreateWithFlags(&s[j], cudaStreamNonBlocking));
		CHECK(cudaMalloc(&d[j], n * sizeof(float)));
		CHECK(cudaMemsetAsync(d[j], 0, n * sizeof(float), s[j]));
	}
	for (int r = 0; r < 10; r++)
		for (int j = 0; j < 4; j++)
			work<<<(n + 255) / 256 + t, 256, 0, s[j]>>>(d[j], n, 100 * (t + 1));
	for (int j = 0; j < 4; j++) {
		float h[4];

		CHECK(cudaMemcpyAsync(h, d[j], sizeof(h), cudaMemcpyDeviceToHost, s[j]));
		CHECK(cudaStreamSynchronize(s[j]));
		sum += h[0] + h[3];
		CHECK(cudaFree(d[j]));
		CHECK(cudaStreamDestroy(s[j]));
	}
	*result = sum;
}

int main(void)
{
	std::vector<std::thread> threads;
	double results[8];

	CHECK(cudaFree(0));
	for (int t = 0; t < 8; t++)
		threads.emplace_back(thread_main, t, &results[t]);
	for (auto &th : threads)
		th.join();
	for (int t = 0; t < 8; t++)
		printf("thread %d: %.6f\n", t, results[t]);
	return 0;
}
