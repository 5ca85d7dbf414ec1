// The kernels of `nucatrace localize --eval` (see localize_eval.h): each
// block calls the public probe, include/nucatrace/localize.cuh, and
// records %smid beside its answer as the truth.
#include "localize_eval.h"
#include "nucatrace/localize.cuh"
#include "sreg.cuh"

typedef unsigned long long u64;

// calibrate's queue (kernels/probe.cu): one block at a time.
__device__ unsigned take_ticket(unsigned *t)
{
	unsigned mine = atomicAdd(&t[0], 1u);

	for (;;) {
		unsigned ahead = mine - *(volatile unsigned *)&t[1];

		if (ahead == 0)
			break;
		__nanosleep(ahead == 1 ? 500u : min(ahead * 4000u, 1000000u));
	}
	__threadfence();
	return mine;
}

__device__ void pass_turn(unsigned *t)
{
	__threadfence();
	atomicAdd(&t[1], 1u);
}

extern "C" __global__ void nt_loc_eval(nt_loc_eval_args a)
{
	nt_loc_eval_rec *rec = (nt_loc_eval_rec *)a.out + blockIdx.x;
	unsigned *ticket = (unsigned *)a.ticket;

	if (threadIdx.x >= 32)
		return;
	if (threadIdx.x == 0) {
		rec->smid0 = smid();
		if (a.serial)
			rec->ticket = take_ticket(ticket);
	}
	__syncwarp();
	nt_localize((const nt_loc_table *)a.table, blockIdx.x, &rec->res);
	__syncwarp();
	if (threadIdx.x == 0) {
		if (a.serial)
			pass_turn(ticket);
		rec->smid1 = smid();
	}
}

extern "C" __global__ void nt_loc_spin(nt_loc_eval_args a)
{
	nt_loc_eval_rec *rec = (nt_loc_eval_rec *)a.out + blockIdx.x;
	u64 c0 = clock64(), g0 = gtime(), g = g0;

	while (g - g0 < (u64)a.spin_us * 1000u)
		g = gtime();
	if (threadIdx.x == 0) {
		rec->smid0 = smid();
		rec->cycles = clock64() - c0;
		rec->ns = g - g0;
	}
}
