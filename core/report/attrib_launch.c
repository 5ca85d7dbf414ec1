/* The per-launch inputs of the fit (attrib.h): co-residency and waves,
 * both by sorting the launch's blocks once. */
#include "report/attrib.h"
#include "util/sort.h"

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

/* The keys (sm, v, i) packed into one integer each, when they fit: the
 * SM above the time from the launch's earliest, above the index, so that
 * nt_sort_u64 orders them as cmp_key does without a callback (a launch's
 * two sorts were two thirds of the report's serial reading of 10M
 * blocks).  0 when they do not fit (then qsort). */
struct packing {
	int64_t lo;
	unsigned vshift, smshift;
};

static int packable(const int32_t *sm, const int64_t *a, const int64_t *b, size_t n, struct packing *p)
{
	int64_t lo = a[0], hi = a[0];
	int32_t top = 0;

	for (size_t i = 0; i < n; i++) {
		if (sm && sm[i] < 0)
			return 0;
		top = sm && sm[i] > top ? sm[i] : top;
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
		if (b) {
			lo = b[i] < lo ? b[i] : lo;
			hi = b[i] > hi ? b[i] : hi;
		}
	}
	p->lo = lo;
	p->vshift = nt_bits_u64(n - 1);
	/* unsigned: the difference of two int64 cannot overflow */
	p->smshift = p->vshift + nt_bits_u64((uint64_t)hi - (uint64_t)lo);
	return p->smshift + nt_bits_u64((uint64_t)top) <= 64;
}

static uint64_t packed(const struct packing *p, int32_t sm, int64_t v, uint64_t i)
{
	uint64_t k = ((uint64_t)v - (uint64_t)p->lo) << p->vshift | i;

	return p->smshift < 64 ? k | (uint64_t)sm << p->smshift : k;
}

/* Both with packed keys: 0 done, 1 the keys do not fit, -1 out of
 * memory. */
static int coresidency_packed(const int32_t *sm, const int64_t *start, const int64_t *end, size_t n,
			      int32_t *out)
{
	struct packing p;
	uint64_t *ks, *ke, *mid, *tmp, all;

	if (!packable(sm, start, end, n, &p))
		return 1;
	all = p.vshift ? ((uint64_t)1 << p.vshift) - 1 : 0;	/* every index: the last of an (sm, v) */
	ks = malloc(sizeof(*ks) * n);
	ke = malloc(sizeof(*ke) * n);
	mid = malloc(sizeof(*mid) * n);
	tmp = malloc(sizeof(*tmp) * n);
	if (!ks || !ke || !mid || !tmp) {
		free(ks);
		free(ke);
		free(mid);
		free(tmp);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t m = start[i] + (int64_t)(((uint64_t)end[i] - (uint64_t)start[i]) / 2);

		ks[i] = packed(&p, sm[i], start[i], i);
		ke[i] = packed(&p, sm[i], end[i], i);
		mid[i] = packed(&p, sm[i], m, i);
	}
	nt_sort_u64(ks, tmp, n);
	nt_sort_u64(ke, tmp, n);
	nt_sort_u64(mid, tmp, n);
	/* the midpoints in order, each counting the starts and ends at or
	 * before it in one walk down both lists (a binary search in each
	 * was a mispredicted branch a level) */
	for (size_t q = 0, a = 0, z = 0; q < n; q++) {
		uint64_t x = mid[q] | all;
		size_t i = (size_t)(mid[q] & all);

		while (a < n && ks[a] <= x)
			a++;
		while (z < n && ke[z] <= x)
			z++;
		out[i] = (int32_t)(a - z - (end[i] > start[i]));
	}
	free(ks);
	free(ke);
	free(mid);
	free(tmp);
	return 0;
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
	switch (coresidency_packed(sm, start, end, n, out)) {
	case 0:
		return 0;
	case -1:
		return nt_err_set(err, "co-residency: out of memory");
	}
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
	{
		struct packing p;

		if (packable(NULL, start, NULL, n, &p)) {
			uint64_t *v = malloc(sizeof(*v) * n), *tmp = malloc(sizeof(*tmp) * n);

			if (!v || !tmp) {
				free(v);
				free(tmp);
				return nt_err_set(err, "waves: out of memory");
			}
			for (size_t i = 0; i < n; i++)
				v[i] = packed(&p, 0, start[i], i);
			nt_sort_u64(v, tmp, n);
			for (size_t r = 0; r < n; r++)
				out[v[r] & (p.vshift ? ((uint64_t)1 << p.vshift) - 1 : 0)] =
					(int32_t)((int64_t)r / slots);
			free(v);
			free(tmp);
			return 0;
		}
	}
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
