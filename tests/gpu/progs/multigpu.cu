// Every GPU of the machine in one process: a context per device, kernels
// on each; the trace must hold each device and its launches.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void scale(float *x, float f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * f + 1.0f;
}

int main(void)
{
	const int n = 1 << 20;
	int count;

	CHECK(cudaGetDeviceCount(&count));
	for (int d = 0; d < count; d++) {
		float *x, h;

		CHECK(cudaSetDevice(d));
		CHECK(cudaMalloc(&x, n * sizeof(float)));
		CHECK(cudaMemset(x, 0, n * sizeof(float)));
		for (int r = 0; r < 3; r++)
			scale<<<(n + 255) / 256, 256>>>(x, 0.5f, n);
		CHECK(cudaMemcpy(&h, x + 7, sizeof(h), cudaMemcpyDeviceToHost));
		printf("device %d: %.4f\n", d, h);
		CHECK(cudaFree(x));
	}
	return 0;
}
