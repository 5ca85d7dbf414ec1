/* Building a report from trace files (report.h): each trace's devices,
 * maps and launches, the replay of each launch, and the sums;
 * report_fit.c fits the kernels in between. */
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_impl.h"
#include "util/demangle.h"
#include "util/workers.h"

/* out of memory in HASH_ADD leaves the entry out instead of exiting */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (oom = 1)
#include <uthash.h>

int nt_report_resize(void *pp, size_t n, size_t size)
{
	void **p = pp, *q = realloc(*p, (n ? n : 1) * size);

	if (!q)
		return -1;
	*p = q;
	return 0;
}

static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (nt_report_resize(pp, n, size))
		return -1;
	*cap = n;
	return 0;
}

/* A kernel of this trace as the table finds it: the launch's device,
 * grid and block, then the name; a program with dynamic shapes makes
 * many, and a scan per launch made the report quadratic in them. */
struct kernel_key {
	UT_hash_handle hh;
	int index;		/* into r->kernels */
	size_t len;
	char key[];
};

/* The key of a kernel at a configuration into ts->kbuf: its length, 0
 * when out of memory. */
static size_t make_key(struct tstate *ts, const struct nt_report_config *c, const char *name)
{
	int32_t dims[7] = { c->device, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2] };
	size_t n = strlen(name), len = sizeof(dims) + n;

	if (len > ts->kcap) {
		char *p = realloc(ts->kbuf, len);

		if (!p)
			return 0;
		ts->kbuf = p;
		ts->kcap = len;
	}
	memcpy(ts->kbuf, dims, sizeof(dims));
	memcpy(ts->kbuf + sizeof(dims), name, n);
	return len;
}

static void free_keys(struct tstate *ts)
{
	struct kernel_key *e, *tmp;

	HASH_ITER(hh, ts->keys, e, tmp) {
		HASH_DEL(ts->keys, e);
		free(e);
	}
	free(ts->kbuf);
	ts->keys = NULL;
	ts->kbuf = NULL;
}

int nt_report_lookup_kernel(struct tstate *ts, const struct nt_report_config *c, const char *name)
{
	struct kernel_key *found;
	size_t len = make_key(ts, c, name);

	if (!len)
		return -2;
	HASH_FIND(hh, ts->keys, ts->kbuf, len, found);
	return found ? found->index : -1;
}

static int find_kernel(struct tstate *ts, const struct nt_trace_launch *l, const struct nt_trace_kernel *k)
{
	struct nt_report *r = ts->r;
	const char *name = k && *k->mangled ? k->mangled : "?";
	struct nt_report_config c = { l->device, { l->grid_x, l->grid_y, l->grid_z },
				      { l->block_x, l->block_y, l->block_z } };
	struct nt_report_kernel *e;
	struct kernel_key *found;
	int oom = 0, at = nt_report_lookup_kernel(ts, &c, name);
	size_t len;

	if (at != -1)
		return at < 0 ? -1 : at;
	len = make_key(ts, &c, name);
	if (!(found = malloc(sizeof(*found) + len)))
		return -1;
	found->index = r->n_kernels;
	found->len = len;
	memcpy(found->key, ts->kbuf, len);
	HASH_ADD_KEYPTR(hh, ts->keys, found->key, found->len, found);
	if (oom) {
		free(found);
		return -1;
	}
	if (r->n_kernels == ts->cap_k) {
		int cap = ts->cap_k ? 2 * ts->cap_k : 16;

		if (nt_report_resize(&r->kernels, cap, sizeof(*r->kernels)) ||
		    nt_report_resize(&ts->fb, cap, sizeof(*ts->fb)) ||
		    nt_report_resize(&ts->n_fb, cap, sizeof(*ts->n_fb)) ||
		    nt_report_resize(&ts->seen_fb, cap, sizeof(*ts->seen_fb)))
			return -1;
		ts->cap_k = cap;
	}
	e = &r->kernels[r->n_kernels];
	memset(e, 0, sizeof(*e));
	e->lat_median = NAN;
	e->q_value = NAN;
	e->follows = -1;
	e->follows_r = e->follows_map_r = NAN;
	for (int v = 0; v < NT_COV_COUNT; v++)
		e->cov_r[v] = e->cov_map_r[v] = NAN;
	e->native_ns = e->traced_min_ns = -1;
	e->probe_share = NAN;
	e->name = strdup(name);
	/* traces from processes without a demangler at hand have none */
	e->demangled = k && k->demangled ? strdup(k->demangled) : nt_demangle(name);
	if (!e->name)
		return -1;
	e->collective = nt_report_is_collective(e->name, e->demangled);
	e->trace = ts->trace;
	e->device = l->device;
	e->grid[0] = l->grid_x, e->grid[1] = l->grid_y, e->grid[2] = l->grid_z;
	e->block[0] = l->block_x, e->block[1] = l->block_y, e->block[2] = l->block_z;
	ts->fb[r->n_kernels] = NULL;
	ts->n_fb[r->n_kernels] = ts->seen_fb[r->n_kernels] = 0;
	return r->n_kernels++;
}

