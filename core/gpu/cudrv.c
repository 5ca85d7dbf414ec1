#include "gpu/cudrv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

int nt_cuda_bind(struct nt_cuda *cu, struct nt_err *err)
{
	return nt_cuda_bind_lib(cu, getenv("NUCATRACE_LIBCUDA"), err);
}

int nt_cuda_bind_lib(struct nt_cuda *cu, const char *lib, struct nt_err *err)
{
	memset(cu, 0, sizeof(*cu));
	if (!lib || !*lib)
		lib = "libcuda.so.1";
	cu->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!cu->handle)
		return nt_err_set(err, "no CUDA driver: cannot load '%s' (%s)", lib, dlerror());
	/* STR() expands cuda.h's version macros, so cuMemAlloc is looked up
	 * as cuMemAlloc_v2, the symbol that matches the prototype. */
#define NT_CU(name)                                                                        \
	*(void **)&cu->name = dlsym(cu->handle, STR(name));                               \
	if (!cu->name) {                                                                   \
		nt_err_set(err, "CUDA driver '%s' lacks %s: driver too old?", lib, STR(name)); \
		goto fail;                                                                 \
	}
#include "gpu/cudrv.def"
#undef NT_CU
	return 0;
fail:
	nt_cuda_unload(cu);
	return -1;
}

int nt_cuda_load(struct nt_cuda *cu, struct nt_err *err)
{
	CUresult r;

	if (nt_cuda_bind(cu, err))
		return -1;
	r = cu->cuInit(0);
	if (r == CUDA_ERROR_NO_DEVICE) {
		nt_err_set(err, "no CUDA GPU: the driver found no device");
		goto fail;
	}
	if (r != CUDA_SUCCESS) {
		nt_cuda_fail(cu, err, r, "cuInit");
		goto fail;
	}
	return 0;
fail:
	nt_cuda_unload(cu);
	return -1;
}

void nt_cuda_unload(struct nt_cuda *cu)
{
	if (cu->handle)
		dlclose(cu->handle);
	memset(cu, 0, sizeof(*cu));
}

const char *nt_cuda_strerror(const struct nt_cuda *cu, CUresult r)
{
	static _Thread_local char buf[192];
	const char *name = NULL, *text = NULL;

	if (cu->cuGetErrorName)
		cu->cuGetErrorName(r, &name);
	if (cu->cuGetErrorString)
		cu->cuGetErrorString(r, &text);
	if (name && text)
		snprintf(buf, sizeof(buf), "%s (%s)", name, text);
	else
		snprintf(buf, sizeof(buf), "CUDA error %d", (int)r);
	return buf;
}

int nt_cuda_fail(const struct nt_cuda *cu, struct nt_err *err, CUresult r, const char *what)
{
	return nt_err_set(err, "%s: %s", what, nt_cuda_strerror(cu, r));
}
