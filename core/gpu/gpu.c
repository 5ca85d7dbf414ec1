/* Identity and properties of one CUDA device (nt_gpu_query, calib.h). */
#include "gpu/calib.h"

#include <stdio.h>
#include <string.h>

/* The kernel module's version ("580.159.04"), which the driver API does
 * not report; "" when /proc does not say. */
static void module_version(char *buf, size_t len)
{
	char line[256];
	const char *p;
	FILE *f = fopen("/proc/driver/nvidia/version", "r");

	buf[0] = '\0';
	if (!f)
		return;
	/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ..."
	 * or "... Kernel Module  535.104.05 ...": the first word that starts
	 * with a digit after "Module". */
	if (fgets(line, sizeof(line), f) && (p = strstr(line, "Module"))) {
		for (p += strlen("Module"); *p; p += strcspn(p, " \t\n")) {
			p += strspn(p, " \t");
			if (*p >= '0' && *p <= '9') {
				snprintf(buf, len, "%.*s", (int)strcspn(p, " \t\n"), p);
				break;
			}
		}
	}
	fclose(f);
}

static int attr(struct nt_cuda *cu, CUdevice d, CUdevice_attribute a, int *v, struct nt_err *err)
{
	CUresult r = cu->cuDeviceGetAttribute(v, a, d);

	return r ? nt_cuda_fail(cu, err, r, "cuDeviceGetAttribute") : 0;
}

int nt_gpu_query(struct nt_cuda *cu, int ordinal, struct nt_gpu *g, struct nt_err *err)
{
	const unsigned char *u;
	CUuuid uuid;
	CUdevice d;
	CUresult r;
	int l2;

	memset(g, 0, sizeof(*g));
	if ((r = cu->cuDeviceGet(&d, ordinal)))
		return nt_cuda_fail(cu, err, r, "cuDeviceGet");
	if ((r = cu->cuDeviceGetName(g->name, sizeof(g->name), d)))
		return nt_cuda_fail(cu, err, r, "cuDeviceGetName");
	if ((r = cu->cuDeviceGetUuid(&uuid, d)))
		return nt_cuda_fail(cu, err, r, "cuDeviceGetUuid");
	u = (const unsigned char *)uuid.bytes;
	snprintf(g->uuid, sizeof(g->uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	if (attr(cu, d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->sm_count, err) ||
	    attr(cu, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &g->cc_major, err) ||
	    attr(cu, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &g->cc_minor, err) ||
	    attr(cu, d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2, err))
		return -1;
	g->l2_bytes = l2;
	/* Deprecated on newer drivers; 0 means unknown. */
	if (cu->cuDeviceGetAttribute(&g->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d))
		g->clock_khz = 0;
	if ((r = cu->cuDriverGetVersion(&g->cuda_version)))
		return nt_cuda_fail(cu, err, r, "cuDriverGetVersion");
	module_version(g->driver, sizeof(g->driver));
	if (strstr(g->name, "MIG"))
		return nt_err_set(err, "device %d (%s) is a MIG slice: calibrate needs a whole GPU",
				  ordinal, g->name);
	if (g->cc_major * 10 + g->cc_minor < 75)
		return nt_err_set(err, "device %d (%s) has compute capability %d.%d: nucatrace "
				  "needs 7.5 or newer (CUDA 13 builds nothing older)",
				  ordinal, g->name, g->cc_major, g->cc_minor);
	return 0;
}