/* A traced launch left out for a bad row (report.h). */
static void skip(struct nt_report_trace *tr, const char *why)
{
	if (!tr->skipped++)
		snprintf(tr->skipped_why, sizeof(tr->skipped_why), "%s", why);
}

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct tstate *ts = arg;
	struct nt_report_trace *tr = &ts->r->traces[ts->trace];
	struct ldesc *d;
	char why[160];
	int ki;

	tr->launches++;
	if (!l->traced || l->blocks <= 0)
		return 0;
	tr->traced++;
	if (nt_report_launch_ok(l, l->device >= 0 && l->device < MAX_DEVICES && ts->dev[l->device] >= 0,
				why, sizeof(why))) {
		skip(tr, why);
		return 0;
	}
	if (l->t_start_ns >= 0 && (tr->t_first_ns < 0 || l->t_start_ns < tr->t_first_ns))
		tr->t_first_ns = l->t_start_ns;
	ki = find_kernel(ts, l, k);
	if (ki < 0 || grow(&ts->ld, &ts->cap_ld, ts->n_ld + 1, sizeof(*ts->ld))) {
		nt_err_set(ts->err, "out of memory");
		return ts->failed = -1;
	}
	d = &ts->ld[ts->n_ld++];
	d->launch = l->launch;
	d->blocks = l->blocks;
	d->t_start_ns = l->t_start_ns;
	d->t_end_ns = l->t_end_ns;
	d->device = l->device;
	d->kernel = ki;
	d->max_bps = l->max_blocks_per_sm;
	d->entry_only = l->entry_only == 1;
	d->graph = l->graph >= 0 && l->graph_launch >= 0 ? l->graph : -1;
	d->graph_launch = d->graph >= 0 ? l->graph_launch : -1;
	return 0;
}

static int on_device(const struct nt_trace_device *d, void *arg)
{
	struct tstate *ts = arg;
	struct nt_report *r = ts->r;
	struct nt_report_trace *tr = &r->traces[ts->trace];
	struct nt_report_device *e;
	char why[160];

	if (nt_report_device_ok(d, why, sizeof(why))) {
		nt_err_set(ts->err, "trace '%s': %s", tr->path, why);
		return ts->failed = -1;
	}
	if (!tr->n_devices++) {
		memcpy(tr->uuid, d->uuid, sizeof(tr->uuid));
		memcpy(tr->gpu, d->name, sizeof(tr->gpu));
		tr->sm_count = d->sm_count;
	}
	if (nt_report_resize(&r->devices, r->n_devices + 1, sizeof(*r->devices))) {
		nt_err_set(ts->err, "out of memory");
		return ts->failed = -1;
	}
	e = &r->devices[r->n_devices];
	memset(e, 0, sizeof(*e));
	e->trace = ts->trace;
	e->device = d->device;
	memcpy(e->uuid, d->uuid, sizeof(e->uuid));
	memcpy(e->name, d->name, sizeof(e->name));
	e->sm_count = d->sm_count;
	ts->dev[d->device] = r->n_devices++;
	return 0;
}

static struct nt_report_device *device_of(struct tstate *ts, int ordinal)
{
	return ts->dev[ordinal] < 0 ? NULL : &ts->r->devices[ts->dev[ordinal]];
}

struct nt_map *nt_report_map(struct tstate *ts, int ordinal)
{
	struct nt_report_device *d = device_of(ts, ordinal);

	return d ? d->map : NULL;
}

int nt_report_sm_count(struct tstate *ts, int ordinal)
{
	struct nt_report_device *d = device_of(ts, ordinal);

	return d ? d->sm_count : 0;
}

/* Each device's map: the trace's, else get_map's for a device with
 * traced launches.  has_map says whether every device with traced
 * launches has one, and no_map why not: the trace's message (its map
 * damaged, or none there). */
static void find_maps(struct tstate *ts, nt_report_map_fn get_map, void *arg)
{
	struct nt_report_trace *tr = &ts->r->traces[ts->trace];
	unsigned char used[MAX_DEVICES] = { 0 };
	struct nt_err err;

	for (size_t i = 0; i < ts->n_ld; i++)
		used[ts->ld[i].device] = 1;
	tr->has_map = 1;
	for (int o = 0; o < MAX_DEVICES; o++) {
		struct nt_report_device *d = device_of(ts, o);

		if (!d)
			continue;
		if (!nt_trace_get_map(ts->t, d->uuid, &d->map, &err)) {
			d->map_in_trace = 1;
		} else if (used[o] && (!get_map || get_map(d->uuid, &d->map, arg))) {
			if (tr->has_map)
				snprintf(tr->no_map, sizeof(tr->no_map), "%.150s%s", err.msg,
					 get_map ? "; none from --map or the store either" : "");
			tr->has_map = 0;
		}
	}
}

