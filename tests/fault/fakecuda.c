/*
 * A stand-in libcuda for fault injection (tests/cli): every entry point
 * nucatrace resolves exists, under its real (versioned) symbol name, and
 * returns the result code in $FAKECUDA_RESULT (default 100,
 * CUDA_ERROR_NO_DEVICE).  Loaded through NUCATRACE_LIBCUDA, it makes the
 * driver fail on purpose so the CLI's messages can be checked on a
 * machine without a GPU.  Leaving out one symbol ($FAKECUDA is built
 * twice, once with -DDROP_ONE) checks the "driver too old" path.
 */
#include <cuda.h>
#include <stdlib.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

static int fake_result(void)
{
	const char *e = getenv("FAKECUDA_RESULT");

	return e ? atoi(e) : CUDA_ERROR_NO_DEVICE;
}

#define NT_CU(name)                                                        \
	int CAT(fake_, __LINE__)(void) __asm__(STR(name));                 \
	int CAT(fake_, __LINE__)(void) { return fake_result(); }
#ifdef DROP_ONE
#define cuLaunchKernel cuLaunchKernel_dropped_for_test
#endif
#include "cudrv.def"
