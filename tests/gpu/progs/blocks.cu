// A test program for the interposer (static cudart, the nvcc default):
// launches of several shapes whose block counts the trace must match
// exactly, including blocks whose threads leave at different times and
// a block size that is not a multiple of 32.  Prints a checksum, so the
// output with and without the interposer can be compared byte for byte.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void fill(unsigned *out, unsigned n)
{
	unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned per = blockDim.x * blockDim.y * blockDim.z;
	unsigned i = bid * per + tid;

	if (tid % 3 == 1)	// a third of the threads leave early
		return;
	if (i < n)
		out[i] = i * 2654435761u;
	for (int k = 0; k < (int)(bid % 7) * 100; k++)	// uneven block times
		__syncwarp();
}

static unsigned long long run(dim3 grid, dim3 block)
{
	unsigned n = grid.x * grid.y * grid.z * block.x * block.y * block.z, *d, *h;
	unsigned long long sum = 0;

	CHECK(cudaMalloc(&d, n * sizeof(*d)));
	CHECK(cudaMemset(d, 0, n * sizeof(*d)));
	fill<<<grid, block>>>(d, n);
	CHECK(cudaGetLastError());
	h = (unsigned *)malloc(n * sizeof(*h));
	CHECK(cudaMemcpy(h, d, n * sizeof(*h), cudaMemcpyDeviceToHost));
	for (unsigned i = 0; i < n; i++)
		sum += h[i];
	free(h);
	CHECK(cudaFree(d));
	return sum;
}

int main(void)
{
	dim3 shapes[][2] = {
		{ dim3(1), dim3(32) }, { dim3(132), dim3(256) }, { dim3(1000), dim3(100) },
		{ dim3(17, 9), dim3(8, 8) }, { dim3(5, 4, 3), dim3(4, 4, 4) }, { dim3(4096), dim3(1024) },
	};
	for (int rep = 0; rep < 3; rep++)
		for (auto &s : shapes)
			printf("grid %ux%ux%u block %ux%ux%u checksum %llu\n", s[0].x, s[0].y, s[0].z,
			       s[1].x, s[1].y, s[1].z, run(s[0], s[1]));
	return 0;
}
