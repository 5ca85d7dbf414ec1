/* nucatrace calibrate --stability: the run on the GPU (calib_stability.h). */
#include "util/clock.h"
#include "calib_stability.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu/nvml.h"
#include "util/outfile.h"
#include "usage.h"

/* The load runs in slices of this much wall time; between slices the
 * sensors are read.  Progress during the load at most every PROGRESS_S. */
#define SLICE_S 1.0
#define PROGRESS_S 5.0

struct run {
	const struct stability_cmd *c;
	struct nt_cuda *cu;
	struct nt_calib_opts opts;
	struct nt_calib_dev *dev;
	struct nt_loadgen *lg;
	struct nt_nvml *nvml;
	struct nt_gpu gpu;
	struct nt_loadgen_info load;	/* kept for the report after the load is closed */
	struct nt_stab_plan plan;
	struct nt_map *maps[NT_STAB_MAX_MAPS];
	struct nt_stab_input in[NT_STAB_MAX_MAPS];
	struct nt_stab_result res;
	int have_res;
	struct nt_err res_err;
	struct stab_report rp;
	double t0, last_load_mhz, next_progress;
	char host[64], sensors_why[160];
};

static void sleep_until(double t)
{
	double left;

	while ((left = t - nt_now_s()) > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* --output must be a file that does not exist yet, in a folder we can
 * write: refused before any GPU time is spent. */
static void check_output(const char *path)
{
	char dir[4096], *slash;
	struct stat sb;

	if (!*path)
		die("--output: empty path");
	if (!stat(path, &sb))
		die("--output '%s' exists (nucatrace does not overwrite files)", path);
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		die("--output: path too long");
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	if (access(slash ? dir : ".", W_OK | X_OK))
		die("--output '%s': cannot create files in '%s': %s", path, slash ? dir : ".",
		    strerror(errno));
}

/* Re-analyse the maps so far; the printers read r->rp. */
static void analyse(struct run *r, int n)
{
	nt_stab_free(&r->res);	/* also after a failed analysis */
	r->have_res = !nt_stab_analyze(r->in, n, &r->res, &r->res_err);
	r->rp.n = n;
	r->rp.res = r->have_res ? &r->res : NULL;
	r->rp.analysis_error = r->have_res ? NULL : r->res_err.msg;
	r->rp.seconds = nt_now_s() - r->t0;
}

static void add_load(struct stab_load_total *t, const struct nt_loadgen_stats *st,
		     const struct nt_nvml_reading *s)
{
	t->launches += st->launches;
	t->seconds += st->seconds;
	t->gpu_seconds += st->gpu_seconds;
	t->bytes += st->bytes;
	t->fmas += st->fmas;
	if (st->launches && (t->sms_min < 0 || st->sms_min < t->sms_min))
		t->sms_min = st->sms_min;
	if (!isnan(st->clock_min_mhz) && !(st->clock_min_mhz >= t->clock_min_mhz))
		t->clock_min_mhz = st->clock_min_mhz;
	if (!isnan(st->clock_max_mhz) && !(st->clock_max_mhz <= t->clock_max_mhz))
		t->clock_max_mhz = st->clock_max_mhz;
	if (!isnan(s->power_w) && !(s->power_w <= t->power_max_w))
		t->power_max_w = s->power_w;
	if (!isnan(s->temp_c) && !(s->temp_c <= t->temp_max_c))
		t->temp_max_c = s->temp_c;
}

/* Keep the GPU loaded until `until` (monotonic seconds). */
static int run_load(struct run *r, double until)
{
	double left;

	while ((left = until - nt_now_s()) > 1e-3) {
		struct nt_loadgen_stats st;
		struct nt_nvml_reading s;
		struct nt_err err;

		if (nt_loadgen_run(r->lg, left < SLICE_S ? left : SLICE_S, &st, &err))
			return error("device %d: the load: %s", r->rp.device, err.msg);
		nt_nvml_read(r->nvml, &s);
		add_load(&r->rp.load_total, &st, &s);
		if (!isnan(st.clock_mhz))
			r->last_load_mhz = st.clock_mhz;
		if (nt_now_s() >= r->next_progress) {
			nt_progress("stability: load, %.0f of %.0f s", nt_now_s() - r->t0,
				    r->plan.seconds);
			r->next_progress = nt_now_s() + PROGRESS_S;
		}
	}
	return 0;
}

/* Map number i of the plan, at once. */
static int measure(struct run *r, int i)
{
	const struct nt_stab_slot *slot = &r->plan.slot[i];
	struct nt_nvml_reading s;
	struct nt_calib_stats st;
	struct nt_map *m;
	struct nt_err err;
	double t = nt_now_s() - r->t0;

	nt_progress("stability: map %d of %d (%s), %.0f of %.0f s", i + 1, r->plan.n,
		    nt_stab_phase_name(slot->phase), t, r->plan.seconds);
	nt_nvml_read(r->nvml, &s);
	/* Under load the GPU is hot and its clock where the load left it:
	 * no warm-up spin, which would let it settle.  Idle maps get the
	 * spin a calibration starts with. */
	if (nt_calib_chain(r->dev, slot->phase != NT_STAB_LOAD, &m, &st, &err))
		return error("device %d: map %d: %s", r->rp.device, i + 1, err.msg);
	r->maps[i] = m;
	r->in[i] = (struct nt_stab_input){
		.m = m, .phase = slot->phase, .t = t,
		.load_mhz = slot->phase == NT_STAB_LOAD ? r->last_load_mhz : NAN,
		.clock_lo_mhz = st.clock_min_mhz, .clock_hi_mhz = st.clock_max_mhz,
		.temp_c = s.temp_c, .power_w = s.power_w,
	};
	r->last_load_mhz = NAN;
	return 0;
}

/* The first map says whether the GPU is idle enough to be measured. */
static int first_map_idle(struct run *r)
{
	double med = nt_median(r->maps[0]->noise, r->maps[0]->n_sm);

	if (!(med > NT_STAB_BUSY_NOISE))
		return 0;
	if (r->c->force) {
		warning("device %d: median run-to-run difference %.2f cycles in the first map (an "
			"idle GPU repeats within %.1f): is other work running on it? Going on "
			"(--force).", r->rp.device, med, NT_STAB_BUSY_NOISE);
		return 0;
	}
	return error("device %d: median run-to-run difference %.2f cycles in the first map (an "
		     "idle GPU repeats within %.1f): is other work running on it? Stopped before "
		     "the load; --force goes on anyway.", r->rp.device, med, NT_STAB_BUSY_NOISE);
}

static int run_plan(struct run *r)
{
	for (int i = 0; i < r->plan.n; i++) {
		const struct nt_stab_slot *slot = &r->plan.slot[i];
		const struct nt_map *m;
		double due = r->t0 + slot->at;

		if (slot->phase == NT_STAB_LOAD) {
			if (run_load(r, due))
				return -1;
		} else {
			sleep_until(due);
		}
		if (measure(r, i))
			return -1;
		analyse(r, i + 1);
		if (!r->c->json) {
			nt_progress_done();
			stab_print_row(stdout, &r->rp, i);
			fflush(stdout);
		}
		m = r->maps[i];
		if (i == 0 && first_map_idle(r))
			return -1;
		if (i && nt_median(m->noise, m->n_sm) > NT_STAB_BUSY_NOISE)
			warning("device %d: map %d looks busy (median noise %.2f cycles): left out",
				r->rp.device, i + 1, nt_median(m->noise, m->n_sm));
	}
	nt_progress_done();
	return 0;
}

static int write_json(FILE *f, const void *arg)
{
	const struct run *r = arg;
	struct nt_json j;

	nt_json_init(&j, f, 1);
	stab_json(&j, &r->rp);
	return nt_json_finish(&j);
}

static int write_output(const struct run *r)
{
	struct nt_err err;

	return nt_outfile_write(r->c->output, write_json, r, &err) ? error("%s", err.msg) : 0;
}

static int open_all(struct run *r)
{
	struct nt_err err;

	if (nt_gpu_query(r->cu, r->rp.device, &r->gpu, &err))
		return error("device %d: %s", r->rp.device, err.msg);
	nt_progress("stability: loading the probes and the load kernel");
	if (nt_calib_open(r->cu, r->rp.device, &r->opts, &r->dev, &err))
		return error("device %d: %s", r->rp.device, err.msg);
	if (nt_loadgen_open(r->cu, r->rp.device, 0, 0, &r->lg, &err))
		return error("device %d: %s", r->rp.device, err.msg);
	r->nvml = nt_nvml_open(r->gpu.uuid, r->sensors_why, sizeof(r->sensors_why));
	r->rp.sensors_missing = r->nvml ? NULL : r->sensors_why;
	r->load = *nt_loadgen_info(r->lg);
	r->rp.load = &r->load;
	return 0;
}

int calibrate_stability(struct nt_cuda *cu, int count, const struct nt_calib_opts *o,
			const struct stability_cmd *c)
{
	struct run *r = calloc(1, sizeof(*r));
	struct nt_err err;
	int ret = 1, failed;

	if (!r)
		die("out of memory");
	if (nt_stab_plan(c->minutes * 60, &r->plan, &err))
		die("--stability: %s", err.msg);
	if (c->device < 0 && count > 1)
		die("--stability measures one GPU: choose it with --device N (%d GPUs here)", count);
	if (c->output)
		check_output(c->output);
	r->c = c;
	r->cu = cu;
	r->opts = *o;
	r->opts.parts = NT_MAP_NOISE;
	r->opts.progress = NULL;
	r->last_load_mhz = NAN;
	gethostname(r->host, sizeof(r->host) - 1);
	r->rp = (struct stab_report){
		.gpu = &r->gpu, .device = c->device < 0 ? 0 : c->device, .minutes = c->minutes,
		.plan = &r->plan, .in = r->in, .command = c->command, .host = r->host,
		.started = time(NULL),
	};
	r->rp.load_total = (struct stab_load_total){ .sms_min = -1, .clock_min_mhz = NAN,
						     .clock_max_mhz = NAN, .power_max_w = NAN,
						     .temp_max_c = NAN };
	if (open_all(r))
		goto out;
	r->t0 = nt_now_s();
	if (!c->json)
		stab_print_header(stdout, &r->rp);
	failed = run_plan(r) != 0;
	/* The load and the probes are done: give the GPU back before printing. */
	nt_loadgen_close(r->lg);
	r->lg = NULL;
	nt_calib_close(r->dev);
	r->dev = NULL;
	/* What was measured is reported also when the run stopped early. */
	if (r->rp.n) {
		analyse(r, r->rp.n);
		if (!c->json)
			stab_print_summary(stdout, &r->rp);
		else if (write_json(stdout, r))
			failed = error("cannot write the report to stdout") != 0;
		if (c->output && write_output(r))
			failed = 1;
	}
	if (!failed && !r->have_res)
		failed = error("device %d: %s", r->rp.device, r->res_err.msg) != 0;
	ret = failed;
out:
	nt_progress_done();
	nt_loadgen_close(r->lg);
	nt_calib_close(r->dev);
	nt_nvml_close(r->nvml);
	nt_stab_free(&r->res);
	for (int i = 0; i < NT_STAB_MAX_MAPS; i++)
		nt_map_free(r->maps[i]);
	free(r);
	return ret;
}
