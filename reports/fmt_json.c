/* The report as JSON: every figure of the text report and every launch,
 * with stable keys (docs/report.md). */
#include <math.h>
#include <stdio.h>

#include "format.h"
#include "util/json.h"

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
	nt_json_kv_bool(j, "fitted", f->fitted);
	nt_json_kv_str(j, "reason", f->fitted ? NULL : f->reason);
	if (f->fitted) {
		nt_json_kv_bool(j, "sensitive", k->sensitive);
		nt_json_kv_double(j, "p_value", f->p_value);
		nt_json_kv_int(j, "shuffles", f->shuffles);
		nt_json_kv_double(j, "q_value", k->q_value);
		nt_json_kv_int(j, "sms", f->n_sm_used);
		nt_json_kv_double(j, "slope_ns_per_cycle", f->slope_ns);
		nt_json_kv_double(j, "slope_ci_low", f->slope_lo);
		nt_json_kv_double(j, "slope_ci_high", f->slope_hi);
		nt_json_kv_double(j, "slope_cycles_per_cycle", f->slope_cyc);
		nt_json_kv_double(j, "r2", f->r2);
		nt_json_kv_double(j, "effect_ns", f->effect_ns);
		nt_json_kv_double(j, "effect_pct", f->effect_pct);
		nt_json_kv_double(j, "median_block_ns", f->median_ns);
		nt_json_kv_double(j, "latency_min", f->lat_min);
		nt_json_kv_double(j, "latency_max", f->lat_max);
	}
	nt_json_end_object(j);
}

static void graph(struct nt_json *j, const struct nt_report_graph *g)
{
	nt_json_begin_object(j);
	nt_json_kv_int(j, "trace", g->trace);
	nt_json_kv_int(j, "graph", g->graph);
	nt_json_kv_int(j, "launches", g->launches);
	nt_json_kv_int(j, "node_launches", g->nodes);
	nt_json_kv_int(j, "credible", g->credible);
	nt_json_kv_double(j, "launch_span_ns", g->span_ns);
	nt_json_kv_double(j, "time_ns", g->time_ns);
	nt_json_kv_double(j, "credible_time_ns", g->time_ns_credible);
	nt_json_kv_double(j, "lost_ns", g->lost_ns);
	nt_json_kv_double(j, "recoverable_ns", g->recoverable_ns);
	nt_json_end_object(j);
}

