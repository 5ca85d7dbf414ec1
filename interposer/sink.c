/* The trace file and the exit summary (sink.h). */
#include "sink.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "gpu/calib.h"
#include "gpu/cudrv.h"
#include "util/demangle.h"
#include "kattrs.h"
#include "gpu/occupancy.h"
#include "map/store.h"
#include "trace/trace.h"
#include "trace/trace_name.h"

/* Commit at least this often, so a crash loses at most this much. */
#define COMMIT_EVERY_S 1.0

struct kernel_entry {
	char *mangled;
	int64_t id;
	uint64_t launches, blocks;
	int64_t ns;			/* summed traced launch spans */
	UT_hash_handle hh;
};

struct drop_entry {
	uint64_t seq;
	char *kernel;
	const char *reason;
	struct drop_entry *next;
};

struct nt_sink {
	struct nt_config cfg;
	char backend[16], sampling[512];
	struct nt_trace *t;
	int failed, in_tx;
	double tx_since;
	struct kernel_entry *kernels;
	unsigned char device_seen[256];
	short cc[256];			/* compute capability * 10 of each device seen */
	struct nt_cuda cu;
	int cu_loaded;
	struct nt_trace_block *blocks;
	size_t blocks_cap;
	pthread_mutex_t drop_lock;
	struct drop_entry *drops;
	uint64_t n_traced, n_blocks, n_dropped;
	char path[PATH_MAX];
	char no_map[256];		/* GPUs without a calibration map */
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

struct nt_sink *nt_sink_new(const struct nt_config *cfg, const char *backend, const char *sampling,
			    struct nt_err *err)
{
	struct nt_sink *s = calloc(1, sizeof(*s));

	if (!s) {
		nt_err_set(err, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	snprintf(s->backend, sizeof(s->backend), "%s", backend);
	snprintf(s->sampling, sizeof(s->sampling), "%s", sampling);
	pthread_mutex_init(&s->drop_lock, NULL);
	return s;
}

static void read_file(const char *path, char *buf, size_t len, int nul_to_space)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; nul_to_space && i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
}

static void set_meta(struct nt_sink *s)
{
	char buf[4096];
	struct nt_err err;
	int rank = nt_trace_rank();
	ssize_t n;

	nt_trace_set_meta(s->t, "backend", s->backend, &err);
	nt_trace_set_meta(s->t, "sampling", s->sampling, &err);
	read_file("/proc/self/cmdline", buf, sizeof(buf), 1);
	nt_trace_set_meta(s->t, "cmdline", buf, &err);
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	nt_trace_set_meta(s->t, "exe", buf, &err);
	if (rank >= 0) {
		snprintf(buf, sizeof(buf), "%d", rank);
		nt_trace_set_meta(s->t, "rank", buf, &err);
	}
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
	    nt_trace_create(s->path, &s->t, &err)) {
		nt_warn("%s; no trace is written", err.msg);
		s->failed = 1;
		return -1;
	}
	set_meta(s);
	return 0;
}

static int begin(struct nt_sink *s)
{
	struct nt_err err;

	if (ensure_open(s))
		return -1;
	if (s->in_tx)
		return 0;
	if (nt_trace_begin(s->t, &err)) {
		nt_warn("%s", err.msg);
		return -1;
	}
	s->in_tx = 1;
	s->tx_since = now_s();
	return 0;
}

static void commit(struct nt_sink *s)
{
	struct nt_err err;

	if (!s->in_tx)
		return;
	s->in_tx = 0;
	if (nt_trace_commit(s->t, &err))
		nt_warn("%s", err.msg);
}

static struct kernel_entry *kernel_of_rec(struct nt_sink *s, const char *mangled,
					  const struct nt_kernel_record *r);

static struct kernel_entry *kernel_of(struct nt_sink *s, const char *mangled)
{
	return kernel_of_rec(s, mangled, NULL);
}

/* The kernel's row, made on first sight: attributes from the module's
 * cubin, else from the kernels-mode record r (may be NULL). */
static struct kernel_entry *kernel_of_rec(struct nt_sink *s, const char *mangled,
					  const struct nt_kernel_record *r)
{
	struct nt_trace_kernel k = { 0 };
	struct nt_cubin_kernel a;
	struct kernel_entry *e;
	struct nt_err err;
	char *dm;

	HASH_FIND_STR(s->kernels, mangled, e);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->mangled = strdup(mangled))) {
		free(e);
		return NULL;
	}
	dm = nt_demangle(mangled);
	k.mangled = mangled;
	k.demangled = dm;
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
	if (nt_trace_add_kernel(s->t, &k, &e->id, &err))
		nt_warn("%s", err.msg);
	free(dm);
	HASH_ADD_KEYPTR(hh, s->kernels, e->mangled, strlen(e->mangled), e);
	return e;
}

