/*
 * probe_cost.h - calibrate's probe-cost stage: what the interposer's
 * block tracing adds to a block on each SM, kept with the map (map.h's
 * probe part; docs/calibration.md).
 *
 * The stage runs the probe-cost launches (gpu/probecost.h) in this
 * process, untraced, then in a child of this program (`calibrate
 * --probe-cost-child`) with libnucatrace.so preloaded, blocks mode,
 * every launch traced; analysis/probecost.h joins the child's trace with
 * the bodies both runs timed.
 */
#ifndef NT_CALIB_PROBE_COST_H
#define NT_CALIB_PROBE_COST_H

#include "gpu/cudrv.h"
#include "map/map.h"

/* Give m (device ordinal d) its probe part.  keep: a folder to make and
 * leave the child's trace, body times and stderr in (NULL: a temporary
 * one, removed).  0, or -1 after a warning saying why (the map is kept
 * without the part: the L2 map does not depend on it). */
int calib_probe_cost(struct nt_cuda *cu, int d, struct nt_map *m, const char *keep);

/* The child's side: run the launches on device d and write the bodies
 * to path (a new file).  The exit status. */
int calib_probe_cost_child(struct nt_cuda *cu, int d, const char *path);

#endif
