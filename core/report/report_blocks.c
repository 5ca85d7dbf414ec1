/* Streaming a built report's block records back from its traces
 * (nt_report_foreach_block, report.h): the report keeps none of them,
 * as a trace may hold ten million. */
#include "report/report.h"

#include "trace/trace.h"

struct walk {
	struct nt_report_block b;
	int (*cb)(const struct nt_report_block *b, void *arg);
	void *arg;
};

static int on_block(const struct nt_trace_block *tb, void *arg)
{
	struct walk *w = arg;

	w->b.block = tb->block;
	w->b.sm = tb->sm;
	w->b.warps = tb->warps;
	w->b.t_start_ns = tb->t_start_ns;
	w->b.t_end_ns = tb->t_end_ns;
	w->b.cycles = tb->c_end - tb->c_start;
	return w->cb(&w->b, w->arg);
}

int nt_report_foreach_block(const struct nt_report *r, size_t first, size_t n,
			    int (*cb)(const struct nt_report_block *b, void *arg), void *arg,
			    struct nt_err *err)
{
	struct walk w = { .cb = cb, .arg = arg };
	struct nt_trace *t = NULL;
	int trace = -1, ret = 0;

	if (first > r->n_launches || n > r->n_launches - first)
		return nt_err_set(err, "launches %zu..%zu: the report has %zu", first, first + n, r->n_launches);
	for (size_t i = first; i < first + n; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		if (l->trace != trace) {
			nt_trace_close(t);
			t = NULL;
			trace = l->trace;
			if ((ret = nt_trace_open(r->traces[trace].path, &t, err)))
				goto out;
		}
		w.b.launch = i;
		if ((ret = nt_trace_foreach_block(t, l->launch, on_block, &w, err)))
			goto out;
	}
out:
	nt_trace_close(t);
	return ret;
}
