#include "util/sort.h"

#include <string.h>

#define DIGIT 11

void nt_sort_u64(uint64_t *v, uint64_t *tmp, size_t n)
{
	const uint64_t mask = (1u << DIGIT) - 1;
	uint64_t most = 0, *src = v, *dst = tmp, *t;

	for (size_t i = 0; i < n; i++)
		most |= v[i];
	for (int shift = 0; shift < 64 && (most >> shift); shift += DIGIT) {
		size_t count[(1 << DIGIT) + 1] = { 0 };

		for (size_t i = 0; i < n; i++)
			count[((src[i] >> shift) & mask) + 1]++;
		if (count[((src[0] >> shift) & mask) + 1] == n)
			continue;	/* one digit value: this pass orders nothing */
		for (int d = 0; d < 1 << DIGIT; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & mask]++] = src[i];
		t = src, src = dst, dst = t;	/* the next pass reads what this one wrote */
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

double nt_kth_double(double *v, size_t n, size_t k)
{
	long long l = 0, m = (long long)n - 1, kk = (long long)k;

	while (l < m) {
		double x = v[kk];
		long long i = l, j = m;

		do {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i <= j) {
				double t = v[i];

				v[i++] = v[j];
				v[j--] = t;
			}
		} while (i <= j);
		if (j < kk)
			l = i;
		if (kk < i)
			m = j;
	}
	return v[kk];
}

double nt_median_double(double *v, size_t n)
{
	size_t h = n / 2;
	double hi = nt_kth_double(v, n, h), lo;

	if (n % 2)
		return hi;
	lo = v[0];
	for (size_t i = 1; i < h; i++)
		lo = v[i] > lo ? v[i] : lo;
	return 0.5 * (lo + hi);
}
