// CUDA graphs: a captured graph of three kernel nodes, replayed 5 times.
// Every replayed node is a launch the trace must hold with all its blocks.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

int main(void)
{
	const int n = 1 << 18;
	float *x, *y, h[2];
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, n * sizeof(float)));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	CHECK(cudaMemset(x, 0, n * sizeof(float)));
	CHECK(cudaMemset(y, 0, n * sizeof(float)));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	axpy<<<n / 256, 256, 0, s>>>(y, x, 1.0f, n);
	axpy<<<n / 512, 512, 0, s>>>(y, x, 2.0f, n);
	axpy<<<n / 128, 128, 1024, s>>>(y, x, 3.0f, n);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < 5; r++)
		CHECK(cudaGraphLaunch(ge, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(h, y, sizeof(h), cudaMemcpyDeviceToHost));
	printf("graph: %.1f %.1f\n", h[0], h[1]);
	return 0;
}
