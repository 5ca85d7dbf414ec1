/* The trace file (sink.h). */
#include "sink.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "devices.h"
#include "entryrec.h"
#include "kattrs.h"
#include "packpool.h"
#include "summary.h"
#include "trace/trace.h"
#include "trace/trace_name.h"
#include "util/clock.h"
#include "util/demangle.h"
#include "warn.h"

/* Commit at least this often, so a crash loses at most this much. */
#define COMMIT_EVERY_S 1.0

/* A kernel's drops for one reason: written one row per launch up to
 * DROP_ROWS, the rest counted and written as one row at close (launch
 * NULL).  A module that a live graph exec runs drops every pick of its
 * kernels in every window for as long as the program runs: one row each
 * made 9,185 rows of about 250 bytes in 2,000 replays of PyTorch's step
 * on the H200 (session 18); a week's job would make tens of GB. */
#define DROP_ROWS 100
struct drop_rows {
	char *reason;
	uint64_t rows, over;
	struct drop_rows *next;
};

struct kernel_entry {
	struct nt_sink_kernel k;
	char *mangled, *demangled;
	int64_t id;
	struct drop_rows *drops;
	UT_hash_handle hh;
};

/* Drops by reason, for the summary (the trace has each drop). */
#define DROP_REASONS 64
struct drop_reason {
	struct nt_summary_drop d;
	UT_hash_handle hh;
};

/* Records a chunk the sink packs: a big launch's chunks are packed on
 * several threads at once (a launch of 262,144 blocks in 16). */
#define SINK_CHUNK 16384

/* A launch written before its device was noted (nt_devices_note could
 * not enter the driver while a launch waited for record space): its
 * occupancy, written once the device's attributes are known.  At most
 * LATE_MAX; beyond, it stays unknown. */
#define LATE_MAX 65536
struct late_launch {
	int64_t launch, static_smem, dyn_smem;
	int device, threads, registers;
};

/* A slice of a launch's records and, once packed, its chunk. */
struct pack_item {
	const volatile struct nt_block_rec *rec;	/* the launch's records */
	uint32_t first, n;
	int entry_only;
	int64_t t0, t1;		/* first start; last end (entry-only: start) */
	void *data;
	size_t len;
};

struct nt_sink {
	struct nt_config cfg;
	char backend[16], sampling[512];
	struct nt_trace *t;
	struct nt_devices *devices;
	int failed, in_tx;
	int write_failed;	/* a write to the open trace failed */
	double tx_since;
	struct kernel_entry *kernels;
	struct nt_packpool *pool;	/* made at the first traced launch */
	struct pack_item *items;
	size_t items_cap;
	uint64_t n_traced, n_blocks, n_dropped, n_native;
	uint64_t n_packed_bytes;	/* the block records' bytes in the trace */
	double pack_s;		/* packing them (the collector's wait) */
	uint64_t n_entry_only;	/* traced launches with starts only */
	struct drop_reason *reasons;
	unsigned n_reasons;
	struct drop_rows *drops;	/* drops of no kernel (DROP_ROWS) */
	struct late_launch *late;
	size_t n_late, late_cap;
	uint64_t dropped_other;	/* ... beyond DROP_REASONS of them */
	double write_s;		/* in SQLite for traced launches: adds and commits */
	char path[PATH_MAX];
};

static void count_reason(struct nt_sink *s, const char *reason)
{
	struct drop_reason *e;

	HASH_FIND_STR(s->reasons, reason, e);
	if (!e && s->n_reasons < DROP_REASONS && (e = calloc(1, sizeof(*e)))) {
		if (!(e->d.reason = strdup(reason))) {
			free(e);
			e = NULL;
		} else {
			struct drop_reason *in;

			HASH_ADD_KEYPTR(hh, s->reasons, e->d.reason, strlen(e->d.reason), e);
			HASH_FIND_STR(s->reasons, reason, in);
			if (!in) {	/* the table could not grow */
				free((char *)e->d.reason);
				free(e);
			}
			e = in;
			s->n_reasons += e != NULL;
		}
	}
	if (e)
		e->d.n++;
	else
		s->dropped_other++;
}

