/*
 * probecost.h - the probe-cost part of a map (map.h) from calibrate's
 * two runs of the probe-cost launches (gpu/probecost.h): a trace of the
 * traced run, and the bodies each block timed itself in both runs.
 *
 * Per block of the traced run: cost = (record's c_end - c_start) - (body
 * end - body start), cycles of the block's SM; the record spans the body
 * from the first warp's entry callback to the last warp's exit callback,
 * so the difference is what tracing added.  Per configuration and SM the
 * median cost; per configuration the median body, native and traced.
 */
#ifndef NT_ANALYSIS_PROBECOST_H
#define NT_ANALYSIS_PROBECOST_H

#include "gpu/probecost.h"
#include "map/map.h"
#include "trace/trace.h"
#include "util/err.h"

/* Of its blocks, the share whose record may disagree with the body (the
 * SM differs, or the record does not span the body) before the traced
 * run is taken as not the one the bodies came from. */
#define NT_PROBE_COST_MAX_BAD 0.01

/* Set m's probe part (nt_map_set_probe) from trace t, which must hold
 * the traced run of cfg[0..n) (two launches of nt_probe_cost each, the
 * second traced), traced[i] the bodies of that second launch, native[i]
 * those of the untraced run.  0, or -1 with err naming the trace and
 * what does not match. */
int nt_probe_cost_join(struct nt_trace *t, const struct nt_map_probe *cfg, int n,
		       struct nt_probe_body *const *traced, struct nt_probe_body *const *native,
		       struct nt_map *m, struct nt_err *err);

#endif