static void kernel(struct nt_json *j, const struct nt_report *r, int k)
{
	const struct nt_report_kernel *e = &r->kernels[k];

	nt_json_begin_object(j);
	nt_json_kv_int(j, "index", k);
	nt_json_kv_str(j, "name", e->name);
	nt_json_kv_str(j, "demangled", e->demangled);
	nt_json_kv_bool(j, "collective", e->collective);
	nt_json_kv_int(j, "trace", e->trace);
	nt_json_kv_int(j, "device", e->device);
	dims(j, "grid", e->grid);
	dims(j, "block", e->block);
	nt_json_kv_int(j, "launches", e->launches);
	nt_json_kv_int(j, "blocks", e->blocks);
	nt_json_kv_str(j, "block_times", nt_report_block_times(e));
	nt_json_kv_int(j, "entry_only_launches", e->entry_launches);
	nt_json_kv_int(j, "one_wave_entry_only_launches", e->ends_unknown);
	nt_json_kv_int(j, "fit_blocks_inferred", e->fit_inferred);
	nt_json_kv_int(j, "fit_blocks_censored", e->fit_censored);
	nt_json_kv_double(j, "time_ns", e->time_ns);
	nt_json_kv_int(j, "replayed", e->replayed);
	nt_json_kv_int(j, "credible", e->credible);
	nt_json_kv_double(j, "credible_time_ns", e->time_ns_credible);
	nt_json_kv_double(j, "lost_ns", e->lost_ns);
	nt_json_kv_double(j, "recoverable_ns", e->recoverable_ns);
	nt_json_kv_double(j, "recoverable_by_map_ns", e->placement_ns);
	nt_json_kv_double(j, "tail_ns", e->tail_ns);
	nt_json_kv_double(j, "persistent_ns", e->persist_ns);
	nt_json_kv_double(j, "persistent_by_map_ns", e->rebalance_ns);
	nt_json_kv_double(j, "persistent_by_shape_ns", e->quantisation_ns);
	nt_json_kv_double(j, "replay_error_max_pct", e->replay_err_max_pct);
	nt_json_kv_double(j, "traced_credible_ns", e->traced_credible_ns);
	nt_json_kv_double(j, "native_ns", e->native_ns > 0 ? e->native_ns : NAN);
	nt_json_kv_int(j, "native_launches", e->native_n);
	nt_json_kv_double(j, "traced_min_ns", e->traced_min_ns > 0 ? e->traced_min_ns : NAN);
	nt_json_kv_double(j, "probe_share", e->probe_share);
	nt_json_kv_bool(j, "probe_corrected", e->probe_corrected);
	nt_json_kv_str(j, "verdict", nt_report_verdict_name(e->verdict));
	{
		char why[512];

		nt_report_verdict_text(e, why, sizeof(why));
		nt_json_kv_str(j, "verdict_text", why);
	}
	nt_json_key(j, "follows");
	if (e->follows >= 0) {
		nt_json_begin_object(j);
		nt_json_kv_str(j, "what", nt_report_cov_name(e->follows));
		nt_json_kv_double(j, "r", e->follows_r);
		nt_json_kv_double(j, "r_with_map", e->follows_map_r);
		nt_json_end_object(j);
	} else {
		nt_json_null(j);
	}
	fit(j, e);
	nt_json_key(j, "persistent_shares");
	if (e->shares)
		nt_json_double_array(j, e->shares, e->n_shares);
	else
		nt_json_null(j);
	nt_json_end_object(j);
}

static void launch(struct nt_json *j, const struct nt_report_launch *l)
{
	nt_json_begin_object(j);
	nt_json_kv_int(j, "trace", l->trace);
	nt_json_kv_int(j, "launch", l->launch);
	nt_json_kv_int(j, "kernel", l->kernel);
	nt_json_kv_bool(j, "credible", l->ok && fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR);
	nt_json_kv_bool(j, "replayed", l->ok);
	nt_json_kv_str(j, "why", l->why[0] ? l->why : NULL);
	nt_json_kv_bool(j, "entry_only", l->entry_only);
	if (l->entry_only) {	/* how its blocks' ends were obtained (infer.h) */
		nt_json_kv_int(j, "blocks_inferred", (int64_t)l->inferred.inferred);
		nt_json_kv_int(j, "blocks_censored", (int64_t)l->inferred.censored);
	}
	if (!l->ok) {
		nt_json_end_object(j);
		return;
	}
	nt_json_kv_double(j, "native_scale", l->scale);
	nt_json_kv_int(j, "slots", l->slots);
	nt_json_kv_bool(j, "slots_observed", l->slots_observed);
	nt_json_kv_double(j, "makespan_ns", l->r.measured_ns);
	nt_json_kv_double(j, "replay_ns", l->r.replay_ns);
	nt_json_kv_double(j, "replay_error_pct", l->r.error_pct);
	nt_json_kv_double(j, "start_error_pct", l->r.start_err_pct);
	nt_json_kv_double(j, "start_error_p90_pct", l->r.start_err_p90_pct);
	nt_json_kv_double(j, "turnaround_ns", l->dispatch.turnaround_ns);
	nt_json_kv_double(j, "refill_gap_ns", l->dispatch.gap_ns);
	nt_json_kv_double(j, "hardware_ns", l->r.hardware_ns);
	nt_json_kv_double(j, "uniform_ns", l->r.uniform_ns);
	nt_json_kv_double(j, "aware_ns", l->r.aware_ns);
	nt_json_kv_double(j, "lost_ns", l->r.lost_ns);
	nt_json_kv_double(j, "recoverable_ns", l->r.recoverable_ns);
	nt_json_kv_double(j, "reorder_ns", l->r.reorder_ns);
	nt_json_kv_double(j, "placement_ns", l->r.placement_ns);
	nt_json_kv_double(j, "waves", l->r.waves);
	nt_json_kv_double(j, "last_wave_fill", l->r.last_wave_fill);
	nt_json_kv_double(j, "tail_ns", l->r.tail_ns);
	nt_json_kv_double(j, "even_ns", l->r.even_ns);
	nt_json_kv_double(j, "split_ns", l->r.split_ns);
	nt_json_kv_double(j, "persistent_ns", l->r.persist_ns);
	nt_json_kv_double(j, "persistent_by_map_ns", l->r.rebalance_ns);
	nt_json_kv_double(j, "persistent_by_shape_ns", l->r.quantisation_ns);
	nt_json_end_object(j);
}