/* The limit alone can be far above what a small grid used and would let
 * the counterfactuals stack blocks on the fast SMs as if co-resident
 * blocks never slowed each other; the records alone overstate it on
 * multi-wave launches (a block is seen starting before its predecessor's
 * exit is recorded). */
int nt_report_slots_seen(const struct ldesc *d, int seen, int *observed)
{
	seen = seen < 1 ? 0 : seen;
	*observed = seen && (d->max_bps <= 0 || seen < d->max_bps);
	if (*observed)
		return seen;
	return d->max_bps > 0 ? d->max_bps : 1;
}

int nt_report_launch_slots(const struct ldesc *d, const struct nt_replay_block *rb, size_t n, int *observed)
{
	int seen = 0;

	if (nt_replay_observed_slots(rb, n, &seen, NULL))
		seen = 0;
	return nt_report_slots_seen(d, seen, observed);
}

double *nt_report_replay_lat(const struct nt_map *m, int n_sm)
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

/* How a launch's replay went, for accumulate(). */
enum { REPLAY_NOT, REPLAY_BAD_ROW, REPLAY_ONE_WAVE, REPLAY_OK };

/* Stage 3's work on one launch, into out: its blocks read and replayed.
 * It only reads the report (its kernel's fit and native time are final
 * by now), so launches may run on several threads, each with its own
 * handle on the trace (ts->t); accumulate() adds them up, in order. */
static int second_pass_launch(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl,
			      struct nt_report_launch *out)
{
	const struct nt_report_kernel *k = &ts->r->kernels[d->kernel];
	int how = REPLAY_NOT;
	struct nt_map *m = nt_report_map(ts, d->device);
	struct nt_replay_input in = { 0 };
	struct nt_dispatch_prep prep = { 0 };
	struct nt_replay_block *rb = NULL;
	double *lat = NULL, *offset = NULL;
	struct nt_err err;
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	out->scale = 1;
	out->trace = ts->trace;
	out->kernel = d->kernel;
	out->launch = d->launch;
	out->blocks = d->blocks;
	out->t_start_ns = d->t_start_ns;
	out->t_end_ns = d->t_end_ns;
	out->graph = d->graph;
	out->graph_launch = d->graph_launch;
	out->max_bps = d->max_bps;
	out->entry_only = d->entry_only;
	if ((ret = nt_report_read_blocks(ts, d, bl, &err)) || !bl->n) {
		if (ret > 0)
			how = REPLAY_BAD_ROW;
		snprintf(out->why, sizeof(out->why), "%.191s", ret > 0 ? bl->why : ret ? err.msg : "no blocks");
		goto out;
	}
	out->inferred = bl->inferred;
	if (d->entry_only && !bl->inferred.inferred) {
		how = REPLAY_ONE_WAVE;
		snprintf(out->why, sizeof(out->why), "entry-only blocks in one wave: no SM started a block "
			 "after its first %d, so no block's end can be inferred", bl->slots);
		goto out;
	}
	if (!(rb = nt_report_replay_blocks(bl))) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		goto out;
	}
	n = bl->n;
	in.n_sm = nt_report_sm_count(ts, d->device);
	/* the launch's times sorted once, for the slots it shows and its
	 * dispatch */
	if (nt_dispatch_prepare(rb, n, in.n_sm, &prep, &err)) {
		out->slots = nt_report_launch_slots(d, rb, n, &out->slots_observed);
		snprintf(out->why, sizeof(out->why), "%.191s", err.msg);
		goto out;
	}
	in.slots = out->slots = nt_report_slots_seen(d, prep.observed_slots, &out->slots_observed);
	in.blocks = rb;
	in.n_blocks = n;
	if (!(offset = malloc((size_t)in.n_sm * sizeof(*offset)))) {
		snprintf(out->why, sizeof(out->why), "out of memory");
		goto out;
	}
	if (nt_dispatch_fit_prepared(&prep, in.slots, offset, &out->dispatch, &err)) {
		snprintf(out->why, sizeof(out->why), "%.191s", err.msg);
		goto out;
	}
	in.sm_offset = offset;
	in.turnaround_ns = out->dispatch.turnaround_ns;
	in.gap_ns = out->dispatch.gap_ns;
	if (m && k->sensitive && (lat = nt_report_replay_lat(m, in.n_sm))) {
		in.lat = lat;
		in.slope = k->fit.slope_ns;
	}
	if (nt_replay_run(&in, &out->r, &err)) {
		snprintf(out->why, sizeof(out->why), "%.191s", err.msg);
		goto out;
	}
	out->ok = 1;
	how = REPLAY_OK;
	out->scale = k->native_ns > 0 && k->native_ns < out->r.measured_ns ? k->native_ns / out->r.measured_ns : 1;
	if (fabs(out->r.error_pct) > NT_REPORT_MAX_REPLAY_ERR)
		snprintf(out->why, sizeof(out->why), "replay %.1f%% %s of the measured %.1f us; %.2f waves; "
			 "block starts off by a median %.1f%% of the makespan", fabs(out->r.error_pct),
			 out->r.error_pct < 0 ? "short" : "long", out->r.measured_ns / 1e3, out->r.waves,
			 out->r.start_err_pct);
