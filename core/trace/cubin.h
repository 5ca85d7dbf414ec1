/*
 * cubin.h - static kernel attributes read from a CUDA cubin.
 *
 * A cubin is the ELF image of one module's device code for one SM
 * architecture, as the Compute Sanitizer and CUPTI module-load callbacks
 * hand it over (pointer + size).  nt_cubin_parse() reads it with libelf
 * and returns, for every kernel (__global__ entry) in it, what the launch
 * metadata needs and the driver would otherwise have to be asked for:
 *
 *   registers     EIATTR_REGCOUNT (0x2f) in .nv.info, else the top byte
 *                 of the .text.<name> section's sh_info (older cubins)
 *   static_smem   size of .nv.shared.<name>, less the 1 KiB window that
 *                 ptxas places in front of the user's variables on sm_90
 *                 and newer (cubins with .nv.shared.reserved.* sections);
 *                 this is what CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES says
 *   const0_bytes  size of .nv.constant0.<name> (parameters + driver area)
 *   local_bytes   EIATTR_FRAME_SIZE (0x11), the per-thread stack frame
 *                 (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), else
 *                 EIATTR_MIN_STACK_SIZE (0x12)
 *   max_threads   EIATTR_MAX_THREADS (0x05, __launch_bounds__) or
 *                 EIATTR_REQNTID (0x10), x*y*z; 0 when not declared
 *   cluster       EIATTR_CTA_PER_CLUSTER (0x3d, __cluster_dims__);
 *                 {0,0,0} when not declared
 *   barriers      EIATTR_NUM_BARRIERS (0x4c); 0 when absent
 *
 * .nv.info sections are sequences of records {u8 format, u8 attribute,
 * u16 value-or-size}; format 4 (EIFMT_SVAL) is followed by `size` bytes
 * of payload.  In the global .nv.info, per-function records carry
 * {u32 symbol index, u32 value}.  Fields not found stay -1 (registers)
 * or 0.  The values were checked against ptxas -v and cuFuncGetAttribute
 * on an H200 (tests/unit/test_cubin.c pins them).
 *
 * nt_cubin_arch() gives the SM architecture from e_flags (e.g. 90 for
 * sm_90, 100 for sm_100): bits 0-7 on ELF ABI version 7 cubins, bits
 * 8-15 on version 8 (CUDA 12.8 and later).
 *
 * Lifecycle: nt_cubin_parse() -> nt_cubin_count/_kernel/_find/_arch ->
 * nt_cubin_free().  The result does not point into the image, which the
 * caller may release right after parsing.  Kernels are sorted by mangled
 * name.  Parsing never writes to the image and keeps no state between
 * calls, so threads may parse concurrently; a struct nt_cubin is
 * read-only once made.  Anything malformed (not ELF, a fatbin, truncated,
 * not EM_CUDA, sections or records out of bounds) fails with a message.
 */
#ifndef NT_CUBIN_H
#define NT_CUBIN_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct nt_cubin;

struct nt_cubin_kernel {
	char *name;		/* mangled */
	int registers;		/* per thread; -1 if the cubin does not say */
	int64_t static_smem;	/* bytes per block */
	int64_t const0_bytes;
	int64_t local_bytes;	/* per thread */
	int max_threads;	/* declared max threads per block, or 0 */
	int cluster[3];		/* required cluster dims, or {0,0,0} */
	int barriers;		/* named barriers used, or 0 */
};

int nt_cubin_parse(const void *image, size_t size, struct nt_cubin **out, struct nt_err *err);
size_t nt_cubin_count(const struct nt_cubin *c);
const struct nt_cubin_kernel *nt_cubin_kernel(const struct nt_cubin *c, size_t i);	/* NULL past the end */
const struct nt_cubin_kernel *nt_cubin_find(const struct nt_cubin *c, const char *mangled);	/* NULL if absent */
int nt_cubin_arch(const struct nt_cubin *c);
/* 1 when the cubin holds the device runtime's launch entry points
 * (dynamic parallelism, device graph launch): its kernels may launch
 * grids the host never sees. */
int nt_cubin_device_launches(const struct nt_cubin *c);
/* How many module-scope variables the cubin defines (__device__,
 * __managed__ and __constant__: defined object symbols in .nv.global*
 * and .nv.constant1-9 sections; not the compiler's string literals nor
 * libcu++'s empty cuda::std objects), and the first one's name into *first
 * (NULL when none; valid until nt_cubin_free).  A second copy of the
 * module (a twin) would have variables of its own. */
size_t nt_cubin_variables(const struct nt_cubin *c, const char **first);
void nt_cubin_free(struct nt_cubin *c);

#endif
