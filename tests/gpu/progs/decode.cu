// A decode-style loop for the graph checks (tests/gpu/interposer.sh,
// graph-twins; issue 33): one graph of four kernels (a norm, a
// matrix-vector product, an activation, a residual add) captured and
// instantiated at the start, the graph itself destroyed as PyTorch does,
// and the exec replayed N times (default 3000), as inference servers
// and torch.compile(mode="reduce-overhead") run their hot loops.
//
//   decode [N] [update]
//
// Prints a checksum of the state, the same with and without tracing
// (every kernel is deterministic: no atomics), the node launches made,
// and the replays' wall time ("loop MS ms", from the first replay to the
// stream's last work done).  With update, the exec is changed in place
// twice while it is replayed, as a server re-binds its buffers: before
// replay N/3, the activation node's grid set to 128-thread blocks
// (cudaGraphExecKernelNodeSetParams, the node of the graph it was made
// from, which is kept); before replay 2N/3, the whole exec updated from a
// new capture whose activation runs 128-thread blocks as before and
// whose residual runs 64-thread blocks
// (cudaGraphExecUpdate).  Every kernel is elementwise in those, so the
// checksum stays that of the plain loop, and a trace tells the three
// configurations apart by their block sizes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const int D = 2048, ROWS_PER_BLOCK = 8;

__global__ void norm(const float *x, float *h, int d)
{
	__shared__ float part[256];
	float s = 0;

	for (int i = threadIdx.x; i < d; i += blockDim.x)
		s += x[i] * x[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	float r = rsqrtf(part[0] / d + 1e-5f);
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d; i += gridDim.x * blockDim.x)
		h[i] = x[i] * r;
}

// One warp per row of w (d x d), ROWS_PER_BLOCK rows a block.
__global__ void matvec(const float *w, const float *h, float *y, int d)
{
	int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
	float s = 0;

	if (row >= d)
		return;
	for (int i = lane; i < d; i += 32)
		s += w[(size_t)row * d + i] * h[i];
	for (int off = 16; off > 0; off /= 2)
		s += __shfl_down_sync(0xffffffffu, s, off);
	if (!lane)
		y[row] = s;
}

__global__ void act(float *y, int d)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < d)
		y[i] = tanhf(y[i]);
}

__global__ void resid(float *x, const float *y, int d)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < d)
		x[i] = 0.9f * x[i] + 0.1f * y[i];
}

// The loop's graph, captured on s; the activation on blocks of ab
// threads, the residual on blocks of rb.
static cudaGraph_t capture(cudaStream_t s, float *x, float *h, float *y, const float *w, int ab, int rb)
{
	cudaGraph_t g;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	norm<<<8, 256, 0, s>>>(x, h, D);
	matvec<<<D / ROWS_PER_BLOCK, ROWS_PER_BLOCK * 32, 0, s>>>(w, h, y, D);
	act<<<D / ab, ab, 0, s>>>(y, D);
	resid<<<D / rb, rb, 0, s>>>(x, y, D);
	CHECK(cudaStreamEndCapture(s, &g));
	return g;
}

// The exec's activation node on blocks of 128 threads, through the node
// of g (the graph the exec was made from).
static void act_on_128(cudaGraphExec_t ge, cudaGraph_t g)
{
	cudaGraphNode_t nodes[8];
	size_t n = 8;

	CHECK(cudaGraphGetNodes(g, nodes, &n));
	for (size_t i = 0; i < n; i++) {
		cudaGraphNodeType t;
		cudaKernelNodeParams p;

		CHECK(cudaGraphNodeGetType(nodes[i], &t));
		if (t != cudaGraphNodeTypeKernel)
			continue;
		CHECK(cudaGraphKernelNodeGetParams(nodes[i], &p));
		if (p.func != (void *)act)
			continue;
		p.gridDim = dim3(D / 128);
		p.blockDim = dim3(128);
		CHECK(cudaGraphExecKernelNodeSetParams(ge, nodes[i], &p));
		return;
	}
	fprintf(stderr, "decode: no activation node in the graph\n");
	exit(1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000, update = argc > 2 && !strcmp(argv[2], "update");
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *x, *h, *y, *w, *host;
	double sum = 0;

	if (n < 1 || (argc > 2 && !update)) {
		fprintf(stderr, "usage: decode [N] [update]\n");
		return 2;
	}
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, D * sizeof(float)));
	CHECK(cudaMalloc(&h, D * sizeof(float)));
	CHECK(cudaMalloc(&y, D * sizeof(float)));
	CHECK(cudaMalloc(&w, (size_t)D * D * sizeof(float)));
	host = (float *)malloc((size_t)D * D * sizeof(float));
	for (size_t i = 0; i < (size_t)D * D; i++)	// a fixed pseudo-random matrix, entries about N(0, 1/D)
		host[i] = (float)((int)((i * 2654435761u) % 2001u) - 1000) / (1000.0f * 26.0f);
	CHECK(cudaMemcpy(w, host, (size_t)D * D * sizeof(float), cudaMemcpyHostToDevice));
	for (int i = 0; i < D; i++)
		host[i] = 1.0f + (float)(i % 7) / 7.0f;
	CHECK(cudaMemcpy(x, host, D * sizeof(float), cudaMemcpyHostToDevice));

	g = capture(s, x, h, y, w, 256, 256);
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	if (!update)
		CHECK(cudaGraphDestroy(g));	// as torch.cuda.CUDAGraph does once its exec is made
	CHECK(cudaStreamSynchronize(s));
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++) {
		if (update && i == n / 3)
			act_on_128(ge, g);
		if (update && i == 2 * n / 3) {
			cudaGraph_t g2 = capture(s, x, h, y, w, 128, 64);
			cudaGraphExecUpdateResultInfo info;

			CHECK(cudaGraphExecUpdate(ge, g2, &info));
			CHECK(cudaGraphDestroy(g2));
		}
		CHECK(cudaGraphLaunch(ge, s));
	}
	CHECK(cudaStreamSynchronize(s));
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(host, x, D * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < D; i++)
		sum += host[i];
	printf("checksum %.9g\n", sum);
	printf("node launches %d\n", 4 * n);
	printf("loop %.3f ms\n", ms);
	CHECK(cudaGraphExecDestroy(ge));
	if (update)
		CHECK(cudaGraphDestroy(g));
	free(host);
	return 0;
}