/* The device's row, and its calibration map from the store, once. */
static void device_of(struct nt_sink *s, int ordinal)
{
	struct nt_trace_device d = { 0 };
	struct nt_store *store = NULL;
	struct nt_map *map = NULL;
	char path[PATH_MAX];
	const char *sp;
	struct nt_err err;
	struct nt_gpu g;

	if (ordinal < 0 || ordinal >= 256 || s->device_seen[ordinal])
		return;
	s->device_seen[ordinal] = 1;
	if (!s->cu_loaded && nt_cuda_load(&s->cu, &err))
		return;
	s->cu_loaded = 1;
	if (nt_gpu_query(&s->cu, ordinal, &g, &err))
		return;
	s->cc[ordinal] = (short)(g.cc_major * 10 + g.cc_minor);
	d.device = ordinal;
	memcpy(d.uuid, g.uuid, sizeof(d.uuid));
	memcpy(d.name, g.name, sizeof(d.name));
	d.sm_count = g.sm_count;
	d.cc_major = g.cc_major;
	d.cc_minor = g.cc_minor;
	d.l2_bytes = g.l2_bytes;
	d.clock_khz = g.clock_khz;
	d.max_threads_per_sm = d.max_blocks_per_sm = d.regs_per_sm = NT_TRACE_UNKNOWN;
	d.smem_per_sm = NT_TRACE_UNKNOWN;
	{
		struct nt_sm_limits lim;

		if (!nt_sm_limits_for(g.cc_major, g.cc_minor, &lim, NULL)) {
			d.max_threads_per_sm = lim.max_threads_per_sm;
			d.max_blocks_per_sm = lim.max_blocks_per_sm;
			d.regs_per_sm = lim.regs_per_sm;
			d.smem_per_sm = lim.smem_per_sm;
		}
	}
	if (nt_trace_add_device(s->t, &d, &err))
		nt_warn("%s", err.msg);
	sp = s->cfg.store ? s->cfg.store : nt_store_default_path(path, sizeof(path));
	if (sp && !nt_store_open(sp, 0, &store, &err) && !nt_store_latest(store, g.uuid, &map, &err) &&
	    !nt_trace_add_map(s->t, map, &err)) {
		nt_map_free(map);
		nt_store_close(store);
		return;
	}
	nt_map_free(map);
	nt_store_close(store);
	if (strlen(s->no_map) + strlen(g.uuid) + 3 < sizeof(s->no_map))
		strcat(strcat(s->no_map, s->no_map[0] ? ", " : ""), g.uuid);
}

/* Resident blocks per SM for a launch of `threads` per block, from the
 * device's limits; NT_TRACE_UNKNOWN when the device or any need is not
 * known. */
static int32_t occupancy(const struct nt_sink *s, int device, int threads, int registers,
			 int64_t static_smem, int64_t dyn_smem)
{
	struct nt_launch_res res = { 0 };
	struct nt_sm_limits lim;
	struct nt_occupancy o;
	int cc = device >= 0 && device < 256 ? s->cc[device] : 0;

	if (!cc || registers < 0 || static_smem < 0 || dyn_smem < 0 ||
	    nt_sm_limits_for(cc / 10, cc % 10, &lim, NULL))
		return NT_TRACE_UNKNOWN;
	res.threads = threads;
	res.registers = registers;
	res.static_smem = static_smem;
	res.dynamic_smem = dyn_smem;
	if (nt_occupancy(&lim, &res, &o, NULL))
		return NT_TRACE_UNKNOWN;
	return o.blocks;
}

static int threads_of(const struct nt_launch_info *l)
{
	return (int)(l->block[0] * l->block[1] * l->block[2]);
}

