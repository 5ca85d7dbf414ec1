/*
 * The report's CUDA graph execs (report.h): the traced kernel node
 * launches grouped by trace and graph exec, and within an exec by its
 * launch (blocks mode records which launch of the exec each node launch
 * belongs to), so a captured training step reads as one row: how many of
 * its launches were traced, how long one takes from its first node's
 * start to its last node's end, and what its node launches lose to slow
 * SMs, summed as the program's figures are (credible launches of
 * measurable kernels, native time where known).
 */
#include <stdlib.h>

#include "map/map.h"
#include "report/report.h"

struct key {
	int trace;
	int64_t graph, launch;
	size_t i;		/* index into r->launches */
};

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->trace != y->trace)
		return x->trace < y->trace ? -1 : 1;
	if (x->graph != y->graph)
		return x->graph < y->graph ? -1 : 1;
	if (x->launch != y->launch)
		return x->launch < y->launch ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* keys[lo .. hi - 1]: one graph exec, sorted by its launches. */
static void one_graph(const struct nt_report *r, const struct key *keys, size_t lo, size_t hi, double *spans,
		      struct nt_report_graph *g)
{
	int n_spans = 0;

	g->trace = keys[lo].trace;
	g->graph = keys[lo].graph;
	for (size_t a = lo; a < hi;) {
		int64_t first = -1, last = -1;
		size_t b = a;

		for (; b < hi && keys[b].launch == keys[a].launch; b++) {
			const struct nt_report_launch *l = &r->launches[keys[b].i];
			const struct nt_report_kernel *k = &r->kernels[l->kernel];

			if (l->t_start_ns >= 0 && (first < 0 || l->t_start_ns < first))
				first = l->t_start_ns;
			if (l->t_end_ns > last)
				last = l->t_end_ns;
			if (!l->ok)
				continue;
			g->nodes++;
			g->time_ns += l->r.measured_ns;
			if (!nt_report_launch_credible(l) || k->verdict == NT_VERDICT_NOT_MEASURABLE ||
			    k->collective)
				continue;
			g->credible++;
			g->time_ns_credible += l->scale * l->r.measured_ns;
			g->lost_ns += l->scale * l->r.lost_ns;
			g->recoverable_ns += l->scale * l->r.recoverable_ns;
		}
		g->launches++;
		if (first >= 0 && last > first)
			spans[n_spans++] = (double)(last - first);
		a = b;
	}
	g->span_ns = nt_median(spans, n_spans);
}

int nt_report_graphs(struct nt_report *r, struct nt_err *err)
{
	struct key *keys = NULL;
	double *spans = NULL;
	size_t n = 0, groups = 0;
	int ret = -1;

	for (size_t i = 0; i < r->n_launches; i++)
		n += r->launches[i].graph >= 0;
	if (!n)
		return 0;
	if (!(keys = malloc(n * sizeof(*keys))) || !(spans = malloc(n * sizeof(*spans))))
		goto out;
	n = 0;
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		if (l->graph >= 0)
			keys[n++] = (struct key){ l->trace, l->graph, l->graph_launch, i };
	}
	qsort(keys, n, sizeof(*keys), by_key);
	for (size_t i = 0; i < n; i++)
		groups += !i || keys[i].trace != keys[i - 1].trace || keys[i].graph != keys[i - 1].graph;
	if (!(r->graphs = calloc(groups, sizeof(*r->graphs))))
		goto out;
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && keys[hi].trace == keys[lo].trace && keys[hi].graph == keys[lo].graph;)
			hi++;
		one_graph(r, keys, lo, hi, spans, &r->graphs[r->n_graphs++]);
	}
	ret = 0;
out:
	if (ret)
		nt_err_set(err, "out of memory");
	free(keys);
	free(spans);
	return ret;
}
