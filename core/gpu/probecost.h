/*
 * probecost.h - calibrate's probe-cost launches: kernels/probe.cu's
 * nt_probe_cost at each launch configuration of a map's probe part
 * (map.h), each block timing its own body with %clock64.
 *
 * calibrate runs them twice: in its own process (the native bodies) and
 * in a child under libnucatrace.so with every block traced, where each
 * block's trace record spans its body plus what the enter and exit
 * callbacks add (analysis/probecost.h sets the two against each other).
 */
#ifndef NT_PROBECOST_H
#define NT_PROBECOST_H

#include <stdint.h>

#include "gpu/cudrv.h"
#include "map/map.h"

/* One block's body: its first warp's first clock64 and its last warp's
 * last, on SM sm (-1: the block left no record). */
struct nt_probe_body {
	int64_t start, end;
	int32_t sm, pad;
};

/* Blocks per SM of each configuration: enough that every SM's median
 * cost rests on a dozen blocks or more. */
#define NT_PROBE_BLOCKS_PER_SM 24

/* The configurations calibrate measures on a GPU of n_sm SMs: 32, 256
 * and 1024 threads per block, with a body of no work and one of 2,000
 * dependent multiply-adds per thread (about 10 us on an H200): the
 * callbacks' cost falls with the body's length as blocks on one SM
 * overlap less in them (docs/calibration.md).  Fills cfg[] (room for
 * NT_MAP_MAX_PROBES), returns how many. */
int nt_probe_cost_configs(struct nt_map_probe *cfg, int n_sm);

/* On device ordinal, launch each of the n configurations twice, in
 * order, and keep the second launch's bodies: the first brings the SM
 * clock up and, traced, pays the module's patching.  bodies[i] becomes a
 * new array of cfg[i].blocks (to free).  0, or -1 with err set. */
int nt_probe_cost_run(struct nt_cuda *cu, int ordinal, const struct nt_map_probe *cfg, int n,
		      struct nt_probe_body **bodies, struct nt_err *err);

#endif
