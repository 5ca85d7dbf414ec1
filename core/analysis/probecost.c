/* The probe-cost part of a map from a trace and the blocks' own body
 * times (probecost.h). */
#include "analysis/probecost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_KERNEL "nt_probe_cost"

struct launches {
	struct nt_trace_launch l[2 * NT_MAP_MAX_PROBES];
	int n, more;
};

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct launches *ls = arg;

	if (!k || strcmp(k->mangled, PROBE_KERNEL))
		return 0;
	if (ls->n == 2 * NT_MAP_MAX_PROBES) {
		ls->more++;
		return 0;
	}
	ls->l[ls->n++] = *l;
	return 0;
}

/* One configuration's traced blocks set against their bodies. */
struct join {
	const struct nt_map_probe *cfg;
	const struct nt_probe_body *body;
	double *cost;		/* [blocks], NAN until its record is seen */
	int bad;
};

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct join *j = arg;
	const struct nt_probe_body *y;

	if (b->block < 0 || b->block >= j->cfg->blocks) {
		j->bad++;
		return 0;
	}
	y = &j->body[b->block];
	if (y->sm != b->sm || b->c_start > y->start || b->c_end < y->end) {
		j->bad++;
		return 0;
	}
	j->cost[b->block] = (double)((b->c_end - b->c_start) - (y->end - y->start));
	return 0;
}

/* Median body of the blocks that left a record. */
static double median_body(const struct nt_probe_body *body, int blocks, double *tmp)
{
	for (int b = 0; b < blocks; b++)
		tmp[b] = body[b].sm >= 0 && body[b].end >= body[b].start ? (double)(body[b].end - body[b].start)
									   : NAN;
	return nt_median(tmp, blocks);
}

/* Per SM of m, the median of the costs of the blocks of that SM. */
static void per_sm(struct nt_map *m, int p, const struct join *j, double *tmp)
{
	for (int s = 0; s < m->n_sm; s++) {
		int k = 0;

		for (int b = 0; b < j->cfg->blocks; b++)
			if (j->body[b].sm == s && !isnan(j->cost[b]))
				tmp[k++] = j->cost[b];
		m->probe_cost[(size_t)p * m->n_sm + s] = k ? nt_median(tmp, k) : NAN;
	}
}

static int check_launches(struct nt_trace *t, const struct launches *ls, const struct nt_map_probe *cfg,
			  int n, struct nt_err *err)
{
	const char *path = nt_trace_path_of(t);

	if (ls->n + ls->more != 2 * n)
		return nt_err_set(err, "probe cost: '%s' has %d launches of %s, not the %d of the run", path,
				  ls->n + ls->more, PROBE_KERNEL, 2 * n);
	for (int i = 0; i < n; i++) {
		const struct nt_trace_launch *l = &ls->l[2 * i + 1];

		if (l->grid_x != cfg[i].blocks || l->block_x != cfg[i].threads)
			return nt_err_set(err, "probe cost: '%s': launch %lld is %d blocks of %d threads, "
					  "not %d of %d", path, (long long)l->launch, l->grid_x, l->block_x,
					  cfg[i].blocks, cfg[i].threads);
		if (!l->traced || l->blocks != cfg[i].blocks)
			return nt_err_set(err, "probe cost: '%s': launch %lld has %lld of its %d blocks "
					  "recorded (the trace's drops table says why)", path,
					  (long long)l->launch, (long long)(l->traced ? l->blocks : 0),
					  cfg[i].blocks);
	}
	return 0;
}

int nt_probe_cost_join(struct nt_trace *t, const struct nt_map_probe *cfg, int n,
		       struct nt_probe_body *const *traced, struct nt_probe_body *const *native,
		       struct nt_map *m, struct nt_err *err)
{
	struct launches ls = { .n = 0 };
	double *cost = NULL, *tmp = NULL;
	int most = 0, ret = -1;

	if (n < 1 || n > NT_MAP_MAX_PROBES)
		return nt_err_set(err, "probe cost: %d configurations (1..%d)", n, NT_MAP_MAX_PROBES);
	for (int i = 0; i < n; i++)
		if (cfg[i].blocks > most)
			most = cfg[i].blocks;
	if (nt_trace_foreach_launch(t, on_launch, &ls, err) || check_launches(t, &ls, cfg, n, err))
		return -1;
	if (!(cost = malloc((size_t)most * sizeof(*cost))) || !(tmp = malloc((size_t)most * sizeof(*tmp))) ||
	    nt_map_set_probe(m, n)) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct join j = { &cfg[i], traced[i], cost, 0 };

		for (int b = 0; b < cfg[i].blocks; b++)
			cost[b] = NAN;
		if (nt_trace_foreach_block(t, ls.l[2 * i + 1].launch, on_block, &j, err))
			goto out;
		if (j.bad > NT_PROBE_COST_MAX_BAD * cfg[i].blocks) {
			nt_err_set(err, "probe cost: '%s': %d of the %d block records of launch %lld disagree "
				   "with the blocks' own times (another SM, or not spanning the body)",
				   nt_trace_path_of(t), j.bad, cfg[i].blocks, (long long)ls.l[2 * i + 1].launch);
			goto out;
		}
		m->probe[i] = cfg[i];
		m->probe[i].body_native = median_body(native[i], cfg[i].blocks, tmp);
		m->probe[i].body_traced = median_body(traced[i], cfg[i].blocks, tmp);
		per_sm(m, i, &j, tmp);
	}
	ret = 0;
out:
	if (ret && m->n_probe) {	/* no half-made part */
		free(m->probe), free(m->probe_cost);
		m->probe = NULL, m->probe_cost = NULL, m->n_probe = 0;
	}
	free(cost);
	free(tmp);
	return ret;
}
