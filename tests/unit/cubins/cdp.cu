// A kernel that launches a child grid from the device (dynamic
// parallelism), built relocatable (-rdc=true -cubin): the cubin names the
// device runtime's launch entry points, which test_cubin.c expects
// nt_cubin_device_launches() to find.
__global__ void child(int *x)
{
	x[threadIdx.x]++;
}

__global__ void parent(int *x)
{
	if (threadIdx.x == 0)
		child<<<1, 32>>>(x);
}