out:
	nt_dispatch_prep_free(&prep);
	free(rb);
	free(lat);
	free(offset);
	return how;
}

/* A launch's part of its kernel's and trace's figures (how: what
 * second_pass_launch returned), in launch order: the sums come out the
 * same whatever the threads. */
static void accumulate(struct tstate *ts, const struct ldesc *d, const struct nt_report_launch *out, int how)
{
	struct nt_report_kernel *k = &ts->r->kernels[d->kernel];
	double sc;

	if (how == REPLAY_BAD_ROW)
		skip(&ts->r->traces[ts->trace], out->why);
	if (how == REPLAY_ONE_WAVE)
		k->ends_unknown++;
	if (how != REPLAY_OK)
		return;
	k->replayed++;
	k->time_ns += out->r.measured_ns;
	if (fabs(out->r.error_pct) > k->replay_err_max_pct)
		k->replay_err_max_pct = fabs(out->r.error_pct);
	if (fabs(out->r.error_pct) > NT_REPORT_MAX_REPLAY_ERR)
		return;
	/* in native time where there is one (report.h) */
	sc = out->scale;
	k->credible++;
	k->traced_credible_ns += out->r.measured_ns;
	k->time_ns_credible += sc * out->r.measured_ns;
	k->lost_ns += sc * out->r.lost_ns;
	k->recoverable_ns += sc * out->r.recoverable_ns;
	k->placement_ns += sc * out->r.placement_ns;
	k->tail_ns += sc * out->r.tail_ns;
	if (isfinite(out->r.persist_ns)) {
		k->persist_ns += sc * out->r.persist_ns;
		k->rebalance_ns += sc * out->r.rebalance_ns;
		k->quantisation_ns += sc * out->r.quantisation_ns;
	}
}

/* An integer meta value, -1 when absent or not a number. */
static int64_t meta_i64(struct tstate *ts, const char *key)
{
	char buf[32], *end;
	long long v;

	if (nt_trace_get_meta(ts->t, key, buf, sizeof(buf), NULL))
		return -1;
	v = strtoll(buf, &end, 10);
	return end != buf && !*end && v >= 0 ? v : -1;
}

/* Distinct drop reasons counted before the report keeps its
 * NT_REPORT_DROP_REASONS most frequent; beyond, a trace's further reasons
 * go to dropped_other at once (a hostile trace's memory stays bounded). */
#define DROP_REASONS_SEEN 1024
/* A reason is kept to this many bytes (ours are under 300), cut at a
 * character and ended with "...": a hostile trace's megabytes of reason
 * would take memory, and the text report's wrapping time. */
#define DROP_REASON_MAX 512

struct drop_reason {
	struct nt_report_drop d;
	UT_hash_handle hh;
};

struct drop_walk {
	struct tstate *ts;
	struct drop_reason *by_reason;
	unsigned n;
};

/* a + b, both >= 0, at most INT64_MAX (a hostile trace's counts) */
static int64_t add_sat(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* A row of the trace's drops (a count of 0 or less taken for 1),
 * counted under its reason. */
static int on_drop(const struct nt_trace_drop *d, void *arg)
{
	struct drop_walk *w = arg;
	struct nt_report_trace *tr = &w->ts->r->traces[w->ts->trace];
	const char *why = d->reason ? d->reason : "";
	int64_t n = d->count > 0 ? d->count : 1;
	char cut[DROP_REASON_MAX + 1];
	struct drop_reason *e;
	int oom = 0;

	if (strlen(why) > DROP_REASON_MAX) {
		size_t keep = DROP_REASON_MAX - 3;

		while (keep > 0 && ((unsigned char)why[keep] & 0xc0) == 0x80)	/* inside a character */
			keep--;
		memcpy(cut, why, keep);
		memcpy(cut + keep, "...", 4);
		why = cut;
	}
	tr->dropped = add_sat(tr->dropped, n);
	HASH_FIND_STR(w->by_reason, why, e);
	if (!e && w->n == DROP_REASONS_SEEN) {
		tr->dropped_other = add_sat(tr->dropped_other, n);
		return 0;
	}
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))) || !(e->d.reason = strdup(why))) {
			free(e);
			return nt_err_set(w->ts->err, "out of memory");
		}
		HASH_ADD_KEYPTR(hh, w->by_reason, e->d.reason, strlen(e->d.reason), e);
		if (oom) {
			free(e->d.reason);
			free(e);
			return nt_err_set(w->ts->err, "out of memory");
		}
		w->n++;
	}
	e->d.count = add_sat(e->d.count, n);
	return 0;
}

/* Most first; ties by reason, so that the order does not depend on the
 * table's. */
