/* A driver-API-only program (no cudart): loads a module from PTX text and
 * launches its kernel with cuLaunchKernel. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "%s: error %d\n", #x, (int)r_); exit(1); } } while (0)

static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry add1(.param .u64 p)\n{\n"
	"  .reg .u64 %rd<4>; .reg .u32 %r<4>;\n"
	"  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
	"  atom.global.add.u32 %r1, [%rd2], 1;\n  ret;\n}\n";

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr d;
	unsigned h = 0;
	void *args[] = { &d };

	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoadData(&mod, ptx));
	CHECK(cuModuleGetFunction(&f, mod, "add1"));
	CHECK(cuMemAlloc(&d, 4));
	CHECK(cuMemsetD32(d, 0, 1));
	for (int i = 0; i < 4; i++)
		CHECK(cuLaunchKernel(f, 200, 1, 1, 96, 1, 1, 0, NULL, args, NULL));
	CHECK(cuMemcpyDtoH(&h, d, 4));
	printf("driver api: %u\n", h);
	CHECK(cuMemFree(d));
	CHECK(cuModuleUnload(mod));
	CHECK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
