/* Building a report from trace files (report.h). */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/demangle.h"
#include "trace/trace.h"

#define MAX_DEVICES 64

/* One traced launch as the first pass sees it. */
struct ldesc {
	int64_t launch;
	int64_t blocks;		/* records, from the launch row */
	int device, kernel;	/* kernel: index into the report's kernels */
	int32_t max_bps;
};

/* What one trace file needs while it is read. */
struct tstate {
	struct nt_report *r;
	struct nt_trace *t;
	int trace;
	struct nt_map *maps[MAX_DEVICES];
	int sm_count[MAX_DEVICES];
	char uuid[MAX_DEVICES][NT_UUID_LEN];
	struct ldesc *ld;
	size_t n_ld, cap_ld;
	/* per kernel, the blocks kept for its fit */
	struct nt_attrib_block **fb;
	size_t *n_fb, *seen_fb;
	int cap_k;
	uint64_t rng;
	struct nt_err *err;
	int failed;
};

static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static int find_kernel(struct tstate *ts, const struct nt_trace_launch *l, const struct nt_trace_kernel *k)
{
	struct nt_report *r = ts->r;
	const char *name = k ? k->mangled : "?";
	struct nt_report_kernel *e;

	for (int i = 0; i < r->n_kernels; i++) {
		e = &r->kernels[i];
		if (e->trace == ts->trace && e->device == l->device && !strcmp(e->name, name) &&
		    e->grid[0] == l->grid_x && e->grid[1] == l->grid_y && e->grid[2] == l->grid_z &&
		    e->block[0] == l->block_x && e->block[1] == l->block_y && e->block[2] == l->block_z)
			return i;
	}
	if (r->n_kernels == ts->cap_k) {
		int cap = ts->cap_k ? 2 * ts->cap_k : 16;
		void *a = realloc(r->kernels, cap * sizeof(*r->kernels));
		void *b = a ? realloc(ts->fb, cap * sizeof(*ts->fb)) : NULL;
		void *c = b ? realloc(ts->n_fb, cap * sizeof(*ts->n_fb)) : NULL;
		void *d = c ? realloc(ts->seen_fb, cap * sizeof(*ts->seen_fb)) : NULL;

		if (a)
			r->kernels = a;
		if (b)
			ts->fb = b;
		if (c)
			ts->n_fb = c;
		if (d)
			ts->seen_fb = d;
		if (!d)
			return -1;
		ts->cap_k = cap;
	}
	e = &r->kernels[r->n_kernels];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	/* traces from processes without a demangler at hand have none */
	e->demangled = k && k->demangled ? strdup(k->demangled) : nt_demangle(name);
	if (!e->name)
		return -1;
	e->trace = ts->trace;
	e->device = l->device;
	e->grid[0] = l->grid_x, e->grid[1] = l->grid_y, e->grid[2] = l->grid_z;
	e->block[0] = l->block_x, e->block[1] = l->block_y, e->block[2] = l->block_z;
	ts->fb[r->n_kernels] = NULL;
	ts->n_fb[r->n_kernels] = ts->seen_fb[r->n_kernels] = 0;
	return r->n_kernels++;
}

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct tstate *ts = arg;
	struct ldesc *d;
	int ki;

	ts->r->traces[ts->trace].launches++;
	if (!l->traced || l->blocks <= 0)
		return 0;
	ts->r->traces[ts->trace].traced++;
	if (l->device < 0 || l->device >= MAX_DEVICES) {
		nt_err_set(ts->err, "launch %lld: device %d out of range", (long long)l->launch, l->device);
		return ts->failed = -1;
	}
	ki = find_kernel(ts, l, k);
	if (ki < 0 || grow(&ts->ld, &ts->cap_ld, ts->n_ld + 1, sizeof(*ts->ld))) {
		nt_err_set(ts->err, "out of memory");
		return ts->failed = -1;
	}
	d = &ts->ld[ts->n_ld++];
	d->launch = l->launch;
	d->blocks = l->blocks;
	d->device = l->device;
	d->kernel = ki;
	d->max_bps = l->max_blocks_per_sm;
	return 0;
}

