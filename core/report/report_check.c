/* The shuffle check (report.h, nt_report_shuffle_check): the verdict
 * redone against maps that carry no physics, to measure how often it
 * calls a kernel L2-sensitive by chance. */
#include "report/report_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"
#include "util/rng.h"

/* One kernel's points against a map: the SMs of its fit (report.h: the
 * SMs with a latency and NT_ATTRIB_MIN_BLOCKS blocks; a TPC shuffle
 * keeps the SMs without a latency in place, so the set is the map's). */
struct points {
	int m;
	int *sm_of;
	double *x, *y;
};

static void points_of(const struct nt_report_kernel *k, const double *lat, struct points *p)
{
	p->m = 0;
	for (int s = 0; s < k->map->n_sm; s++)
		if (k->sm_blocks[s] >= NT_ATTRIB_MIN_BLOCKS && !isnan(lat[s])) {
			p->sm_of[p->m] = s;
			p->x[p->m] = lat[s];
			p->y[p->m++] = k->sm_median_ns[s];
		}
}

/* The verdict of every fitted kernel against lat (its device's map
 * shuffled) as the report gives it: the shuffle test, Benjamini-Hochberg
 * across the kernels, and for those it keeps, the effect and the probe;
 * into c.  ki, p and q have room for every kernel. */
struct scratch {
	int *ki;
	double *p, *q;
};

static int one_map(const struct nt_report *r, double *const *lat, const int *dev_of, struct scratch *w,
		   struct points *pt, struct nt_report_check *c, struct nt_err *err)
{
	int m = 0, sig = 0, sens = 0;

	for (int i = 0; i < r->n_kernels; i++) {
		const struct nt_report_kernel *k = &r->kernels[i];
		struct nt_attrib_test t;

		if (dev_of[i] < 0)
			continue;
		points_of(k, lat[dev_of[i]], pt);
		if (nt_attrib_shuffle_test(pt->y, pt->sm_of, pt->m, lat[dev_of[i]], k->map->n_sm, &t, err))
			return -1;
		w->ki[m] = i;
		w->p[m++] = t.p_value;
	}
	if (nt_attrib_bh(w->p, m, w->q))
		return nt_err_set(err, "out of memory");
	for (int j = 0; j < m; j++) {
		const struct nt_report_kernel *k = &r->kernels[w->ki[j]];
		double slope, lo = INFINITY, hi = -INFINITY;

		if (w->q[j] > NT_REPORT_FDR)
			continue;
		sig++;
		if (k->verdict == NT_VERDICT_NOT_MEASURABLE)
			continue;
		points_of(k, lat[dev_of[w->ki[j]]], pt);
		if (nt_attrib_theil_sen(pt->x, pt->y, pt->m, &slope, err))
			return -1;
		for (int s = 0; s < pt->m; s++) {
			lo = fmin(lo, pt->x[s]);
			hi = fmax(hi, pt->x[s]);
		}
		sens += 100 * slope * (hi - lo) / k->fit.median_ns >= NT_ATTRIB_SENSITIVE_PCT;
	}
	c->judged += m;
	c->significant += sig;
	c->sensitive += sens;
	c->maps_any += sens > 0;
	c->max_per_map = sens > c->max_per_map ? sens : c->max_per_map;
	return 0;
}

int nt_report_shuffle_check(struct nt_report *r, int n_maps, uint64_t seed, struct nt_err *err)
{
	struct nt_report_check *c = &r->check;
	double **lat = calloc(r->n_devices ? r->n_devices : 1, sizeof(*lat));
	size_t nk = r->n_kernels ? r->n_kernels : 1;
	int *dev_of = malloc(nk * sizeof(*dev_of));
	struct scratch w = { malloc(nk * sizeof(int)), malloc(nk * sizeof(double)), malloc(nk * sizeof(double)) };
	struct points pt = { 0, malloc(NT_MAP_MAX_SM * sizeof(int)), malloc(NT_MAP_MAX_SM * sizeof(double)),
			     malloc(NT_MAP_MAX_SM * sizeof(double)) };
	int ret = -1;

	memset(c, 0, sizeof(*c));
	c->maps = n_maps;
	c->seed = seed;
	if (!lat || !dev_of || !w.ki || !w.p || !w.q || !pt.sm_of || !pt.x || !pt.y)
		goto oom;
	for (int d = 0; d < r->n_devices; d++)
		if (r->devices[d].map && !(lat[d] = malloc(r->devices[d].map->n_sm * sizeof(**lat))))
			goto oom;
	for (int i = 0; i < r->n_kernels; i++) {
		const struct nt_report_kernel *k = &r->kernels[i];

		dev_of[i] = -1;
		if (!k->fitted || !k->fit.fitted || !k->sm_median_ns)
			continue;
		for (int d = 0; d < r->n_devices; d++)
			if (r->devices[d].trace == k->trace && r->devices[d].device == k->device &&
			    r->devices[d].map == k->map)
				dev_of[i] = d;
		c->kernels += dev_of[i] >= 0;
	}
	for (int i = 0; i < n_maps; i++) {
		for (int d = 0; d < r->n_devices; d++)
			if (lat[d])
				nt_tpc_shuffle(r->devices[d].map->chain, r->devices[d].map->n_sm, &seed, lat[d]);
		if (one_map(r, lat, dev_of, &w, &pt, c, err))
			goto out;
	}
	c->rate = c->judged ? (double)c->sensitive / c->judged : 0;
	c->done = 1;
	ret = 0;
	goto out;
oom:
	nt_err_set(err, "out of memory");
out:
	for (int d = 0; d < r->n_devices && lat; d++)
		free(lat[d]);
	free(lat);
	free(dev_of);
	free(w.ki);
	free(w.p);
	free(w.q);
	free(pt.sm_of);
	free(pt.x);
	free(pt.y);
	return ret;
}
