#include "report/replay.h"
#include "trace/trace.h"
#include "util/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The heap holds slot indices i = k * n_sm + sm ordered by (key, i):
 * ties go to the lower k, then the lower SM, i.e. breadth first over the
 * SMs.  A node is one integer, the key in fixed point above the slot
 * index (pack()), so that one comparison orders both; a slot's other
 * state is in arrays. */
typedef uint64_t node;

static int node_before(const node *a, const node *b)
{
	return *a < *b;
}

/* A binary heap (4-ary measured slower here, branch-free too: 5.1-5.3 s
 * against 4.6-5.0 s for the report on 10M synthetic records; also when
 * it branched, 0.7 s against 0.6 s for a million blocks and six
 * replays).  least_child() is written for two.  The array has HEAP_PAD sentinels
 * (key +inf) past the end, so that every child read is in bounds
 * without a test. */
#define HEAP_ARITY 2
#define HEAP_PAD (HEAP_ARITY - 1)

/* Without a branch: which child is less is a coin toss in a replay, and
 * a mispredicted branch per level cost more than the comparison. */
static size_t least_child(const node *h, size_t c)
{
	return c + (size_t)(h[c + 1] < h[c]);
}

/* Replace the top of a heap of n nodes with x and restore it, from
 * node i of the walk down: Floyd's bottom-up sift (down the least
 * children to a leaf, then up), since the new key, a block end, mostly
 * belongs near the bottom. */
