// Functions loaded lazily into a patched module while its other kernels
// run (issue 33, the window fault).
//
//   lazy_race [warm] [tail]
//
// One module: spin (8 waves of short blocks, each busy for about 5 us,
// then x = 3x + 1 on its slice) and 64 kernels lazy<k> (y = (2k + 3) y +
// k), none launched before.  The program launches spin `warm` times
// (1600), then for each k: spin on stream A, lazy<k> on stream B (while
// spin runs), lazy<k> on A (queued behind it); then spin `tail` times
// (1000).  Nothing is waited for until the end.  Under CUDA's lazy
// loading (the default since CUDA 12.2) each lazy<k> is loaded into the
// module at its first launch, while spin runs; under a policy whose
// window has patched the module by then (lazy_race.sh's
// all,window=300,skip=1300: the launches 1301-1600 at the entry site,
// 1601-1900 at both, under --blocks mixed), the Compute Sanitizer
// patches it as it loads
// (docs/interposer.md, "Functions loaded lazily").  PyTorch's captured
// step loads 7 functions so in every run, and now and then dies with
// "misaligned address" (docs/results/2026-12-07-lazy-loads.md): this
// program does it 128 times a run, beside kernels of the same module.
//
// Every element is checked against its closed form at the end: prints
// "checksum", "lazy launches" and "mismatches 0", or exits 1 on a
// mismatch or a CUDA error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <utility>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

#define NLAZY 64

__global__ void spin(uint32_t *x, long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	x[i] = x[i] * 3u + 1u;
}

template <int K>
__global__ void lazy(uint32_t *y, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * (2u * K + 3u) + (uint32_t)K;
}

typedef void (*lazy_fn)(uint32_t *, uint32_t);

template <int... K>
static const lazy_fn *table(std::integer_sequence<int, K...>)
{
	static const lazy_fn t[] = { lazy<K>... };
	return t;
}

static uint64_t check(const uint32_t *got, const uint32_t *init, uint32_t n, uint32_t a, uint32_t b, uint64_t *sum)
{
	uint64_t bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		bad += got[i] != a * init[i] + b;
		*sum = *sum * 31 + got[i];
	}
	return bad;
}

int main(int argc, char **argv)
{
	int warm = argc > 1 ? atoi(argv[1]) : 1600, tail = argc > 2 ? atoi(argv[2]) : 1000;
	const lazy_fn *fns = table(std::make_integer_sequence<int, NLAZY>());
	int dev, sms;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	const uint32_t threads = 128, sblocks = (uint32_t)sms * 16 * 8, nx = sblocks * threads;
	const uint32_t ny = 1 << 16, yblocks = ny / threads;
	uint32_t *x, *ya, *yb;
	uint32_t *hx = (uint32_t *)malloc(nx * 4), *hy = (uint32_t *)malloc(ny * 4);
	uint32_t *gx = (uint32_t *)malloc(nx * 4), *gy = (uint32_t *)malloc(ny * 4);
	cudaStream_t a, b;

	if (!hx || !hy || !gx || !gy)
		return 1;
	for (uint32_t i = 0; i < nx; i++)
		hx[i] = i * 2654435761u;
	for (uint32_t i = 0; i < ny; i++)
		hy[i] = i ^ 0x9e3779b9u;
	CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, nx * 4));
	CHECK(cudaMalloc(&ya, ny * 4));
	CHECK(cudaMalloc(&yb, ny * 4));
	CHECK(cudaMemcpy(x, hx, nx * 4, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(ya, hy, ny * 4, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(yb, hy, ny * 4, cudaMemcpyHostToDevice));
	int spins = 0;
	for (int r = 0; r < warm; r++, spins++)
		spin<<<sblocks, threads, 0, a>>>(x, 10000);
	for (int k = 0; k < NLAZY; k++, spins++) {
		void *args[] = { &yb, (void *)&ny };
		spin<<<sblocks, threads, 0, a>>>(x, 10000);
		CHECK(cudaLaunchKernel((const void *)fns[k], yblocks, threads, args, 0, b));
		args[0] = &ya;
		CHECK(cudaLaunchKernel((const void *)fns[k], yblocks, threads, args, 0, a));
	}
	for (int r = 0; r < tail; r++, spins++)
		spin<<<sblocks, threads, 0, a>>>(x, 10000);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	/* the closed forms: x -> ax x + bx after every spin, y after lazy<0..63> */
	uint32_t axx = 1, bxx = 0, ayy = 1, byy = 0;
	for (int r = 0; r < spins; r++)
		axx *= 3u, bxx = bxx * 3u + 1u;
	for (int k = 0; k < NLAZY; k++)
		ayy *= 2u * k + 3u, byy = byy * (2u * k + 3u) + (uint32_t)k;
	uint64_t bad = 0, sum = 0;
	CHECK(cudaMemcpy(gx, x, nx * 4, cudaMemcpyDeviceToHost));
	bad += check(gx, hx, nx, axx, bxx, &sum);
	CHECK(cudaMemcpy(gy, ya, ny * 4, cudaMemcpyDeviceToHost));
	bad += check(gy, hy, ny, ayy, byy, &sum);
	CHECK(cudaMemcpy(gy, yb, ny * 4, cudaMemcpyDeviceToHost));
	bad += check(gy, hy, ny, ayy, byy, &sum);
	printf("checksum %016llx\n", (unsigned long long)sum);
	printf("launches %d\n", spins + 2 * NLAZY);
	printf("lazy launches %d\n", 2 * NLAZY);
	printf("mismatches %llu\n", (unsigned long long)bad);
	return bad != 0;
}
