/*
 * The report's traces as a Chrome/Perfetto trace (JSON trace events, open
 * in ui.perfetto.dev): a process per trace file, a "kernels" track with a
 * slice per traced launch, and a track per SM with a slice per block.
 * Times in microseconds from the trace's first traced launch.  The
 * blocks come from nt_report_foreach_block, streamed.
 *
 * Slices are named by a label of at most LABEL_CHARS characters of the
 * kernel's name: names of real templates run to kilobytes, and a name per
 * block slice made gigabytes.  The full names are written once per
 * kernel, in the args of its first launch's slice ("kernel",
 * "mangled"); every launch slice has the kernel's index in the report,
 * and a CUDA graph's node launch its graph exec and launch of it
 * ("graph", "graph_launch").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "util/json.h"
#include "util/text.h"

#define LABEL_CHARS 80

struct pctx {
	struct nt_json *j;
	const struct nt_report *r;
	char **label;		/* per kernel */
	int pid;
	int64_t base;
	unsigned char sm_seen[1024];
};

static const char *full_name(const struct nt_report_kernel *k)
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

static int on_block(const struct nt_report_block *b, void *arg)
{
	struct pctx *c = arg;
	const struct nt_report_launch *l = &c->r->launches[b->launch];
	char tname[32];

	if (b->sm >= 0 && b->sm < 1024 && !c->sm_seen[b->sm]) {
		c->sm_seen[b->sm] = 1;
		snprintf(tname, sizeof(tname), "SM %d", b->sm);
		meta(c->j, c->pid, b->sm + 1, "thread_name", tname, b->sm + 1);
	}
	slice(c->j, c->pid, b->sm + 1, c->label[l->kernel], b->t_start_ns - c->base, b->t_end_ns - c->base);
	nt_json_key(c->j, "args");
	nt_json_begin_object(c->j);
	nt_json_key(c->j, "launch");
	nt_json_int(c->j, l->launch);
	nt_json_key(c->j, "block");
	nt_json_int(c->j, b->block);
	nt_json_key(c->j, "cycles");
	nt_json_int(c->j, b->cycles);
	nt_json_key(c->j, "warps");
	nt_json_int(c->j, b->warps);
	if (b->end != NT_END_MEASURED) {	/* entry-only tracing (infer.h) */
		nt_json_key(c->j, "end");
		nt_json_str(c->j, nt_report_end_name(b->end));
	}
	nt_json_end_object(c->j);
	nt_json_end_object(c->j);
	return 0;
}

/* A slice per launch on the kernels track, with its replay's figures;
 * the first of each kernel has its full names. */
static void kernel_track(struct nt_json *j, const struct nt_report *r, char **label, int ti, int64_t base,
			 unsigned char *named)
{
	const struct nt_report_trace *tr = &r->traces[ti];

	for (size_t i = tr->first_launch; i < tr->first_launch + tr->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];
		const struct nt_report_kernel *k = &r->kernels[l->kernel];

		if (l->t_start_ns < 0 || l->t_end_ns < 0)
			continue;
		slice(j, ti + 1, 0, label[l->kernel], l->t_start_ns - base, l->t_end_ns - base);
		nt_json_key(j, "args");
		nt_json_begin_object(j);
		nt_json_kv_int(j, "kernel_index", l->kernel);
		if (!named[l->kernel]) {
			named[l->kernel] = 1;
			nt_json_kv_str(j, "kernel", full_name(k));
			nt_json_kv_str(j, "mangled", k->name);
		}
		nt_json_key(j, "launch");
		nt_json_int(j, l->launch);
		nt_json_key(j, "blocks");
		nt_json_int(j, l->blocks);
		if (l->graph >= 0) {	/* a CUDA graph's kernel node: which launch of which exec */
			nt_json_kv_int(j, "graph", l->graph);
			nt_json_kv_int(j, "graph_launch", l->graph_launch);
		}
		if (l->ok) {
			nt_json_key(j, "replay_error_pct");
			nt_json_double(j, l->r.error_pct);
			nt_json_key(j, "lost_pct");
			nt_json_double(j, l->r.lost_pct);
			nt_json_key(j, "recoverable_pct");
			nt_json_double(j, l->r.recoverable_pct);
		}
		nt_json_end_object(j);
		nt_json_end_object(j);
	}
}

static int one_trace(struct nt_json *j, const struct nt_report *r, char **label, unsigned char *named, int ti)
{
	const struct nt_report_trace *tr = &r->traces[ti];
	struct pctx c = { .j = j, .r = r, .label = label, .pid = ti + 1, .base = tr->t_first_ns };
	char pname[256];

	if (tr->rank >= 0)	/* the ranks of a job, each on its own clock */
		snprintf(pname, sizeof(pname), "rank %d: %s %.47s %.95s", tr->rank, tr->path, tr->uuid, tr->gpu);
	else
		snprintf(pname, sizeof(pname), "%s %.47s %.95s", tr->path, tr->uuid, tr->gpu);
	meta(j, c.pid, 0, "process_name", pname, -1);
	meta(j, c.pid, 0, "thread_name", "kernels", 0);
	if (nt_report_foreach_block(r, tr->first_launch, tr->n_launches, on_block, &c, NULL))
		return -1;
	kernel_track(j, r, label, ti, c.base, named);
	return 0;
}

static int write_perfetto(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	size_t n = r->n_kernels ? r->n_kernels : 1;
	char **label = calloc(n, sizeof(*label));
	unsigned char *named = calloc(n, 1);
	struct nt_json j;
	int ret = -1;

	(void)o;
	for (int k = 0; label && k < r->n_kernels; k++)
		if ((label[k] = malloc(NT_TEXT_ROOM(LABEL_CHARS))))
			nt_text_safe(label[k], NT_TEXT_ROOM(LABEL_CHARS), full_name(&r->kernels[k]), LABEL_CHARS);
		else
			goto out;
	if (!label || !named)
		goto out;
	nt_json_init(&j, f, 0);
	nt_json_begin_object(&j);
	nt_json_key(&j, "displayTimeUnit");
	nt_json_str(&j, "ns");
	nt_json_key(&j, "traceEvents");
	nt_json_begin_array(&j);
	for (int i = 0; i < r->n_traces; i++)
		if (one_trace(&j, r, label, named, i))
			goto out;
	nt_json_end_array(&j);
	nt_json_end_object(&j);
	ret = nt_json_finish(&j);
out:
	for (int k = 0; label && k < r->n_kernels; k++)
		free(label[k]);
	free(label);
	free(named);
	return ret;
}

const struct nt_format nt_format_perfetto = { "perfetto", write_perfetto };