/* The job view (core/report/job.h, docs/report.md). */
static const char *const align_names[] = {
	[NT_JOB_UNALIGNED] = NULL, [NT_JOB_BY_ORDER] = "order", [NT_JOB_BY_LAUNCH] = "launch",
};

static void job_rank(struct nt_json *j, const struct nt_report *r, const struct nt_job_rank *k)
{
	nt_json_begin_object(j);
	nt_json_kv_int(j, "rank", k->rank);
	nt_json_kv_int(j, "trace", k->trace);
	nt_json_kv_str(j, "uuid", k->device >= 0 ? r->devices[k->device].uuid : NULL);
	nt_json_kv_str(j, "gpu", k->device >= 0 ? r->devices[k->device].name : NULL);
	nt_json_kv_double(j, "map_mean", k->map_mean);
	nt_json_kv_double(j, "map_min", k->map_min);
	nt_json_kv_double(j, "map_max", k->map_max);
	nt_json_kv_double(j, "map_spread_pct", k->map_spread_pct);
	nt_json_kv_int(j, "collectives", k->collectives);
	nt_json_kv_int(j, "steps_last", k->last);
	nt_json_kv_double(j, "lead_ns", k->lead_ns);
	nt_json_kv_double(j, "steps_compute_ns", k->compute_ns);
	nt_json_kv_double(j, "steps_lost_ns", k->lost_ns);
	nt_json_end_object(j);
}

static void job_step(struct nt_json *j, const struct nt_report *r, const struct nt_report_job *jb, int i)
{
	const struct nt_job_step *s = &jb->steps[i];

	nt_json_begin_object(j);
	nt_json_kv_int(j, "step", i + 1);
	nt_json_kv_int(j, "launch", s->launch);
	nt_json_kv_int(j, "collective", s->kernel);
	nt_json_kv_int(j, "step_launches", s->step_launches);
	nt_json_kv_bool(j, "complete", s->complete);
	nt_json_kv_bool(j, "judged", s->judged);
	nt_json_kv_int(j, "last_rank", s->judged ? jb->ranks[s->last].rank : -1);
	nt_json_kv_int(j, "next_rank", s->judged ? jb->ranks[s->next].rank : -1);
	nt_json_kv_double(j, "lead_ns", s->judged ? s->lead_ns : NAN);
	nt_json_kv_double(j, "lost_ns", s->judged ? s->lost_ns : NAN);
	nt_json_kv_double(j, "explained", s->judged ? s->explained : NAN);
	nt_json_kv_double(j, "job_lost_ns", s->judged ? s->job_lost_ns : NAN);
	nt_json_key(j, "ranks");
	nt_json_begin_array(j);
	for (int q = 0; q < jb->n_ranks; q++) {
		const struct nt_job_cell *c = &s->cells[q];

		nt_json_begin_object(j);
		nt_json_kv_int(j, "rank", jb->ranks[q].rank);
		nt_json_kv_int(j, "launch", r->launches[c->collective].launch);
		nt_json_kv_int(j, "launches", c->launches);
		nt_json_kv_int(j, "measured", c->measured);
		nt_json_kv_double(j, "compute_ns", c->compute_ns);
		nt_json_kv_double(j, "lost_ns", c->lost_ns);
		nt_json_kv_double(j, "span_ns", c->span_ns);
		nt_json_kv_double(j, "wait_ns", c->wait_ns);
		nt_json_end_object(j);
	}
	nt_json_end_array(j);
	nt_json_end_object(j);
}

