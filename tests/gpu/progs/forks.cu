// fork(): a child that uses CUDA (the parent has not initialised CUDA
// before the fork) and a child that execs this program again; each
// process that launches kernels must get its own trace file.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void k(int *x) { atomicAdd(x, 1); }

static int count(int blocks)
{
	int *d, h;

	CHECK(cudaMalloc(&d, sizeof(int)));
	CHECK(cudaMemset(d, 0, sizeof(int)));
	k<<<blocks, 64>>>(d);
	CHECK(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(cudaFree(d));
	return h;
}

int main(int argc, char **argv)
{
	int status;
	pid_t a, b;

	if (argc > 1 && !strcmp(argv[1], "exec-child")) {
		printf("exec child: %d\n", count(7));
		return 0;
	}
	fflush(stdout);
	a = fork();
	if (a == 0) {
		printf("fork child: %d\n", count(5));
		exit(0);	/* exit handlers run: the child's trace is finished */
	}
	waitpid(a, &status, 0);
	b = fork();
	if (b == 0) {
		execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
		_exit(127);
	}
	waitpid(b, &status, 0);
	printf("parent: %d\n", count(3));
	return 0;
}