static int by_drops(const void *a, const void *b)
{
	const struct nt_summary_drop *x = *(const struct nt_summary_drop *const *)a,
				     *y = *(const struct nt_summary_drop *const *)b;

	return x->n != y->n ? (x->n < y->n) - (x->n > y->n) : strcmp(x->reason, y->reason);
}

struct nt_sink *nt_sink_new(const struct nt_config *cfg, const char *backend, const char *sampling,
			    struct nt_err *err)
{
	struct nt_sink *s = calloc(1, sizeof(*s));

	if (!s || !(s->devices = nt_devices_new(cfg->store))) {
		free(s);
		nt_err_set(err, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	snprintf(s->backend, sizeof(s->backend), "%s", backend);
	snprintf(s->sampling, sizeof(s->sampling), "%s", sampling);
	return s;
}

/* Create the file on first use; on failure stop trying (warned once). */
static int ensure_open(struct nt_sink *s)
{
	struct nt_err err;

	if (s->t)
		return 0;
	if (s->failed)
		return -1;
	if (nt_trace_path(s->path, sizeof(s->path), s->cfg.output_dir, s->cfg.output_pattern, &err) ||
	    nt_trace_create(s->path, &s->t, &err) ||
	    nt_trace_set_meta(s->t, "backend", s->backend, &err) ||
	    nt_trace_set_meta(s->t, "sampling", s->sampling, &err) ||
	    (!strcmp(s->backend, "blocks") &&
	     nt_trace_set_meta(s->t, "blocks", nt_blocks_mode_name(s->cfg.blocks), &err))) {
		nt_warn("%s; no trace is written", err.msg);
		nt_trace_close(s->t);
		s->t = NULL;
		s->failed = 1;
		return -1;
	}
	return 0;
}

/* A write to the trace failed: the first is said, and the trace is
 * then said to be incomplete. */
static void write_error(struct nt_sink *s, const char *msg)
{
	if (!s->write_failed)	/* the first only: they name launches */
		nt_warn("%s", msg);
	s->write_failed = 1;
}

static int begin(struct nt_sink *s)
{
	struct nt_err err;

	if (ensure_open(s))
		return -1;
	if (s->in_tx)
		return 0;
	if (nt_trace_begin(s->t, &err)) {
		write_error(s, err.msg);
		return -1;
	}
	s->in_tx = 1;
	s->tx_since = nt_now_s();
	return 0;
}

static void commit(struct nt_sink *s)
{
	struct nt_err err;
	double t0;

	if (!s->in_tx)
		return;
	t0 = nt_now_s();
	s->in_tx = 0;
	if (nt_trace_commit(s->t, &err))
		write_error(s, err.msg);
	s->write_s += nt_now_s() - t0;
}

/* The kernel's row, made on first sight: attributes from the module's
 * cubin, else from the kernels-mode record r (may be NULL). */
static struct kernel_entry *kernel_of(struct nt_sink *s, const char *mangled,
				      const struct nt_kernel_record *r)
{
	struct nt_trace_kernel k = { 0 };
	struct nt_cubin_kernel a;
	struct kernel_entry *e;
	struct nt_err err;

	HASH_FIND_STR(s->kernels, mangled, e);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->mangled = strdup(mangled))) {
		free(e);
		return NULL;
	}
	e->demangled = nt_demangle(mangled);
	e->k.mangled = e->mangled;
	e->k.demangled = e->demangled;
	k.mangled = mangled;
	k.demangled = e->demangled;
	k.registers = k.static_smem = k.const_bytes = k.local_bytes = k.max_threads = NT_TRACE_UNKNOWN;
	if (!nt_kattrs_get(mangled, &a)) {
		k.registers = a.registers >= 0 ? a.registers : NT_TRACE_UNKNOWN;
		k.static_smem = (int32_t)a.static_smem;
		k.const_bytes = (int32_t)a.const0_bytes;
		k.local_bytes = (int32_t)a.local_bytes;
		k.max_threads = a.max_threads > 0 ? a.max_threads : NT_TRACE_UNKNOWN;
	} else if (r) {
		k.registers = r->registers;
		k.static_smem = r->static_smem;
		k.local_bytes = r->local_bytes;
	}
	if (nt_trace_add_kernel(s->t, &k, &e->id, &err)) {
		write_error(s, err.msg);
		e->id = NT_TRACE_UNKNOWN;
	}
	HASH_ADD_KEYPTR(hh, s->kernels, e->mangled, strlen(e->mangled), e);
	return e;
}