static int by_count(const void *a, const void *b)
{
	const struct nt_report_drop *x = a, *y = b;

	if (x->count != y->count)
		return (x->count < y->count) - (x->count > y->count);
	return strcmp(x->reason, y->reason);
}

/* The trace's drops into tr: its NT_REPORT_DROP_REASONS most frequent
 * reasons, the rest in dropped_other; -1 when the table cannot be read. */
static int read_drops(struct tstate *ts, struct nt_report_trace *tr)
{
	struct drop_walk w = { ts, NULL, 0 };
	struct drop_reason *e, *tmp;
	struct nt_report_drop *all = NULL;
	int n = 0, ret = nt_trace_foreach_drop(ts->t, on_drop, &w, ts->err);

	if (!ret && w.n && !(all = malloc(w.n * sizeof(*all))))
		ret = nt_err_set(ts->err, "out of memory");
	HASH_ITER(hh, w.by_reason, e, tmp) {
		HASH_DEL(w.by_reason, e);
		if (all)
			all[n++] = e->d;
		else
			free(e->d.reason);
		free(e);
	}
	if (ret)
		return -1;
	if (n)
		qsort(all, (size_t)n, sizeof(*all), by_count);
	for (int i = NT_REPORT_DROP_REASONS; i < n; i++) {
		tr->dropped_other = add_sat(tr->dropped_other, all[i].count);
		free(all[i].reason);
	}
	tr->n_drops = n < NT_REPORT_DROP_REASONS ? n : NT_REPORT_DROP_REASONS;
	if (tr->n_drops) {
		struct nt_report_drop *kept = realloc(all, (size_t)tr->n_drops * sizeof(*all));

		tr->drops = kept ? kept : all;
	} else {
		free(all);
	}
	return 0;
}

/* The process's meta that tells jobs apart (job.h). */
static int read_process(struct tstate *ts, struct nt_report_trace *tr)
{
	size_t len = 1 << 16;
	char *buf = malloc(len);

	if (!buf)
		return nt_err_set(ts->err, "out of memory");
	tr->cmdline = strdup(nt_trace_get_meta(ts->t, "cmdline", buf, len, NULL) ? "" : buf);
	tr->exe = strdup(nt_trace_get_meta(ts->t, "exe", buf, len, NULL) ? "" : buf);
	if (nt_trace_get_meta(ts->t, "host", tr->host, sizeof(tr->host), NULL))
		tr->host[0] = '\0';
	free(buf);
	tr->pid = meta_i64(ts, "pid");
	tr->start_unix_ns = meta_i64(ts, "start_unix_ns");
	tr->end_unix_ns = meta_i64(ts, "end_unix_ns");
	tr->complete = meta_i64(ts, "complete") == 1;
	tr->probe_shape_r_calib = NAN;
	return tr->cmdline && tr->exe ? 0 : nt_err_set(ts->err, "out of memory");
}

/* Stage 1 of a trace (on its own thread): its meta, devices, launches
 * and kernels, into its shard.  ts stays open until tstate_close. */
static int read_rows(struct nt_report *r, int ti, struct tstate *ts)
{
	struct nt_report_trace *tr = &r->traces[ti];
	char buf[32];

	ts->shard.traces = r->traces;
	ts->r = &ts->shard;
	ts->trace = ti;
	ts->rng = 0x9E3779B97F4A7C15ULL;
	ts->err = &ts->own_err;
	for (int d = 0; d < MAX_DEVICES; d++)
		ts->dev[d] = -1;
	tr->rank = -1;
	tr->t_first_ns = -1;
	if (nt_trace_open(tr->path, &ts->t, ts->err))
		return -1;
	if (!nt_trace_get_meta(ts->t, "backend", buf, sizeof(buf), NULL))
		snprintf(tr->backend, sizeof(tr->backend), "%.15s", buf);
	if (!nt_trace_get_meta(ts->t, "rank", buf, sizeof(buf), NULL))
		tr->rank = atoi(buf);
	if (read_process(ts, tr))
		return -1;
	if (nt_trace_foreach_device(ts->t, on_device, ts, ts->err) || ts->failed)
		return -1;
	if (nt_trace_foreach_launch(ts->t, on_launch, ts, ts->err) || ts->failed)
		return -1;
	/* what was not traced is told, not needed: a damaged drops table
	 * (or no memory) leaves it unknown, dropped -1 */
	if (read_drops(ts, tr)) {
		tr->dropped = -1;
		tr->dropped_other = 0;
	}
	return 0;
}

/* Between stages 1 and 2, in trace order: the trace's shard appended to
 * the report, its indices made the report's. */
