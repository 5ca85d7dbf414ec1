// A decode-style loop for the graph checks (tests/gpu/interposer.sh,
// graph-twins; issue 33): one graph of four kernels (a norm, a
// matrix-vector product, an activation, a residual add) captured and
// instantiated at the start, the graph itself destroyed as PyTorch does,
// and the exec replayed N times (default 3000), as inference servers
// and torch.compile(mode="reduce-overhead") run their hot loops.
//
//   decode [N]
//
// Prints a checksum of the state, the same with and without tracing
// (every kernel is deterministic: no atomics), the node launches made,
// and the replays' wall time ("loop MS ms", from the first replay to the
// stream's last work done).
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *x, *h, *y, *w, *host;
	double sum = 0;

	if (n < 1) {
		fprintf(stderr, "usage: decode [N]\n");
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

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	norm<<<8, 256, 0, s>>>(x, h, D);
	matvec<<<D / ROWS_PER_BLOCK, ROWS_PER_BLOCK * 32, 0, s>>>(w, h, y, D);
	act<<<D / 256, 256, 0, s>>>(y, D);
	resid<<<D / 256, 256, 0, s>>>(x, y, D);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	CHECK(cudaGraphDestroy(g));	// as torch.cuda.CUDAGraph does once its exec is made
	CHECK(cudaStreamSynchronize(s));
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		CHECK(cudaGraphLaunch(ge, s));
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
	free(host);
	return 0;
}
