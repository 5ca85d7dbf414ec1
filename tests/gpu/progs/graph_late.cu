// Graph execs and module patches made in either order
// (tests/gpu/interposer.sh, graph-late-patch and graph-early-patch).
//
//   graph_late [late|early|tail] [split]
//
// late: three launches of one kernel captured into a graph and
// instantiated, the graph replayed 20 times and waited for, then 10 plain
// launches of the kernel (a sampling window opening among them patches
// its module at a plain launch's entry), then the graph replayed 20 times
// more, back to back, and 10 plain launches after.
// early: 2 plain launches (a window opening at the first patches the
// module before the second), the capture and instantiation (the exec made
// while its module is patched), then 4 rounds of 10 plain launches and 20
// replays (windows closing and opening among the plain launches unpatch
// and patch the module again while the exec lives), and 10 plain launches.
// tail: 2 plain launches, the capture and instantiation, then 200 replays
// and nothing else (a program whose warm-up is shorter than a window: the
// window that patched the module at its plain launches is still open
// when only graph launches come).
// split: the graph's kernel is another one of the same module, so its
// nodes are never traced under match=bump(*: only the plain launches
// patch the module.
//
// Prints a checksum (the same with and without tracing) and the number of
// kernel node launches made after the exec's module may have been
// switched.
//
// Session 17 saw a replay run into "illegal instruction" after modules
// were patched at a replay's entry into the driver, the exec made before;
// session 18 saw the same with the patch made at a plain launch's entry
// (late).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void bump(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * 0.5f + a;
}

__global__ void bump2(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * 0.25f + a;
}

static const int n = 1 << 24, threads = 256, blocks = n / threads;

static void plain(cudaStream_t s, float *y, int count, float step)
{
	for (int i = 0; i < count; i++)
		bump<<<blocks, threads, 0, s>>>(y, step * i, n);
}

static void make(cudaStream_t s, float *y, int split, cudaGraph_t *g, cudaGraphExec_t *ge)
{
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int k = 0; k < 3; k++)
		if (split)
			bump2<<<blocks, threads, 0, s>>>(y, 1.0f + k, n);
		else
			bump<<<blocks, threads, 0, s>>>(y, 1.0f + k, n);
	CHECK(cudaStreamEndCapture(s, g));
	CHECK(cudaGraphInstantiate(ge, *g, 0));
}

static int replay(cudaStream_t s, cudaGraphExec_t ge, int count)
{
	for (int r = 0; r < count; r++)
		CHECK(cudaGraphLaunch(ge, s));
	return 3 * count;
}

int main(int argc, char **argv)
{
	int early = argc > 1 && !strcmp(argv[1], "early"), tail = argc > 1 && !strcmp(argv[1], "tail"),
	    split = argc > 2 && !strcmp(argv[2], "split");
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *y, *host;
	double sum = 0;
	int nodes = 0;

	if (argc > 1 && !early && !tail && strcmp(argv[1], "late")) {
		fprintf(stderr, "usage: graph_late [late|early|tail] [split]\n");
		return 2;
	}
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&y, n * sizeof(float)));
	CHECK(cudaMemset(y, 0, n * sizeof(float)));
	if (tail) {
		plain(s, y, 2, 0.5f);
		make(s, y, split, &g, &ge);
		nodes += replay(s, ge, 200);
	} else if (early) {
		plain(s, y, 2, 0.5f);
		make(s, y, split, &g, &ge);
		for (int round = 0; round < 4; round++) {
			plain(s, y, 10, 0.25f);
			nodes += replay(s, ge, 20);
		}
		plain(s, y, 10, 0.125f);
	} else {
		make(s, y, split, &g, &ge);
		replay(s, ge, 20);
		// nothing of the exec queued or running when the module is
		// patched: only the exec's age differs from graphs.cu's case
		CHECK(cudaStreamSynchronize(s));
		plain(s, y, 10, 0.25f);
		nodes += replay(s, ge, 20);
		plain(s, y, 10, 0.125f);
	}
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
