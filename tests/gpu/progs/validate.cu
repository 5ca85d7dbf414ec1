// validate.cu - the report's validation workloads (docs/validation.md).
//
// Real kernels whose truth we know, each in a naive version and in
// persistent versions that split the same work over the SMs:
//
//   chase   L2-resident, latency-bound: every lane of a one-warp block
//           follows its own dependent chain of ld.global.cg loads through
//           an 8 MiB random cycle of 128-byte lines
//   stream  DRAM-bound: each unit copies 64 KiB (4 GiB read and written
//           per launch)
//   fma     compute-bound: eight independent FMA chains per thread
//   tail    the chase, as a grid of 1.1 waves of equal blocks
//
// Versions (each its own __global__ function, so a report keeps them apart):
//
//   even    persistent: grid = SMs x slots, every block the same number of
//           units.  The naive version of chase, stream and fma (a
//           grid-stride kernel sized to the GPU, blind to SM speed).
//   grid    tail only, the naive version: one block per run of units.
//   aware   persistent: the blocks of SM s together take units in
//           proportion to shares[s] (a --shares file: one number per SM,
//           any scale); a block reads %smid to find its share.
//
// The work and its results are the same in every version: unit u always
// computes the same values into the same place, whichever block runs it;
// a block takes its units as one range from a global counter, and when
// the static shares do not add up (a slot left empty) the blocks drain
// what is left one unit at a time, so nothing is lost or done twice.
//
//   validate WORKLOAD [--reps N] [--only VERSION] [--shares NAME=FILE]...
//
// runs the versions interleaved (rep 1 of each, rep 2 of each, ...; the
// order rotates), every launch timed by CUDA events, all queued before
// one wait; prints
//   gpu NAME sms N slots K units U
//   time WORKLOAD VERSION median_ms X min_ms Y reps R
//   check WORKLOAD VERSION CHECKSUM      (equal across versions)
// and exits 1 when the checksums differ.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "validate: %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

typedef unsigned long long u64;

static const int CHASE_HOPS = 64, CHASE_BYTES = 8 << 20, LINE_WORDS = 16;
static const int STREAM_UNIT = 64 << 10, STREAM_THREADS = 512;
static const int FMA_ITERS = 256, FMA_THREADS = 256;

// Where a block's units come from.
struct plan {
	u64 *next;		// global unit counter, 0 before the launch
	int *taken;		// aware: blocks seen per SM, 0 before the launch
	const long long *per_sm; // aware: units of each SM (over its slots)
	int slots;
	long long units;
};

__device__ __forceinline__ unsigned smid(void)
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}

// The block's static range [*start, *start + *count): thread 0 decides.
__device__ void my_range(const plan &p, bool aware, long long *start, long long *count)
{
	__shared__ long long s_start, s_count;

	if (threadIdx.x == 0) {
		long long c;

		if (aware) {
			unsigned sm = smid();
			int k = atomicAdd(&p.taken[sm], 1);
			long long n = p.per_sm[sm];

			c = k < p.slots ? n / p.slots + (k < n % p.slots) : 0;
		} else {
			long long s = (long long)gridDim.x;

			c = p.units / s + ((long long)blockIdx.x < p.units % s);
		}
		long long st = c ? (long long)atomicAdd(p.next, (u64)c) : 0;

		if (st >= p.units)
			c = 0;
		else if (st + c > p.units)
			c = p.units - st;
		s_start = st;
		s_count = c;
	}
	__syncthreads();
	*start = s_start;
	*count = s_count;
	__syncthreads();
}

// The next unit left over, or -1.
__device__ long long drain(const plan &p)
{
	__shared__ long long s_u;

	if (threadIdx.x == 0) {
		u64 u = atomicAdd(p.next, 1ULL);

		s_u = u < (u64)p.units ? (long long)u : -1;
	}
	__syncthreads();
	long long u = s_u;
	__syncthreads();
	return u;
}

