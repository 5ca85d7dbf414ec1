// The kernels of PAPER.md's "Which patch site costs what" table, timed,
// for the sitecost investigation (tests/gpu/sitecost.sh runs it bare and
// under tests/gpu/sitecost.so with each patch site):
//
//   empty32, empty256, empty1024   empty bodies, 32 blocks per SM
//   fma256, fma1024                2,000 dependent FMAs per thread, 32 blocks per SM
//   triad                          a[i] = b[i] + s * c[i] over 2^26 floats, 256-thread blocks
//
//   sitecost [--reps N] [--only LABEL,...] [--body-ts --ts-out FILE]
//
// Each kernel: one warm-up launch, then N (5) launches, each timed alone
// with events.  Prints per kernel "sitecost LABEL MIN_US MEDIAN_US", the
// kernels' registers and occupancy ("kernel ...", "occupancy ..."), and a
// checksum of the triad's output that every run must share.
//
// --body-ts runs the empty and FMA rows with kernels that also note, per
// warp (lane 0), %globaltimer and clock64 at the very start and the very
// end of their body, with %gridid, block, warp and SM (struct sc_body,
// tests/gpu/sitecost.h), into FILE: what tests/gpu/sitecost.py lines up
// with the callbacks' own timestamps.  Those kernels are called sc_*_ts,
// so the injection library gives callback data to them alone.
//
// Ends with cudaDeviceReset(): the injection library writes its callback
// records when the context goes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "../sitecost.h"

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "sitecost: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef unsigned long long u64;

enum kind { EMPTY, FMA, TRIAD };

struct row {
	const char *label;
	kind k;
	int threads;
};

static const row rows[] = {
	{ "empty32", EMPTY, 32 }, { "empty256", EMPTY, 256 }, { "empty1024", EMPTY, 1024 },
	{ "fma256", FMA, 256 }, { "fma1024", FMA, 1024 }, { "triad", TRIAD, 256 },
};

static const int FMA_ITERS = 2000;
static const int TRIAD_LOG2 = 26;

__device__ __forceinline__ u64 gtime(void)
{
	u64 t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
	return t;
}

__device__ __forceinline__ void note_body(sc_body *rec, u64 t0, u64 c0, u64 t1, u64 c1)
{
	unsigned warp = threadIdx.x / 32, sm;
	u64 gridid;
	sc_body *r;

	if (threadIdx.x % 32)
		return;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
	asm volatile("mov.u64 %0, %%gridid;" : "=l"(gridid));
	r = &rec[(size_t)blockIdx.x * (blockDim.x / 32) + warp];
	r->gridid = gridid;
	r->t0 = t0;
	r->c0 = c0;
	r->t1 = t1;
	r->c1 = c1;
	r->block = blockIdx.x;
	r->warp = (unsigned short)warp;
	r->smid = (unsigned short)sm;
}

extern "C" __global__ void sc_empty(void)
{
}

extern "C" __global__ void sc_empty_ts(sc_body *rec)
{
	u64 t0 = gtime(), c0 = clock64();
	u64 t1 = gtime(), c1 = clock64();

	note_body(rec, t0, c0, t1, c1);
}

// A chain of dependent FMAs; the impossible store keeps it.
__device__ __forceinline__ float fma_chain(float x, int iters)
{
	for (int i = 0; i < iters; i++)
		x = fmaf(x, 0.999f, 0.5f);
	return x;
}

extern "C" __global__ void sc_fma(float *sink, int iters)
{
	float x = fma_chain(threadIdx.x * 1e-3f, iters);

	if (x == 12345.0f)
		sink[0] = x;
}

extern "C" __global__ void sc_fma_ts(float *sink, int iters, sc_body *rec)
{
	float x = threadIdx.x * 1e-3f;
	u64 t0, c0, t1, c1;

	// The chain may neither start before the first clock nor end after
	// the second: the asm claims to change x, then to read it.
	t0 = gtime();
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0), "+f"(x) :: "memory");
	x = fma_chain(x, iters);
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1) : "f"(x) : "memory");
	t1 = gtime();
	if (x == 12345.0f)
		sink[0] = x;
	note_body(rec, t0, c0, t1, c1);
}

extern "C" __global__ void sc_triad(float *a, const float *b, const float *c, float s, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		a[i] = b[i] + s * c[i];
}

extern "C" __global__ void sc_fill(float *x, float v, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = v + (float)(i % 1000) * 1e-3f;
}

struct triad_data {
	float *a, *b, *c;
	size_t n;
};

static void launch(const row &r, unsigned blocks, const triad_data &td, float *sink, sc_body *rec)
{
	switch (r.k) {
	case EMPTY:
		if (rec)
			sc_empty_ts<<<blocks, r.threads>>>(rec);
		else
			sc_empty<<<blocks, r.threads>>>();
		break;
	case FMA:
		if (rec)
			sc_fma_ts<<<blocks, r.threads>>>(sink, FMA_ITERS, rec);
		else
			sc_fma<<<blocks, r.threads>>>(sink, FMA_ITERS);
		break;
	case TRIAD:
		sc_triad<<<blocks, r.threads>>>(td.a, td.b, td.c, 3.0f, td.n);
		break;
	}
}

static const void *kernel_of(const row &r, bool ts)
{
	switch (r.k) {
	case EMPTY:
		return ts ? (const void *)sc_empty_ts : (const void *)sc_empty;
	case FMA:
		return ts ? (const void *)sc_fma_ts : (const void *)sc_fma;
	default:
		return (const void *)sc_triad;
	}
}

static bool selected(const char *only, const char *label)
{
	if (!only)
		return true;
	return (std::string(",") + only + ",").find(std::string(",") + label + ",") != std::string::npos;
}

