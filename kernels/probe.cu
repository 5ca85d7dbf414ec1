// L2 hit-latency probes (see probe.h for the protocol).  One thread per
// block walks dependent ld.global.cg loads (L1 bypassed, so every load
// is an L2 access) and times them with %clock64.
#include "probe.h"
#include "sreg.cuh"

typedef unsigned long long u64;

__device__ __forceinline__ u64 ld_cg(u64 p)
{
	u64 v;
	asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

// Store the loaded value to shared memory: the store must wait for the
// load, and in-order issue keeps the clock read after it, so the timed
// interval ends when the data has arrived.  Single timed loads (first
// touch) add a __syncwarp() before the clock read: on the H200 it gave
// the smallest fixed overhead of the orderings tried (docs/calibration.md).
__device__ __forceinline__ void consume(u64 *sink, u64 v)
{
	asm volatile("st.shared.u64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(sink)), "l"(v)
		     : "memory");
}

__device__ unsigned take_ticket(const nt_probe_args &a)
{
	unsigned *t = (unsigned *)a.ticket;
	unsigned mine = atomicAdd(&t[0], 1u);

	for (;;) {
		unsigned now = *(volatile unsigned *)&t[1];
		unsigned ahead = mine - now;

		if (ahead == 0)
			break;
		// The next in line polls every half microsecond; the rest
		// sleep longer the further back they are (at most ~1 ms).
		__nanosleep(ahead == 1 ? 500u : min(ahead * 4000u, 1000000u));
	}
	__threadfence();
	return mine;
}

__device__ void pass_turn(const nt_probe_args &a)
{
	unsigned *t = (unsigned *)a.ticket;

	__threadfence();
	atomicAdd(&t[1], 1u);
}

__device__ u64 *record(const nt_probe_args &a)
{
	return (u64 *)a.out + (u64)blockIdx.x * (u64)a.stride;
}

// Chain map: reps timed walks of `loads` hops from the start line.
extern "C" __global__ void nt_probe_chain(nt_probe_args a)
{
	extern __shared__ u64 sink[];
	u64 *rec, p, c0, g0;

	if (threadIdx.x)
		return;
	rec = record(a);
	rec[1] = take_ticket(a);
	rec[0] = smid();
	p = a.base;
	for (int i = 0; i < a.warm; i++)
		p = ld_cg(p);
	consume(sink, p);
	c0 = clk();
	g0 = gtime();
	for (int r = 0; r < a.reps; r++) {
		u64 t0, t1;

		p = a.base;
		t0 = clk();
		for (int i = 0; i < a.loads; i++)
			p = ld_cg(p);
		consume(sink, p);
		t1 = clk();
		rec[NT_REC_HEAD + r] = t1 - t0;
	}
	rec[2] = clk() - c0;
	rec[3] = gtime() - g0;
	pass_turn(a);
}

// Line matrix: each line holds its own address (a self-loop); per line,
// warm loads, then reps timed walks of `loads` hops.
extern "C" __global__ void nt_probe_lines(nt_probe_args a)
{
	extern __shared__ u64 sink[];
	const u64 *off = (const u64 *)a.offsets;
	u64 *rec, c0, g0;

	if (threadIdx.x)
		return;
	rec = record(a);
	rec[1] = take_ticket(a);
	rec[0] = smid();
	c0 = clk();
	g0 = gtime();
	for (int l = 0; l < a.n_lines; l++) {
		u64 p = a.base + off[l];

		for (int i = 0; i < a.warm; i++)
			p = ld_cg(p);
		consume(sink, p);
		for (int r = 0; r < a.reps; r++) {
			u64 t0, t1;

			t0 = clk();
			for (int i = 0; i < a.loads; i++)
				p = ld_cg(p);
			consume(sink, p);
			t1 = clk();
			rec[NT_REC_HEAD + (u64)l * a.reps + r] = t1 - t0;
		}
	}
	rec[2] = clk() - c0;
	rec[3] = gtime() - g0;
	pass_turn(a);
}

// First touch: only a block on target_sm measures.  The host rewrote the
// lines with the copy engine just before the launch, so no SM has read
// them since.  Per line: one timed single load (the first touch), then
// reps timed single loads of the same line.  Values per line: first,
// then the repeats; then per line one load of a never-touched line
// (a DRAM reference).
extern "C" __global__ void nt_probe_first(nt_probe_args a)
{
	extern __shared__ u64 sink[];
	const u64 *off = (const u64 *)a.offsets;
	unsigned *claimed = (unsigned *)a.ticket;
	u64 *rec, c0, g0, *vals;
	int per_line = 1 + a.reps;

	if (threadIdx.x)
		return;
	// Only the first block on the target SM writes, into record 0; the
	// host cleared it to NT_REC_NONE before the launch.
	if ((int)smid() != a.target_sm || atomicCAS(claimed, 0u, 1u) != 0u)
		return;
	rec = (u64 *)a.out;
	rec[0] = smid();
	rec[1] = 0;
	vals = rec + NT_REC_HEAD;
	c0 = clk();
	g0 = gtime();
	for (int l = 0; l < a.n_lines; l++) {
		u64 p = a.base + off[l];

		for (int r = 0; r < per_line; r++) {
			u64 t0, t1, v;

			t0 = clk();
			v = ld_cg(p);
			consume(sink, v);
			__syncwarp(1u);
			t1 = clk();
			vals[(u64)l * per_line + r] = t1 - t0;
		}
	}
	for (int l = 0; l < a.n_lines; l++) {
		u64 p = a.cold + ((u64)a.target_sm * a.n_lines + l) * NT_LINE_BYTES;
		u64 t0, t1, v;

		t0 = clk();
		v = ld_cg(p);
		consume(sink, v);
		t1 = clk();
		vals[(u64)a.n_lines * per_line + l] = t1 - t0;
	}
	rec[2] = clk() - c0;
	rec[3] = gtime() - g0;
}

// Keeps every SM busy for about `loads` microseconds so the SM clock has
// left its idle state before anything is timed.
extern "C" __global__ void nt_probe_spin(nt_probe_args a)
{
	u64 *rec = record(a);
	u64 c0 = clk(), g0 = gtime(), g = g0;

	while (g - g0 < (u64)a.loads * 1000u)
		g = gtime();
	if (threadIdx.x == 0) {
		rec[0] = smid();
		rec[2] = clk() - c0;
		rec[3] = g - g0;
	}
}

// What block tracing adds to a block (the probe-cost stage, probe.h):
// every warp loops `iters` times on a dependent multiply-add, then its
// lane 0 folds the warp's clock64 interval into the block's record:
// rec[0] the earliest start (atomicMin), rec[1] the latest end kept as
// its complement (atomicMin as well, so one 0xff clear serves both),
// rec[2] the SM.
extern "C" __global__ void nt_probe_cost(u64 *recs, int iters)
{
	u64 t0 = clk(), t1;
	u64 *rec = recs + (size_t)blockIdx.x * NT_COST_WORDS;
	float x = threadIdx.x * 1e-3f;

	for (int i = 0; i < iters; i++)
		x = x * 0.999f + 0.5f;
	if (x == 12345.0f)	// never: keeps the loop
		rec[2] = 0;
	__syncwarp();
	t1 = clk();
	if ((threadIdx.x & 31) == 0) {
		atomicMin(&rec[0], t0);
		atomicMin(&rec[1], ~t1);
		rec[2] = smid();
	}
}
