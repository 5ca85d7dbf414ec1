/*
 * sort.h - sorting 64-bit keys without a comparison callback: an LSD
 * radix sort of 11-bit digits that makes only as many passes as the
 * largest key needs (three for keys below 2^33).  The report sorts
 * millions of packed keys (an SM in the low bits, a time above it), where
 * qsort's callback per comparison was a tenth of its time.
 */
#ifndef NT_SORT_H
#define NT_SORT_H

#include <stddef.h>
#include <stdint.h>

/* v[0..n-1] ascending; tmp has room for n (its contents are lost). */
void nt_sort_u64(uint64_t *v, uint64_t *tmp, size_t n);

#endif
