// Cooperative (grid-wide sync) and thread-block-cluster launches.
#include <cstdio>
#include <cstdlib>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void coop_sum(int *data, int *out, int n)
{
	cg::grid_group g = cg::this_grid();
	int i = g.thread_rank();

	if (i < n)
		atomicAdd(out, data[i]);
	g.sync();
	if (i == 0)
		out[1] = out[0] * 2;
}

__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(int *out)
{
	cg::cluster_group c = cg::this_cluster();

	c.sync();
	if (threadIdx.x == 0)
		atomicAdd(out, (int)c.block_rank() + 1);
}

int main(void)
{
	int n = 132 * 256, *d, *out, h[2], blocks;

	CHECK(cudaMalloc(&d, n * sizeof(int)));
	CHECK(cudaMalloc(&out, 2 * sizeof(int)));
	CHECK(cudaMemset(d, 0, n * sizeof(int)));
	CHECK(cudaMemset(d, 1, 4));
	CHECK(cudaMemset(out, 0, 2 * sizeof(int)));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, coop_sum, 256, 0));
	void *args[] = { &d, &out, &n };
	CHECK(cudaLaunchCooperativeKernel((void *)coop_sum, dim3(132), dim3(256), args, 0, 0));
	CHECK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
	printf("cooperative: %d %d\n", h[0], h[1]);
	CHECK(cudaMemset(out, 0, sizeof(int)));
	cluster_kernel<<<64, 128>>>(out);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(h, out, sizeof(int), cudaMemcpyDeviceToHost));
	printf("cluster: %d\n", h[0]);
	return 0;
}
