// A decode-style loop for the graph checks (tests/gpu/interposer.sh,
// graph-twins; issue 33): one graph of four kernels (a norm, a
// matrix-vector product, an activation, a residual add) captured and
// instantiated at the start, the graph itself destroyed as PyTorch does,
// and the exec replayed N times (default 3000), as inference servers
// and torch.compile(mode="reduce-overhead") run their hot loops.
//
//   decode [N] [update | selfupdate | selfupload | swap | swapupload | swapdrv | swapdrvupload | shadow | remake | streams]
//
// Prints a checksum of the state, the same with and without tracing
// (every kernel is deterministic: no atomics), the node launches made,
// and the replays' wall time ("loop MS ms", from the first replay to the
// stream's last work done) with that of its last quarter ("tail MS ms",
// from queueing replay 3N/4 on: long after a sampling window at the
// start, what a replay costs between windows).  With update, the exec is changed in place
// twice while it is replayed, as a server re-binds its buffers: before
// replay N/3, the activation node's grid set to 128-thread blocks
// (cudaGraphExecKernelNodeSetParams, the node of the graph it was made
// from, which is kept); before replay 2N/3, the whole exec updated from a
// new capture whose activation runs 128-thread blocks as before and
// whose residual runs 64-thread blocks
// (cudaGraphExecUpdate).  Every kernel is elementwise in those, so the
// checksum stays that of the plain loop, and a trace tells the three
// configurations apart by their block sizes.  With selfupdate, the exec
// is updated once from its own graph before the first replay
// (cudaGraphExecUpdate: nothing changes, as when nucatrace points an exec
// back from its twins); selfupload, the same followed by cudaGraphUpload;
// with swap, the exec is pointed at twins of the four kernels (the same
// code under other names, as nucatrace points it at an instrumented
// module's) and back before the first replay, both by cudaGraphExecUpdate;
// swapupload, the same followed by cudaGraphUpload; swapdrv, pointed
// there and back as nucatrace does it (swap_as_nucatrace), and
// swapdrvupload, that followed by cudaGraphUpload; with shadow, the
// first 250 replays (or N/4, the fewer) launch a second exec, made from
// a capture of the twins, in the program's exec's place, which is never
// changed (a shadow exec, as a window could launch one); with remake,
// each replay instantiates a new exec from the graph (kept), launches it
// and destroys it, as a program that re-instantiates its graph every
// step does (the node tables of destroyed execs, freed under --sample
// all only by waits of nucatrace's own);
// with streams, the four kernels are launched on
// the stream each time and no graph is made: both for telling what a
// replay costs after an exec's update, and what the same kernels cost
// without a graph.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const int D = 2048, ROWS_PER_BLOCK = 8;

// Each kernel's body in a macro, so that the twins below (the same code
// under other names, for swap) compile as the kernels do.
#define NORM_BODY                                                              \
	{                                                                      \
		__shared__ float part[256];                                    \
		float s = 0;                                                   \
		for (int i = threadIdx.x; i < d; i += blockDim.x)              \
			s += x[i] * x[i];                                      \
		part[threadIdx.x] = s;                                         \
		__syncthreads();                                               \
		for (int w = blockDim.x / 2; w > 0; w /= 2) {                  \
			if (threadIdx.x < w)                                   \
				part[threadIdx.x] += part[threadIdx.x + w];    \
			__syncthreads();                                       \
		}                                                              \
		float r = rsqrtf(part[0] / d + 1e-5f);                         \
		for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < d;     \
		     i += gridDim.x * blockDim.x)                              \
			h[i] = x[i] * r;                                       \
	}
// One warp per row of w (d x d), ROWS_PER_BLOCK rows a block.
#define MATVEC_BODY                                                            \
	{                                                                      \
		int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32,      \
		    lane = threadIdx.x % 32;                                   \
		float s = 0;                                                   \
		if (row >= d)                                                  \
			return;                                                \
		for (int i = lane; i < d; i += 32)                             \
			s += w[(size_t)row * d + i] * h[i];                    \
		for (int off = 16; off > 0; off /= 2)                          \
			s += __shfl_down_sync(0xffffffffu, s, off);            \
		if (!lane)                                                     \
			y[row] = s;                                            \
	}
#define ACT_BODY                                                               \
	{                                                                      \
		int i = blockIdx.x * blockDim.x + threadIdx.x;                 \
		if (i < d)                                                     \
			y[i] = tanhf(y[i]);                                    \
	}
#define RESID_BODY                                                             \
	{                                                                      \
		int i = blockIdx.x * blockDim.x + threadIdx.x;                 \
		if (i < d)                                                     \
			x[i] = 0.9f * x[i] + 0.1f * y[i];                      \
	}