static int on_device(const struct nt_trace_device *d, void *arg)
{
	struct tstate *ts = arg;
	struct nt_report_trace *tr = &ts->r->traces[ts->trace];

	if (d->device < 0 || d->device >= MAX_DEVICES)
		return 0;
	if (!tr->n_devices++) {
		memcpy(tr->uuid, d->uuid, sizeof(tr->uuid));
		memcpy(tr->gpu, d->name, sizeof(tr->gpu));
		tr->sm_count = d->sm_count;
	}
	ts->sm_count[d->device] = d->sm_count;
	memcpy(ts->uuid[d->device], d->uuid, NT_UUID_LEN);
	return 0;
}

/* One launch's block records, in block-id order. */
struct blocks {
	size_t n, cap;
	int32_t *sm;
	int64_t *t0, *t1;
	double *cyc;
};

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct blocks *bl = arg;

	if (bl->n == bl->cap) {
		size_t cap = bl->cap ? 2 * bl->cap : 1024;
		int32_t *sm = realloc(bl->sm, cap * sizeof(*sm));
		int64_t *t0 = sm ? realloc(bl->t0, cap * sizeof(*t0)) : NULL;
		int64_t *t1 = t0 ? realloc(bl->t1, cap * sizeof(*t1)) : NULL;
		double *cyc = t1 ? realloc(bl->cyc, cap * sizeof(*cyc)) : NULL;

		if (sm)
			bl->sm = sm;
		if (t0)
			bl->t0 = t0;
		if (t1)
			bl->t1 = t1;
		if (!cyc)
			return -1;
		bl->cyc = cyc;
		bl->cap = cap;
	}
	bl->sm[bl->n] = b->sm;
	bl->t0[bl->n] = b->t_start_ns;
	bl->t1[bl->n] = b->t_end_ns;
	bl->cyc[bl->n] = (double)(b->c_end - b->c_start);
	bl->n++;
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Keep at most NT_REPORT_FIT_BLOCKS of a kernel's blocks: a reservoir
 * sample, reproducible (fixed seed). */
static int keep_for_fit(struct tstate *ts, int k, const struct nt_attrib_block *b)
{
	size_t *n = &ts->n_fb[k], seen = ++ts->seen_fb[k];

	if (*n < NT_REPORT_FIT_BLOCKS) {
		size_t cap = *n;	/* grows in powers of two from 1024 */
		struct nt_attrib_block *a = ts->fb[k];

		if (!*n || (*n >= 1024 && !(*n & (*n - 1)))) {
			cap = *n ? 2 * *n : 1024;
			a = realloc(a, cap * sizeof(*a));
			if (!a)
				return -1;
			ts->fb[k] = a;
		}
		a[(*n)++] = *b;
		return 0;
	}
	{
		uint64_t j = rnd(&ts->rng) % seen;

		if (j < NT_REPORT_FIT_BLOCKS)
			ts->fb[k][j] = *b;
	}
	return 0;
}

/* Slots per SM for a launch's replay: the occupancy calculator's limit
 * (launches.max_blocks_per_sm) or, when smaller, the most blocks the
 * records show running at once on one SM.  The limit alone can be far
 * above what a small grid used and would let the counterfactuals stack
 * blocks on the fast SMs as if co-resident blocks never slowed each
 * other; the records alone overstate it on multi-wave launches (a block
 * is seen starting before its predecessor's exit is recorded).
 * *observed: 1 when the records' figure was used. */
static int launch_slots(const struct ldesc *d, const struct nt_replay_block *rb, size_t n, int *observed)
{
	int seen = 0;

	if (nt_replay_observed_slots(rb, n, &seen, NULL) || seen < 1)
		seen = 0;
	*observed = seen && (d->max_bps <= 0 || seen < d->max_bps);
	if (*observed)
		return seen;
	return d->max_bps > 0 ? d->max_bps : 1;
}

