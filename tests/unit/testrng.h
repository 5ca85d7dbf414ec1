/* testrng.h - the unit tests' pseudo-random numbers: xorshift64, the
 * same sequence on every run (a failure repeats). */
#ifndef NT_TESTRNG_H
#define NT_TESTRNG_H

#include <stdint.h>

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif
