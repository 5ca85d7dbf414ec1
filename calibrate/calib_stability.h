/*
 * calib_stability.h - `nucatrace calibrate --stability MINUTES`
 * (docs/stability.md): chain maps at idle, under a sustained full-GPU
 * load, and idle again, and what moved.
 *
 * cmd_calibrate.c parses the options and loads the driver, then hands
 * over to calibrate_stability() (calib_stability.c: the run on the GPU).
 * The schedule and the analysis are core/analysis/stability.c; the printers are
 * stability_print.c.
 */
#ifndef NT_CALIB_STABILITY_H
#define NT_CALIB_STABILITY_H

#include <stdint.h>
#include <stdio.h>

#include "gpu/calib.h"
#include "util/json.h"
#include "gpu/loadgen.h"
#include "analysis/stability.h"

struct stability_cmd {
	double minutes;
	int device;		/* -1: not given (the only GPU) */
	int json, force;
	const char *output;	/* the JSON report also to this file (never overwritten) */
	const char *command;	/* the command line, for the record */
};

/* The exit status: 0 when the series was measured and analysed, 1 when
 * it failed (the GPU busy with other work, a driver error), 2 no GPU. */
int calibrate_stability(struct nt_cuda *cu, int count, const struct nt_calib_opts *o,
			const struct stability_cmd *s);

/* The load over a phase or the whole run. */
struct stab_load_total {
	int launches;
	double seconds, gpu_seconds, bytes, fmas;
	int sms_min;			/* fewest SMs a launch ran on; -1: no launch */
	double clock_min_mhz, clock_max_mhz;
	double power_max_w, temp_max_c;	/* NVML during the load, NAN if unknown */
};

/* Everything the printers show. */
struct stab_report {
	const struct nt_gpu *gpu;
	int device;
	double minutes;
	const struct nt_stab_plan *plan;
	const struct nt_loadgen_info *load;
	struct stab_load_total load_total;
	const char *sensors_missing;	/* NULL: NVML readings; else why there are none */
	const struct nt_stab_input *in;
	int n;				/* maps measured so far */
	const struct nt_stab_result *res;	/* of in[0..n-1]; NULL when the analysis failed */
	const char *analysis_error;	/* then why */
	const char *command, *host;
	int64_t started;		/* unix seconds */
	double seconds;			/* wall time of the run so far */
};

/* Text, 100 columns: the header (before the first map), one row per map
 * as it comes, the phases, the SMs that moved and the verdict at the end. */
void stab_print_header(FILE *f, const struct stab_report *rp);
void stab_print_row(FILE *f, const struct stab_report *rp, int i);
void stab_print_summary(FILE *f, const struct stab_report *rp);

/* The whole report as one JSON object (docs/stability.md has the keys). */
void stab_json(struct nt_json *j, const struct stab_report *rp);

#endif
