/*
 * rng.h - a small seeded generator for the analyses that resample or
 * shuffle (bootstraps, permutation tests): the same seed gives the same
 * numbers on every machine, so outputs built on them are reproducible
 * byte for byte.  Not for anything that needs unpredictable numbers.
 *
 * nt_rng_next() is splitmix64 (Steele, Lea and Flood 2014): the state
 * is any 64-bit value, advanced by each call.  nt_rng_below() maps a
 * draw to 0..n-1 by Lemire's multiply-shift (bias below 2^-32 for the
 * n < 2^32 used here).
 */
#ifndef NT_RNG_H
#define NT_RNG_H

#include <stdint.h>

static inline uint64_t nt_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in 0..n-1, n > 0. */
static inline uint32_t nt_rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((nt_rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

#endif