static int first_pass_launch(struct tstate *ts, const struct ldesc *d, struct blocks *bl)
{
	struct nt_replay_block *rb = NULL;
	int32_t *wave = NULL, *cores = NULL;
	int slots, observed, ret = -1, n_sm = ts->sm_count[d->device];

	bl->n = 0;
	if (nt_trace_foreach_block(ts->t, d->launch, on_block, bl, ts->err))
		return -1;
	if (!bl->n)
		return 0;
	rb = malloc(bl->n * sizeof(*rb));
	wave = malloc(bl->n * sizeof(*wave));
	cores = malloc(bl->n * sizeof(*cores));
	if (!rb || !wave || !cores) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < bl->n; i++) {
		rb[i].t_start_ns = bl->t0[i];
		rb[i].t_end_ns = bl->t1[i];
		rb[i].sm = bl->sm[i];
	}
	slots = launch_slots(d, rb, bl->n, &observed);
	if (nt_attrib_waves(bl->t0, bl->n, (int64_t)slots * (n_sm > 0 ? n_sm : 1), wave, ts->err) ||
	    nt_attrib_coresidency(bl->sm, bl->t0, bl->t1, bl->n, cores, ts->err))
		goto out;
	for (size_t i = 0; i < bl->n; i++) {
		struct nt_attrib_block ab = { bl->sm[i], wave[i], cores[i], d->launch,
					      (double)(bl->t1[i] - bl->t0[i]), bl->cyc[i] };

		if (keep_for_fit(ts, d->kernel, &ab)) {
			nt_err_set(ts->err, "out of memory");
			goto out;
		}
	}
	ret = 0;
out:
	free(rb);
	free(wave);
	free(cores);
	return ret;
}

/* The fit's sample of each kernel: every launch while the kernel has at
 * most NT_REPORT_FIT_BLOCKS blocks in all, else every stride-th launch
 * (stride = blocks / NT_REPORT_FIT_BLOCKS, rounded up), spread over the
 * run; reading and preparing the others would cost most of the report's
 * time for nothing (the reservoir in keep_for_fit bounds the rest).
 * Counts come from the launch rows, so every launch is counted. */
static int fit_samples(struct tstate *ts, struct blocks *bl)
{
	struct nt_report *r = ts->r;
	int64_t *total = calloc(r->n_kernels ? r->n_kernels : 1, sizeof(*total));
	int *seen = calloc(r->n_kernels ? r->n_kernels : 1, sizeof(*seen));
	int ret = -1;

	if (!total || !seen) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ts->n_ld; i++) {
		struct nt_report_kernel *k = &r->kernels[ts->ld[i].kernel];

		total[ts->ld[i].kernel] += ts->ld[i].blocks;
		k->launches++;
		k->blocks += ts->ld[i].blocks;
	}
	for (size_t i = 0; i < ts->n_ld; i++) {
		int ki = ts->ld[i].kernel;
		int64_t stride = (total[ki] + NT_REPORT_FIT_BLOCKS - 1) / NT_REPORT_FIT_BLOCKS;

		if (seen[ki]++ % (stride > 0 ? stride : 1))
			continue;
		if (first_pass_launch(ts, &ts->ld[i], bl))
			goto out;
	}
	ret = 0;
out:
	free(total);
	free(seen);
	return ret;
}

/* The map's latencies with unmeasured SMs at the mean: the replay needs
 * a value for every SM. */
static double *replay_lat(const struct nt_map *m, int n_sm)
{
	double *lat = malloc((n_sm > 0 ? n_sm : 1) * sizeof(*lat)), sum = 0;
	int used = 0;

	if (!lat)
		return NULL;
	for (int s = 0; s < m->n_sm && s < n_sm; s++)
		if (!isnan(m->chain[s]))
			sum += m->chain[s], used++;
	for (int s = 0; s < n_sm; s++)
		lat[s] = s < m->n_sm && !isnan(m->chain[s]) ? m->chain[s] : used ? sum / used : 0;
	return lat;
}

/* A persistent kernel's work share per SM by the kernel's fit (replay.h:
 * in proportion to 1 / rho).  Left NULL when the fit gives some SM no
 * positive time, or out of memory: the report then has no shares. */
static void kernel_shares(struct nt_report_kernel *k, const struct nt_map *m, int n_sm)
{
	double *lat = replay_lat(m, n_sm), *rho = malloc(n_sm * sizeof(*rho)), sum = 0;

	if (lat && rho && !nt_replay_rho(lat, n_sm, k->fit.intercept_ns, k->fit.slope_ns, rho, NULL)) {
		for (int s = 0; s < n_sm; s++)
			sum += 1 / rho[s];
		for (int s = 0; s < n_sm; s++)
			rho[s] = 1 / rho[s] / (sum / n_sm);
		k->shares = rho;
		k->n_shares = n_sm;
		rho = NULL;
	}
	free(lat);
	free(rho);
}