static int threads_of(const struct nt_launch_info *l)
{
	return (int)(l->block[0] * l->block[1] * l->block[2]);
}

static void late_add(struct nt_sink *s, int64_t launch, const struct nt_launch_info *l,
		     const struct nt_cubin_kernel *a)
{
	if (s->n_late == s->late_cap) {
		size_t cap = s->late_cap ? 2 * s->late_cap : 64;
		struct late_launch *v;

		if (cap > LATE_MAX || !(v = realloc(s->late, cap * sizeof(*v))))
			return;
		s->late = v;
		s->late_cap = cap;
	}
	s->late[s->n_late++] = (struct late_launch){ launch, (int64_t)a->static_smem, l->dyn_smem, l->device,
						     threads_of(l), a->registers };
}

/* The late launches whose device is noted now get their occupancy. */
static void late_write(struct nt_sink *s)
{
	struct nt_err err;
	size_t keep = 0;

	for (size_t i = 0; i < s->n_late; i++) {
		struct late_launch *e = &s->late[i];
		int32_t occ;

		if (nt_devices_later(s->devices, e->device)) {
			s->late[keep++] = *e;
			continue;
		}
		occ = nt_devices_occupancy(s->devices, e->device, e->threads, e->registers, e->static_smem,
					   e->dyn_smem);
		if (occ != NT_TRACE_UNKNOWN && nt_trace_set_occupancy(s->t, e->launch, occ, &err))
			write_error(s, err.msg);
	}
	s->n_late = keep;
}

/* The launch row's fields that every kind of launch has. */
static void launch_row(const struct nt_launch_info *l, uint64_t seq, const struct kernel_entry *k,
		       struct nt_trace_launch *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->launch = (int64_t)seq;
	tl->kernel = k ? k->id : NT_TRACE_UNKNOWN;
	tl->device = l->device;
	tl->context = l->context;
	tl->stream = l->stream;
	tl->grid_x = (int32_t)l->grid[0], tl->grid_y = (int32_t)l->grid[1], tl->grid_z = (int32_t)l->grid[2];
	tl->block_x = (int32_t)l->block[0], tl->block_y = (int32_t)l->block[1];
	tl->block_z = (int32_t)l->block[2];
	tl->cluster_x = (int32_t)l->cluster[0], tl->cluster_y = (int32_t)l->cluster[1];
	tl->cluster_z = (int32_t)l->cluster[2];
	tl->dyn_smem = l->dyn_smem >= 0 && l->dyn_smem <= INT32_MAX ? (int32_t)l->dyn_smem : NT_TRACE_UNKNOWN;
	tl->correlation = NT_TRACE_UNKNOWN;
	tl->graph = l->graph;
	tl->graph_node = l->graph_node;
	tl->graph_launch = l->graph_launch;
}

/* Pack item i of a launch's records (packpool.h): its slice decoded
 * into scratch, its first and last times noted, packed into a copy of
 * its own. */
static int pack_item(size_t i, void *arg, struct nt_blockpack *p, struct nt_trace_block *scratch)
{
	struct pack_item *it = &((struct pack_item *)arg)[i];
	const void *data;
	struct nt_err err;

	it->t0 = INT64_MAX;
	it->t1 = INT64_MIN;
	for (uint32_t j = 0; j < it->n; j++) {
		struct nt_trace_block *b = &scratch[j];
		uint32_t k = it->first + j;

		b->launch = NT_TRACE_UNKNOWN;
		b->block = k;
		if (it->entry_only) {
			nt_entry_decode((const volatile struct nt_entry_rec *)it->rec + k, b);
		} else {
			b->sm = (int32_t)it->rec[k].smid;
			b->warps = (int32_t)it->rec[k].warps;
			b->t_start_ns = (int64_t)it->rec[k].t_start;
			b->t_end_ns = (int64_t)it->rec[k].t_end;
			b->c_start = (int64_t)it->rec[k].c_start;
			b->c_end = (int64_t)it->rec[k].c_end;
		}
		if (b->t_start_ns < it->t0)
			it->t0 = b->t_start_ns;
		/* entry-only: the summary's time runs to the last start */
		if ((it->entry_only ? b->t_start_ns : b->t_end_ns) > it->t1)
			it->t1 = it->entry_only ? b->t_start_ns : b->t_end_ns;
	}
	if (nt_blockpack_pack(p, scratch, it->n, &data, &it->len, &err) || !(it->data = malloc(it->len)))
		return -1;
	memcpy(it->data, data, it->len);
	return 0;
}

