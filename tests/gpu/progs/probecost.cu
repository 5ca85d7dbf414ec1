// What the block-tracing instrumentation adds to a block, on each SM (the
// probe effect; tests/gpu/probecost.py reads the result).  One kernel,
// launched at several block sizes and block lengths; each block notes in
// its own code, with %clock64 of its SM, when its first warp began and
// its last warp ended its body.  Traced (nucatrace run --sample all), the
// trace's records span the block from its first warp's entry callback to
// its last warp's exit callback on the same clock, so per block
//   probe cost = (record's c_end - c_start) - (body end - body start)
// and untraced, the body times say how much instrumentation slows the
// body itself.
//
//   probecost OUT [REPS]
//
// Writes OUT: one line per launch, "launch K threads T iters I blocks B",
// then one line per block, "block SM BODY_START BODY_END" (cycles).
// Prints how many blocks ran (all of them, traced or not).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef unsigned long long u64;

struct body {
	u64 start, end;
	unsigned sm, pad;
};

__global__ void work(body *b, float *sink, int iters)
{
	u64 t0 = clock64(), t1;
	unsigned sm;
	float x = threadIdx.x * 1e-3f;

	for (int i = 0; i < iters; i++)
		x = x * 0.999f + 0.5f;
	if (x == 12345.0f)	// never: keeps the loop
		sink[0] = x;
	__syncwarp();
	t1 = clock64();
	if ((threadIdx.x & 31) == 0) {
		asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
		atomicMin(&b[blockIdx.x].start, t0);
		atomicMax(&b[blockIdx.x].end, t1);
		b[blockIdx.x].sm = sm;
	}
}

int main(int argc, char **argv)
{
	static const int threads[] = { 32, 128, 256, 512, 1024 };
	static const int iters[] = { 0, 200, 2000, 20000 };
	const char *out = argc > 1 ? argv[1] : "probecost.txt";
	int reps = argc > 2 ? atoi(argv[2]) : 2;
	int sms, launch = 0;
	body *d;
	float *sink;
	FILE *f = fopen(out, "w");
	long ran = 0;

	if (!f) {
		perror(out);
		return 1;
	}
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	int blocks = sms * 16;	// several waves at every block size
	std::vector<body> h(blocks), init(blocks, body{ ~0ull, 0, 0, 0 });

	CHECK(cudaMalloc(&d, blocks * sizeof(body)));
	CHECK(cudaMalloc(&sink, sizeof(float)));
	for (int r = 0; r < reps; r++)
		for (int t : threads)
			for (int it : iters) {
				CHECK(cudaMemcpy(d, init.data(), blocks * sizeof(body), cudaMemcpyHostToDevice));
				work<<<blocks, t>>>(d, sink, it);
				CHECK(cudaGetLastError());
				CHECK(cudaMemcpy(h.data(), d, blocks * sizeof(body), cudaMemcpyDeviceToHost));
				fprintf(f, "launch %d threads %d iters %d blocks %d\n", launch++, t, it, blocks);
				for (int i = 0; i < blocks; i++) {
					fprintf(f, "block %u %llu %llu\n", h[i].sm, h[i].start, h[i].end);
					ran += h[i].end >= h[i].start;
				}
			}
	if (fclose(f)) {
		perror(out);
		return 1;
	}
	printf("launches %d blocks %d ran %ld\n", launch, blocks, ran);
	return 0;
}