__global__ void norm(const float *x, float *h, int d) NORM_BODY
__global__ void matvec(const float *w, const float *h, float *y, int d) MATVEC_BODY
__global__ void act(float *y, int d) ACT_BODY
__global__ void resid(float *x, const float *y, int d) RESID_BODY
__global__ void norm_twin(const float *x, float *h, int d) NORM_BODY
__global__ void matvec_twin(const float *w, const float *h, float *y, int d) MATVEC_BODY
__global__ void act_twin(float *y, int d) ACT_BODY
__global__ void resid_twin(float *x, const float *y, int d) RESID_BODY

// One step of the loop on s: the activation on blocks of ab threads, the
// residual on blocks of rb.
static void step(cudaStream_t s, float *x, float *h, float *y, const float *w, int ab, int rb)
{
	norm<<<8, 256, 0, s>>>(x, h, D);
	matvec<<<D / ROWS_PER_BLOCK, ROWS_PER_BLOCK * 32, 0, s>>>(w, h, y, D);
	act<<<D / ab, ab, 0, s>>>(y, D);
	resid<<<D / rb, rb, 0, s>>>(x, y, D);
}

// The same step through the twins, captured on s.
static cudaGraph_t capture_twins(cudaStream_t s, float *x, float *h, float *y, const float *w)
{
	cudaGraph_t g;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	norm_twin<<<8, 256, 0, s>>>(x, h, D);
	matvec_twin<<<D / ROWS_PER_BLOCK, ROWS_PER_BLOCK * 32, 0, s>>>(w, h, y, D);
	act_twin<<<D / 256, 256, 0, s>>>(y, D);
	resid_twin<<<D / 256, 256, 0, s>>>(x, y, D);
	CHECK(cudaStreamEndCapture(s, &g));
	return g;
}

// The loop's graph, captured on s; the activation on blocks of ab
// threads, the residual on blocks of rb.
static cudaGraph_t capture(cudaStream_t s, float *x, float *h, float *y, const float *w, int ab, int rb)
{
	cudaGraph_t g;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	step(s, x, h, y, w, ab, rb);
	CHECK(cudaStreamEndCapture(s, &g));
	return g;
}

#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "%s: CUresult %d\n", #x, (int)r_); exit(1); } } while (0)

// The kernel's function in the current context.
static CUfunction fn_of(const void *kernel)
{
	cudaFunction_t f;

	CHECK(cudaGetFuncBySymbol(&f, kernel));
	return (CUfunction)f;
}