// --- chase ---------------------------------------------------------------
__device__ __forceinline__ void chase_unit(const u64 *chain, unsigned lines, u64 *out, long long u)
{
	unsigned l = threadIdx.x;
	unsigned idx = (unsigned)(((u64)u * 32 + l) * 2654435761ULL % lines);
	u64 p = (u64)(chain + (size_t)idx * LINE_WORDS);

	for (int i = 0; i < CHASE_HOPS; i++)
		asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
	out[u * 32 + l] = (p - (u64)chain) / (LINE_WORDS * 8);
}

__device__ __forceinline__ void chase_persistent(plan p, bool aware, const u64 *chain, unsigned lines,
						 u64 *out)
{
	long long start, count, u;

	my_range(p, aware, &start, &count);
	for (long long i = 0; i < count; i++)
		chase_unit(chain, lines, out, start + i);
	while ((u = drain(p)) >= 0)
		chase_unit(chain, lines, out, u);
}

extern "C" __global__ void chase_even(plan p, const u64 *chain, unsigned lines, u64 *out)
{
	chase_persistent(p, false, chain, lines, out);
}

extern "C" __global__ void chase_aware(plan p, const u64 *chain, unsigned lines, u64 *out)
{
	chase_persistent(p, true, chain, lines, out);
}

// tail's naive version: block b does units [b * per, (b + 1) * per).
extern "C" __global__ void chase_grid(long long per, const u64 *chain, unsigned lines, u64 *out)
{
	for (long long i = 0; i < per; i++)
		chase_unit(chain, lines, out, (long long)blockIdx.x * per + i);
}

// --- stream --------------------------------------------------------------
__device__ __forceinline__ void stream_unit(const float4 *a, float4 *b, long long u)
{
	const long long per = STREAM_UNIT / sizeof(float4);

	for (long long i = threadIdx.x; i < per; i += blockDim.x) {
		float4 v = __ldcs(&a[u * per + i]);

		v.x = v.x * 2 + 1, v.y = v.y * 2 + 1, v.z = v.z * 2 + 1, v.w = v.w * 2 + 1;
		__stcs(&b[u * per + i], v);
	}
}

__device__ __forceinline__ void stream_persistent(plan p, bool aware, const float4 *a, float4 *b)
{
	long long start, count, u;

	my_range(p, aware, &start, &count);
	for (long long i = 0; i < count; i++)
		stream_unit(a, b, start + i);
	while ((u = drain(p)) >= 0)
		stream_unit(a, b, u);
}

extern "C" __global__ void stream_even(plan p, const float4 *a, float4 *b)
{
	stream_persistent(p, false, a, b);
}

extern "C" __global__ void stream_aware(plan p, const float4 *a, float4 *b)
{
	stream_persistent(p, true, a, b);
}

