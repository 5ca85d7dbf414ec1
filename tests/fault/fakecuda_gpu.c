/*
 * The calls of the stand-in libcuda that answer like a driver of one GPU
 * when FAKECUDA_GPU=1 (an "NVIDIA Fake H200": 132 SMs, compute
 * capability 9.0, 60 MiB of L2): what the interposer asks of the driver
 * while the simulated GPU of fakesanitizer_gpu.c runs launches.  Without
 * FAKECUDA_GPU they fail like every other call of fakecuda.c.  Events
 * are done as soon as they are recorded, 12.5 us apart.
 * FAKECUDA_UUID_MS=N makes cuDeviceGetUuid take N ms (a thread of the
 * interposer's held up in the driver).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A call that waited for ever on the H200 when made in a launch's
 * callbacks (fakesanitizer_gpu.c's fakegpu_in_launch): abort, as the
 * simulated GPU's sanitizer does. */
static void hangs_in_launch(const char *what)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	int (*in_launch)(void) = h ? (int (*)(void))dlsym(h, "fakegpu_in_launch") : NULL;
	int in = in_launch && in_launch();

	if (h)
		dlclose(h);
	if (!in)
		return;
	fprintf(stderr, "fake cuda: %s called in a launch's callbacks (hangs on a real GPU)\n", what);
	abort();
}

static int gpu(void)
{
	return getenv("FAKECUDA_GPU") != NULL;
}

static CUresult no(void)
{
	const char *e = getenv("FAKECUDA_RESULT");

	return (CUresult)(e ? atoi(e) : CUDA_ERROR_NO_DEVICE);
}

CUresult cuDeviceGetCount(int *n)
{
	if (!gpu())
		return no();
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!gpu() || ordinal)
		return gpu() ? CUDA_ERROR_INVALID_DEVICE : no();
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	(void)d;
	if (!gpu())
		return no();
	strncpy(name, "NVIDIA Fake H200", (size_t)len);
	name[len - 1] = '\0';
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
	const char *ms = getenv("FAKECUDA_UUID_MS");

	(void)d;
	if (!gpu())
		return no();
	if (ms)
		nanosleep(&(struct timespec){ atoi(ms) / 1000, atoi(ms) % 1000 * 1000000L }, NULL);
	for (int i = 0; i < 16; i++)
		u->bytes[i] = (char)(0x10 + i);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	if (!gpu())
		return no();
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 60 << 20; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!gpu())
		return no();
	*v = 13000;
	return CUDA_SUCCESS;
}

/* The simulated GPU's one context (fake_app's context 1). */
CUresult cuCtxGetCurrent(CUcontext *c)
{
	if (!gpu())
		return no();
	*c = (CUcontext)1;
	return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	(void)s;
	if (!gpu())
		return no();
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	static long next = 1;

	(void)flags;
	if (!gpu())
		return no();
	hangs_in_launch("cuEventCreate");
	*e = (CUevent)__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
	(void)e, (void)s;
	return gpu() ? CUDA_SUCCESS : no();
}

CUresult cuEventQuery(CUevent e)
{
	(void)e;
	return gpu() ? CUDA_SUCCESS : no();
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	(void)a, (void)b;
	if (!gpu())
		return no();
	*ms = 0.0125f;
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e)
{
	(void)e;
	if (!gpu())
		return no();
	hangs_in_launch("cuEventDestroy");
	return CUDA_SUCCESS;
}
