/* The report as JSON: every figure of the text report and every launch,
 * with stable keys (docs/report.md). */
#include <math.h>
#include <stdio.h>

#include "format.h"
#include "json.h"

static void num(struct nt_json *j, const char *key, double v)
{
	nt_json_key(j, key);
	nt_json_double(j, v);
}

static void integer(struct nt_json *j, const char *key, int64_t v)
{
	nt_json_key(j, key);
	nt_json_int(j, v);
}

static void dims(struct nt_json *j, const char *key, const int32_t *d)
{
	nt_json_key(j, key);
	nt_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		nt_json_int(j, d[i]);
	nt_json_end_array(j);
}

static void fit(struct nt_json *j, const struct nt_report_kernel *k)
{
	const struct nt_kernel_fit *f = &k->fit;

	nt_json_key(j, "fit");
	if (!k->fitted) {
		nt_json_null(j);
		return;
	}
	nt_json_begin_object(j);
	nt_json_key(j, "fitted");
	nt_json_bool(j, f->fitted);
	nt_json_key(j, "reason");
	nt_json_str(j, f->fitted ? NULL : f->reason);
	if (f->fitted) {
		nt_json_key(j, "sensitive");
		nt_json_bool(j, f->sensitive);
		nt_json_key(j, "confidence");
		nt_json_str(j, f->confidence);
		integer(j, "sms", f->n_sm_used);
		num(j, "slope_ns_per_cycle", f->slope_ns);
		num(j, "slope_ci_low", f->slope_lo);
		num(j, "slope_ci_high", f->slope_hi);
		num(j, "slope_cycles_per_cycle", f->slope_cyc);
		num(j, "r2", f->r2);
		num(j, "effect_ns", f->effect_ns);
		num(j, "effect_pct", f->effect_pct);
		num(j, "median_block_ns", f->median_ns);
		num(j, "latency_min", f->lat_min);
		num(j, "latency_max", f->lat_max);
	}
	nt_json_end_object(j);
}

static void kernel(struct nt_json *j, const struct nt_report *r, int k)
{
	const struct nt_report_kernel *e = &r->kernels[k];

	nt_json_begin_object(j);
	integer(j, "index", k);
	nt_json_key(j, "name");
	nt_json_str(j, e->name);
	nt_json_key(j, "demangled");
	nt_json_str(j, e->demangled);
	integer(j, "trace", e->trace);
	integer(j, "device", e->device);
	dims(j, "grid", e->grid);
	dims(j, "block", e->block);
	integer(j, "launches", e->launches);
	integer(j, "blocks", e->blocks);
	num(j, "time_ns", e->time_ns);
	integer(j, "replayed", e->replayed);
	integer(j, "credible", e->credible);
	num(j, "credible_time_ns", e->time_ns_credible);
	num(j, "lost_ns", e->lost_ns);
	num(j, "recoverable_ns", e->recoverable_ns);
	num(j, "recoverable_by_map_ns", e->placement_ns);
	num(j, "tail_ns", e->tail_ns);
	num(j, "replay_error_max_pct", e->replay_err_max_pct);
	fit(j, e);
	nt_json_end_object(j);
}

static void launch(struct nt_json *j, const struct nt_report_launch *l)
{
	nt_json_begin_object(j);
	integer(j, "trace", l->trace);
	integer(j, "launch", l->launch);
	integer(j, "kernel", l->kernel);
	nt_json_key(j, "credible");
	nt_json_bool(j, l->ok && fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR);
	nt_json_key(j, "replayed");
	nt_json_bool(j, l->ok);
	if (!l->ok) {
		nt_json_key(j, "why");
		nt_json_str(j, l->why);
		nt_json_end_object(j);
		return;
	}
	integer(j, "slots", l->slots);
	nt_json_key(j, "slots_observed");
	nt_json_bool(j, l->slots_observed);
	num(j, "makespan_ns", l->r.measured_ns);
	num(j, "replay_ns", l->r.replay_ns);
	num(j, "replay_error_pct", l->r.error_pct);
	num(j, "hardware_ns", l->r.hardware_ns);
	num(j, "uniform_ns", l->r.uniform_ns);
	num(j, "aware_ns", l->r.aware_ns);
	num(j, "lost_ns", l->r.lost_ns);
	num(j, "recoverable_ns", l->r.recoverable_ns);
	num(j, "reorder_ns", l->r.reorder_ns);
	num(j, "placement_ns", l->r.placement_ns);
	num(j, "waves", l->r.waves);
	num(j, "last_wave_fill", l->r.last_wave_fill);
	num(j, "tail_ns", l->r.tail_ns);
	nt_json_end_object(j);
}

static int write_json(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	struct nt_json j;

	(void)o;
	nt_json_init(&j, f, 1);
	nt_json_begin_object(&j);
	nt_json_key(&j, "traces");
	nt_json_begin_array(&j);
	for (int i = 0; i < r->n_traces; i++) {
		const struct nt_report_trace *t = &r->traces[i];

		nt_json_begin_object(&j);
		nt_json_key(&j, "path");
		nt_json_str(&j, t->path);
		nt_json_key(&j, "backend");
		nt_json_str(&j, t->backend);
		integer(&j, "rank", t->rank);
		nt_json_key(&j, "uuid");
		nt_json_str(&j, t->uuid);
		nt_json_key(&j, "gpu");
		nt_json_str(&j, t->gpu);
		integer(&j, "sm_count", t->sm_count);
		nt_json_key(&j, "has_map");
		nt_json_bool(&j, t->has_map);
		integer(&j, "launches", t->launches);
		integer(&j, "traced", t->traced);
		nt_json_end_object(&j);
	}
	nt_json_end_array(&j);
	nt_json_key(&j, "program");
	nt_json_begin_object(&j);
	num(&j, "time_ns", r->time_ns);
	integer(&j, "replayed", r->replayed);
	integer(&j, "credible", r->credible);
	num(&j, "credible_time_ns", r->time_ns_credible);
	num(&j, "max_replay_error_pct", NT_REPORT_MAX_REPLAY_ERR);
	num(&j, "lost_ns", r->lost_ns);
	num(&j, "recoverable_ns", r->recoverable_ns);
	num(&j, "recoverable_by_map_ns", r->placement_ns);
	num(&j, "tail_ns", r->tail_ns);
	num(&j, "replay_error_max_pct", r->replay_err_max_pct);
	integer(&j, "blocks", r->blocks);
	nt_json_end_object(&j);
	nt_json_key(&j, "kernels");
	nt_json_begin_array(&j);
	for (int k = 0; k < r->n_kernels; k++)
		kernel(&j, r, k);
	nt_json_end_array(&j);
	nt_json_key(&j, "launches");
	nt_json_begin_array(&j);
	for (size_t i = 0; i < r->n_launches; i++)
		launch(&j, &r->launches[i]);
	nt_json_end_array(&j);
	nt_json_end_object(&j);
	return nt_json_finish(&j);
}

const struct nt_format nt_format_json = { "json", write_json };
