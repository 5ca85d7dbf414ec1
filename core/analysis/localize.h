/*
 * localize.h - self-localisation: which SM (TPC, group) is this kernel
 * running on, from a short L2 latency probe and a stored map, without
 * reading %smid.  docs/localize.md has the method and the numbers.
 *
 * A kernel calls nt_localize() (include/nucatrace/localize.cuh) with a
 * table in device memory.  This module is the host's part:
 *
 *   nt_loc_build()     the table from a map with a line matrix: which
 *                      lines the probe times, every SM's row over them,
 *                      the groups; plain C, no GPU;
 *   nt_loc_classify()  the probe's classifier on the CPU (the same
 *                      arithmetic as the device's, in float), so that it
 *                      is tested here and the device's answers can be
 *                      checked against it;
 *   nt_loc_eval_rows() classify every SM's row of another map of the
 *                      GPU (a CPU evaluation: the rows stand in for the
 *                      probe);
 *   nt_loc_gpu_*()     the buffers on a device (footprint, lines, the
 *                      table) and the evaluation kernels of
 *                      `nucatrace localize --eval` (localize_gpu.c).
 *
 * Line choice (nt_loc_build).  Every SM's row of the line matrix is its
 * template.  Lines are added one at a time, each the one that most
 * lowers sum over pairs of SMs in different TPCs of exp(-D^2 / 8), where
 * D^2 is the pair's separation under the table's model (localize_table.h:
 * the d of one SM's template measured as if it were the other's) over
 * the lines chosen so far; exp(-D^2 / 8) is the Bhattacharyya bound on
 * confusing the two, so the sum bounds the pairwise confusions.  Lines
 * with a NAN in any row the table uses are never chosen.  Ties go to the
 * lower line index: same map, same table.
 *
 * Defaults (nt_loc_defaults), from the 12 committed maps of six H200s
 * (docs/localize.md): 8 lines; sigma 0.15 cycle (cells of two maps of
 * one GPU differ by 0.075 - 0.112 cycle, standard deviation); tau 0.3
 * cycle (the maps' global offsets are below 0.03, the rest is room for
 * a probe that is not the calibration: with it an offset of up to 2
 * cycles on every line still names all 792 TPCs of the six GPUs); one
 * timed walk of the map's line_loads per line after 4 warm loads;
 * groups as `map fit` makes them (rows correlating at r >= 0.9).
 */
#ifndef NT_LOCALIZE_H
#define NT_LOCALIZE_H

#include "gpu/cudrv.h"
#include "util/err.h"
#include "map/map.h"

#include "include/nucatrace/localize_table.h"

struct nt_loc_opts {
	int n_lines;		/* 1 .. NT_LOC_MAX_LINES */
	int reps;		/* timed walks per line, 1 .. 64 */
	int warm;		/* untimed loads per line, 0 .. 1024 */
	double sigma, tau;	/* cycles, > 0 and >= 0 */
	double group_r;		/* groups: rows correlate at r >= group_r */
};

void nt_loc_defaults(struct nt_loc_opts *o);

/* How well the chosen lines separate the TPCs, on the map they came from. */
struct nt_loc_plan {
	double min_sep2;	/* smallest D^2 between SMs of different TPCs */
	int worst_a, worst_b;	/* the two SMs of that pair */
	double bound;		/* sum over those pairs of exp(-D^2 / 8) */
	int candidates;		/* lines without a NAN in a used row */
	int rows;		/* SMs with a row (group >= 0) */
};

/*
 * Fill t from map m (it needs a line matrix, at most NT_LOC_MAX_SM SMs
 * and at least o->n_lines lines without NAN in its rows).  t->base is
 * left 0: the host sets it to the footprint it allocated.  plan may be
 * NULL.  0, or -1 with err saying what is missing or wrong.
 */
int nt_loc_build(const struct nt_map *m, const struct nt_loc_opts *o, struct nt_loc_table *t,
		 struct nt_loc_plan *plan, struct nt_err *err);

/* 0 when t is a table nt_localize() accepts, else -1 with err set. */
int nt_loc_check(const struct nt_loc_table *t, struct nt_err *err);

/* Classify the probe's values x[0 .. t->n_line-1] (cycles per load) as
 * nt_localize() does; r->x gets a copy of x, the cycle counts are 0.  An
 * unusable table gives sm = tpc = group = -1. */
void nt_loc_classify(const struct nt_loc_table *t, const float *x, struct nt_loc_result *r);

/*
 * Accuracy counts.  A classification is right at SM level when sm is the
 * true smid, at TPC level when tpc is smid / 2, at group level when
 * group is t->group[smid].  conf_* sum p_tpc over the right and the
 * wrong answers; fit_max is the largest fit seen.
 */
struct nt_loc_score {
	int n, sm, tpc, group;
	double conf_right, conf_wrong;
	double fit_max;
};

void nt_loc_score_add(struct nt_loc_score *s, const struct nt_loc_table *t, int truth,
		      const struct nt_loc_result *r);

/*
 * The CPU evaluation: every SM of `rows` that has a row in its line
 * matrix is classified from that row's values on t's lines (plus
 * `offset` cycles), as if a probe had measured them, and scored against
 * its smid.  rows must be of the same GPU layout: the same SM count and
 * the same line offsets as the map t was built from (m_table).  per_sm
 * (may be NULL) gets each SM's result, n_sm entries.  0, or -1 with err.
 */
int nt_loc_eval_rows(const struct nt_loc_table *t, const struct nt_map *m_table,
		     const struct nt_map *rows, double offset, struct nt_loc_score *s,
		     struct nt_loc_result *per_sm, struct nt_err *err);

/*
 * The device side of `nucatrace localize --eval`: the eval kernels of
 * kernels/localize_eval.cu on one GPU, with the table's buffers.
 *
 * nt_loc_gpu_open() makes the primary context current, loads the module,
 * checks that one block fills an SM, warms the SM clock up, allocates
 * and writes the footprint (each of the table's lines holds its own
 * address, written by the copy engine as calibrate writes them), sets
 * t->base and copies the table to the device.  The allocations follow
 * calibrate's order and sizes (see localize_gpu.c): the lines' L2
 * partition depends on the physical pages under them.
 *
 * nt_loc_gpu_run() launches one block per SM; each block calls
 * nt_localize() and records %smid before and after as the truth.
 * serial = 1: the blocks take turns (as calibrate's probes), so each
 * probe has the memory system to itself; 0: all at once, as the blocks
 * of a real kernel.  recs gets n_sm records (struct nt_loc_eval_rec,
 * kernels/localize_eval.h); a record whose block did not run has smid0
 * = NT_LOC_REC_NONE.
 */
struct nt_loc_gpu;
struct nt_loc_eval_rec;

int nt_loc_gpu_open(struct nt_cuda *cu, int ordinal, const struct nt_map *m,
		    struct nt_loc_table *t, struct nt_loc_gpu **out, struct nt_err *err);
int nt_loc_gpu_run(struct nt_loc_gpu *g, int serial, struct nt_loc_eval_rec *recs,
		   struct nt_err *err);
double nt_loc_gpu_clock_mhz(const struct nt_loc_gpu *g);	/* after the warm-up */
/* Cycles per load the probe reads above the map, measured at open and
 * added to the table's templates (localize_gpu.c, probe_bias). */
double nt_loc_gpu_bias(const struct nt_loc_gpu *g);
void nt_loc_gpu_close(struct nt_loc_gpu *g);

#endif
