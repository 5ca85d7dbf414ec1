/*
 * nucatrace/localize.cuh - which SM is this warp on?  Self-localisation
 * from a short L2 latency probe, without reading %smid.
 *
 *	#include <nucatrace/localize.cuh>
 *
 *	__global__ void k(const struct nt_loc_table *table, ...)
 *	{
 *		struct nt_loc_result where;
 *
 *		if (threadIdx.x < 32)		// one whole warp, converged
 *			nt_localize(table, blockIdx.x, &where);
 *		...
 *	}
 *
 * The table is in device memory; the host builds it from a stored map of
 * this GPU and allocates and writes the footprint it points at
 * (core/analysis/localize.h: nt_loc_build(), then the lines as nt_loc_gpu_open()
 * writes them; `nucatrace localize --eval` does all of it).
 *
 * What the call does.  Lane 0 times t->n_line single L2 lines, each a
 * self-loop (the line holds its own address): t->warm untimed loads,
 * then t->reps timed walks of t->loads dependent ld.global.cg loads (L1
 * bypassed), the fastest walk / loads being the line's cycles per load,
 * exactly as calibrate's line matrix times them.  The whole warp then
 * compares the n_line values with every SM's row of the map and returns
 * the most likely TPC (the model and its posterior are in
 * localize_table.h).  `rotate` picks the line the probe starts with
 * (rotate % n_line): blocks that probe at the same moment start on
 * different lines (pass blockIdx.x), so fewer of them load one L2 slice.
 *
 * Cost: n_line * (warm + reps * loads) dependent L2 hits of about 283
 * cycles each on an H200: with the defaults (8 lines, 4 warm loads, one
 * walk of 64) 544 loads, about 154,000 cycles (78 us at 1980 MHz); the
 * classification should add a few thousand (not yet measured).  out->probe_cycles and
 * out->total_cycles report what a call took.
 *
 * What it can tell.  On the H200 the two SMs of a TPC (2k, 2k+1) see the
 * same latencies, so the TPC is what the probe identifies; the SM within
 * it is a coin toss (p_sm about half of p_tpc).  The group is the
 * GPC-like group of `nucatrace map fit`.  A fit far above 1 means the
 * probe does not look like the map at all: another GPU, other work
 * loading the L2, or a footprint on other physical pages than at
 * calibration (the L2 partition of a line depends on its physical
 * address).
 *
 * Contract: call from all 32 lanes of one warp, converged (no lane may
 * have exited); every lane gets the same return value, the TPC, or -1
 * for an unusable table (not a table, base not set, no SM with a row);
 * lane 0 writes *out when out is not NULL (any address space: a local
 * variable, shared or global memory).  Other warps of the block should
 * not load the memory system meanwhile.  Needs compute capability 7.0 or
 * newer (__shfl_sync); uses 8 bytes of static shared memory and no local
 * memory of its own (a result in a local variable lives there: 176 bytes).
 */
#ifndef NUCATRACE_LOCALIZE_CUH
#define NUCATRACE_LOCALIZE_CUH

#include "localize_table.h"

#define NT_LOC_FULL_MASK 0xffffffffu

static __device__ __forceinline__ unsigned long long nt_loc_clock(void)
{
	unsigned long long c;

	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
	return c;
}

static __device__ __forceinline__ unsigned nt_loc_lane(void)
{
	unsigned l;

	asm("mov.u32 %0, %%laneid;" : "=r"(l));
	return l;
}