/* The launch's records in SINK_CHUNK slices, packed on the pool's
 * threads; items[] filled, their data for the caller to free. */
static int pack_launch(struct nt_sink *s, const struct nt_launch_info *l, const volatile struct nt_block_rec *rec,
		       uint32_t n, size_t *n_items)
{
	size_t k = (n + SINK_CHUNK - 1) / SINK_CHUNK;

	*n_items = 0;
	if (k > s->items_cap) {
		struct pack_item *it = realloc(s->items, k * sizeof(*it));

		if (!it)
			return -1;
		s->items = it;
		s->items_cap = k;
	}
	if (!s->pool && !(s->pool = nt_packpool_new(0)))
		return -1;
	for (size_t i = 0; i < k; i++)
		s->items[i] = (struct pack_item){ .rec = rec, .first = (uint32_t)(i * SINK_CHUNK),
						  .n = (uint32_t)(n - i * SINK_CHUNK < SINK_CHUNK ?
								  n - i * SINK_CHUNK : SINK_CHUNK),
						  .entry_only = l->entry_only };
	*n_items = k;
	return nt_packpool_run(s->pool, k, pack_item, s->items);
}

void nt_sink_start_threads(struct nt_sink *s)
{
	if (!s || s->pool || strcmp(s->backend, "blocks") || !s->cfg.pack_threads)
		return;
	if ((s->pool = nt_packpool_new((int)s->cfg.pack_threads)))
		nt_packpool_start(s->pool);
}

int nt_sink_launch(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l,
		   const volatile struct nt_block_rec *rec, uint32_t n, int64_t *span_ns)
{
	struct nt_trace_launch tl;
	struct nt_cubin_kernel a;
	struct kernel_entry *k;
	struct nt_err err;
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;
	size_t items = 0;
	double w0;
	int ret = -1;

	if (begin(s))
		return -1;
	w0 = nt_now_s();
	if (pack_launch(s, l, rec, n, &items)) {
		write_error(s, "out of memory packing block records");
		goto out;
	}
	s->pack_s += nt_now_s() - w0;
	for (size_t i = 0; i < items; i++) {
		t0 = s->items[i].t0 < t0 ? s->items[i].t0 : t0;
		t1 = s->items[i].t1 > t1 ? s->items[i].t1 : t1;
	}
	*span_ns = n && t1 > t0 ? t1 - t0 : 0;
	nt_devices_note(s->devices, s->t, l->device);
	if (s->n_late)
		late_write(s);
	k = kernel_of(s, l->kernel, NULL);
	launch_row(l, seq, k, &tl);
	tl.max_blocks_per_sm = NT_TRACE_UNKNOWN;
	if (!nt_kattrs_get(l->kernel, &a)) {
		tl.max_blocks_per_sm = nt_devices_occupancy(s->devices, l->device, threads_of(l), a.registers,
							    a.static_smem, l->dyn_smem);
		if (nt_devices_later(s->devices, l->device))
			late_add(s, tl.launch, l, &a);
	}
	tl.traced = 1;
	tl.blocks = n;
	tl.entry_only = l->entry_only;
	tl.t_start_ns = n ? t0 : NT_TRACE_UNKNOWN;
	/* entry-only: when the last block ended is not known */
	tl.t_end_ns = n && !l->entry_only ? t1 : NT_TRACE_UNKNOWN;
	w0 = nt_now_s();
	if (nt_trace_add_launch(s->t, &tl, &err)) {
		write_error(s, err.msg);
		goto out;
	}
	for (size_t i = 0; i < items; i++)
		if (nt_trace_add_chunk(s->t, tl.launch, s->items[i].n, s->items[i].data, s->items[i].len, &err)) {
			write_error(s, err.msg);
			goto out;
		}
	s->write_s += nt_now_s() - w0;
	s->n_traced++;
	s->n_entry_only += l->entry_only != 0;
	s->n_blocks += n;
	for (size_t i = 0; i < items; i++)
		s->n_packed_bytes += s->items[i].len;
	if (k) {
		k->k.launches++;
		k->k.blocks += n;
		k->k.ns += n ? t1 - t0 : 0;
	}
	ret = 0;
out:
	for (size_t i = 0; i < items; i++) {
		free(s->items[i].data);
		s->items[i].data = NULL;
	}
	return ret;
}