// swapdrv: the exec pointed at the twins and back as nucatrace does it
// (san_twins.c), on the driver API: from a clone of its graph, whose
// kernel nodes are set to the twins' functions (kern and ctx cleared),
// the exec updated, the nodes set back to what they were, the exec
// updated again.
static void swap_as_nucatrace(cudaGraphExec_t ge, cudaGraph_t g)
{
	void (*norm_k)(const float *, float *, int) = norm;	/* not the math library's norm() */
	const void *mine[] = { (void *)norm_k, (void *)matvec, (void *)act, (void *)resid };
	const void *twins[] = { (void *)norm_twin, (void *)matvec_twin, (void *)act_twin, (void *)resid_twin };
	CUgraph clone;
	CUgraphNode nodes[8];
	CUDA_KERNEL_NODE_PARAMS was[8];
	CUgraphExecUpdateResultInfo info;
	size_t n = 8, k = 0;

	CU(cuGraphClone(&clone, (CUgraph)g));
	CU(cuGraphGetNodes(clone, nodes, &n));
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType t;
		CUDA_KERNEL_NODE_PARAMS p;
		CUfunction f;

		CU(cuGraphNodeGetType(nodes[i], &t));
		if (t != CU_GRAPH_NODE_TYPE_KERNEL)
			continue;
		CU(cuGraphKernelNodeGetParams(nodes[i], &p));
		f = p.func;
		if (!f)
			CU(cuKernelGetFunction(&f, p.kern));
		for (int j = 0; j < 4; j++)
			if (f == fn_of(mine[j])) {
				CUDA_KERNEL_NODE_PARAMS np = p;

				was[k] = p;
				nodes[k++] = nodes[i];
				np.func = fn_of(twins[j]);
				np.kern = NULL;
				np.ctx = NULL;
				CU(cuGraphKernelNodeSetParams(nodes[i], &np));
			}
	}
	if (k != 4) {
		fprintf(stderr, "decode: %zu of 4 kernel nodes found in the clone\n", k);
		exit(1);
	}
	CU(cuGraphExecUpdate((CUgraphExec)ge, clone, &info));
	for (size_t i = 0; i < k; i++)
		CU(cuGraphKernelNodeSetParams(nodes[i], &was[i]));
	CU(cuGraphExecUpdate((CUgraphExec)ge, clone, &info));
	CU(cuGraphDestroy(clone));
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
	const char *mode = argc > 2 ? argv[2] : "";
	int n = argc > 1 ? atoi(argv[1]) : 3000, update = !strcmp(mode, "update");
	int upload = !strcmp(mode, "selfupload"), self = upload || !strcmp(mode, "selfupdate");
	int streams = !strcmp(mode, "streams"), swapload = !strcmp(mode, "swapupload");
	int swapdrvup = !strcmp(mode, "swapdrvupload"), swapdrv = swapdrvup || !strcmp(mode, "swapdrv");
	int swap = swapload || swapdrv || !strcmp(mode, "swap"), shadow = !strcmp(mode, "shadow");
	int remake = !strcmp(mode, "remake");
	cudaStream_t s;
	cudaGraph_t g = nullptr;
	cudaGraphExec_t ge = nullptr, sge = nullptr;
	float *x, *h, *y, *w, *host;
	double sum = 0;

	if (n < 1 || argc > 3 || (argc > 2 && !update && !self && !streams && !swap && !shadow && !remake)) {
		fprintf(stderr, "usage: decode [N] [update | selfupdate | selfupload | swap | swapupload | swapdrv | swapdrvupload | shadow | remake | streams]\n");
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

	if (!streams) {
		g = capture(s, x, h, y, w, 256, 256);
		CHECK(cudaGraphInstantiate(&ge, g, 0));
		if (self) {
			cudaGraphExecUpdateResultInfo info;

			CHECK(cudaGraphExecUpdate(ge, g, &info));
			if (upload)
				CHECK(cudaGraphUpload(ge, s));
		}
		if (swapdrv) {
			swap_as_nucatrace(ge, g);
			if (swapdrvup)
				CHECK(cudaGraphUpload(ge, s));
		} else if (swap) {
			cudaGraph_t tg = capture_twins(s, x, h, y, w);
			cudaGraphExecUpdateResultInfo info;

			CHECK(cudaGraphExecUpdate(ge, tg, &info));
			CHECK(cudaGraphExecUpdate(ge, g, &info));
			CHECK(cudaGraphDestroy(tg));
			if (swapload)
				CHECK(cudaGraphUpload(ge, s));
		}
		if (shadow) {
			cudaGraph_t tg = capture_twins(s, x, h, y, w);

			CHECK(cudaGraphInstantiate(&sge, tg, 0));
			CHECK(cudaGraphDestroy(tg));
		}
		if (!update && !remake)
			CHECK(cudaGraphDestroy(g));	// as torch.cuda.CUDAGraph does once its exec is made
	}
	CHECK(cudaStreamSynchronize(s));
	auto t0 = std::chrono::steady_clock::now(), t3 = t0;
	for (int i = 0; i < n; i++) {
		if (i == 3 * n / 4)
			t3 = std::chrono::steady_clock::now();
		if (update && i == n / 3)
			act_on_128(ge, g);
		if (update && i == 2 * n / 3) {
			cudaGraph_t g2 = capture(s, x, h, y, w, 128, 64);
			cudaGraphExecUpdateResultInfo info;

			CHECK(cudaGraphExecUpdate(ge, g2, &info));
			CHECK(cudaGraphDestroy(g2));
		}
		if (streams) {
			step(s, x, h, y, w, 256, 256);
		} else if (remake) {
			CHECK(cudaGraphExecDestroy(ge));
			CHECK(cudaGraphInstantiate(&ge, g, 0));
			CHECK(cudaGraphLaunch(ge, s));
		} else {
			CHECK(cudaGraphLaunch(sge && i < 250 && i < n / 4 ? sge : ge, s));
		}
	}
	CHECK(cudaStreamSynchronize(s));
	auto t1 = std::chrono::steady_clock::now();
	double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
	double tail = std::chrono::duration<double, std::milli>(t1 - t3).count();
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(host, x, D * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < D; i++)
		sum += host[i];
	printf("checksum %.9g\n", sum);
	printf("node launches %d\n", 4 * n);
	printf("loop %.3f ms\n", ms);
	printf("tail %.3f ms\n", tail);
	if (!streams)
		CHECK(cudaGraphExecDestroy(ge));
	if (sge)
		CHECK(cudaGraphExecDestroy(sge));
	if (update || remake)
		CHECK(cudaGraphDestroy(g));
	free(host);
	return 0;
}
