/* The probe effect (report.h): each kernel's native time, the shortest
 * untraced event time of its configuration in the trace's native table,
 * set against its traced makespans. */
#include "report/report_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The trace's kernel names by id, sorted: native rows name a kernel by
 * its id only. */
struct kname {
	int64_t id;
	char *mangled;
};

struct names {
	struct kname *k;
	size_t n, cap;
	int oom;
};

static int on_kernel(const struct nt_trace_kernel *k, void *arg)
{
	struct names *nm = arg;

	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? 2 * nm->cap : 64;

		if (nt_report_resize(&nm->k, cap, sizeof(*nm->k))) {
			nm->oom = 1;
			return 1;
		}
		nm->cap = cap;
	}
	nm->k[nm->n].id = k->kernel;
	if (!(nm->k[nm->n].mangled = strdup(*k->mangled ? k->mangled : "?"))) {
		nm->oom = 1;
		return 1;
	}
	nm->n++;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	int64_t x = ((const struct kname *)a)->id, y = ((const struct kname *)b)->id;

	return (x > y) - (x < y);
}

struct walk {
	struct tstate *ts;
	struct names nm;
	int oom;
};

static int on_native(const struct nt_trace_native *n, void *arg)
{
	struct walk *w = arg;
	struct nt_report_config c = { n->device, { n->grid_x, n->grid_y, n->grid_z },
				      { n->block_x, n->block_y, n->block_z } };
	struct kname key = { n->kernel, NULL }, *name;
	struct nt_report_kernel *k;
	int at;

	if (n->ns <= 0)
		return 0;	/* no time: not a measurement */
	name = bsearch(&key, w->nm.k, w->nm.n, sizeof(*w->nm.k), by_id);
	if (!name)
		return 0;	/* a kernel the trace does not list */
	if ((at = nt_report_lookup_kernel(w->ts, &c, name->mangled)) == -2) {
		w->oom = 1;
		return 1;
	}
	if (at < 0)
		return 0;	/* a configuration never traced */
	k = &w->ts->r->kernels[at];
	if (k->native_ns < 0 || (double)n->ns < k->native_ns)
		k->native_ns = (double)n->ns;
	k->native_n++;
	return 0;
}

int nt_report_read_native(struct tstate *ts)
{
	struct walk w = { .ts = ts };
	struct nt_report *r = ts->r;
	int ret = -1;

	if (nt_trace_foreach_kernel(ts->t, on_kernel, &w.nm, ts->err) && !w.nm.oom)
		goto out;
	if (w.nm.oom) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	if (w.nm.n)	/* qsort wants an array, even of none */
		qsort(w.nm.k, w.nm.n, sizeof(*w.nm.k), by_id);
	if (nt_trace_foreach_native(ts->t, on_native, &w, ts->err) && !w.oom)
		goto out;
	if (w.oom) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	for (int i = ts->k0; i < ts->k0 + ts->n_k; i++) {
		struct nt_report_kernel *k = &r->kernels[i];

		if (k->native_ns > 0 && k->traced_min_ns > 0 &&
		    k->native_ns < k->traced_min_ns)
			k->probe_share = 1 - k->native_ns / k->traced_min_ns;
	}
	ret = 0;
out:
	for (size_t i = 0; i < w.nm.n; i++)
		free(w.nm.k[i].mangled);
	free(w.nm.k);
	return ret;
}
