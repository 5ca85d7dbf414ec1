/*
 * cudrv.h - the CUDA driver API, loaded at run time.
 *
 * nucatrace never links libcuda or libcudart: the CLI must run (and say
 * "no GPU") on machines without a driver, and the interposer must not
 * change what the host program loads.  nt_cuda_load() dlopens
 * libcuda.so.1 (or $NUCATRACE_LIBCUDA, which tests use to inject a
 * missing or broken driver), resolves every entry point listed in
 * cudrv.def and calls cuInit(0).  Call through the table:
 *
 *	struct nt_cuda cu;
 *	if (nt_cuda_load(&cu, &err)) ...;
 *	cu.cuDeviceGetCount(&n);
 *
 * The table is plain data; nt_cuda_unload() closes the library.
 */
#ifndef NT_CUDRV_H
#define NT_CUDRV_H

#include <cuda.h>

#include "util/err.h"

struct nt_cuda {
	void *handle;
#define NT_CU(name) __typeof__(name) *name;
#include "gpu/cudrv.def"
#undef NT_CU
};

int nt_cuda_load(struct nt_cuda *cu, struct nt_err *err);
/* The same without cuInit(): for code that runs inside the driver of a
 * process that initialises it (the interposer, from cuInit itself). */
int nt_cuda_bind(struct nt_cuda *cu, struct nt_err *err);
/* The same with the library named (NULL or "": libcuda.so.1), not
 * $NUCATRACE_LIBCUDA: for a thread that must not read the environment. */
int nt_cuda_bind_lib(struct nt_cuda *cu, const char *lib, struct nt_err *err);
void nt_cuda_unload(struct nt_cuda *cu);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code. */
const char *nt_cuda_strerror(const struct nt_cuda *cu, CUresult r);

/* Set *err from a failed call: "<what>: <CUDA error>", return -1. */
int nt_cuda_fail(const struct nt_cuda *cu, struct nt_err *err, CUresult r, const char *what);

/* Return nt_cuda_fail(cu, err, ...) from the calling function when call
 * fails: NT_CU_TRY(g->cu, err, g->cu->cuCtxSynchronize()); */
#define NT_CU_TRY(cu, err, call)                                      \
	do {                                                          \
		CUresult r_ = (call);                                 \
		if (r_ != CUDA_SUCCESS)                               \
			return nt_cuda_fail((cu), (err), r_, #call);  \
	} while (0)

#endif