static void second_pass_launch(struct tstate *ts, const struct ldesc *d, struct nt_report_launch *out)
{
	struct nt_report_kernel *k = &ts->r->kernels[d->kernel];
	struct nt_map *m = ts->maps[d->device];
	struct nt_replay_input in = { 0 };
	struct nt_replay_block *rb = NULL;
	double *lat = NULL;
	struct nt_err err;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->trace = ts->trace;
	out->kernel = d->kernel;
	out->launch = d->launch;
	if (nt_replay_read_launch(ts->t, d->launch, &rb, &n, &err) || !n) {
		snprintf(out->why, sizeof(out->why), "%.95s", n ? err.msg : "no blocks");
		goto out;
	}
	in.n_sm = ts->sm_count[d->device];
	in.slots = out->slots = launch_slots(d, rb, n, &out->slots_observed);
	in.blocks = rb;
	in.n_blocks = n;
	if (m && k->fitted && k->fit.fitted && (lat = replay_lat(m, in.n_sm))) {
		in.lat = lat;
		in.slope = k->fit.slope_ns;
	}
	if (nt_replay_run(&in, &out->r, &err)) {
		snprintf(out->why, sizeof(out->why), "%.95s", err.msg);
		goto out;
	}
	out->ok = 1;
	k->replayed++;
	k->time_ns += out->r.measured_ns;
	if (fabs(out->r.error_pct) > k->replay_err_max_pct)
		k->replay_err_max_pct = fabs(out->r.error_pct);
	if (fabs(out->r.error_pct) > NT_REPORT_MAX_REPLAY_ERR)
		goto out;
	k->credible++;
	k->time_ns_credible += out->r.measured_ns;
	k->lost_ns += out->r.lost_ns;
	k->recoverable_ns += out->r.recoverable_ns;
	k->placement_ns += out->r.placement_ns;
	k->tail_ns += out->r.tail_ns;
	if (isfinite(out->r.persist_ns)) {
		k->persist_ns += out->r.persist_ns;
		k->rebalance_ns += out->r.rebalance_ns;
		k->quantisation_ns += out->r.quantisation_ns;
	}
out:
	free(rb);
	free(lat);
}

static int read_trace(struct nt_report *r, int ti, nt_report_map_fn get_map, void *arg, struct nt_err *err)
{
	struct tstate ts = { .r = r, .trace = ti, .rng = 0x9E3779B97F4A7C15ULL, .err = err };
	struct nt_report_trace *tr = &r->traces[ti];
	struct blocks bl = { 0 };
	size_t first_launch = r->n_launches;
	char buf[32];
	int ret = -1, k0 = r->n_kernels;

	ts.cap_k = r->n_kernels;
	if (nt_trace_open(tr->path, &ts.t, err))
		return -1;
	tr->rank = -1;
	if (!nt_trace_get_meta(ts.t, "backend", buf, sizeof(buf), NULL))
		snprintf(tr->backend, sizeof(tr->backend), "%.15s", buf);
	if (!nt_trace_get_meta(ts.t, "rank", buf, sizeof(buf), NULL))
		tr->rank = atoi(buf);
	if (nt_trace_foreach_device(ts.t, on_device, &ts, err))
		goto out;
	/* fb/n_fb/seen_fb are indexed by kernel: make room for the earlier
	 * traces' kernels too, which this trace never touches. */
	if (k0 && (!(ts.fb = calloc(k0, sizeof(*ts.fb))) || !(ts.n_fb = calloc(k0, sizeof(*ts.n_fb))) ||
		   !(ts.seen_fb = calloc(k0, sizeof(*ts.seen_fb))))) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	if (nt_trace_foreach_launch(ts.t, on_launch, &ts, err) || ts.failed)
		goto out;
	tr->has_map = 1;
	for (size_t i = 0; i < ts.n_ld; i++) {
		int dev = ts.ld[i].device;

		if (ts.maps[dev])
			continue;
		if (nt_trace_get_map(ts.t, ts.uuid[dev], &ts.maps[dev], NULL) &&
		    (!get_map || get_map(ts.uuid[dev], &ts.maps[dev], arg)))
			tr->has_map = 0;
	}
	if (fit_samples(&ts, &bl))
		goto out;
	for (int k = k0; k < r->n_kernels; k++) {
		struct nt_report_kernel *e = &r->kernels[k];
		struct nt_map *m = ts.maps[e->device];
		struct nt_err ferr;

		if (!m || !ts.n_fb[k])
			continue;
		e->fitted = !nt_attrib_fit(ts.fb[k], ts.n_fb[k], m->chain, m->n_sm, &e->fit, &ferr);
		if (e->fitted && e->fit.fitted)
			kernel_shares(e, m, ts.sm_count[e->device]);
	}
	{
		void *p = realloc(r->launches, (r->n_launches + ts.n_ld + 1) * sizeof(*r->launches));

		if (!p) {
			nt_err_set(err, "out of memory");
			goto out;
		}
		r->launches = p;
	}
	for (size_t i = 0; i < ts.n_ld; i++)
		second_pass_launch(&ts, &ts.ld[i], &r->launches[first_launch + i]);
	r->n_launches += ts.n_ld;
	ret = 0;
out:
	for (int k = 0; k < r->n_kernels && ts.fb; k++)
		free(ts.fb[k]);
	free(ts.fb);
	free(ts.n_fb);
	free(ts.seen_fb);
	free(ts.ld);
	free(bl.sm);
	free(bl.t0);
	free(bl.t1);
	free(bl.cyc);
	for (int d = 0; d < MAX_DEVICES; d++)
		nt_map_free(ts.maps[d]);
	nt_trace_close(ts.t);
	return ret;
}