static void job(struct nt_json *j, const struct nt_report *r, const struct nt_report_job *jb)
{
	nt_json_begin_object(j);
	nt_json_key(j, "ranks");
	nt_json_begin_array(j);
	for (int i = 0; i < jb->n_ranks; i++)
		job_rank(j, r, &jb->ranks[i]);
	nt_json_end_array(j);
	nt_json_kv_str(j, "aligned_by", align_names[jb->align]);
	nt_json_kv_str(j, "why", jb->n_steps ? NULL : jb->why);
	nt_json_kv_str(j, "note", jb->note[0] ? jb->note : NULL);
	nt_json_kv_int(j, "steps_judged", jb->judged);
	nt_json_kv_int(j, "steps_complete", jb->complete);
	nt_json_kv_double(j, "critical_ns", jb->critical_ns);
	nt_json_kv_double(j, "lead_ns", jb->lead_ns);
	nt_json_kv_double(j, "explained_ns", jb->explained_ns);
	nt_json_kv_double(j, "job_lost_ns", jb->job_lost_ns);
	nt_json_key(j, "steps");
	nt_json_begin_array(j);
	for (int i = 0; i < jb->n_steps; i++)
		job_step(j, r, jb, i);
	nt_json_end_array(j);
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
		nt_json_kv_str(&j, "path", t->path);
		nt_json_kv_str(&j, "backend", t->backend);
		nt_json_kv_int(&j, "rank", t->rank);
		nt_json_kv_str(&j, "uuid", t->uuid);
		nt_json_kv_str(&j, "gpu", t->gpu);
		nt_json_kv_int(&j, "sm_count", t->sm_count);
		nt_json_kv_bool(&j, "has_map", t->has_map);
		nt_json_kv_int(&j, "launches", t->launches);
		nt_json_kv_int(&j, "traced", t->traced);
		nt_json_kv_bool(&j, "complete", t->complete);
		nt_json_kv_int(&j, "probe_shape_kernels", t->probe_shape_kernels);
		nt_json_kv_bool(&j, "probe_shape_calibrated", t->probe_shape_calibrated);
		nt_json_kv_double(&j, "probe_shape_r_calibration", t->probe_shape_r_calib);
		nt_json_kv_str(&j, "no_map", t->traced && !t->has_map ? t->no_map : NULL);
		nt_json_kv_int(&j, "skipped", t->skipped);
		nt_json_kv_str(&j, "skipped_why", t->skipped ? t->skipped_why : NULL);
		nt_json_kv_int(&j, "dropped", t->dropped);
		nt_json_key(&j, "drops");
		nt_json_begin_array(&j);
		for (int d = 0; d < t->n_drops; d++) {
			nt_json_begin_object(&j);
			nt_json_kv_str(&j, "reason", t->drops[d].reason);
			nt_json_kv_int(&j, "launches", t->drops[d].count);
			nt_json_end_object(&j);
		}
		nt_json_end_array(&j);
		nt_json_kv_int(&j, "dropped_other", t->dropped_other);
		nt_json_kv_str(&j, "host", t->host);
		nt_json_kv_int(&j, "pid", t->pid);
		nt_json_kv_str(&j, "cmdline", t->cmdline);
		nt_json_kv_double(&j, "credible_time_ns", t->time_ns_credible);
		nt_json_kv_double(&j, "lost_ns", t->lost_ns);
		nt_json_kv_double(&j, "recoverable_ns", t->recoverable_ns);
		nt_json_end_object(&j);
	}
	nt_json_end_array(&j);
	nt_json_key(&j, "program");
	nt_json_begin_object(&j);
	nt_json_kv_double(&j, "time_ns", r->time_ns);
	nt_json_kv_int(&j, "replayed", r->replayed);
	nt_json_kv_int(&j, "credible", r->credible);
	nt_json_kv_double(&j, "credible_time_ns", r->time_ns_credible);
	nt_json_kv_double(&j, "max_replay_error_pct", NT_REPORT_MAX_REPLAY_ERR);
	nt_json_kv_double(&j, "lost_ns", r->lost_ns);
	nt_json_kv_double(&j, "recoverable_ns", r->recoverable_ns);
	nt_json_kv_double(&j, "recoverable_by_map_ns", r->placement_ns);
	nt_json_kv_double(&j, "tail_ns", r->tail_ns);
	nt_json_kv_double(&j, "persistent_ns", r->persist_ns);
	nt_json_kv_double(&j, "persistent_by_map_ns", r->rebalance_ns);
	nt_json_kv_double(&j, "persistent_by_shape_ns", r->quantisation_ns);
	nt_json_kv_double(&j, "replay_error_max_pct", r->replay_err_max_pct);
	nt_json_kv_int(&j, "blocks", r->blocks);
	nt_json_kv_double(&j, "traced_credible_ns", r->traced_credible_ns);
	nt_json_kv_int(&j, "probe_known", r->probe_known);
	nt_json_kv_int(&j, "probe_unknown", r->probe_unknown);
	nt_json_kv_int(&j, "entry_only_launches", r->entry_launches);
	nt_json_kv_int(&j, "one_wave_entry_only_launches", r->ends_unknown);
	nt_json_kv_int(&j, "probe_left_out", r->probe_left_out);
	nt_json_kv_double(&j, "probe_left_out_ns", r->probe_left_out_ns);
	nt_json_kv_int(&j, "collective_left_out", r->collective_left_out);
	nt_json_kv_double(&j, "collective_left_out_ns", r->collective_left_out_ns);
	nt_json_kv_int(&j, "sensitive", r->sensitive);
	nt_json_kv_double(&j, "fdr", NT_REPORT_FDR);
	nt_json_end_object(&j);
	nt_json_key(&j, "shuffle_check");
	if (r->check.done) {
		nt_json_begin_object(&j);
		nt_json_kv_int(&j, "maps", r->check.maps);
		nt_json_kv_int(&j, "kernels", r->check.kernels);
		nt_json_kv_int(&j, "verdicts", r->check.judged);
		nt_json_kv_int(&j, "significant", r->check.significant);
		nt_json_kv_int(&j, "sensitive", r->check.sensitive);
		nt_json_kv_int(&j, "maps_with_sensitive", r->check.maps_any);
		nt_json_kv_int(&j, "max_sensitive_per_map", r->check.max_per_map);
		nt_json_kv_double(&j, "rate", r->check.rate);
		nt_json_kv_double(&j, "fdr", NT_REPORT_FDR);
		nt_json_end_object(&j);
	} else {
		nt_json_null(&j);
	}
	nt_json_key(&j, "jobs");
	nt_json_begin_array(&j);
	for (int i = 0; i < r->n_jobs; i++)
		job(&j, r, &r->jobs[i]);
	nt_json_end_array(&j);
	nt_json_key(&j, "graphs");
	nt_json_begin_array(&j);
	for (int i = 0; i < r->n_graphs; i++)
		graph(&j, &r->graphs[i]);
	nt_json_end_array(&j);
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
