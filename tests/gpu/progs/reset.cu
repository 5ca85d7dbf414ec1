// cudaDeviceReset() in the middle of a program: the primary context is
// destroyed and made again (often under the same handle), its modules
// load again.  Launches of two kernels before and after, many of each so
// that under first=N the untraced ones are timed natively with events
// still in flight at the reset.  Prints checksums, so the output with and
// without the interposer can be compared byte for byte.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void fill(unsigned *out, unsigned n, unsigned seed)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = (i + seed) * 2654435761u;
}

__global__ void mix(unsigned *out, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] ^= out[i] >> 13;
}

static unsigned long long phase(int launches)
{
	const unsigned n = 1 << 20;
	unsigned *d, *h = (unsigned *)malloc(n * sizeof(*h));
	unsigned long long sum = 0;

	CHECK(cudaMalloc(&d, n * sizeof(*d)));
	for (int k = 0; k < launches; k++) {
		fill<<<n / 256, 256>>>(d, n, (unsigned)k);
		mix<<<n / 512, 512>>>(d, n);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, d, n * sizeof(*h), cudaMemcpyDeviceToHost));
	for (unsigned i = 0; i < n; i++)
		sum += h[i];
	CHECK(cudaFree(d));
	free(h);
	return sum;
}

int main(void)
{
	printf("before reset: checksum %llu\n", phase(50));
	CHECK(cudaDeviceReset());
	printf("after reset: checksum %llu\n", phase(50));
	CHECK(cudaDeviceReset());
	printf("after a second reset: checksum %llu\n", phase(50));
	return 0;
}
