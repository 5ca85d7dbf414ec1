/* The per-launch inputs of the fit (attrib.h): co-residency and waves,
 * both by sorting the launch's blocks once. */
#include "report/attrib.h"

#include <stdlib.h>

struct key {
	int32_t sm;
	int64_t v;
	size_t i;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->sm != y->sm)
		return (x->sm > y->sm) - (x->sm < y->sm);
	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->i > y->i) - (x->i < y->i);
}

/* First index in k[lo..hi) whose (sm, v) is greater than (sm, v). */
static size_t upper(const struct key *k, size_t lo, size_t hi, int32_t sm, int64_t v)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k[mid].sm < sm || (k[mid].sm == sm && k[mid].v <= v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int nt_attrib_coresidency(const int32_t *sm, const int64_t *start, const int64_t *end, size_t n,
			  int32_t *out, struct nt_err *err)
{
	struct key *ks, *ke;

	if (!n)
		return 0;
	if (!sm || !start || !end || !out)
		return nt_err_set(err, "co-residency: bad arguments");
	for (size_t i = 0; i < n; i++)
		if (end[i] < start[i])
			return nt_err_set(err, "co-residency: block %zu ends (%lld) before it starts (%lld)",
					  i, (long long)end[i], (long long)start[i]);
	ks = malloc(sizeof(*ks) * n);
	ke = malloc(sizeof(*ke) * n);
	if (!ks || !ke) {
		free(ks);
		free(ke);
		return nt_err_set(err, "co-residency: out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		ks[i] = (struct key){ sm[i], start[i], i };
		ke[i] = (struct key){ sm[i], end[i], i };
	}
	qsort(ks, n, sizeof(*ks), cmp_key);
	qsort(ke, n, sizeof(*ke), cmp_key);
	/* Resident at m: started at or before m, minus ended at or before m.
	 * Both sorted lists hold the same SMs, so the counts below an SM's
	 * key cancel and the global ranks can be subtracted directly. */
	for (size_t i = 0; i < n; i++) {
		/* unsigned: the difference of two int64 cannot overflow */
		int64_t m = start[i] + (int64_t)(((uint64_t)end[i] - (uint64_t)start[i]) / 2);
		size_t c = upper(ks, 0, n, sm[i], m) - upper(ke, 0, n, sm[i], m);

		/* itself, unless it has no duration (then m = end, not resident) */
		out[i] = (int32_t)(c - (end[i] > start[i]));
	}
	free(ks);
	free(ke);
	return 0;
}

int nt_attrib_waves(const int64_t *start, size_t n, int64_t slots, int32_t *out, struct nt_err *err)
{
	struct key *k;

	if (slots < 1)
		return nt_err_set(err, "waves: %lld resident slots", (long long)slots);
	if (!n)
		return 0;
	if (!start || !out)
		return nt_err_set(err, "waves: bad arguments");
	k = malloc(sizeof(*k) * n);
	if (!k)
		return nt_err_set(err, "waves: out of memory");
	for (size_t i = 0; i < n; i++)
		k[i] = (struct key){ 0, start[i], i };
	qsort(k, n, sizeof(*k), cmp_key);
	for (size_t r = 0; r < n; r++)
		out[k[r].i] = (int32_t)((int64_t)r / slots);
	free(k);
	return 0;
}