static __device__ __forceinline__ unsigned long long nt_loc_ld(unsigned long long p)
{
	unsigned long long v;

	asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

/* The store must wait for the load, and in-order issue keeps the clock
 * read after it: the timed interval ends when the data has arrived (the
 * same ending as calibrate's probe, so the same fixed overhead). */
static __device__ __forceinline__ void nt_loc_consume(unsigned long long v)
{
	__shared__ unsigned long long sink;

	asm volatile("st.shared.u64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(&sink)), "l"(v)
		     : "memory");
}

/* Cycles per load of one self-loop line (lane 0 alone). */
static __device__ __forceinline__ float nt_loc_time_line(unsigned long long p, int warm, int reps,
							 int loads)
{
	unsigned long long best = ~0ULL;

	for (int i = 0; i < warm; i++)
		p = nt_loc_ld(p);
	nt_loc_consume(p);
	for (int r = 0; r < reps; r++) {
		unsigned long long t0, t1;

		t0 = nt_loc_clock();
		for (int i = 0; i < loads; i++)
			p = nt_loc_ld(p);
		nt_loc_consume(p);
		t1 = nt_loc_clock();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	return (float)best / (float)loads;
}

/* d of SM s (every lane its own s; lane k holds x[k]).  All lanes must
 * call it: the shuffles need the whole warp. */
static __device__ __forceinline__ float nt_loc_sm_distance(const struct nt_loc_table *t, int s,
							   float mine, int n)
{
	int ok = s < t->n_sm && t->group[s] >= 0;
	float s1 = 0.0f, s2 = 0.0f;

	for (int k = 0; k < n; k++) {
		float xk = __shfl_sync(NT_LOC_FULL_MASK, mine, k);

		if (ok)
			nt_loc_accumulate(&s1, &s2, xk - t->tmpl[s][k]);
	}
	return ok ? nt_loc_distance(s1, s2, n, t->sigma, t->tau) : __int_as_float(0x7f800000);
}

static __device__ __forceinline__ int nt_loc_unusable(unsigned lane, struct nt_loc_result *out)
{
	if (lane == 0 && out) {
		out->sm = out->tpc = out->group = -1;
		out->p_sm = out->p_tpc = out->p_group = 0.0f;
		out->fit = out->offset = 0.0f;
		out->probe_cycles = out->total_cycles = 0;
	}
	return -1;
}

static __device__ int nt_localize(const struct nt_loc_table *t, unsigned rotate,
				  struct nt_loc_result *out)
{
	const unsigned lane = nt_loc_lane();
	const float inf = __int_as_float(0x7f800000);
	unsigned long long c0 = nt_loc_clock(), c1;
	float mine = 0.0f, d[NT_LOC_MAX_SM / 32], dmin = inf, total = 0.0f, best_w = -1.0f;
	float best_p_sm = 0.0f, mass = 0.0f, off = 0.0f;
	int n, best_tpc = -1, best_sm = -1, group = -1;

	n = t->n_line;
	if (t->magic != NT_LOC_MAGIC || t->version != NT_LOC_VERSION || n < 1 ||
	    n > NT_LOC_MAX_LINES || t->n_sm < 1 || t->n_sm > NT_LOC_MAX_SM || t->loads < 1 ||
	    t->reps < 1 || t->warm < 0 || !(t->sigma > 0.0f) || !(t->tau >= 0.0f) || !t->base)
		return nt_loc_unusable(lane, out);

	/* The probe: lane 0 times the lines; lane k keeps line k's value. */
	for (int i = 0; i < n; i++) {
		int k = (int)((rotate + (unsigned)i) % (unsigned)n);
		float v = 0.0f;

		if (lane == 0)
			v = nt_loc_time_line(t->base + t->offset[k], t->warm, t->reps, t->loads);
		v = __shfl_sync(NT_LOC_FULL_MASK, v, 0);
		if (lane == (unsigned)k)
			mine = v;
	}
	c1 = nt_loc_clock();

	/* d of every SM: lane l has SMs l, l + 32, ...  The loops run the
	 * same number of times on every lane (shuffles inside). */
#pragma unroll
	for (int j = 0; j < NT_LOC_MAX_SM / 32; j++) {
		d[j] = inf;
		if (32 * j < t->n_sm)
			d[j] = nt_loc_sm_distance(t, 32 * j + (int)lane, mine, n);
		dmin = fminf(dmin, d[j]);
	}
	for (int m = 16; m; m >>= 1)
		dmin = fminf(dmin, __shfl_xor_sync(NT_LOC_FULL_MASK, dmin, m));
	if (!(dmin < inf))
		return nt_loc_unusable(lane, out);	/* no SM has a row */

	/* Weights; TPC k is lanes 2k', 2k'+1 of one round (32 is even).  The
	 * best TPC: highest weight, then the lowest index, as on the CPU. */
#pragma unroll
	for (int j = 0; j < NT_LOC_MAX_SM / 32; j++) {
		int s = 32 * j + (int)lane;
		float w = d[j] < inf ? expf(-(d[j] - dmin) * 0.5f) : 0.0f;
		float wp = __shfl_xor_sync(NT_LOC_FULL_MASK, w, 1);
		float dp = __shfl_xor_sync(NT_LOC_FULL_MASK, d[j], 1);
		float wt = w + wp;
		int odd_better = (lane & 1) ? d[j] < dp : dp < d[j];
		int sm = (s & ~1) + odd_better;
		float psm = odd_better ? ((lane & 1) ? w : wp) : ((lane & 1) ? wp : w);

		total += w;
		for (int m = 16; m; m >>= 1) {
			float owt = __shfl_xor_sync(NT_LOC_FULL_MASK, wt, m);
			int osm = __shfl_xor_sync(NT_LOC_FULL_MASK, sm, m);
			float opsm = __shfl_xor_sync(NT_LOC_FULL_MASK, psm, m);

			if (owt > wt || (owt == wt && osm / 2 < sm / 2)) {
				wt = owt;
				sm = osm;
				psm = opsm;
			}
		}
		if (32 * j < t->n_sm && wt > best_w) {
			best_w = wt;
			best_tpc = sm / 2;
			best_sm = sm;
			best_p_sm = psm;
		}
	}
	for (int m = 16; m; m >>= 1)
		total += __shfl_xor_sync(NT_LOC_FULL_MASK, total, m);

	if (best_sm >= 0) {
		group = t->group[best_sm];
#pragma unroll
		for (int j = 0; j < NT_LOC_MAX_SM / 32; j++) {
			int s = 32 * j + (int)lane;

			if (s < t->n_sm && d[j] < inf && t->group[s] == group)
				mass += expf(-(d[j] - dmin) * 0.5f);
		}
		for (int k = 0; k < n; k++)
			off += __shfl_sync(NT_LOC_FULL_MASK, mine, k) - t->tmpl[best_sm][k];
	}
	for (int m = 16; m; m >>= 1)
		mass += __shfl_xor_sync(NT_LOC_FULL_MASK, mass, m);

	for (int k = 0; k < n; k++) {
		float xk = __shfl_sync(NT_LOC_FULL_MASK, mine, k);

		if (lane == 0 && out)
			out->x[k] = xk;
	}
	if (lane == 0 && out) {
		out->sm = best_sm;
		out->tpc = best_tpc;
		out->group = group;
		out->p_sm = best_p_sm / total;
		out->p_tpc = best_w / total;
		out->p_group = mass / total;
		out->fit = dmin / (float)n;
		out->offset = off / (float)n;
		out->probe_cycles = c1 - c0;
		out->total_cycles = nt_loc_clock() - c0;
	}
	return best_tpc;
}

#endif
