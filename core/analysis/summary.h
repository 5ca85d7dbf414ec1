/*
 * summary.h - what a map says, in a few lines: the numbers `calibrate`
 * prints after a run and `map show` prints for a stored map.
 *
 * nt_map_report_build() computes everything once (chain statistics,
 * noise, TPC pairs, mirror halves, the model fits of the line matrix, the
 * two populations of the first-touch matrices); the printers only format
 * it.  It cannot fail: a model fit that does not work (a hole in the
 * matrix, say) is recorded as unavailable with its reason, printed as
 * "fit n/a: <reason>" (text) or null values and "fit_error" (JSON), and
 * the rest of the report stands.
 * Text is for people (fits in 100 columns); the JSON keys are stable and
 * documented in docs/calibration.md.
 */
#ifndef NT_SUMMARY_H
#define NT_SUMMARY_H

#include <stdio.h>

#include "gpu/calib.h"
#include "util/json.h"
#include "map/map.h"
#include "analysis/model.h"
#include "analysis/structure.h"

/* Two populations of a set of latencies (exact 1-D two-means split). */
struct nt_split2 {
	int n;			/* values */
	double low, high;	/* population means */
	double low_frac;	/* share of values in the low population */
	double threshold;	/* values <= threshold are low */
	double separation;	/* (high - low) / pooled standard deviation */
};

struct nt_map_report {
	struct nt_map_summary chain;
	struct nt_tpc tpc;
	struct nt_halves halves;
	int has_lines, has_ft;
	int line_rows;			/* SMs with values in the line matrix */
	int fit_ok;			/* 0: fit is empty and fit_err says why */
	struct nt_fit fit;		/* of the line matrix, k <= 3 */
	struct nt_err fit_err;
	double line_min, line_max;
	int part_size[2];		/* SMs with u1 > 0 and u1 < 0 */
	struct nt_split2 lines2, first2, repeat2;
	int ft_fit_ok;			/* the first-touch rank-1 fit; else ft_fit_err says why */
	struct nt_err ft_fit_err;
	int ft_part_size[2];		/* SMs on either side of the first-touch rank-1 term */
	double ft_step_low, ft_step_high;	/* mean first - repeat in each first-touch population */
	double ft_lines_agree;		/* share of cells where "first touch high" == "line matrix high" */
	double repeat_lines_agree;	/* the same for the accesses right after */
};

void nt_map_report_build(const struct nt_map *m, struct nt_map_report *r);
void nt_map_report_free(struct nt_map_report *r);

/* Split n values (NANs ignored) into two populations. */
void nt_split2(const double *v, size_t n, struct nt_split2 *s);

/* Print the report.  st (timings of a fresh run) may be NULL; store_id < 0
 * and store_path NULL when the map was not stored. */
void nt_summary_text(FILE *f, const struct nt_map *m, const struct nt_map_report *r,
		     const struct nt_calib_stats *st, int64_t store_id, const char *store_path);
void nt_summary_json(struct nt_json *j, const struct nt_map *m, const struct nt_map_report *r,
		     const struct nt_calib_stats *st, int64_t store_id);

#endif
