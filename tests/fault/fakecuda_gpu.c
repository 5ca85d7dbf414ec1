/*
 * The calls of the stand-in libcuda that answer like a driver of one GPU
 * when FAKECUDA_GPU=1 (an "NVIDIA Fake H200": 132 SMs, compute
 * capability 9.0, 60 MiB of L2): what the interposer asks of the driver
 * while the simulated GPU of fakesanitizer_gpu.c runs launches.  Without
 * FAKECUDA_GPU they fail like every other call of fakecuda.c.  Events
 * are 12.5 us apart, and done once the simulated GPU has run the graph
 * launches begun before they were recorded (it runs each late).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	(void)d;
	if (!gpu())
		return no();
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
	*e = (CUevent)__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

/* The simulated GPU's graph launches begun and run so far (both 0 when
 * no simulated GPU is loaded). */
static void graph_counts(long *begun, long *ran)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	void (*counts)(long *, long *) = h ? (void (*)(long *, long *))dlsym(h, "fakegpu_graph_counts") : NULL;

	*begun = *ran = 0;
	if (counts)
		counts(begun, ran);
	if (h)
		dlclose(h);
}

/* What each event waits for: the graph launches begun when recorded. */
#define EVENTS 65536
static long waits_for[EVENTS];

CUresult cuEventRecord(CUevent e, CUstream s)
{
	long begun, ran;

	(void)s;
	if (!gpu())
		return no();
	graph_counts(&begun, &ran);
	waits_for[(uintptr_t)e % EVENTS] = begun;
	return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent e)
{
	long begun, ran;

	if (!gpu())
		return no();
	graph_counts(&begun, &ran);
	return ran >= waits_for[(uintptr_t)e % EVENTS] ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
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
	return gpu() ? CUDA_SUCCESS : no();
}
