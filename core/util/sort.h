/*
 * sort.h - sorting 64-bit keys without a comparison callback: an LSD
 * radix sort of 11-bit digits that makes only as many passes as the
 * largest key needs (three for keys below 2^33).  The report sorts
 * millions of packed keys (an SM in the low bits, a time above it), where
 * qsort's callback per comparison was a tenth of its time.  And the
 * k-th smallest of doubles (a median) without sorting them.
 */
#ifndef NT_SORT_H
#define NT_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Bits to hold v (0 for 0): the width of a packed key's field. */
static inline unsigned nt_bits_u64(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

/* v[0..n-1] ascending; tmp has room for n (its contents are lost). */
void nt_sort_u64(uint64_t *v, uint64_t *tmp, size_t n);

/* The k-th smallest of v[0..n-1], k < n (NaN-free); reorders v (Wirth's
 * select: afterwards v[0..k-1] <= v[k] <= v[k+1..n-1]). */
double nt_kth_double(double *v, size_t n, size_t k);
/* The median of v[0..n-1], n > 0 (NaN-free; of an even n the mean of the
 * middle two), as from the sorted values, in linear time; reorders v. */
double nt_median_double(double *v, size_t n);

#endif