static int merge_shard(struct nt_report *r, struct tstate *ts)
{
	struct nt_report *sh = &ts->shard;
	struct kernel_key *e, *tmp;

	if (nt_report_resize(&r->kernels, r->n_kernels + sh->n_kernels, sizeof(*r->kernels)) ||
	    nt_report_resize(&r->devices, r->n_devices + sh->n_devices, sizeof(*r->devices)))
		return nt_err_set(ts->err, "out of memory");
	ts->k0 = r->n_kernels;
	ts->n_k = sh->n_kernels;
	if (sh->n_kernels)
		memcpy(r->kernels + r->n_kernels, sh->kernels, sh->n_kernels * sizeof(*r->kernels));
	if (sh->n_devices)
		memcpy(r->devices + r->n_devices, sh->devices, sh->n_devices * sizeof(*r->devices));
	for (size_t i = 0; i < ts->n_ld; i++)
		ts->ld[i].kernel += ts->k0;
	HASH_ITER(hh, ts->keys, e, tmp)
		e->index += ts->k0;
	for (int o = 0; o < MAX_DEVICES; o++)
		if (ts->dev[o] >= 0)
			ts->dev[o] += r->n_devices;
	r->n_kernels += sh->n_kernels;
	r->n_devices += sh->n_devices;
	free(sh->kernels);
	free(sh->devices);
	memset(sh, 0, sizeof(*sh));
	ts->r = r;
	return 0;
}

/* After stage 2: a trace's fit samples freed. */
static void free_fits(struct tstate *ts)
{
	for (int k = 0; k < ts->n_k && ts->fb; k++)
		free(ts->fb[k]);
	free(ts->fb);
	free(ts->n_fb);
	free(ts->seen_fb);
	ts->fb = NULL;
	ts->n_fb = ts->seen_fb = NULL;
	free_keys(ts);
}

/* Stage 3, once every kernel has its verdict: each trace's launches
 * replayed into its part of r->launches (a launch that cannot be is left
 * out with why, never an error), in chunks of consecutive launches that
 * any thread may take, so that one big trace uses every core (issue 32):
 * each chunk reads its trace through a handle of its own (a SQLite
 * connection is one thread's at a time).  Then, trace after trace and
 * launch after launch, accumulate(). */
struct replay_chunk {
	int trace;
	size_t first, n;	/* the trace's launches first .. first + n - 1 */
};

struct replays {
	struct nt_report *r;
	struct tstate *ts;
	struct replay_chunk *chunk;
	unsigned char *how;	/* per launch of r->launches */
};

static int replay_chunk(int i, void *arg)
{
	struct replays *rp = arg;
	const struct replay_chunk *c = &rp->chunk[i];
	struct tstate w = rp->ts[c->trace];	/* read-only but for its trace handle */
	const struct nt_report_trace *tr = &rp->r->traces[c->trace];
	struct nt_report_blocks bl = { 0 };
	struct nt_err err;

	w.err = &w.own_err;
	if (nt_trace_open(tr->path, &w.t, &err)) {
		for (size_t j = c->first; j < c->first + c->n; j++) {
			struct nt_report_launch *out = &rp->r->launches[tr->first_launch + j];

			memset(out, 0, sizeof(*out));
			out->scale = 1;
			out->trace = c->trace;
			out->kernel = w.ld[j].kernel;
			out->launch = w.ld[j].launch;
			snprintf(out->why, sizeof(out->why), "%.191s", err.msg);
		}
		return 0;
	}
	for (size_t j = c->first; j < c->first + c->n; j++)
		rp->how[tr->first_launch + j] = (unsigned char)second_pass_launch(&w, &w.ld[j], &bl,
									    &rp->r->launches[tr->first_launch + j]);
	nt_report_blocks_free(&bl);
	nt_trace_close(w.t);
	return 0;
}

/* Launches per chunk: about four chunks a thread over all the traces,
 * at least REPLAY_CHUNK_MIN (a chunk opens its trace once). */
#define REPLAY_CHUNK_MIN 16

static int read_replays(struct nt_report *r, struct tstate *ts, int threads, struct nt_err *err)
{
	struct replays rp = { r, ts, NULL, NULL };
	size_t per, n = 0;
	int chunks = 0;

	if (threads <= 0)
		threads = nt_workers_cpus();
	per = r->n_launches / ((size_t)threads * 4) + 1;
	if (per < REPLAY_CHUNK_MIN)
		per = REPLAY_CHUNK_MIN;
	for (int t = 0; t < r->n_traces; t++)
		n += (ts[t].n_ld + per - 1) / per;
	if (n > INT32_MAX)
		return nt_err_set(err, "out of memory");
	rp.chunk = calloc(n ? n : 1, sizeof(*rp.chunk));
	rp.how = calloc(r->n_launches ? r->n_launches : 1, 1);
	if (!rp.chunk || !rp.how) {
		free(rp.chunk);
		free(rp.how);
		return nt_err_set(err, "out of memory");
	}
	for (int t = 0; t < r->n_traces; t++)
		for (size_t f = 0; f < ts[t].n_ld; f += per)
			rp.chunk[chunks++] = (struct replay_chunk){ t, f, ts[t].n_ld - f < per ? ts[t].n_ld - f : per };
	nt_workers_run(chunks, threads, replay_chunk, &rp);
	for (int t = 0; t < r->n_traces; t++)
		for (size_t j = 0; j < ts[t].n_ld; j++)
			accumulate(&ts[t], &ts[t].ld[j], &r->launches[r->traces[t].first_launch + j],
				   rp.how[r->traces[t].first_launch + j]);
	free(rp.chunk);
	free(rp.how);
	return 0;
}

