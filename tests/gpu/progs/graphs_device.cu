// What blocks mode does with graphs beyond graphs.cu (tests/gpu/interposer.sh,
// docs/results/2026-12-01-triad-subscription.md), one part per argument:
//   execs N    N graph execs of two kernel nodes (made by stream capture),
//              each launched once and destroyed at once, its launch still
//              queued: the node tables go with their exec
//   device R   a graph exec made for launches from the device, launched R
//              times by a kernel node of a host-launched graph
//   cdp R      R host launches of a kernel whose first thread of each block
//              launches a child grid (dynamic parallelism), and whose
//              children launch the same kernel once more
//   while R    a graph of an init kernel and a while-conditional node whose
//              body kernel runs 5 times per launch, launched R times
// Prints, per part, the launches the host made of each kernel and those
// made on the device, then a checksum (the same with and without tracing).
// Built with -rdc=true and cudadevrt (the Makefile), and once more without
// (graphs_nordc: execs and while only), to tell a module linked with the
// device runtime from the graph patterns themselves.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void node_a(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}

__global__ void node_b(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] *= 0.5f;
}

__global__ void dev_work(float *x)
{
	x[blockIdx.x * blockDim.x + threadIdx.x] += 2.0f;
}

#ifdef __CUDACC_RDC__
__global__ void dev_launcher(cudaGraphExec_t g)
{
	if (threadIdx.x == 0)
		cudaGraphLaunch(g, cudaStreamGraphFireAndForget);
}

__global__ void cdp_child(float *x)
{
	atomicAdd(&x[threadIdx.x], 1.0f);
}

__global__ void cdp_parent(float *x, int depth)
{
	if (threadIdx.x == 0) {
		cdp_child<<<4, 64>>>(x);
		if (depth > 0 && blockIdx.x == 0)
			cdp_parent<<<2, 32>>>(x, depth - 1);
	}
}
#endif

__global__ void while_init(int *left)
{
	*left = 5;
}

__global__ void while_body(cudaGraphConditionalHandle h, int *left, float *x)
{
	atomicAdd(&x[threadIdx.x], 1.0f);
	if (blockIdx.x == 0 && threadIdx.x == 0 && atomicSub(left, 1) == 1)
		cudaGraphSetConditional(h, 0);
}

static float *x;
enum { X = 4096 };

static void part_execs(int n, cudaStream_t s)
{
	for (int i = 0; i < n; i++) {
		cudaGraph_t g;
		cudaGraphExec_t e;

		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		node_a<<<3, 64, 0, s>>>(x);
		node_b<<<2, 64, 0, s>>>(x);
		CHECK(cudaStreamEndCapture(s, &g));
		CHECK(cudaGraphInstantiate(&e, g, 0));
		CHECK(cudaGraphLaunch(e, s));
		CHECK(cudaGraphExecDestroy(e));
		CHECK(cudaGraphDestroy(g));
	}
	CHECK(cudaStreamSynchronize(s));
	printf("execs: host node launches node_a %d node_b %d\n", n, n);
}

#ifdef __CUDACC_RDC__
static void part_device(int r, cudaStream_t s)
{
	cudaGraph_t dg, hg;
	cudaGraphExec_t de, he;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	dev_work<<<4, 64, 0, s>>>(x);
	CHECK(cudaStreamEndCapture(s, &dg));
	CHECK(cudaGraphInstantiate(&de, dg, cudaGraphInstantiateFlagDeviceLaunch));
	CHECK(cudaGraphUpload(de, s));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	dev_launcher<<<1, 32, 0, s>>>(de);
	CHECK(cudaStreamEndCapture(s, &hg));
	CHECK(cudaGraphInstantiate(&he, hg, 0));
	for (int i = 0; i < r; i++)
		CHECK(cudaGraphLaunch(he, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(he));
	CHECK(cudaGraphExecDestroy(de));
	printf("device: host node launches dev_launcher %d; device graph launches dev_work %d\n", r, r);
}

static void part_cdp(int r, cudaStream_t s)
{
	for (int i = 0; i < r; i++)
		cdp_parent<<<8, 32, 0, s>>>(x, 1);
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(s));
	// per host launch: 8 + 2 blocks launch children, one more parent grid
	printf("cdp: host launches cdp_parent %d; device launches cdp_parent %d cdp_child %d\n", r, r, 10 * r);
}
#else
static void part_device(int r, cudaStream_t s)
{
	(void)r, (void)s;
	fprintf(stderr, "graphs_device: 'device' needs a build with -rdc=true\n");
	exit(2);
}

static void part_cdp(int r, cudaStream_t s)
{
	(void)r, (void)s;
	fprintf(stderr, "graphs_device: 'cdp' needs a build with -rdc=true\n");
	exit(2);
}
#endif

static void part_while(int r, cudaStream_t s)
{
	cudaGraph_t g, body;
	cudaGraphExec_t e;
	cudaGraphConditionalHandle h;
	cudaGraphNode_t init, cond, bn;
	cudaGraphNodeParams p = {};
	cudaKernelNodeParams kp = {};
	int *left;
	void *init_args[1], *body_args[3];

	CHECK(cudaMalloc(&left, sizeof(int)));
	CHECK(cudaGraphCreate(&g, 0));
	init_args[0] = &left;
	kp.func = (void *)while_init;
	kp.gridDim = dim3(1);
	kp.blockDim = dim3(1);
	kp.kernelParams = init_args;
	CHECK(cudaGraphAddKernelNode(&init, g, NULL, 0, &kp));
	CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
	p.type = cudaGraphNodeTypeConditional;
	p.conditional.handle = h;
	p.conditional.type = cudaGraphCondTypeWhile;
	p.conditional.size = 1;
	CHECK(cudaGraphAddNode(&cond, g, &init, NULL, 1, &p));
	body = p.conditional.phGraph_out[0];
	body_args[0] = &h;
	body_args[1] = &left;
	body_args[2] = &x;
	kp.func = (void *)while_body;
	kp.gridDim = dim3(2);
	kp.blockDim = dim3(64);
	kp.kernelParams = body_args;
	CHECK(cudaGraphAddKernelNode(&bn, body, NULL, 0, &kp));
	CHECK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < r; i++)
		CHECK(cudaGraphLaunch(e, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(e));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaFree(left));
	printf("while: host node launches while_init %d; body runs while_body %d\n", r, 5 * r);
}

int main(int argc, char **argv)
{
	cudaStream_t s;
	float h[X];
	double sum = 0;

	CHECK(cudaMalloc(&x, X * sizeof(float)));
	CHECK(cudaMemset(x, 0, X * sizeof(float)));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 1; i + 1 < argc; i += 2) {
		int n = atoi(argv[i + 1]);

		if (!strcmp(argv[i], "execs"))
			part_execs(n, s);
		else if (!strcmp(argv[i], "device"))
			part_device(n, s);
		else if (!strcmp(argv[i], "cdp"))
			part_cdp(n, s);
		else if (!strcmp(argv[i], "while"))
			part_while(n, s);
		else {
			fprintf(stderr, "usage: graphs_device [execs N] [device R] [cdp R] [while R]\n");
			return 2;
		}
	}
	CHECK(cudaMemcpy(h, x, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < X; i++)
		sum += h[i] * (1 + i % 7);
	printf("checksum %.6e\n", sum);
	return 0;
}
