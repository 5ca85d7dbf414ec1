/*
 * kattrs.h - static attributes of every kernel the program loaded, from
 * the cubins its modules were made of (core/trace/cubin.h), by mangled name.
 *
 * Backends call nt_kattrs_add_module() from their module-load callback
 * (the image is only valid during that call); the trace writer asks
 * nt_kattrs_get() when it first sees a kernel.  Thread-safe.  A kernel
 * name loaded twice keeps the attributes of the latest module.
 */
#ifndef NT_KATTRS_H
#define NT_KATTRS_H

#include <stddef.h>

#include "trace/cubin.h"

/* 0, or -1 when the image is not a cubin we can read (not an error for
 * the program: its kernels just get no attributes).  *device_launches:
 * 1 when the cubin launches grids from the device (nt_cubin_device_launches),
 * else 0 (also when unreadable).  *wanted: 1 when want (a kernel's
 * mangled name) is NULL or holds for one of its kernels, or the image
 * is unreadable; else 0.  *variable: NULL, or (the caller frees it) the
 * name of a module-scope variable of the module (nt_cubin_variables), or
 * "?" when out of memory. */
int nt_kattrs_add_module(const void *image, size_t size, int *device_launches, int (*want)(const char *mangled),
			 int *wanted, char **variable);

/* Copy the attributes of `mangled` to *out (out->name is NULL); 0, or
 * -1 when unknown. */
int nt_kattrs_get(const char *mangled, struct nt_cubin_kernel *out);

void nt_kattrs_clear(void);

#endif