static void tstate_close(struct tstate *ts)
{
	for (int k = 0; k < ts->shard.n_kernels; k++) {	/* not merged: a failure in stage 1 */
		free(ts->shard.kernels[k].name);
		free(ts->shard.kernels[k].demangled);
	}
	free(ts->shard.kernels);
	free(ts->shard.devices);
	for (int k = 0; k < ts->n_k + ts->shard.n_kernels && ts->fb; k++)
		free(ts->fb[k]);
	free(ts->fb);
	free(ts->n_fb);
	free(ts->seen_fb);
	free_keys(ts);
	free(ts->ld);
	ts->ld = NULL;
	nt_trace_close(ts->t);
	ts->t = NULL;
}

/* The program's figures: sums over the kernels, those not measurable
 * and the collectives left out (and counted); each trace's too. */
static void program_sums(struct nt_report *r)
{
	for (int k = 0; k < r->n_kernels; k++) {
		const struct nt_report_kernel *e = &r->kernels[k];
		struct nt_report_trace *tr = &r->traces[e->trace];

		r->time_ns += e->time_ns;
		r->replayed += e->replayed;
		r->entry_launches += e->entry_launches;
		r->ends_unknown += e->ends_unknown;
		r->credible += e->credible;
		r->blocks += e->blocks;
		if (e->replay_err_max_pct > r->replay_err_max_pct)
			r->replay_err_max_pct = e->replay_err_max_pct;
		if (e->credible) {
			r->probe_known += isfinite(e->probe_share);
			r->probe_unknown += !isfinite(e->probe_share);
		}
		if (e->verdict == NT_VERDICT_NOT_MEASURABLE) {
			r->probe_left_out += e->credible;
			r->probe_left_out_ns += e->traced_credible_ns;
			continue;
		}
		if (e->collective) {
			r->collective_left_out += e->credible;
			r->collective_left_out_ns += e->traced_credible_ns;
			continue;
		}
		tr->time_ns_credible += e->time_ns_credible;
		tr->lost_ns += e->lost_ns;
		tr->recoverable_ns += e->recoverable_ns;
		r->traced_credible_ns += e->traced_credible_ns;
		r->time_ns_credible += e->time_ns_credible;
		r->lost_ns += e->lost_ns;
		r->recoverable_ns += e->recoverable_ns;
		r->placement_ns += e->placement_ns;
		r->tail_ns += e->tail_ns;
		r->persist_ns += e->persist_ns;
		r->rebalance_ns += e->rebalance_ns;
		r->quantisation_ns += e->quantisation_ns;
	}
}

/* The stages' threads: each runs one trace's stage at a time. */
struct build {
	struct nt_report *r;
	struct tstate *ts;
	int *fit_trace;		/* stage 2's kernels, r->n_kernels: each one's trace */
	struct nt_err *fit_err;	/* ... and its error */
};

static int stage_rows(int i, void *arg)
{
	struct build *b = arg;

	return read_rows(b->r, i, &b->ts[i]);
}

/* Stage 2 of a trace: its kernels' fit samples and native times. */
static int stage_samples(int i, void *arg)
{
	struct build *b = arg;

	return nt_report_fit_samples(&b->ts[i]);
}

/* Then kernel i of the report (in trace order) fitted, on any thread: one
 * trace's kernels spread over every core (a training trace's fits were
 * 88% of its report, on one core). */
static int stage_fit(int i, void *arg)
{
	struct build *b = arg;
	struct tstate *ts = &b->ts[b->fit_trace[i]];

	return nt_report_fit_kernel(ts, i - ts->k0, &b->fit_err[i]);
}

/* One stage over every trace: 0, or -1 with the first failing trace's
 * error (the same whatever the threads, util/workers.h). */
static int stage(struct build *b, int threads, int (*fn)(int i, void *arg), struct nt_err *err)
{
	int failed = nt_workers_run(b->r->n_traces, threads, fn, b);

	if (failed < 0)
		return 0;
	*err = *b->ts[failed].err;
	return -1;
}

/* Stage 2: 0, or -1 with the first failure's error (the same whatever the
 * threads). */
static int fits(struct build *b, int threads, struct nt_err *err)
{
	struct nt_report *r = b->r;
	int ret = -1, failed;

	if (stage(b, threads, stage_samples, err))
		goto out;
	b->fit_trace = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*b->fit_trace));
	b->fit_err = calloc(r->n_kernels ? r->n_kernels : 1, sizeof(*b->fit_err));
	if (!b->fit_trace || !b->fit_err) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	for (int t = 0; t < r->n_traces; t++)
		for (int k = 0; k < b->ts[t].n_k; k++)
			b->fit_trace[b->ts[t].k0 + k] = t;
	if ((failed = nt_workers_run(r->n_kernels, threads, stage_fit, b)) >= 0) {
		*err = b->fit_err[failed];
		goto out;
	}
	ret = 0;
