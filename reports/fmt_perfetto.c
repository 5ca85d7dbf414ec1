/*
 * The report's traces as a Chrome/Perfetto trace (JSON trace events, open
 * in ui.perfetto.dev): a process per trace file, a "kernels" track with a
 * slice per traced launch, and a track per SM with a slice per block.
 * Times in microseconds from the trace's first traced block.  Unlike the
 * other formats it reads the block records again from the trace files.
 */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "util/json.h"
#include "trace/trace.h"

struct pctx {
	struct nt_json *j;
	const struct nt_report *r;
	int pid;
	int64_t base;
	const char *kname;
	int64_t launch;
	unsigned char sm_seen[1024];
};

static const char *short_name(const struct nt_report_kernel *k)
{
	return k->demangled ? k->demangled : k->name;
}

static void event_head(struct nt_json *j, const char *ph, int pid, int tid)
{
	nt_json_begin_object(j);
	nt_json_key(j, "ph");
	nt_json_str(j, ph);
	nt_json_key(j, "pid");
	nt_json_int(j, pid);
	nt_json_key(j, "tid");
	nt_json_int(j, tid);
}

static void meta(struct nt_json *j, int pid, int tid, const char *what, const char *name, int sort)
{
	event_head(j, "M", pid, tid);
	nt_json_key(j, "name");
	nt_json_str(j, what);
	nt_json_key(j, "args");
	nt_json_begin_object(j);
	nt_json_key(j, "name");
	nt_json_str(j, name);
	nt_json_end_object(j);
	nt_json_end_object(j);
	if (sort >= 0) {
		event_head(j, "M", pid, tid);
		nt_json_key(j, "name");
		nt_json_str(j, "thread_sort_index");
		nt_json_key(j, "args");
		nt_json_begin_object(j);
		nt_json_key(j, "sort_index");
		nt_json_int(j, sort);
		nt_json_end_object(j);
		nt_json_end_object(j);
	}
}

static void slice(struct nt_json *j, int pid, int tid, const char *name, int64_t t0, int64_t t1)
{
	event_head(j, "X", pid, tid);
	nt_json_key(j, "name");
	nt_json_str(j, name);
	nt_json_key(j, "ts");
	nt_json_double(j, t0 / 1e3);
	nt_json_key(j, "dur");
	nt_json_double(j, (t1 - t0) / 1e3);
}

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct pctx *c = arg;
	char tname[32];

	if (b->sm >= 0 && b->sm < 1024 && !c->sm_seen[b->sm]) {
		c->sm_seen[b->sm] = 1;
		snprintf(tname, sizeof(tname), "SM %d", b->sm);
		meta(c->j, c->pid, b->sm + 1, "thread_name", tname, b->sm + 1);
	}
	slice(c->j, c->pid, b->sm + 1, c->kname, b->t_start_ns - c->base, b->t_end_ns - c->base);
	nt_json_key(c->j, "args");
	nt_json_begin_object(c->j);
	nt_json_key(c->j, "launch");
	nt_json_int(c->j, c->launch);
	nt_json_key(c->j, "block");
	nt_json_int(c->j, b->block);
	nt_json_key(c->j, "cycles");
	nt_json_int(c->j, b->c_end - b->c_start);
	nt_json_key(c->j, "warps");
	nt_json_int(c->j, b->warps);
	nt_json_end_object(c->j);
	nt_json_end_object(c->j);
	return 0;
}

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	int64_t *first = arg;

	(void)k;
	if (l->traced && l->t_start_ns >= 0 && (*first < 0 || l->t_start_ns < *first))
		*first = l->t_start_ns;
	return 0;
}

static int one_trace(struct nt_json *j, const struct nt_report *r, int ti)
{
	struct pctx c = { .j = j, .r = r, .pid = ti + 1, .base = -1 };
	const struct nt_report_trace *tr = &r->traces[ti];
	struct nt_trace *t;
	struct nt_err err;
	char pname[256];
	int ret = -1;

	if (nt_trace_open(tr->path, &t, &err))
		return -1;
	if (nt_trace_foreach_launch(t, on_launch, &c.base, &err))
		goto out;
	snprintf(pname, sizeof(pname), "%s %.47s %.95s", tr->path, tr->uuid, tr->gpu);
	meta(j, c.pid, 0, "process_name", pname, -1);
	meta(j, c.pid, 0, "thread_name", "kernels", 0);
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];
		const struct nt_report_kernel *k = &r->kernels[l->kernel];

		if (l->trace != ti)
			continue;
		c.kname = short_name(k);
		c.launch = l->launch;
		if (nt_trace_foreach_block(t, l->launch, on_block, &c, &err))
			goto out;
	}
	ret = 0;
out:
	nt_trace_close(t);
	return ret;
}

/* The launch slices on the kernels track come from the launches table. */
struct kctx {
	struct nt_json *j;
	const struct nt_report *r;
	int ti, pid;
	int64_t base;
};

static int on_kernel_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct kctx *c = arg;

	if (!l->traced || l->t_start_ns < 0 || l->t_end_ns < 0)
		return 0;
	slice(c->j, c->pid, 0, k ? (k->demangled ? k->demangled : k->mangled) : "?",
	      l->t_start_ns - c->base, l->t_end_ns - c->base);
	nt_json_key(c->j, "args");
	nt_json_begin_object(c->j);
	nt_json_key(c->j, "launch");
	nt_json_int(c->j, l->launch);
	nt_json_key(c->j, "blocks");
	nt_json_int(c->j, l->blocks);
	for (size_t i = 0; i < c->r->n_launches; i++) {
		const struct nt_report_launch *rl = &c->r->launches[i];

		if (rl->trace != c->ti || rl->launch != l->launch || !rl->ok)
			continue;
		nt_json_key(c->j, "replay_error_pct");
		nt_json_double(c->j, rl->r.error_pct);
		nt_json_key(c->j, "lost_pct");
		nt_json_double(c->j, rl->r.lost_pct);
		nt_json_key(c->j, "recoverable_pct");
		nt_json_double(c->j, rl->r.recoverable_pct);
		break;
	}
	nt_json_end_object(c->j);
	nt_json_end_object(c->j);
	return 0;
}

static int kernel_track(struct nt_json *j, const struct nt_report *r, int ti)
{
	struct kctx c = { .j = j, .r = r, .ti = ti, .pid = ti + 1, .base = -1 };
	struct nt_trace *t;
	struct nt_err err;
	int ret;

	if (nt_trace_open(r->traces[ti].path, &t, &err))
		return -1;
	ret = nt_trace_foreach_launch(t, on_launch, &c.base, &err) ||
	      nt_trace_foreach_launch(t, on_kernel_launch, &c, &err);
	nt_trace_close(t);
	return ret ? -1 : 0;
}

static int write_perfetto(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	struct nt_json j;

	(void)o;
	nt_json_init(&j, f, 0);
	nt_json_begin_object(&j);
	nt_json_key(&j, "displayTimeUnit");
	nt_json_str(&j, "ns");
	nt_json_key(&j, "traceEvents");
	nt_json_begin_array(&j);
	for (int i = 0; i < r->n_traces; i++)
		if (one_trace(&j, r, i) || kernel_track(&j, r, i))
			return -1;
	nt_json_end_array(&j);
	nt_json_end_object(&j);
	return nt_json_finish(&j);
}

const struct nt_format nt_format_perfetto = { "perfetto", write_perfetto };