// --- fma -----------------------------------------------------------------
__device__ __forceinline__ void fma_unit(float *out, long long u)
{
	float a[8];

	for (int j = 0; j < 8; j++)
		a[j] = (float)((u * 7 + threadIdx.x + j) % 1000) * 1e-3f;
	for (int i = 0; i < FMA_ITERS; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			a[j] = fmaf(a[j], 0.999999f, 1e-6f);
	out[u * blockDim.x + threadIdx.x] = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

__device__ __forceinline__ void fma_persistent(plan p, bool aware, float *out)
{
	long long start, count, u;

	my_range(p, aware, &start, &count);
	for (long long i = 0; i < count; i++)
		fma_unit(out, start + i);
	while ((u = drain(p)) >= 0)
		fma_unit(out, u);
}

extern "C" __global__ void fma_even(plan p, float *out)
{
	fma_persistent(p, false, out);
}

extern "C" __global__ void fma_aware(plan p, float *out)
{
	fma_persistent(p, true, out);
}

// --- host ----------------------------------------------------------------
static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "validate: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

struct version {
	std::string name;		// even, grid, aware:NAME
	const void *fn;
	std::vector<long long> per_sm;	// aware
	long long *d_per_sm = nullptr;
	std::vector<float> ms;
	u64 check = 0;
};

// Units of each SM in proportion to shares (largest remainder), adding
// up to `units` exactly.
static std::vector<long long> split_units(const std::vector<double> &shares, long long units)
{
	double sum = 0;
	long long given = 0;
	std::vector<long long> n(shares.size());
	std::vector<std::pair<double, int>> rest;

	for (double s : shares)
		sum += s;
	for (size_t i = 0; i < shares.size(); i++) {
		double q = units * shares[i] / sum;

		n[i] = (long long)q;
		given += n[i];
		rest.push_back({ q - (double)n[i], (int)i });
	}
	std::sort(rest.begin(), rest.end(), [](auto &a, auto &b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
	for (long long i = 0; given < units; i++, given++)
		n[rest[i % rest.size()].second]++;
	return n;
}

static std::vector<double> read_shares(const char *path, int sms)
{
	std::vector<double> v;
	FILE *f = fopen(path, "r");
	double x;

	if (!f)
		die("cannot open shares file '%s'", path);
	while (fscanf(f, "%lf", &x) == 1) {
		if (!(x > 0))
			die("shares file '%s': every share must be a positive number", path);
		v.push_back(x);
	}
	fclose(f);
	if ((int)v.size() != sms) {
		fprintf(stderr, "validate: shares file '%s' has %zu values, the GPU has %d SMs\n", path, v.size(), sms);
		exit(2);
	}
	return v;
}

// Dynamic shared memory that lets exactly `slots` blocks share an SM.
static size_t smem_for(const void *fn, int threads, int slots, size_t fixed)
{
	int dev, per_sm, max_block, active = 0;

	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
	CHECK(cudaDeviceGetAttribute(&max_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	// From the most a block could have down, in 1 KiB steps (what the
	// system reserves per block and the allocation granularity vary):
	// the largest size at which exactly `slots` blocks fit.
	size_t smem = fixed ? fixed : std::min((size_t)per_sm / slots, (size_t)max_block) / 1024 * 1024;

	CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
	CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	for (;; smem -= 1024) {
		CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, fn, threads, smem));
		if (fixed || active >= slots || smem < 1024)
			break;
	}
	if (active != slots) {
		fprintf(stderr, "validate: no shared memory size lets exactly %d blocks of %d threads share "
			"an SM (%d fit with %zu bytes)\n", slots, threads, active, smem);
		exit(1);
	}
	return smem;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: validate chase|stream|fma|tail [--reps N] [--only VERSION] "
			"[--shares NAME=FILE]...\n");
		return 2;
	}
	std::string w = argv[1], only;
	int reps = 15, dev = 0, sms;
	std::vector<std::pair<std::string, std::string>> share_files;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--shares") && i + 1 < argc) {
			std::string a = argv[++i];
			size_t eq = a.find('=');

			if (eq == std::string::npos || !eq)
				die("--shares '%s': expected NAME=FILE", a.c_str());
			share_files.push_back({ a.substr(0, eq), a.substr(eq + 1) });
		} else
			die("unknown argument '%s'", argv[i]);
	}
	if (reps < 1)
		die("--reps: '%s' is not a positive count", "0");
	if (w != "chase" && w != "stream" && w != "fma" && w != "tail")
		die("unknown workload '%s' (chase, stream, fma or tail)", w.c_str());
	CHECK(cudaSetDevice(dev));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, dev));

	bool is_chase = w == "chase" || w == "tail";
	int threads = is_chase ? 32 : w == "stream" ? STREAM_THREADS : FMA_THREADS;
	int slots = is_chase ? 4 : w == "stream" ? 4 : 8;
	int grid = sms * slots;
	// Per block of the naive version: ~4 ms of chase, ~2 ms of stream, ~4 ms of fma.
	long long per_block = is_chase ? 512 : w == "stream" ? 128 : 256;
	int tail_blocks = (int)(1.1 * grid + 0.5);
	long long units = (w == "tail" ? tail_blocks : grid) * per_block;

	std::vector<version> vs;
	auto add = [&](const std::string &name, const void *fn) {
		if (only.empty() || only == name)
			vs.push_back(version{ name, fn });
	};
	const void *even = w == "stream" ? (const void *)stream_even : w == "fma" ? (const void *)fma_even
										  : (const void *)chase_even;
	const void *aware = w == "stream" ? (const void *)stream_aware : w == "fma" ? (const void *)fma_aware
										    : (const void *)chase_aware;
	if (w == "tail")
		add("grid", (const void *)chase_grid);
	add("even", even);
	for (auto &sf : share_files) {
		std::string name = "aware:" + sf.first;

		if (!only.empty() && only != name)
			continue;
		version v{ name, aware };
		v.per_sm = split_units(read_shares(sf.second.c_str(), sms), units);
		CHECK(cudaMalloc(&v.d_per_sm, sms * sizeof(long long)));
		CHECK(cudaMemcpy(v.d_per_sm, v.per_sm.data(), sms * sizeof(long long), cudaMemcpyHostToDevice));
		vs.push_back(v);
	}
	if (vs.empty())
		die("--only '%s': no such version of this workload", only.c_str());
	// One size for every version, so that all run at the same occupancy.
	size_t smem = smem_for(even, threads, slots, 0);
	smem_for(aware, threads, slots, smem);
	if (w == "tail")
		smem_for((const void *)chase_grid, threads, slots, smem);

	// Data.
	u64 *chain = nullptr, *out = nullptr, *next;
	int *taken;
	float4 *a = nullptr, *b = nullptr;
	float *fout = nullptr;
	unsigned lines = CHASE_BYTES / (LINE_WORDS * 8);
	size_t out_words = 0;
	CHECK(cudaMalloc(&next, 8));
	CHECK(cudaMalloc(&taken, sms * sizeof(int)));
	if (is_chase) {
		std::vector<u64> h((size_t)lines * LINE_WORDS);
		std::vector<unsigned> perm(lines);
		u64 s = 0x6e75636174726163ULL;

		CHECK(cudaMalloc(&chain, h.size() * 8));
		for (unsigned i = 0; i < lines; i++)
			perm[i] = i;
		for (unsigned i = lines - 1; i > 0; i--) {	// Sattolo: one cycle
			s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
			unsigned j = (unsigned)((s * 0x2545F4914F6CDD1DULL) % i);
			std::swap(perm[i], perm[j]);
		}
		for (unsigned i = 0; i < lines; i++)
			h[(size_t)i * LINE_WORDS] = (u64)(chain + (size_t)perm[i] * LINE_WORDS);
		CHECK(cudaMemcpy(chain, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
		out_words = (size_t)units * 32;
		CHECK(cudaMalloc(&out, out_words * 8));
	} else if (w == "stream") {
		size_t n = (size_t)units * STREAM_UNIT / sizeof(float4);
		std::vector<float4> h(n / 64);

		CHECK(cudaMalloc(&a, n * sizeof(float4)));
		CHECK(cudaMalloc(&b, n * sizeof(float4)));
		for (size_t i = 0; i < h.size(); i++)
			h[i] = make_float4((float)(i % 97), (float)(i % 89), (float)(i % 83), (float)(i % 79));
		for (size_t off = 0; off < n; off += h.size())
			CHECK(cudaMemcpy(a + off, h.data(), h.size() * sizeof(float4), cudaMemcpyHostToDevice));
	} else {
		out_words = (size_t)units * FMA_THREADS;
		CHECK(cudaMalloc(&fout, out_words * sizeof(float)));
	}
	printf("gpu %s sms %d slots %d units %lld\n", prop.name, sms, slots, units);

	// Launch.
	std::vector<cudaEvent_t> ev;
	auto launch = [&](version &v) {
		plan p = { next, taken, v.d_per_sm, slots, units };
		cudaEvent_t e0, e1;

		CHECK(cudaMemsetAsync(next, 0, 8));
		CHECK(cudaMemsetAsync(taken, 0, sms * sizeof(int)));
		CHECK(cudaEventCreate(&e0));
		CHECK(cudaEventCreate(&e1));
		CHECK(cudaEventRecord(e0));
		if (v.name == "grid") {
			long long per = per_block;
			void *args[] = { &per, &chain, &lines, &out };
			CHECK(cudaLaunchKernel(v.fn, tail_blocks, threads, args, smem, 0));
		} else if (is_chase) {
			void *args[] = { &p, &chain, &lines, &out };
			CHECK(cudaLaunchKernel(v.fn, grid, threads, args, smem, 0));
		} else if (w == "stream") {
			void *args[] = { &p, &a, &b };
			CHECK(cudaLaunchKernel(v.fn, grid, threads, args, smem, 0));
		} else {
			void *args[] = { &p, &fout };
			CHECK(cudaLaunchKernel(v.fn, grid, threads, args, smem, 0));
		}
		CHECK(cudaEventRecord(e1));
		ev.push_back(e0);
		ev.push_back(e1);
	};
	auto checksum = [&](version &v) {
		u64 c = 0;

		if (is_chase) {
			std::vector<u64> h(out_words);
			CHECK(cudaMemcpy(h.data(), out, out_words * 8, cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < h.size(); i++)
				c = c * 1000003 + h[i];
		} else if (w == "stream") {
			const size_t per = STREAM_UNIT / sizeof(float4);
			std::vector<float4> h(per);
			for (long long u = 0; u < units; u += 97) {
				CHECK(cudaMemcpy(h.data(), b + (size_t)u * per, per * sizeof(float4), cudaMemcpyDeviceToHost));
				for (size_t i = 0; i < per; i++) {
					uint32_t x;
					memcpy(&x, &h[i].x, 4);
					c = c * 1000003 + x;
					memcpy(&x, &h[i].w, 4);
					c = c * 1000003 + x;
				}
			}
		} else {
			std::vector<float> h(out_words);
			CHECK(cudaMemcpy(h.data(), fout, out_words * sizeof(float), cudaMemcpyDeviceToHost));
			for (float f : h) {
				uint32_t x;
				memcpy(&x, &f, 4);
				c = c * 1000003 + x;
			}
		}
		v.check = c;
	};
	// One untimed launch of each (warm-up, and the checksums).
	for (auto &v : vs) {
		if (is_chase)
			CHECK(cudaMemset(out, 0, out_words * 8));
		else if (w == "fma")
			CHECK(cudaMemset(fout, 0, out_words * sizeof(float)));
		else
			CHECK(cudaMemset(b, 0, (size_t)units * STREAM_UNIT));
		launch(v);
		CHECK(cudaDeviceSynchronize());
		checksum(v);
	}
	ev.clear();
	for (int r = 0; r < reps; r++)
		for (size_t j = 0; j < vs.size(); j++)
			launch(vs[(j + r) % vs.size()]);
	CHECK(cudaDeviceSynchronize());
	for (int r = 0, k = 0; r < reps; r++)
		for (size_t j = 0; j < vs.size(); j++, k++) {
			float ms;
			CHECK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
			vs[(j + r) % vs.size()].ms.push_back(ms);
		}
	int bad = 0;
	for (auto &v : vs) {
		std::vector<float> m = v.ms;
		std::sort(m.begin(), m.end());
		printf("time %s %s median_ms %.6f min_ms %.6f reps %d\n", w.c_str(), v.name.c_str(),
		       m[m.size() / 2], m[0], (int)m.size());
	}
	for (auto &v : vs) {
		printf("check %s %s %016llx\n", w.c_str(), v.name.c_str(), v.check);
		bad |= v.check != vs[0].check;
	}
	if (bad)
		fprintf(stderr, "validate: the versions computed different results\n");
	return bad;
}
