/*
 * A stand-in libcuda for fault injection (tests/cli): every entry point
 * nucatrace resolves exists, under its real (versioned) symbol name, and
 * returns the result code in $FAKECUDA_RESULT (default 100,
 * CUDA_ERROR_NO_DEVICE).  Loaded through NUCATRACE_LIBCUDA, it makes the
 * driver fail on purpose so the CLI's messages can be checked on a
 * machine without a GPU.  Leaving out one symbol ($FAKECUDA is built
 * twice, once with -DDROP_ONE) checks the "driver too old" path.
 *
 * cuInit() first does what the real driver does with
 * CUDA_INJECTION64_PATH: load that library and call its
 * InitializeInjection(), so that the interposer's start in a process
 * that initialises CUDA can be tested here too.
 *
 * With FAKECUDA_GPU=1 it is a working driver of one made-up GPU instead
 * (fakecuda_gpu.c has the calls that then answer), for the simulated
 * GPU of fakesanitizer_gpu.c.  The entry points here are weak, so that
 * those of fakecuda_gpu.c take their place.
 */
#include <cuda.h>
#include <dlfcn.h>
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
	int CAT(fake_, __LINE__)(void) __asm__(STR(name)) __attribute__((weak)); \
	int CAT(fake_, __LINE__)(void) { return fake_result(); }
#ifdef DROP_ONE
#define cuLaunchKernel cuLaunchKernel_dropped_for_test
#endif
#define cuInit cuInit_in_the_table	/* defined below */
#include "gpu/cudrv.def"
#undef cuInit

CUresult cuInit(unsigned int flags)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	static int injected;

	(void)flags;
	if (inj && *inj && !injected++) {
		void *h = dlopen(inj, RTLD_NOW | RTLD_GLOBAL);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;

		if (init)
			init();
	}
	return getenv("FAKECUDA_GPU") ? CUDA_SUCCESS : (CUresult)fake_result();
}
