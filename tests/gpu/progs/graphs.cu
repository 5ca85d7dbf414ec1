// CUDA graphs of every kind blocks mode must trace (tests/gpu/interposer.sh):
//  1. made by stream capture: three launches of one kernel and a fourth on
//     a parallel branch (another stream, joined by events), replayed 100
//     times;
//  2. made with the graph API: two kernel nodes in a chain and a child
//     graph holding a third, launched 10 times, then 10 more after
//     cudaGraphExecKernelNodeSetParams changed a node's grid, then 10 more
//     after cudaGraphExecUpdate from an edited graph.
// Prints a checksum (the same with and without tracing) and the number of
// kernel node launches made, which a trace of it with --sample all must
// hold, every block of each.
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

__global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a + 1.0f;
}

static cudaKernelNodeParams node_params(void *f, void **args, int grid, int block)
{
	cudaKernelNodeParams p = {};

	p.func = f;
	p.gridDim = dim3(grid);
	p.blockDim = dim3(block);
	p.kernelParams = args;
	return p;
}

int main(void)
{
	const int n = 1 << 18;
	float *x, *y, *z, h[3];
	cudaStream_t s, side;
	cudaEvent_t fork_ev, join_ev;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	long nodes = 0;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
	CHECK(cudaEventCreateWithFlags(&fork_ev, cudaEventDisableTiming));
	CHECK(cudaEventCreateWithFlags(&join_ev, cudaEventDisableTiming));
	CHECK(cudaMalloc(&x, n * sizeof(float)));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	CHECK(cudaMalloc(&z, n * sizeof(float)));
	CHECK(cudaMemset(x, 0, n * sizeof(float)));
	CHECK(cudaMemset(y, 0, n * sizeof(float)));
	CHECK(cudaMemset(z, 0, n * sizeof(float)));

	// 1. stream capture, with a parallel branch
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	CHECK(cudaEventRecord(fork_ev, s));
	CHECK(cudaStreamWaitEvent(side, fork_ev, 0));
	scale<<<n / 256, 256, 0, side>>>(z, 0.5f, n);
	CHECK(cudaEventRecord(join_ev, side));
	axpy<<<n / 256, 256, 0, s>>>(y, x, 1.0f, n);
	axpy<<<n / 512, 512, 0, s>>>(y, x, 2.0f, n);
	axpy<<<n / 128, 128, 1024, s>>>(y, x, 3.0f, n);
	CHECK(cudaStreamWaitEvent(s, join_ev, 0));
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	scale<<<n / 256, 256, 0, s>>>(x, 1.0f, n);	// x = 1
	for (int r = 0; r < 100; r++)
		CHECK(cudaGraphLaunch(ge, s));
	nodes += 4 * 100;
	CHECK(cudaGraphExecDestroy(ge));
	CHECK(cudaGraphDestroy(g));

	// 2. the graph API: a -> b -> child(c)
	float a1 = 0.25f, a2 = 0.5f, a3 = 2.0f;
	int nn = n;
	void *args_a[] = { &y, &x, &a1, &nn }, *args_b[] = { &z, &y, &a2, &nn }, *args_c[] = { &z, &a3, &nn };
	cudaKernelNodeParams pa = node_params((void *)axpy, args_a, n / 256, 256);
	cudaKernelNodeParams pb = node_params((void *)axpy, args_b, n / 1024, 1024);
	cudaKernelNodeParams pc = node_params((void *)scale, args_c, n / 64, 64);
	cudaGraph_t child, g2;
	cudaGraphNode_t na, nb, nc, nchild;

	CHECK(cudaGraphCreate(&child, 0));
	CHECK(cudaGraphAddKernelNode(&nc, child, NULL, 0, &pc));
	CHECK(cudaGraphCreate(&g, 0));
	CHECK(cudaGraphAddKernelNode(&na, g, NULL, 0, &pa));
	CHECK(cudaGraphAddKernelNode(&nb, g, &na, 1, &pb));
	CHECK(cudaGraphAddChildGraphNode(&nchild, g, &nb, 1, child));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < 10; r++)
		CHECK(cudaGraphLaunch(ge, s));
	// the exec's node a on another grid: 512 threads a block
	pa = node_params((void *)axpy, args_a, n / 512, 512);
	CHECK(cudaGraphExecKernelNodeSetParams(ge, na, &pa));
	for (int r = 0; r < 10; r++)
		CHECK(cudaGraphLaunch(ge, s));
	// an edited copy of the graph (node b on 128-thread blocks), updated in
	CHECK(cudaGraphClone(&g2, g));
	{
		cudaGraphNode_t nb2;

		CHECK(cudaGraphNodeFindInClone(&nb2, nb, g2));
		pb = node_params((void *)axpy, args_b, n / 128, 128);
		CHECK(cudaGraphKernelNodeSetParams(nb2, &pb));
		cudaGraphExecUpdateResultInfo info;
		CHECK(cudaGraphExecUpdate(ge, g2, &info));
	}
	for (int r = 0; r < 10; r++)
		CHECK(cudaGraphLaunch(ge, s));
	nodes += 3 * 30;
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(&h[0], y + 7, sizeof(float), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&h[1], z + 7, sizeof(float), cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(&h[2], z + n - 1, sizeof(float), cudaMemcpyDeviceToHost));
	printf("graph: %.6g %.6g %.6g\n", h[0], h[1], h[2]);
	printf("node launches %ld\n", nodes);
	return 0;
}