static inline __attribute__((always_inline)) void sift_rest(node *h, size_t n, size_t i, node x)
{
	size_t c;

	while ((c = HEAP_ARITY * i + 1) < n) {
		c = least_child(h, c);
		h[i] = h[c];
		i = c;
	}
	while (i > 0) {
		size_t p = (i - 1) / HEAP_ARITY;

		if (!node_before(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

/* One level of the walk down a heap, from node i. */
#define WALK(h, i)                                    \
	do {                                          \
		size_t c_ = least_child(h, HEAP_ARITY * (i) + 1); \
		(h)[i] = (h)[c_];                     \
		(i) = c_;                             \
	} while (0)

/* The tops of two and of three heaps of n nodes replaced, their walks
 * down in one loop while all are above the leaves (Floyd's walk goes to
 * a leaf, so all are as deep but for the last level): each level's
 * loads wait for the last level's comparison, and the other walks keep
 * the CPU busy meanwhile.  The report on 10M synthetic records, one
 * core (session 30): 3.9 s with one replay at a time, 3.3 s two, 2.9 s
 * three, 2.9 s six; written out, as here: a loop over an array of heaps
 * took 4.1 s for two.  A tournament (loser) tree, whose path up is known
 * before its comparisons, took 5.1-6.1 s. */
static void replace_top2(node *h, node x, node *g, node y, size_t n)
{
	size_t i = 0, j = 0;

	while (HEAP_ARITY * i + 1 < n && HEAP_ARITY * j + 1 < n) {
		WALK(h, i);
		WALK(g, j);
	}
	sift_rest(h, n, i, x);
	sift_rest(g, n, j, y);
}

static void replace_top3(node *h, node x, node *g, node y, node *e,
			 node z, size_t n)
{
	size_t i = 0, j = 0, k = 0;

	while (HEAP_ARITY * i + 1 < n && HEAP_ARITY * j + 1 < n && HEAP_ARITY * k + 1 < n) {
		WALK(h, i);
		WALK(g, j);
		WALK(e, k);
	}
	sift_rest(h, n, i, x);
	sift_rest(g, n, j, y);
	sift_rest(e, n, k, z);
}

static void sift_down(node *h, size_t n, size_t i)
{
	node x = h[i];
	size_t c;

	while ((c = HEAP_ARITY * i + 1) < n) {
		c = least_child(h, c);
		if (!node_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

/* One replay.  Block order[i] (i when order is NULL) goes to the heap's
 * top slot and runs base[b] + add[sm]; bias[sm] (NULL: 0) is added to
 * the slot's key, so the top is the slot that finishes b earliest when
 * bias == add, the slot free first when bias is 0.  The dispatch model
 * (replay.h): a slot is free first at offset[sm] (NULL: 0), then
 * turnaround after each of its blocks ends, and a block that reuses a
 * slot starts at least gap after the previous such block. */
struct sim {
	node *heap;
	const int32_t *sm_of;	/* [n_slots] i % n_sm: a division on every step cost a tenth of the replay */
	double lo, q;		/* a key k packs as (k - lo) * q ... */
	unsigned ibits;		/* ... above the slot's index, in ibits bits */
	double *free;		/* [n_slots] */
	unsigned char *used;	/* [n_slots] */
	int n_sm, slots;
	const double *base, *add, *bias, *offset;
	double turnaround, gap;
	const uint32_t *order;
	size_t n;
	double *start;		/* NULL, or [n] each block's start, by block id */
};

/* A replay under way. */
struct run {
	size_t used;		/* slots used so far */
	double last_dispatch, server;
};

/* Slot i's node for key k: keys in fixed point from lo, q a ns, fine
 * enough that two keys packing alike are equal to double precision at
 * the launch's scale (key_scale()). */
static inline __attribute__((always_inline)) node pack(const struct sim *s, double k, uint32_t i)
{
	return ((node)((k - s->lo) * s->q) << s->ibits) | i;
}

static void sim_begin(const struct sim *s, struct run *r)
{
	size_t n_slots = (size_t)s->n_sm * (size_t)s->slots;
	node *h = s->heap;

	for (size_t i = 0; i < n_slots; i++) {
		int sm = (int)(i % s->n_sm);

		s->free[i] = s->offset ? s->offset[sm] : 0;
		h[i] = pack(s, s->free[i] + (s->bias ? s->bias[sm] : 0), (uint32_t)i);
		s->used[i] = 0;
	}
	for (size_t i = 0; i < HEAP_PAD; i++)
		h[n_slots + i] = UINT64_MAX;
	for (size_t i = n_slots / HEAP_ARITY + 1; i-- > 0;)
		sift_down(h, n_slots, i);
	*r = (struct run){ 0, 0, -INFINITY };
}

/* Block order[i] (i) dispatched: the top slot's new node in *x. */
static inline __attribute__((always_inline)) void sim_take(const struct sim *s, struct run *r, size_t i,
							   node *x)
{
	size_t b = s->order ? s->order[i] : i;
	const node *h = s->heap;
	uint32_t slot = (uint32_t)(h[0] & ((1ULL << s->ibits) - 1));
	int sm = s->sm_of[slot];
	double *f = &s->free[slot];

	if (s->used[slot]) {
		/* the slot comes back a turnaround after its block's end,
		 * and refills are at least gap apart */
		double back = *f + s->turnaround, next = r->server + s->gap;

		*f = back > next ? back : next;
		r->server = *f;
	} else {
		r->used++;
		s->used[slot] = 1;
	}
	r->last_dispatch = *f;
	if (s->start)
		s->start[b] = *f;
	*f += s->base[b] + s->add[sm];
	*x = pack(s, *f + s->turnaround + (s->bias ? s->bias[sm] : 0), slot);
}

/* The makespan, and where the last wave began in *tail_start (if not
 * NULL). */
static double sim_end(const struct sim *s, const struct run *r, double *tail_start)
{
	size_t n_slots = (size_t)s->n_sm * (size_t)s->slots, cap;
	double makespan = 0, first_idle = INFINITY;

	for (size_t i = 0; i < n_slots; i++) {
		if (!s->used[i])
			continue;
		if (s->free[i] > makespan)
			makespan = s->free[i];
		if (s->free[i] < first_idle)
			first_idle = s->free[i];
	}
	cap = s->n < n_slots ? s->n : n_slots;
	/* A slot never used (zero-length blocks kept another one free) is
	 * idle already when the last block starts. */
	if (tail_start)
		*tail_start = r->used < cap ? r->last_dispatch : first_idle;
	return makespan;
}

/* Two and three replays of as many blocks (their own heaps and slots),
 * step by step in one loop; *ma the makespan of a (and its tail_start,
 * when tail_a), and so on. */
static void simulate2(const struct sim *a, double *tail_a, double *ma, const struct sim *b, double *tail_b,
		      double *mb)
{
	size_t n_slots = (size_t)a->n_sm * (size_t)a->slots;
	struct run ra, rb;

	sim_begin(a, &ra);
	sim_begin(b, &rb);
	for (size_t i = 0; i < a->n; i++) {
		node x, y;

		sim_take(a, &ra, i, &x);
		sim_take(b, &rb, i, &y);
		replace_top2(a->heap, x, b->heap, y, n_slots);
	}
	*ma = sim_end(a, &ra, tail_a);
	*mb = sim_end(b, &rb, tail_b);
}

static void simulate3(const struct sim *a, double *tail_a, double *ma, const struct sim *b, double *tail_b,
		      double *mb, const struct sim *c, double *tail_c, double *mc)
{
	size_t n_slots = (size_t)a->n_sm * (size_t)a->slots;
	struct run ra, rb, rc;

	sim_begin(a, &ra);
	sim_begin(b, &rb);
	sim_begin(c, &rc);
	for (size_t i = 0; i < a->n; i++) {
		node x, y, z;

		sim_take(a, &ra, i, &x);
		sim_take(b, &rb, i, &y);
		sim_take(c, &rc, i, &z);
		replace_top3(a->heap, x, b->heap, y, c->heap, z, n_slots);
	}
	*ma = sim_end(a, &ra, tail_a);
	*mb = sim_end(b, &rb, tail_b);
	*mc = sim_end(c, &rc, tail_c);
}

/* order[] = block ids by base descending, ties by id: an LSD radix sort
 * (stable, so ids stay ascending within a tie) of the doubles' bits
 * mapped to unsigned integers that sort the other way round, in 11-bit
 * digits (a launch's doubles share their sign and exponent, the top
 * digit, so five passes where bytes took seven), every digit counted in
 * one pass. */
#define LPT_DIGIT 11
#define LPT_DIGITS ((64 + LPT_DIGIT - 1) / LPT_DIGIT)
static int lpt_order(const double *base, size_t n, uint32_t *order, struct nt_err *err)
{
	const uint64_t mask = ((uint64_t)1 << LPT_DIGIT) - 1;
	uint64_t *key = malloc(n * sizeof(*key)), *key2 = malloc(n * sizeof(*key2)), *kt;
	uint32_t *tmp = malloc(n * sizeof(*tmp)), *ord = order, *ot;
	size_t (*count)[(1 << LPT_DIGIT) + 1] = calloc(LPT_DIGITS, sizeof(*count));
	int ret = -1;

	if (!key || !key2 || !tmp || !count) {
		nt_err_set(err, "replay: out of memory for %zu blocks", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t u;

		memcpy(&u, &base[i], sizeof(u));
		if (base[i] == 0)
			u = 0;		/* -0 == +0 */
		/* ascending order of doubles as unsigned, then reversed */
		u = (u >> 63) ? ~u : u | (1ULL << 63);
		key[i] = ~u;
		order[i] = (uint32_t)i;
		for (int b = 0; b < LPT_DIGITS; b++)
			count[b][((key[i] >> (LPT_DIGIT * b)) & mask) + 1]++;
	}
	for (int b = 0, shift = 0; b < LPT_DIGITS; b++, shift += LPT_DIGIT) {
		if (count[b][((key[0] >> shift) & mask) + 1] == n)
			continue;	/* one value: this digit orders nothing */
		for (int d = 0; d < 1 << LPT_DIGIT; d++)
			count[b][d + 1] += count[b][d];
		for (size_t i = 0; i < n; i++) {
			size_t at = count[b][(key[i] >> shift) & mask]++;

			key2[at] = key[i];
			tmp[at] = ord[i];
		}
		kt = key, key = key2, key2 = kt;	/* the next pass reads what this one wrote */
		ot = ord, ord = tmp, tmp = ot;
	}
	if (ord != order) {
		memcpy(order, ord, n * sizeof(*order));
		tmp = ord;	/* the caller's order is freed by the caller */
	}
	ret = 0;
out:
	free(key);
	free(key2);
	free(tmp);
	free(count);
	return ret;
}

/* The packing of s's keys (pack()): every key a replay of this input
 * makes lies in [lo, hi): free times start at the SMs' offsets (not
 * negative) and grow by at most a block's longest duration on any SM,
 * plus the turnaround and gap, a block; the speed-aware choice adds a
 * bias, maybe negative.  The key takes the bits the slot index leaves
 * (63 - ibits: 39 or more), so that on a launch of 10M ns in all two
 * keys pack alike only within about 1e-8 ns of each other. */
static int key_scale(struct sim *s, const struct nt_replay_input *in, const double *dur, const double *base,
		     const double *add, const double *flat, struct nt_err *err)
{
	size_t n_slots = (size_t)in->n_sm * (size_t)in->slots;
	double lo = 0, hi = in->turnaround_ns, top = 0, bias = 0;

	s->ibits = 1;
	while (((size_t)1 << s->ibits) < n_slots)
		s->ibits++;
	for (int m = 0; m < in->n_sm; m++) {
		top = fmax(top, fmax(add[m], flat[m]));
		lo = fmin(lo, add[m]);
		bias = fmax(bias, add[m]);
		if (in->sm_offset)
			hi = fmax(hi, in->turnaround_ns + in->sm_offset[m]);
	}
	hi += bias;
	for (size_t i = 0; i < in->n_blocks; i++)
		hi += fmax(dur[i], base[i] + top) + in->turnaround_ns + in->gap_ns;
	s->lo = lo;
	s->q = ldexp(1, 63 - (int)s->ibits) / ((hi - lo) * 1.001 + 1);
	if (!isfinite(s->q) || !(s->q > 0))
		return nt_err_set(err, "replay: block times out of range (%g ns in all)", hi - lo);
	return 0;
}

static double pct(double part, double whole)
{
	return whole > 0 ? part / whole * 100 : 0;
}

static int check_input(const struct nt_replay_input *in, double *lat_mean, struct nt_err *err)
{
	double lo = INFINITY, hi = -INFINITY, sum = 0;

	if (in->n_sm <= 0 || in->slots <= 0)
		return nt_err_set(err, "replay: %d SMs x %d slots: both must be positive", in->n_sm, in->slots);
	if ((int64_t)in->n_sm * in->slots > NT_REPLAY_MAX_SLOTS)
		return nt_err_set(err, "replay: %d SMs x %d slots: more than %d slots", in->n_sm, in->slots,
				  NT_REPLAY_MAX_SLOTS);
	if (!in->blocks || !in->n_blocks)
		return nt_err_set(err, "replay: no blocks");
	if (in->n_blocks > NT_REPLAY_MAX_BLOCKS)
		return nt_err_set(err, "replay: %zu blocks: more than %zu", in->n_blocks, NT_REPLAY_MAX_BLOCKS);
	if (!isfinite(in->slope))
		return nt_err_set(err, "replay: slope %g ns/cycle is not a number", in->slope);
	if (!in->lat && in->slope != 0)
		return nt_err_set(err, "replay: slope %g ns/cycle but no latency map", in->slope);
	if (!(in->turnaround_ns >= 0) || !isfinite(in->turnaround_ns) || !(in->gap_ns >= 0) ||
	    !isfinite(in->gap_ns))
		return nt_err_set(err, "replay: turnaround %g ns, gap %g ns: both must be finite and not negative",
				  in->turnaround_ns, in->gap_ns);
	for (int s = 0; in->sm_offset && s < in->n_sm; s++)
		if (!(in->sm_offset[s] >= 0) || !isfinite(in->sm_offset[s]))
			return nt_err_set(err, "replay: SM %d's dispatch offset is %g ns", s, in->sm_offset[s]);
	for (int s = 0; in->lat && s < in->n_sm; s++) {
		if (!isfinite(in->lat[s]))
			return nt_err_set(err, "replay: latency of SM %d is %g", s, in->lat[s]);
		lo = fmin(lo, in->lat[s]);
		hi = fmax(hi, in->lat[s]);
		sum += in->lat[s];
	}
	*lat_mean = in->lat ? sum / in->n_sm : 0;
	for (size_t i = 0; i < in->n_blocks; i++) {
		const struct nt_replay_block *b = &in->blocks[i];
		double d, base, fastest;

		if (b->sm < 0 || b->sm >= in->n_sm)
			return nt_err_set(err, "replay: block %zu ran on SM %d, outside 0..%d", i, b->sm,
					  in->n_sm - 1);
		if (b->t_end_ns < b->t_start_ns)
			return nt_err_set(err, "replay: block %zu ends (%lld ns) before it starts (%lld ns)", i,
					  (long long)b->t_end_ns, (long long)b->t_start_ns);
		if (b->t_start_ns < 0)	/* GPU times are not negative; differences must not overflow */
			return nt_err_set(err, "replay: block %zu starts at %lld ns", i, (long long)b->t_start_ns);
		if (in->slope == 0)
			continue;
		d = (double)(b->t_end_ns - b->t_start_ns);
		base = d - in->slope * in->lat[b->sm];
		fastest = base + fmin(in->slope * lo, in->slope * hi);
		if (fastest < 0)
			return nt_err_set(err, "replay: block %zu (%.0f ns on SM %d) would take %g ns at slope %g "
					  "ns/cycle on the fastest SM", i, d, b->sm, fastest, in->slope);
	}
	return 0;
}

static void waves_and_tail(struct nt_replay_result *r, double tail_start)
{
	double n_slots = (double)r->n_sm * r->slots;
	double rest;

	r->waves = (double)r->n_blocks / n_slots;
	r->full_waves = (int64_t)floor(r->waves);
	rest = (double)r->n_blocks - (double)r->full_waves * n_slots;
	r->last_wave_fill = rest > 0 ? rest / n_slots : 1;
	r->tail_start_ns = tail_start;
	r->tail_ns = r->hardware_ns - tail_start;
	r->tail_pct = pct(r->tail_ns, r->hardware_ns);
}

int nt_replay_rho(const double *lat, int n_sm, double intercept_ns, double slope, double *rho,
		  struct nt_err *err)
{
	double sum = 0, mid;

	for (int s = 0; s < n_sm; s++)
		sum += lat ? lat[s] : 0;
	mid = intercept_ns + slope * (n_sm > 0 ? sum / n_sm : 0);
	for (int s = 0; s < n_sm; s++) {
		double t = intercept_ns + slope * (lat ? lat[s] : 0);

		rho[s] = t / mid;
		if (!(t > 0) || !(mid > 0) || !isfinite(rho[s]))
			return nt_err_set(err, "replay: a block would take %g ns on SM %d (%g ns + %g ns/cycle x "
					  "%g cycles): no speed to split work by", t, s, intercept_ns, slope,
					  lat ? lat[s] : 0);
	}
	return 0;
}

/* How far each SM ran from the fit, into res[n_sm] (replay.h: the
 * residual factors): q(b) = dur(b) / (c + slope * lat[s]) for the blocks
 * of SM s, their mean q(s) over the mean of those over SMs, shrunk
 * towards 1 by lambda(s) = sys / (sys + within / k(s)), where within is
 * the pooled variance of q(b) about q(s) (SMs with two blocks or more),
 * k(s) the SM's blocks and sys = max(0, variance of q(s) over SMs - within
 * x mean 1 / k(s)), the part of that variance the blocks' own spread
 * does not explain.  1 where nothing can be told apart: SMs without
 * blocks; launches of more than one wave, or where an SM's blocks did
 * not all run side by side (there an SM's blocks ran under changing
 * company, the last wave's alone: what sets its mean is not the SM);
 * within resting on fewer than RES_MIN_DF pairs of blocks or on fewer
 * than half as many as SMs with blocks (single-block SMs would then be
 * read at face value); no variance left over.  The largest factor over
 * many SMs leans high where SMs differ by nothing: by the shrinkage's
 * noise, smaller the more blocks each SM has. */
#define RES_MIN_DF 10

/* Block i's q (above). */
static double res_q(const struct nt_replay_input *in, const double *base, double c, size_t i)
{
	double add = in->slope != 0 ? in->slope * in->lat[in->blocks[i].sm] : 0;

	return (base[i] + add) / (c + add);
}

static void residuals(const struct nt_replay_input *in, const double *base, double c, double *res)
{
	double *sum = calloc((size_t)in->n_sm, sizeof(*sum));
	int64_t *first_end = malloc((size_t)in->n_sm * sizeof(*first_end)),
		*last_start = malloc((size_t)in->n_sm * sizeof(*last_start));
	int *k = calloc((size_t)in->n_sm, sizeof(*k));
	double within = 0, mean = 0, between = 0, inv_k = 0, sys;
	int with = 0, df = 0;

	for (int s = 0; s < in->n_sm; s++)
		res[s] = 1;
	if (!sum || !k || !first_end || !last_start || in->n_blocks > (size_t)in->n_sm * (size_t)in->slots)
		goto out;
	for (size_t i = 0; i < in->n_blocks; i++) {
		const struct nt_replay_block *b = &in->blocks[i];
		int s = b->sm;

		if (!k[s] || b->t_end_ns < first_end[s])
			first_end[s] = b->t_end_ns;
		if (!k[s] || b->t_start_ns > last_start[s])
			last_start[s] = b->t_start_ns;
		sum[s] += res_q(in, base, c, i);
		k[s]++;
	}
	for (int s = 0; s < in->n_sm; s++) {
		if (!k[s])
			continue;
		if (last_start[s] >= first_end[s])	/* one of its blocks began after another ended */
			goto out;
		sum[s] /= k[s];		/* q(s) */
	}
	for (size_t i = 0; i < in->n_blocks; i++) {	/* two passes: no cancellation */
		double d = res_q(in, base, c, i) - sum[in->blocks[i].sm];

		within += d * d;
	}
	for (int s = 0; s < in->n_sm; s++) {
		if (!k[s])
			continue;
		df += k[s] - 1;
		mean += sum[s];
		inv_k += 1.0 / k[s];
		with++;
	}
	if (df < RES_MIN_DF || 2 * df < with || with < 2)
		goto out;
	within = fmax(0, within / df);
	mean /= with;
	inv_k /= with;
	for (int s = 0; s < in->n_sm; s++)
		if (k[s])
			between += (sum[s] - mean) * (sum[s] - mean);
	between /= with - 1;
	sys = between - within * inv_k;
	if (!(sys > 0) || !(mean > 0))
		goto out;
	for (int s = 0; s < in->n_sm; s++)
		if (k[s])
			res[s] = 1 + sys / (sys + within / k[s]) * (sum[s] / mean - 1);
out:
	free(sum);
	free(first_end);
	free(last_start);
	free(k);
}

/* The persistent-kernel counterfactuals (replay.h) into r. */
static int persistent(const struct nt_replay_input *in, const double *base, double mean_lat,
		      struct nt_replay_result *r, struct nt_err *err)
{
	double w = 0, c = 0, inv = 0, even_max = 0, res_max = 0, *rho, *res;
	size_t n = in->n_blocks;

	for (size_t i = 0; i < n; i++)
		c += base[i];
	c /= (double)n;
	w = (c + in->slope * mean_lat) * (double)n;
	if (!(w > 0)) {
		/* Blocks of no duration: nothing to split. */
		r->even_ns = r->split_ns = 0;
	} else {
		rho = malloc(2 * in->n_sm * sizeof(*rho));
		if (!rho)
			return nt_err_set(err, "replay: out of memory for %d SMs", in->n_sm);
		res = rho + in->n_sm;
		if (nt_replay_rho(in->lat, in->n_sm, c, in->slope, rho, NULL)) {
			/* Some SM would run its work in no time (blocks of
			 * no duration at the bound): no speeds to split by. */
			free(rho);
			r->even_ns = r->split_ns = NAN;
			goto derived;
		}
		residuals(in, base, c, res);
		for (int s = 0; s < in->n_sm; s++) {
			inv += 1 / rho[s];
			even_max = fmax(even_max, rho[s] * res[s]);
			res_max = fmax(res_max, res[s]);
		}
		free(rho);
		r->even_ns = w / ((double)in->n_sm * in->slots) * even_max;
		r->split_ns = w / ((double)in->slots * inv) * res_max;
	}
derived:
	r->rebalance_ns = r->even_ns - r->split_ns;
	r->rebalance_pct = pct(r->rebalance_ns, r->hardware_ns);
	r->quantisation_ns = r->hardware_ns - r->even_ns;
	r->quantisation_pct = pct(r->quantisation_ns, r->hardware_ns);
	r->persist_ns = r->hardware_ns - r->split_ns;
	r->persist_pct = pct(r->persist_ns, r->hardware_ns);
	return 0;
}

/* How far the measured replay's block starts (st[], from 0) fall from
 * the recorded ones (t_start_ns - t0): the median and 90th percentile of
 * |difference|, as shares of the measured makespan.  Overwrites st. */
static void start_errors(const struct nt_replay_input *in, double *st, int64_t t0, struct nt_replay_result *r)
{
	size_t n = in->n_blocks;

	for (size_t i = 0; i < n; i++)
		st[i] = fabs(st[i] - (double)(in->blocks[i].t_start_ns - t0));
	r->start_err_pct = pct(nt_kth_double(st, n, (n - 1) / 2), r->measured_ns);
	r->start_err_p90_pct = pct(nt_kth_double(st, n, (size_t)((double)(n - 1) * 0.9)), r->measured_ns);
}

int nt_replay_run(const struct nt_replay_input *in, struct nt_replay_result *out, struct nt_err *err)
{
	size_t n = in ? in->n_blocks : 0, n_slots;
	double *dur = NULL, *base = NULL, *zero = NULL, *add = NULL, *flat = NULL, *st = NULL;
	uint32_t *order = NULL;
	node *heap = NULL, *heap2 = NULL, *heap3 = NULL;
	double *free_at = NULL, *free2 = NULL, *free3 = NULL;
	unsigned char *used = NULL, *used2 = NULL, *used3 = NULL;
	int32_t *sm_of = NULL;
	struct nt_replay_result r;
	double mean_lat = 0, tail_start = 0;
	int64_t t0, t1;
	int ret = -1;

	if (!in || !out)
		return nt_err_set(err, "replay: no input or no result");
	if (check_input(in, &mean_lat, err))
		return -1;
	n_slots = (size_t)in->n_sm * (size_t)in->slots;
	dur = malloc(n * sizeof(*dur));
	base = malloc(n * sizeof(*base));
	order = malloc(n * sizeof(*order));
	heap = malloc((n_slots + HEAP_PAD) * sizeof(*heap));
	free_at = malloc(n_slots * sizeof(*free_at));
	used = malloc(n_slots);
	heap2 = malloc((n_slots + HEAP_PAD) * sizeof(*heap2));
	free2 = malloc(n_slots * sizeof(*free2));
	used2 = malloc(n_slots);
	heap3 = malloc((n_slots + HEAP_PAD) * sizeof(*heap3));
	free3 = malloc(n_slots * sizeof(*free3));
	used3 = malloc(n_slots);
	zero = calloc(in->n_sm, sizeof(*zero));
	add = malloc(in->n_sm * sizeof(*add));
	flat = malloc(in->n_sm * sizeof(*flat));
	st = malloc(n * sizeof(*st));
	sm_of = malloc(n_slots * sizeof(*sm_of));
	if (!sm_of || !dur || !base || !order || !heap || !free_at || !used || !heap2 || !free2 || !used2 || !heap3 ||
	    !free3 || !used3 || !zero || !add || !flat || !st) {
		nt_err_set(err, "replay: out of memory for %zu blocks", n);
		goto out;
	}

	memset(&r, 0, sizeof(r));
	r.n_blocks = n;
	r.n_sm = in->n_sm;
	r.slots = in->slots;
	t0 = in->blocks[0].t_start_ns;
	t1 = in->blocks[0].t_end_ns;
	for (size_t i = 0; i < n; i++) {
		const struct nt_replay_block *b = &in->blocks[i];

		t0 = b->t_start_ns < t0 ? b->t_start_ns : t0;
		t1 = b->t_end_ns > t1 ? b->t_end_ns : t1;
		dur[i] = (double)(b->t_end_ns - b->t_start_ns);
		base[i] = dur[i] - (in->slope != 0 ? in->slope * in->lat[b->sm] : 0);
	}
	r.measured_ns = (double)(t1 - t0);
	for (int s = 0; s < in->n_sm; s++) {
		add[s] = in->slope != 0 ? in->slope * in->lat[s] : 0;
		flat[s] = in->slope * mean_lat;
	}
	for (size_t i = 0; i < n_slots; i++)
		sm_of[i] = (int32_t)(i % (size_t)in->n_sm);
	if (lpt_order(base, n, order, err))
		goto out;

	{
		struct sim s = { .heap = heap, .sm_of = sm_of, .free = free_at, .used = used, .n_sm = in->n_sm,
				 .slots = in->slots, .base = dur, .add = zero, .offset = in->sm_offset,
				 .turnaround = in->turnaround_ns, .gap = in->gap_ns, .n = n, .start = st };

		/* three replays at a time, each in its own heap and slots */
		struct sim s2, s3;

		if (key_scale(&s, in, dur, base, add, flat, err))
			goto out;
		s2 = s3 = s;

		s2.heap = heap2;
		s2.free = free2;
		s2.used = used2;
		s2.start = NULL;
		s3.heap = heap3;
		s3.free = free3;
		s3.used = used3;
		s3.start = NULL;
		/* At slope 0 the map changes nothing: base == dur, add == flat
		 * == 0, and the speed-aware choice is the first-free one. */
		if (in->slope == 0) {
			s2.order = order;
			simulate2(&s, &tail_start, &r.replay_ns, &s2, NULL, &r.lpt_blind_ns);
			r.hardware_ns = r.uniform_ns = r.greedy_ns = r.replay_ns;
			r.aware_ns = r.lpt_blind_ns;
		} else {
			/* replay, hardware and uniform, in block order */
			s2.base = s3.base = base;
			s2.add = add;
			s3.add = flat;
			simulate3(&s, NULL, &r.replay_ns, &s2, &tail_start, &r.hardware_ns, &s3, NULL, &r.uniform_ns);
			/* greedy; lpt_blind and aware, longest first (replay.h) */
			s.start = NULL;
			s.base = base;
			s.add = s3.add = add;
			s.bias = s3.bias = add;
			s2.order = s3.order = order;
			simulate3(&s, NULL, &r.greedy_ns, &s2, NULL, &r.lpt_blind_ns, &s3, NULL, &r.aware_ns);
		}
		start_errors(in, st, t0, &r);
	}
	r.error_pct = r.measured_ns > 0 ? (r.replay_ns - r.measured_ns) / r.measured_ns * 100 : 0;
	r.lost_ns = r.hardware_ns - r.uniform_ns;
	r.lost_pct = pct(r.lost_ns, r.hardware_ns);
	r.recoverable_ns = r.hardware_ns - r.aware_ns;
	r.recoverable_pct = pct(r.recoverable_ns, r.hardware_ns);
	r.reorder_ns = r.hardware_ns - r.lpt_blind_ns;
	r.placement_ns = r.lpt_blind_ns - r.aware_ns;
	r.greedy_recoverable_ns = r.hardware_ns - r.greedy_ns;
	r.greedy_recoverable_pct = pct(r.greedy_recoverable_ns, r.hardware_ns);
	if (persistent(in, base, mean_lat, &r, err))
		goto out;
	waves_and_tail(&r, tail_start);
	*out = r;
	ret = 0;
out:
	free(dur);
	free(base);
	free(order);
	free(heap);
	free(free_at);
	free(used);
	free(heap2);
	free(free2);
	free(used2);
	free(heap3);
	free(free3);
	free(used3);
	free(zero);
	free(add);
	free(flat);
	free(st);
	free(sm_of);
	return ret;
}

int nt_replay_observed_slots(const struct nt_replay_block *b, size_t n, int *slots, struct nt_err *err)
{
	uint64_t *key, *tmp, span, sm_shift;
	int64_t t0;
	int run = 0, most = 0, max_sm = 0;

	*slots = 0;
	if (!n)
		return 0;
	if (!b || n > NT_REPLAY_MAX_BLOCKS)
		return nt_err_set(err, "observed slots: %zu blocks", n);
	t0 = b[0].t_start_ns;
	for (size_t i = 0; i < n; i++) {
		if (b[i].sm < 0 || b[i].t_end_ns < b[i].t_start_ns)
			return nt_err_set(err, "observed slots: block %zu: SM %d, %lld..%lld ns", i, b[i].sm,
					  (long long)b[i].t_start_ns, (long long)b[i].t_end_ns);
		max_sm = b[i].sm > max_sm ? b[i].sm : max_sm;
		t0 = b[i].t_start_ns < t0 ? b[i].t_start_ns : t0;
	}
	/* Each block's start and end as one key (SM, time from the first
	 * start, then 0 for an end and 1 for a start: [start, end) intervals,
	 * so an end sorts before a start at the same time), sorted without a
	 * callback; then a sweep per SM. */
	span = 0;
	for (size_t i = 0; i < n; i++)
		if ((uint64_t)b[i].t_end_ns - (uint64_t)t0 > span)
			span = (uint64_t)b[i].t_end_ns - (uint64_t)t0;
	sm_shift = (uint64_t)nt_bits_u64(span) + 1;
	if (sm_shift + (uint64_t)nt_bits_u64((uint64_t)max_sm) > 64)
		return nt_err_set(err, "observed slots: blocks span %llu ns on %d SMs, too wide to sort",
				  (unsigned long long)span, max_sm + 1);
	key = malloc(2 * n * sizeof(*key));
	tmp = malloc(2 * n * sizeof(*tmp));
	if (!key || !tmp) {
		free(key);
		free(tmp);
		return nt_err_set(err, "observed slots: out of memory for %zu blocks", n);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t sm = (uint64_t)b[i].sm << sm_shift;

		key[2 * i] = sm | ((uint64_t)b[i].t_start_ns - (uint64_t)t0) << 1 | 1;
		key[2 * i + 1] = sm | ((uint64_t)b[i].t_end_ns - (uint64_t)t0) << 1;
	}
	nt_sort_u64(key, tmp, 2 * n);
	for (size_t i = 0; i < 2 * n; i++) {
		if (i && key[i] >> sm_shift != key[i - 1] >> sm_shift)
			run = 0;
		run += key[i] & 1 ? 1 : -1;
		most = run > most ? run : most;
	}
	free(key);
	free(tmp);
	*slots = most;
	return 0;
}

struct reader {
	struct nt_replay_block *b;
	size_t n, cap;
};

static int read_block(const struct nt_trace_block *tb, void *arg)
{
	struct reader *r = arg;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct nt_replay_block *b = realloc(r->b, cap * sizeof(*b));

		if (!b)
			return 1;
		r->b = b;
		r->cap = cap;
	}
	r->b[r->n++] = (struct nt_replay_block){ tb->t_start_ns, tb->t_end_ns, tb->sm };
	return 0;
}

int nt_replay_read_launch(struct nt_trace *t, int64_t launch, struct nt_replay_block **out, size_t *n,
			  struct nt_err *err)
{
	struct reader r = { 0 };
	int ret = nt_trace_foreach_block(t, launch, read_block, &r, err);

	if (ret > 0)
		nt_err_set(err, "launch %lld of '%s': out of memory after %zu blocks", (long long)launch,
			   nt_trace_path_of(t), r.n);
	if (ret) {
		free(r.b);
		*out = NULL;
		*n = 0;
		return -1;
	}
	*out = r.b;
	*n = r.n;
	return 0;
}
