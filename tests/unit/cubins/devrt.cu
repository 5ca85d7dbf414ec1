// A kernel that calls the device runtime without launching anything
// (built relocatable, like cdp.cu): its cubin names __cudaCDP2GetLastError
// and no launch entry point, so nt_cubin_device_launches() must say 0.
__global__ void asks(int *x)
{
	x[threadIdx.x] = (int)cudaGetLastError();
}