int nt_sink_kernel(struct nt_sink *s, uint64_t seq, const struct nt_kernel_record *r)
{
	struct nt_trace_launch tl;
	struct kernel_entry *k;
	struct nt_err err;

	if (begin(s))
		return -1;
	nt_devices_note(s->devices, s->t, r->l.device);
	k = kernel_of(s, r->l.kernel, r);
	launch_row(&r->l, seq, k, &tl);
	tl.entry_only = NT_TRACE_UNKNOWN;
	tl.dyn_smem = r->dyn_smem;
	tl.max_blocks_per_sm = nt_devices_occupancy(s->devices, r->l.device, threads_of(&r->l), r->registers,
						    r->static_smem, r->dyn_smem);
	tl.traced = 0;
	tl.blocks = 0;
	/* CUPTI gives 0 for a time it does not know (records flushed early). */
	tl.t_start_ns = r->start_ns ? (int64_t)r->start_ns : NT_TRACE_UNKNOWN;
	tl.t_end_ns = r->end_ns ? (int64_t)r->end_ns : NT_TRACE_UNKNOWN;
	tl.correlation = (int64_t)r->correlation;
	if (nt_trace_add_launch(s->t, &tl, &err)) {
		write_error(s, err.msg);
		return -1;
	}
	s->n_traced++;
	if (k) {
		k->k.launches++;
		if (r->start_ns && r->end_ns > r->start_ns)
			k->k.ns += (int64_t)(r->end_ns - r->start_ns);
	}
	return 0;
}

int nt_sink_native(struct nt_sink *s, const struct nt_native_time *t)
{
	struct nt_trace_native n = { 0 };
	struct kernel_entry *k;
	struct nt_err err;

	if (begin(s) || !(k = kernel_of(s, t->l.kernel, NULL)))
		return -1;
	n.launch = (int64_t)t->seq;
	n.kernel = k->id;
	n.device = t->l.device;
	n.grid_x = (int32_t)t->l.grid[0], n.grid_y = (int32_t)t->l.grid[1], n.grid_z = (int32_t)t->l.grid[2];
	n.block_x = (int32_t)t->l.block[0], n.block_y = (int32_t)t->l.block[1];
	n.block_z = (int32_t)t->l.block[2];
	n.dyn_smem = t->l.dyn_smem >= 0 && t->l.dyn_smem <= INT32_MAX ? (int32_t)t->l.dyn_smem : NT_TRACE_UNKNOWN;
	n.ns = t->ns;
	if (nt_trace_add_native(s->t, &n, &err)) {
		write_error(s, err.msg);
		return -1;
	}
	s->n_native++;
	return 0;
}

/* The rows of reason in list (made when missing); NULL when out of
 * memory. */
static struct drop_rows *drop_rows(struct drop_rows **list, const char *reason)
{
	struct drop_rows *d;

	for (d = *list; d && strcmp(d->reason, reason); d = d->next)
		;
	if (!d && (d = calloc(1, sizeof(*d)))) {
		if (!(d->reason = strdup(reason))) {
			free(d);
			return NULL;
		}
		d->next = *list;
		*list = d;
	}
	return d;
}

/* The drops beyond DROP_ROWS of list's reasons, one row each (kernel
 * id); 0 or -1. */
static int write_over(struct nt_sink *s, struct drop_rows *list, int64_t kernel)
{
	struct nt_err err;

	for (struct drop_rows *d = list; d; d = d->next) {
		struct nt_trace_drop td = { NT_TRACE_UNKNOWN, kernel, d->reason, (int64_t)d->over };

		if (d->over && nt_trace_add_drop(s->t, &td, &err)) {
			write_error(s, err.msg);
			return -1;
		}
		d->over = 0;
	}
	return 0;
}

