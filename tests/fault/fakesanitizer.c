/*
 * A stand-in libsanitizer-public.so for fault injection (tests/cli):
 * every entry point the interposer resolves (interposer/blocks/sanitizer.def)
 * exists and returns $FAKESANITIZER_RESULT (default 10,
 * SANITIZER_ERROR_MAX_LIMIT_REACHED: another tool already subscribed).
 * The entry points are weak: fakesanitizer_gpu.c gives the working ones
 * of its simulated GPU (FAKESANITIZER_GPU=1) in their place.
 */
#include <stdlib.h>

#include "interposer/blocks/sanitizer_abi.h"

static nt_san_result fake_result(void)
{
	const char *e = getenv("FAKESANITIZER_RESULT");

	return e ? atoi(e) : NT_SAN_ERROR_MAX_LIMIT_REACHED;
}

#define NT_SAN(name, params) \
	nt_san_result name params __attribute__((weak)); nt_san_result name params { return fake_result(); }
#include "interposer/blocks/sanitizer.def"