int nt_report_build(const char *const *paths, int n, nt_report_map_fn get_map, void *arg,
		    struct nt_report **out, struct nt_err *err)
{
	struct nt_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->traces = calloc(n > 0 ? n : 1, sizeof(*r->traces)))) {
		free(r);
		return nt_err_set(err, "out of memory");
	}
	r->n_traces = n;
	for (int i = 0; i < n; i++) {
		if (!(r->traces[i].path = strdup(paths[i])) || read_trace(r, i, get_map, arg, err)) {
			if (!r->traces[i].path)
				nt_err_set(err, "out of memory");
			nt_report_free(r);
			return -1;
		}
	}
	for (int k = 0; k < r->n_kernels; k++) {
		const struct nt_report_kernel *e = &r->kernels[k];

		r->time_ns += e->time_ns;
		r->time_ns_credible += e->time_ns_credible;
		r->lost_ns += e->lost_ns;
		r->recoverable_ns += e->recoverable_ns;
		r->placement_ns += e->placement_ns;
		r->tail_ns += e->tail_ns;
		r->persist_ns += e->persist_ns;
		r->rebalance_ns += e->rebalance_ns;
		r->quantisation_ns += e->quantisation_ns;
		r->replayed += e->replayed;
		r->credible += e->credible;
		r->blocks += e->blocks;
		if (e->replay_err_max_pct > r->replay_err_max_pct)
			r->replay_err_max_pct = e->replay_err_max_pct;
	}
	*out = r;
	return 0;
}

void nt_report_free(struct nt_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n_traces; i++)
		free(r->traces[i].path);
	for (int k = 0; k < r->n_kernels; k++) {
		free(r->kernels[k].name);
		free(r->kernels[k].demangled);
		free(r->kernels[k].shares);
	}
	free(r->traces);
	free(r->kernels);
	free(r->launches);
	free(r);
}

static const struct nt_report *rank_of;

static int by_recoverable(const void *a, const void *b)
{
	double x = rank_of->kernels[*(const int *)a].recoverable_ns;
	double y = rank_of->kernels[*(const int *)b].recoverable_ns;

	if (x != y)
		return (x < y) - (x > y);
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int *nt_report_rank_kernels(const struct nt_report *r)
{
	int *idx = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (int k = 0; k < r->n_kernels; k++)
		idx[k] = k;
	rank_of = r;
	qsort(idx, r->n_kernels, sizeof(*idx), by_recoverable);
	return idx;
}