static void free_drop_rows(struct drop_rows *d)
{
	while (d) {
		struct drop_rows *next = d->next;

		free(d->reason);
		free(d);
		d = next;
	}
}

int nt_sink_drop(struct nt_sink *s, uint64_t seq, const char *kernel, const char *reason)
{
	struct nt_trace_drop td = { (int64_t)seq, NT_TRACE_UNKNOWN, reason ? reason : "", 1 };
	struct kernel_entry *k = NULL;
	struct drop_rows *rows;
	struct nt_err err;

	s->n_dropped++;
	count_reason(s, td.reason);
	if (begin(s))
		return -1;
	if (kernel && (k = kernel_of(s, kernel, NULL)))
		td.kernel = k->id;
	rows = drop_rows(k ? &k->drops : &s->drops, td.reason);
	if (rows && rows->rows >= DROP_ROWS) {
		rows->over++;
		return 0;
	}
	if (rows)
		rows->rows++;
	if (nt_trace_add_drop(s->t, &td, &err)) {
		write_error(s, err.msg);
		return -1;
	}
	return 0;
}

void nt_sink_tick(struct nt_sink *s)
{
	if (s->in_tx && nt_now_s() - s->tx_since >= COMMIT_EVERY_S)
		commit(s);
}

static void set_u64(struct nt_sink *s, const char *key, uint64_t v)
{
	struct nt_err err;
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	if (nt_trace_set_meta(s->t, key, buf, &err))
		write_error(s, err.msg);
}

static void set_text(struct nt_sink *s, const char *key, const char *v)
{
	struct nt_err err;

	if (nt_trace_set_meta(s->t, key, v, &err))
		write_error(s, err.msg);
}

static void set_seconds(struct nt_sink *s, const char *key, double v)
{
	struct nt_err err;
	char buf[32];

	snprintf(buf, sizeof(buf), "%.6f", v);
	if (nt_trace_set_meta(s->t, key, buf, &err))
		write_error(s, err.msg);
}

/* The run's counts (docs/trace-format.md lists the keys). */
static void counts_meta(struct nt_sink *s, const struct nt_run_counts *run)
{
	set_u64(s, "launches", run->launches);
	if (run->kernels_lost)
		set_u64(s, "kernels_lost", run->kernels_lost);
	if (run->drops_lost)
		set_u64(s, "drops_lost", run->drops_lost);
	if (strcmp(s->backend, "blocks"))
		return;
	set_u64(s, "windows", (uint64_t)run->sampling.windows);
	set_u64(s, "launches_in_windows", (uint64_t)run->sampling.in_windows);
	set_seconds(s, "window_s", run->sampling.window_s);
	set_u64(s, "patches", run->patches);
	set_seconds(s, "patch_s", run->patch_s);
	set_u64(s, "unpatches", run->unpatches);
	set_seconds(s, "unpatch_s", run->unpatch_s);
	set_u64(s, "settles", run->settles);
	set_seconds(s, "settle_s", run->settle_s);
	set_u64(s, "switch_overlaps", run->switch_overlaps);
	set_u64(s, "lazy_loads", run->lazy_loads);
	set_u64(s, "lazy_into_patched", run->lazy_into_patched);
	if (run->lazy_into_patched_at[0])
		set_text(s, "lazy_into_patched_at", run->lazy_into_patched_at);
	if (run->lazy_settled) {
		set_u64(s, "lazy_settled", run->lazy_settled);
		set_u64(s, "lazy_settled_kernels", run->lazy_settled_kernels);
	}
	if (run->table_waits || run->table_waits_skipped) {
		set_u64(s, "table_waits", run->table_waits);
		set_u64(s, "table_waits_skipped", run->table_waits_skipped);
	}
	set_u64(s, "callbacks", run->callbacks);
	set_seconds(s, "callback_s", run->callback_ns / 1e9);
	set_u64(s, "launch_callbacks", run->launch_callbacks);
	set_seconds(s, "launch_callback_s", run->launch_callback_ns / 1e9);
	set_u64(s, "dark_spans", run->dark_spans);
	set_u64(s, "room_waits", run->room_waits);
	set_u64(s, "room_waits_in_callback", run->room_waits_in_callback);
	set_seconds(s, "room_wait_s", run->room_wait_s);
	set_u64(s, "graph_execs", run->graph_execs);
	set_u64(s, "graph_execs_unlisted", run->graph_execs_unlisted);
	set_u64(s, "graph_execs_twinned", run->graph_execs_twinned);
	set_u64(s, "graph_execs_shadowed", run->graph_execs_shadowed);
	set_u64(s, "graph_routed", run->graph_routed);
	set_u64(s, "twins", run->twins);
	set_u64(s, "twin_images", run->twin_images);
	set_u64(s, "twin_image_bytes", run->twin_image_bytes);
	set_u64(s, "twin_image_kept", run->twin_image_kept);
	set_u64(s, "twin_refused", run->twin_refused);
	if (run->twin_refused_names[0])
		set_text(s, "twin_refused_names", run->twin_refused_names);
	set_seconds(s, "dark_s", run->dark_s);
	set_u64(s, "modules", run->modules);
	set_seconds(s, "module_s", run->module_s);
	set_seconds(s, "write_s", s->write_s);
	set_seconds(s, "pack_s", s->pack_s);
	set_u64(s, "pack_threads", (uint64_t)nt_packpool_threads(s->pool) + 1);
	set_u64(s, "block_bytes", s->n_packed_bytes);
}