int nt_sink_launch(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l,
		   const volatile struct nt_block_rec *rec, uint32_t n)
{
	struct nt_trace_launch tl = { 0 };
	struct kernel_entry *k;
	struct nt_err err;
	int64_t t0 = INT64_MAX, t1 = INT64_MIN;

	if (begin(s))
		return -1;
	if (n > s->blocks_cap) {
		struct nt_trace_block *b = realloc(s->blocks, n * sizeof(*b));

		if (!b)
			return -1;
		s->blocks = b;
		s->blocks_cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct nt_trace_block *b = &s->blocks[i];

		b->block = i;
		b->sm = (int32_t)rec[i].smid;
		b->warps = (int32_t)rec[i].warps;
		b->t_start_ns = (int64_t)rec[i].t_start;
		b->t_end_ns = (int64_t)rec[i].t_end;
		b->c_start = (int64_t)rec[i].c_start;
		b->c_end = (int64_t)rec[i].c_end;
		if (b->t_start_ns < t0)
			t0 = b->t_start_ns;
		if (b->t_end_ns > t1)
			t1 = b->t_end_ns;
	}
	device_of(s, l->device);
	k = kernel_of(s, l->kernel);
	tl.launch = (int64_t)seq;
	tl.kernel = k ? k->id : NT_TRACE_UNKNOWN;
	tl.device = l->device;
	tl.context = l->context;
	tl.stream = l->stream;
	tl.grid_x = l->grid[0], tl.grid_y = l->grid[1], tl.grid_z = l->grid[2];
	tl.block_x = l->block[0], tl.block_y = l->block[1], tl.block_z = l->block[2];
	tl.cluster_x = l->cluster[0], tl.cluster_y = l->cluster[1], tl.cluster_z = l->cluster[2];
	tl.dyn_smem = l->dyn_smem >= 0 ? (int32_t)l->dyn_smem : NT_TRACE_UNKNOWN;
	tl.max_blocks_per_sm = NT_TRACE_UNKNOWN;
	{
		struct nt_cubin_kernel a;

		if (!nt_kattrs_get(l->kernel, &a))
			tl.max_blocks_per_sm = occupancy(s, l->device, threads_of(l), a.registers,
							 a.static_smem, l->dyn_smem);
	}
	tl.traced = 1;
	tl.blocks = n;
	tl.t_start_ns = n ? t0 : NT_TRACE_UNKNOWN;
	tl.t_end_ns = n ? t1 : NT_TRACE_UNKNOWN;
	tl.correlation = tl.graph = tl.graph_node = NT_TRACE_UNKNOWN;
	if (nt_trace_add_launch(s->t, &tl, &err) || nt_trace_add_blocks(s->t, tl.launch, s->blocks, n, &err)) {
		nt_warn("%s", err.msg);
		return -1;
	}
	s->n_traced++;
	s->n_blocks += n;
	if (k) {
		k->launches++;
		k->blocks += n;
		k->ns += n ? t1 - t0 : 0;
	}
	return 0;
}

int nt_sink_kernel(struct nt_sink *s, uint64_t seq, const struct nt_kernel_record *r)
{
	struct nt_trace_launch tl = { 0 };
	struct kernel_entry *k;
	struct nt_err err;

	if (begin(s))
		return -1;
	device_of(s, r->l.device);
	k = kernel_of_rec(s, r->l.kernel, r);
	tl.launch = (int64_t)seq;
	tl.kernel = k ? k->id : NT_TRACE_UNKNOWN;
	tl.device = r->l.device;
	tl.context = r->l.context;
	tl.stream = r->l.stream;
	tl.grid_x = r->l.grid[0], tl.grid_y = r->l.grid[1], tl.grid_z = r->l.grid[2];
	tl.block_x = r->l.block[0], tl.block_y = r->l.block[1], tl.block_z = r->l.block[2];
	tl.cluster_x = r->l.cluster[0], tl.cluster_y = r->l.cluster[1];
	tl.cluster_z = r->l.cluster[2];
	tl.dyn_smem = r->dyn_smem;
	tl.max_blocks_per_sm = occupancy(s, r->l.device, threads_of(&r->l), r->registers,
				       r->static_smem, r->dyn_smem);
	tl.traced = 0;
	tl.blocks = 0;
	/* CUPTI gives 0 for a time it does not know (records flushed early). */
	tl.t_start_ns = r->start_ns ? (int64_t)r->start_ns : NT_TRACE_UNKNOWN;
	tl.t_end_ns = r->end_ns ? (int64_t)r->end_ns : NT_TRACE_UNKNOWN;
	tl.correlation = (int64_t)r->correlation;
	tl.graph = r->graph ? (int64_t)r->graph : NT_TRACE_UNKNOWN;
	tl.graph_node = r->graph_node ? (int64_t)r->graph_node : NT_TRACE_UNKNOWN;
	if (nt_trace_add_launch(s->t, &tl, &err)) {
		nt_warn("%s", err.msg);
		return -1;
	}
	s->n_traced++;
	if (k) {
		k->launches++;
		if (r->start_ns && r->end_ns > r->start_ns)
			k->ns += (int64_t)(r->end_ns - r->start_ns);
	}
	return 0;
}

