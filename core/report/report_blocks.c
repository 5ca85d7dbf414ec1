/* Block records read back from the traces: one launch's for the report's
 * passes (report_impl.h), and a built report's streamed to the formats
 * (nt_report_foreach_block, report.h), which the report keeps none of, as
 * a trace may hold ten million.  Both check every row
 * (nt_report_block_ok). */
#include "report/report_impl.h"

#include <stdlib.h>
#include <string.h>

static int keep_block(const struct nt_trace_block *b, void *arg)
{
	struct nt_report_blocks *bl = arg;

	if (nt_report_block_ok(b, bl->n_sm, bl->why, sizeof(bl->why)))
		return 1;
	if (bl->n == bl->cap) {
		size_t cap = bl->cap ? 2 * bl->cap : 1024;

		if (nt_report_resize(&bl->sm, cap, sizeof(*bl->sm)) ||
		    nt_report_resize(&bl->t0, cap, sizeof(*bl->t0)) ||
		    nt_report_resize(&bl->t1, cap, sizeof(*bl->t1)) ||
		    nt_report_resize(&bl->cyc, cap, sizeof(*bl->cyc))) {
			bl->oom = 1;
			return -1;
		}
		bl->cap = cap;
	}
	bl->sm[bl->n] = b->sm;
	bl->t0[bl->n] = b->t_start_ns;
	bl->t1[bl->n] = b->t_end_ns;
	bl->cyc[bl->n] = (double)(b->c_end - b->c_start);
	bl->n++;
	return 0;
}

int nt_report_read_blocks(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl,
			  struct nt_err *err)
{
	int ret;

	bl->n = 0;
	bl->oom = 0;
	bl->why[0] = '\0';
	bl->n_sm = nt_report_sm_count(ts, d->device);
	ret = nt_trace_foreach_block(ts->t, d->launch, keep_block, bl, err);
	if (bl->oom)
		return nt_err_set(err, "launch %lld of '%s': out of memory after %zu blocks",
				  (long long)d->launch, nt_trace_path_of(ts->t), bl->n);
	return ret;
}

struct nt_replay_block *nt_report_replay_blocks(const struct nt_report_blocks *bl)
{
	struct nt_replay_block *rb = malloc((bl->n ? bl->n : 1) * sizeof(*rb));

	for (size_t i = 0; rb && i < bl->n; i++)
		rb[i] = (struct nt_replay_block){ bl->t0[i], bl->t1[i], bl->sm[i] };
	return rb;
}

void nt_report_blocks_free(struct nt_report_blocks *bl)
{
	free(bl->sm);
	free(bl->t0);
	free(bl->t1);
	free(bl->cyc);
	memset(bl, 0, sizeof(*bl));
}

struct walk {
	struct nt_report_block b;
	int n_sm;
	char why[160];
	int (*cb)(const struct nt_report_block *b, void *arg);
	void *arg;
};

static int on_block(const struct nt_trace_block *tb, void *arg)
{
	struct walk *w = arg;

	if (nt_report_block_ok(tb, w->n_sm, w->why, sizeof(w->why)))
		return 0;	/* left out, as by the report */
	w->b.block = tb->block;
	w->b.sm = tb->sm;
	w->b.warps = tb->warps;
	w->b.t_start_ns = tb->t_start_ns;
	w->b.t_end_ns = tb->t_end_ns;
	w->b.cycles = tb->c_end - tb->c_start;
	return w->cb(&w->b, w->arg);
}

/* The SM count of launch l's device (0 when the trace does not list it). */
static int sm_count_of(const struct nt_report *r, const struct nt_report_launch *l)
{
	const struct nt_report_kernel *k = &r->kernels[l->kernel];

	for (int d = 0; d < r->n_devices; d++)
		if (r->devices[d].trace == l->trace && r->devices[d].device == k->device)
			return r->devices[d].sm_count;
	return 0;
}

int nt_report_foreach_block(const struct nt_report *r, size_t first, size_t n,
			    int (*cb)(const struct nt_report_block *b, void *arg), void *arg,
			    struct nt_err *err)
{
	struct walk w = { .cb = cb, .arg = arg };
	struct nt_trace *t = NULL;
	int trace = -1, kernel = -1, ret = 0;

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
		if (l->kernel != kernel) {
			kernel = l->kernel;
			w.n_sm = sm_count_of(r, l);
		}
		w.b.launch = i;
		if ((ret = nt_trace_foreach_block(t, l->launch, on_block, &w, err)))
			goto out;
	}
out:
	nt_trace_close(t);
	return ret;
}