int nt_sink_failed(const struct nt_sink *s)
{
	return s && s->write_failed;
}

int nt_sink_close(struct nt_sink *s, const struct nt_run_counts *run, FILE *f)
{
	struct kernel_entry *e, *tmp;
	struct nt_err err;
	int failed;

	if (!s)
		return 0;
	if (s->t && !begin(s)) {
		nt_devices_note_later(s->devices, s->t);
		late_write(s);
		write_over(s, s->drops, NT_TRACE_UNKNOWN);
		for (e = s->kernels; e; e = e->hh.next)
			write_over(s, e->drops, e->id);
		counts_meta(s, run);
		commit(s);
		/* a trace some writes of which failed stays complete=0 */
		if (!s->write_failed && nt_trace_finish(s->t, &err))
			write_error(s, err.msg);
	}
	if (f && (s->t || s->n_dropped)) {
		struct nt_summary sum = { .backend = s->backend, .sampling = s->sampling,
					  .entry_only = s->n_entry_only ? s->n_entry_only < s->n_traced ? 2 : 1 : 0,
					  .run = run, .traced = s->n_traced,
					  .blocks = s->n_blocks, .dropped = s->n_dropped,
					  .native = s->n_native, .pack_s = s->pack_s, .write_s = s->write_s,
					  .block_bytes = s->n_packed_bytes,
					  .missing_maps = nt_devices_missing_maps(s->devices),
					  .path = s->t ? s->path : NULL, .incomplete = s->write_failed };
		size_t n = HASH_COUNT(s->kernels), i = 0;
		const struct nt_sink_kernel **v = malloc((n ? n : 1) * sizeof(*v));
		const struct nt_summary_drop **dv = malloc((s->n_reasons ? s->n_reasons : 1) * sizeof(*dv));
		struct drop_reason *r;

		for (e = s->kernels; v && e; e = e->hh.next)
			v[i++] = &e->k;
		sum.kernels = v;
		sum.n_kernels = v ? n : 0;
		i = 0;
		for (r = s->reasons; dv && r; r = r->hh.next)
			dv[i++] = &r->d;
		if (dv)
			qsort(dv, i, sizeof(*dv), by_drops);
		sum.drops = dv;
		sum.n_drops = dv ? i : 0;
		sum.dropped_other = s->dropped_other;
		nt_summary_print(f, &sum);
		free(v);
		free(dv);
	}
	nt_trace_close(s->t);
	HASH_ITER(hh, s->kernels, e, tmp) {
		HASH_DEL(s->kernels, e);
		free(e->mangled);
		free(e->demangled);
		free_drop_rows(e->drops);
		free(e);
	}
	free_drop_rows(s->drops);
	free(s->late);
	{
		struct drop_reason *r, *rtmp;

		HASH_ITER(hh, s->reasons, r, rtmp) {
			HASH_DEL(s->reasons, r);
			free((char *)r->d.reason);
			free(r);
		}
	}
	nt_devices_free(s->devices);
	failed = s->write_failed;
	nt_packpool_free(s->pool);
	free(s->items);
	free(s);
	return failed;
}