void nt_sink_drop(struct nt_sink *s, uint64_t seq, const struct nt_launch_info *l, const char *reason)
{
	struct drop_entry *d = calloc(1, sizeof(*d));

	if (!d)
		return;
	d->seq = seq;
	d->kernel = strdup(l->kernel);
	d->reason = reason;
	pthread_mutex_lock(&s->drop_lock);
	d->next = s->drops;
	s->drops = d;
	s->n_dropped++;
	pthread_mutex_unlock(&s->drop_lock);
}

static void write_drops(struct nt_sink *s)
{
	struct drop_entry *d, *next;
	struct nt_err err;

	pthread_mutex_lock(&s->drop_lock);
	d = s->drops;
	s->drops = NULL;
	pthread_mutex_unlock(&s->drop_lock);
	for (; d; d = next) {
		struct kernel_entry *k;
		struct nt_trace_drop td = { (int64_t)d->seq, NT_TRACE_UNKNOWN, d->reason, 1 };

		next = d->next;
		if (!begin(s)) {
			if (d->kernel && (k = kernel_of(s, d->kernel)))
				td.kernel = k->id;
			if (nt_trace_add_drop(s->t, &td, &err))
				nt_warn("%s", err.msg);
		}
		free(d->kernel);
		free(d);
	}
}

void nt_sink_tick(struct nt_sink *s)
{
	write_drops(s);
	if (s->in_tx && now_s() - s->tx_since >= COMMIT_EVERY_S)
		commit(s);
}

static int by_time(const void *a, const void *b)
{
	const struct kernel_entry *x = *(struct kernel_entry *const *)a;
	const struct kernel_entry *y = *(struct kernel_entry *const *)b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

static void summary(struct nt_sink *s, uint64_t launches, FILE *f)
{
	struct kernel_entry *e, **v;
	size_t n = HASH_COUNT(s->kernels), i = 0;
	int64_t total = 0;

	if (!strcmp(s->backend, "kernels"))
		fprintf(f, "nucatrace: kernels mode: %" PRIu64 " launches recorded\n", s->n_traced);
	else
		fprintf(f, "nucatrace: %s mode: traced %" PRIu64 " of %" PRIu64 " launches, %" PRIu64
			   " blocks recorded, %" PRIu64 " launches dropped\n", s->backend, s->n_traced,
			launches, s->n_blocks, s->n_dropped);
	v = malloc((n ? n : 1) * sizeof(*v));
	for (e = s->kernels; v && e; e = e->hh.next)
		v[i++] = e, total += e->ns;
	if (v && n) {
		qsort(v, n, sizeof(*v), by_time);
		fprintf(f, "nucatrace: top kernels by %s GPU time:\n",
			strcmp(s->backend, "kernels") ? "traced" : "recorded");
		for (i = 0; i < n && i < 5 && v[i]->launches; i++)
			fprintf(f, "  %5.1f%%  %10.3f ms  %6" PRIu64 " launches  %.60s\n",
				total ? 100.0 * v[i]->ns / total : 0.0, v[i]->ns / 1e6, v[i]->launches,
				v[i]->mangled);
	}
	free(v);
	if (s->no_map[0])
		fprintf(f, "nucatrace: no calibration map for %s in the store: the trace has no map "
			   "(run 'nucatrace calibrate')\n", s->no_map);
	if (s->t)
		fprintf(f, "nucatrace: trace written to %s\n", s->path);
}

void nt_sink_close(struct nt_sink *s, uint64_t launches, FILE *f)
{
	struct kernel_entry *e, *tmp;
	struct nt_err err;
	char buf[32];

	if (!s)
		return;
	write_drops(s);
	if (s->t) {
		snprintf(buf, sizeof(buf), "%" PRIu64, launches);
		if (!begin(s))
			nt_trace_set_meta(s->t, "launches", buf, &err);
		commit(s);
		if (nt_trace_finish(s->t, &err))
			nt_warn("%s", err.msg);
	}
	if (f && (s->t || s->n_dropped))
		summary(s, launches, f);
	if (s->t)
		nt_trace_close(s->t);
	HASH_ITER(hh, s->kernels, e, tmp) {
		HASH_DEL(s->kernels, e);
		free(e->mangled);
		free(e);
	}
	if (s->cu_loaded)
		nt_cuda_unload(&s->cu);
	free(s->blocks);
	pthread_mutex_destroy(&s->drop_lock);
	free(s);
}
