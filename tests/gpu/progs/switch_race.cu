// Module switches while the module's own launches are queued and running
// (tests/gpu/interposer.sh, switch-under-queue).
//
//   switch_race [rounds]
//
// One module, two kernels, launched in turn on one stream and never
// waited for until the end, so the GPU runs far behind the host: spin
// (8 waves of short blocks, each busy for about 5 us, then x = 3x + 1 on
// its slice) and bump (y = 5y + round).  Under a policy whose windows open
// and close every few dozen launches (every=20,idle=4), each window's
// patch and each close's unpatch of the module come at a launch's entry
// while earlier launches of the same module are still queued or running.
// At the end every element is checked against its closed form (both
// kernels are affine maps, mod 2^32): prints "checksum" and "mismatches
// 0", or exits 1 on a mismatch or a CUDA error.
//
// Session 38 saw PyTorch's training step run into "misaligned address"
// in 4 of 20 runs with windows on GPU-23c3dafc, just after a patch or a
// phase's switch (docs/results/2026-12-06-switch-settle.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void spin(uint32_t *x, long long cycles)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles)
		;
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	x[i] = x[i] * 3u + 1u;
}

__global__ void bump(uint32_t *y, uint32_t r, uint32_t n)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * 5u + r;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	int dev, sms;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	const uint32_t threads = 128, sblocks = (uint32_t)sms * 16 * 8, nx = sblocks * threads;
	const uint32_t ny = 1 << 16, yblocks = ny / threads;
	uint32_t *x, *y, *hx = (uint32_t *)malloc(nx * 4), *hy = (uint32_t *)malloc(ny * 4);
	cudaStream_t s;

	if (!hx || !hy)
		return 1;
	for (uint32_t i = 0; i < nx; i++)
		hx[i] = i * 2654435761u;
	for (uint32_t i = 0; i < ny; i++)
		hy[i] = i ^ 0x9e3779b9u;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&x, nx * 4));
	CHECK(cudaMalloc(&y, ny * 4));
	CHECK(cudaMemcpy(x, hx, nx * 4, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, hy, ny * 4, cudaMemcpyHostToDevice));
	for (int r = 0; r < rounds; r++) {
		spin<<<sblocks, threads, 0, s>>>(x, 10000);
		bump<<<yblocks, threads, 0, s>>>(y, (uint32_t)r, ny);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(s));

	/* the closed forms: x -> ax x + bx, y -> ay y + by after every round */
	uint32_t ax = 1, bx = 0, ay = 1, by = 0;
	for (int r = 0; r < rounds; r++) {
		ax *= 3u, bx = bx * 3u + 1u;
		ay *= 5u, by = by * 5u + (uint32_t)r;
	}
	uint32_t *gx = (uint32_t *)malloc(nx * 4), *gy = (uint32_t *)malloc(ny * 4);
	if (!gx || !gy)
		return 1;
	CHECK(cudaMemcpy(gx, x, nx * 4, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(gy, y, ny * 4, cudaMemcpyDeviceToHost));
	uint64_t bad = 0, sum = 0;
	for (uint32_t i = 0; i < nx; i++) {
		bad += gx[i] != ax * hx[i] + bx;
		sum = sum * 31 + gx[i];
	}
	for (uint32_t i = 0; i < ny; i++) {
		bad += gy[i] != ay * hy[i] + by;
		sum = sum * 31 + gy[i];
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	printf("launches %d\n", 2 * rounds);
	printf("mismatches %llu\n", (unsigned long long)bad);
	return bad != 0;
}
