// A graph exec whose module is instrumented after the exec was made
// (tests/gpu/interposer.sh, graph-late-patch): three launches of one
// kernel captured into a graph and instantiated, the graph replayed 20
// times and waited for, then 10 plain launches of the kernel (a sampling
// window opening among them patches its module at a plain launch's
// entry), then the
// graph replayed 20 times more, back to back, and 10 plain launches
// after.  Prints a checksum (the same with and without tracing) and the
// number of kernel node launches made after the plain launches began.
//
// Session 17 saw a replay run into "illegal instruction" after modules
// were patched at a replay's entry into the driver, the exec made before;
// whether a patch made at a plain launch's entry is safe for an exec made
// before it is what this asks.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void bump(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * 0.5f + a;
}

int main(void)
{
	const int n = 1 << 24, threads = 256, blocks = n / threads;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *y, *host;
	double sum = 0;
	int nodes = 0;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	CHECK(cudaMemset(y, 0, n * sizeof(float)));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < 3; k++)
		bump<<<blocks, threads, 0, s>>>(y, 1.0f + k, n);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < 20; r++)
		CHECK(cudaGraphLaunch(ge, s));
	// nothing of the exec queued or running when the module is patched:
	// only the exec's age differs from graphs.cu's case
	CHECK(cudaStreamSynchronize(s));
	for (int i = 0; i < 10; i++)
		bump<<<blocks, threads, 0, s>>>(y, 0.25f * i, n);
	for (int r = 0; r < 20; r++, nodes += 3)
		CHECK(cudaGraphLaunch(ge, s));
	for (int i = 0; i < 10; i++)
		bump<<<blocks, threads, 0, s>>>(y, 0.125f * i, n);
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGetLastError());
	host = (float *)malloc(n * sizeof(float));
	CHECK(cudaMemcpy(host, y, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		sum += host[i];
	printf("checksum %.6f\n", sum);
	printf("late node launches %d\n", nodes);
	free(host);
	CHECK(cudaGraphExecDestroy(ge));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaFree(y));
	return 0;
}
