/* NVML readings for calibrate --stability, loaded at run time (nvml.h). */
#include "gpu/nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The few NVML entry points used, with the prototypes of nvml.h (which
 * the CUDA toolkit does not always ship): NVML_FN(name, return, args).
 * nvmlReturn_t is an int enum, 0 for success; a device is a pointer. */
typedef void *nvml_device;
#define NVML_FUNCS                                                                           \
	NVML_FN(nvmlInit_v2, int, (void))                                                    \
	NVML_FN(nvmlShutdown, int, (void))                                                   \
	NVML_FN(nvmlErrorString, const char *, (int))                                        \
	NVML_FN(nvmlDeviceGetHandleByUUID, int, (const char *, nvml_device *))               \
	NVML_FN(nvmlDeviceGetTemperature, int, (nvml_device, int, unsigned *))               \
	NVML_FN(nvmlDeviceGetPowerUsage, int, (nvml_device, unsigned *))                     \
	NVML_FN(nvmlDeviceGetClockInfo, int, (nvml_device, int, unsigned *))

#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1

struct nt_nvml {
	void *handle;
	nvml_device dev;
	int inited;
#define NVML_FN(name, ret, args) ret(*name) args;
	NVML_FUNCS
#undef NVML_FN
};

struct nt_nvml *nt_nvml_open(const char *uuid, char *why, size_t len)
{
	const char *lib = getenv("NUCATRACE_LIBNVML");
	struct nt_nvml *n = calloc(1, sizeof(*n));
	int r;

	if (!lib || !*lib)
		lib = "libnvidia-ml.so.1";
	if (!n) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	if (!(n->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, len, "no NVML: cannot load '%s'", lib);
		goto fail;
	}
#define NVML_FN(name, ret, args)                                                      \
	if (!(*(void **)&n->name = dlsym(n->handle, #name))) {                        \
		snprintf(why, len, "NVML '%s' lacks %s", lib, #name);                 \
		goto fail;                                                            \
	}
	NVML_FUNCS
#undef NVML_FN
	if ((r = n->nvmlInit_v2())) {
		snprintf(why, len, "NVML: nvmlInit: %s", n->nvmlErrorString(r));
		goto fail;
	}
	n->inited = 1;
	if ((r = n->nvmlDeviceGetHandleByUUID(uuid, &n->dev))) {
		snprintf(why, len, "NVML does not know %s: %s", uuid, n->nvmlErrorString(r));
		goto fail;
	}
	return n;
fail:
	nt_nvml_close(n);
	return NULL;
}

void nt_nvml_read(struct nt_nvml *n, struct nt_nvml_reading *r)
{
	unsigned v;

	r->temp_c = r->power_w = r->sm_mhz = NAN;
	if (!n)
		return;
	if (!n->nvmlDeviceGetTemperature(n->dev, NVML_TEMPERATURE_GPU, &v))
		r->temp_c = v;
	if (!n->nvmlDeviceGetPowerUsage(n->dev, &v))
		r->power_w = v * 1e-3;
	if (!n->nvmlDeviceGetClockInfo(n->dev, NVML_CLOCK_SM, &v))
		r->sm_mhz = v;
}

void nt_nvml_close(struct nt_nvml *n)
{
	if (!n)
		return;
	if (n->inited)
		n->nvmlShutdown();
	if (n->handle)
		dlclose(n->handle);
	free(n);
}