static void write_chunk(FILE *f, const char *label, unsigned launch_idx, unsigned threads,
			const std::vector<sc_body> &recs)
{
	char name[SC_LABEL_LEN] = { 0 };
	unsigned hdr[4] = { launch_idx, threads, (unsigned)recs.size(), 0 };

	strncpy(name, label, sizeof(name) - 1);
	if (fwrite(name, sizeof(name), 1, f) != 1 || fwrite(hdr, sizeof(hdr), 1, f) != 1 ||
	    (recs.size() && fwrite(recs.data(), sizeof(sc_body), recs.size(), f) != recs.size())) {
		perror("sitecost: writing the body timestamps");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int reps = 5, sms;
	bool body_ts = false;
	const char *ts_out = NULL, *only = NULL;
	std::string tmp;
	FILE *tsf = NULL;
	cudaDeviceProp prop;
	triad_data td = { NULL, NULL, NULL, (size_t)1 << TRIAD_LOG2 };
	float *sink;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--body-ts"))
			body_ts = true;
		else if (!strcmp(argv[i], "--ts-out") && i + 1 < argc)
			ts_out = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: sitecost [--reps N] [--only LABEL,...] [--body-ts --ts-out FILE]\n");
			return 2;
		}
	}
	if (reps < 1 || (body_ts && !ts_out)) {
		fprintf(stderr, "sitecost: --reps must be at least 1, --body-ts needs --ts-out\n");
		return 2;
	}
	CHECK(cudaGetDeviceProperties(&prop, 0));
	sms = prop.multiProcessorCount;
	printf("device %s sms %d cc %d.%d\n", prop.name, sms, prop.major, prop.minor);

	// Load the module before any launch (lazy loading loads it at the
	// first use): the injection library patches it as it loads.
	for (const row &r : rows)
		for (int ts = 0; ts < 2; ts++) {
			cudaFuncAttributes fa;
			int occ = 0;

			if (ts && r.k == TRIAD)
				continue;
			CHECK(cudaFuncGetAttributes(&fa, kernel_of(r, ts)));
			CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel_of(r, ts), r.threads, 0));
			printf("kernel %s%s threads %d regs %d local %zu occupancy %d\n", r.label, ts ? "_ts" : "",
			       r.threads, fa.numRegs, fa.localSizeBytes, occ);
		}
	CHECK(cudaMalloc(&sink, sizeof(float)));
	if (selected(only, "triad")) {
		unsigned blocks = (unsigned)((td.n + 255) / 256);

		CHECK(cudaMalloc(&td.a, td.n * sizeof(float)));
		CHECK(cudaMalloc(&td.b, td.n * sizeof(float)));
		CHECK(cudaMalloc(&td.c, td.n * sizeof(float)));
		sc_fill<<<blocks, 256>>>(td.b, 1.0f, td.n);
		sc_fill<<<blocks, 256>>>(td.c, 2.0f, td.n);
		CHECK(cudaMemset(td.a, 0, td.n * sizeof(float)));
		CHECK(cudaDeviceSynchronize());
	}
	if (body_ts) {
		tmp = std::string(ts_out) + ".tmp";
		if (!(tsf = fopen(tmp.c_str(), "wb")) || fwrite(SC_BODY_MAGIC, 8, 1, tsf) != 1) {
			perror(tmp.c_str());
			return 1;
		}
	}

	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	for (const row &r : rows) {
		unsigned blocks = r.k == TRIAD ? (unsigned)((td.n + r.threads - 1) / r.threads) : 32u * sms;
		size_t nrec = (size_t)blocks * (r.threads / 32);
		bool ts = body_ts && r.k != TRIAD;
		sc_body *rec = NULL;
		std::vector<sc_body> host;
		std::vector<float> us;

		if (!selected(only, r.label))
			continue;
		if (ts) {
			CHECK(cudaMalloc(&rec, nrec * sizeof(sc_body)));
			host.resize(nrec);
		}
		for (int i = 0; i <= reps; i++) {
			float ms;

			if (rec)
				CHECK(cudaMemset(rec, 0, nrec * sizeof(sc_body)));
			CHECK(cudaEventRecord(e0));
			launch(r, blocks, td, sink, rec);
			CHECK(cudaGetLastError());
			CHECK(cudaEventRecord(e1));
			CHECK(cudaEventSynchronize(e1));
			CHECK(cudaEventElapsedTime(&ms, e0, e1));
			if (i > 0)
				us.push_back(ms * 1000.0f);
			if (rec) {
				CHECK(cudaMemcpy(host.data(), rec, nrec * sizeof(sc_body), cudaMemcpyDeviceToHost));
				write_chunk(tsf, r.label, (unsigned)i, (unsigned)r.threads, host);
			}
		}
		std::sort(us.begin(), us.end());
		printf("sitecost %s %.1f %.1f blocks %u threads %d%s\n", r.label, us[0], us[us.size() / 2], blocks,
		       r.threads, ts ? " body-ts" : "");
		fflush(stdout);
		if (rec)
			CHECK(cudaFree(rec));
	}
	if (td.a) {
		std::vector<float> h(4096);
		double sum = 0;

		CHECK(cudaMemcpy(h.data(), td.a + td.n / 2, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
		for (float v : h)
			sum += v;
		printf("checksum %.6f\n", sum);
	}
	if (tsf) {
		if (fclose(tsf) || rename(tmp.c_str(), ts_out)) {
			perror(ts_out);
			return 1;
		}
		printf("body timestamps in %s\n", ts_out);
	}
	CHECK(cudaDeviceReset());
	return 0;
}