out:
	for (int t = 0; t < r->n_traces; t++)
		free_fits(&b->ts[t]);
	free(b->fit_trace);
	free(b->fit_err);
	b->fit_trace = NULL;
	b->fit_err = NULL;
	return ret;
}

/* Each trace's part of r->launches, in trace order. */
static int place_launches(struct nt_report *r, struct tstate *ts, struct nt_err *err)
{
	size_t n = 0;

	for (int i = 0; i < r->n_traces; i++) {
		r->traces[i].first_launch = n;
		r->traces[i].n_launches = ts[i].n_ld;
		n += ts[i].n_ld;
	}
	if (!(r->launches = calloc(n ? n : 1, sizeof(*r->launches))))
		return nt_err_set(err, "out of memory");
	r->n_launches = n;
	return 0;
}

int nt_report_build(const char *const *paths, int n, int threads, int flags, nt_report_map_fn get_map,
		    void *arg, struct nt_report **out, struct nt_err *err)
{
	struct nt_report *r = calloc(1, sizeof(*r));
	struct tstate *ts = calloc(n > 0 ? n : 1, sizeof(*ts));
	struct build b = { r, ts, NULL, NULL };
	int ret = -1;

	*out = NULL;
	if (!r || !ts || !(r->traces = calloc(n > 0 ? n : 1, sizeof(*r->traces)))) {
		free(r);
		free(ts);
		return nt_err_set(err, "out of memory");
	}
	r->n_traces = n;
	r->flags = flags;
	for (int i = 0; i < n; i++)
		if (!(r->traces[i].path = strdup(paths[i]))) {
			nt_err_set(err, "out of memory");
			goto out;
		}
	if (stage(&b, threads, stage_rows, err))
		goto out;
	/* in trace order: indices, and get_map's warnings, do not depend on
	 * the threads */
	for (int i = 0; i < n; i++) {
		if (merge_shard(r, &ts[i])) {
			*err = *ts[i].err;
			goto out;
		}
		find_maps(&ts[i], get_map, arg);
	}
	if (fits(&b, threads, err) || nt_report_judge(r, err) || place_launches(r, ts, err) ||
	    read_replays(r, ts, threads, err))
		goto out;
	program_sums(r);
	if (nt_report_graphs(r, err) || nt_report_jobs(r, err))
		goto out;
	ret = 0;
out:
	for (int i = 0; i < n; i++)
		tstate_close(&ts[i]);
	free(ts);
	if (ret)
		nt_report_free(r);
	else
		*out = r;
	return ret;
}

void nt_report_free(struct nt_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n_traces; i++) {
		free(r->traces[i].path);
		free(r->traces[i].cmdline);
		free(r->traces[i].exe);
		free(r->traces[i].probe_shape);
		for (int d = 0; d < r->traces[i].n_drops; d++)
			free(r->traces[i].drops[d].reason);
		free(r->traces[i].drops);
	}
	nt_report_jobs_free(r);
	free(r->graphs);
	for (int k = 0; k < r->n_kernels; k++) {
		free(r->kernels[k].name);
		free(r->kernels[k].demangled);
		free(r->kernels[k].shares);
		free(r->kernels[k].sm_blocks);
		free(r->kernels[k].sm_median_ns);
	}
	for (int d = 0; d < r->n_devices; d++)
		nt_map_free(r->devices[d].map);
	free(r->devices);
	free(r->traces);
	free(r->kernels);
	free(r->launches);
	free(r);
}

const char *nt_report_end_name(int end)
{
	static const char *const names[] = {
		[NT_END_MEASURED] = "measured", [NT_END_INFERRED] = "inferred",
		[NT_END_CENSORED] = "censored", [NT_END_UNKNOWN] = "unknown",
	};

	return end >= 0 && end <= NT_END_UNKNOWN ? names[end] : "?";
}

const char *nt_report_block_times(const struct nt_report_kernel *k)
{
	if (k->fit_inferred)
		return "inferred";
	if (k->entry_launches < k->launches)
		return "measured";
	return k->ends_unknown >= k->launches ? "unknown" : "inferred";
}

int nt_report_launch_credible(const struct nt_report_launch *l)
{
	return l->ok && fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR;
}

const char *nt_report_no_fit(const struct nt_report_kernel *k)
{
	if (k->fitted && k->fit.fitted)
		return NULL;
	if (k->collective)
		return "collective";
	if (!k->fitted)
		return k->map ? "no blocks" : "no map";
	return k->fit.n_sm_used < NT_ATTRIB_MIN_SM ? "too few SMs" : "no fit";
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
