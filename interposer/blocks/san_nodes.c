/*
 * Graph kernel nodes' descriptors (san.h, kernels/blockrec.h).  All the
 * nodes of one kernel in a graph launch take the per-function data it
 * has when the graph is queued: on the H200 two nodes of one kernel got
 * the data the second was given, and per-launch data set in a node's
 * callback did no better (docs/results/2026-12-01-graph-nodes-noise.md).  So a
 * traced node launch's data is a table, one per graph exec and context
 * its nodes run in, in device memory: from the node's %gridid + 1, which
 * a graph launch's node launches do not share, to that launch's
 * descriptor, held in the entry itself.  A node's %gridid is the same at every launch of its exec, so
 * the table keeps its keys from launch to launch; an update of the exec
 * may give its nodes new ones, and the next launch then empties the
 * table first (nt_san_nodes_exec_changed).
 *
 * A graph launch hands the table out (it becomes the per-function data
 * of each kernel with a node traced in it); the other launches leave it
 * alone, and their nodes find no data.  Entries are copied on the
 * launch's stream, and that copy is not ordered after the exec's last
 * launch, which may still read them: on the H200, rewriting entries while
 * it ran gave 51 of its 100 launches of one node records of no warps
 * (session 10, run 5).  So the first time a launch writes a table that an
 * earlier launch was handed, it waits for its stream (once per graph
 * launch).  The exec's launches run one after another, so waiting for
 * the stream waits for the last one only when it was on the same stream:
 * the caller does not trace the nodes of a launch on another stream than
 * the exec's last.  Launches that write nothing never wait.
 *
 * A node not traced in a launch that hands the table out must find no
 * descriptor: every kernel node of a launch has its callback before the
 * launch is queued, and the caller clears the entry of each node it does
 * not trace (nt_san_node_clear), a copy only when the entry holds one.
 * So a launch that traces every node of its exec costs one copy a node
 * (session 29's design emptied each table at each launch and copied the
 * descriptor apart: three copies a node, about 3.5 us each on the H200,
 * two thirds of a traced node's host time:
 * docs/results/2026-12-04-node-cost.md).
 *
 * Most launches write nothing: an entry's descriptor may name a run of
 * records for several launches of its node (kernels/blockrec.h,
 * replays), whose blocks find their own by counting their launches, and
 * the host counts them alike (nt_san_node_reuse: no copy, no wait, 3.4
 * us a traced node against 9.7 on the H200,
 * docs/results/2026-12-05-node-runs.md).  The host keeps, beside each
 * entry, the run (a reference of its own) and how many of its launches
 * were handed out; each launch traced holds another reference.  Every
 * launch the blocks write into a run is one the host traced (the caller
 * clears the entry of a node it does not trace before the table is
 * handed out), so a run let go by its entry is written no more once its
 * traced launches are read: entries let go when rewritten, emptied,
 * forgotten, or at a window's close (nt_san_nodes_retire).
 *
 * Called by the one thread that traces graph nodes at a time (the
 * backend's graph_lock); the mutex guards the tables against
 * nt_san_nodes_forget and is not held while waiting for the stream.  A
 * table grows (doubles, half full at most) into a new block; the old one
 * may still be read by a launch on the GPU, and so may the block of a
 * table forgotten (its exec destroyed, or its handle taken by a new
 * exec): such a block is retired, handed to no launch again, and freed
 * once the device is known to have finished every launch queued before
 * it was retired, when its context is waited for before a module switch
 * (san_modules.c settle: nt_san_nodes_mark, nt_san_nodes_reclaim), or
 * with its context.  Before session 40 they were all kept until the
 * context went, and a long run of windows, each with shadow execs of its
 * own, could fill NUCATRACE_GRAPH_TABLES.  Where no switch comes (under
 * --sample all, or in a long window) and retired blocks fill half the
 * room live tables leave under it, a graph launch's entry waits for
 * their contexts first (nt_san_nodes_pressed, press_update, san_modules.c
 * nt_san_tables_press): a program that makes and destroys an exec a step
 * would otherwise fill it.
 */
#include "san.h"

#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "kernels/blockrec.h"

/* A device block: the table's descriptor, then its entries. */
struct block {
	CUcontext ctx;
	void *dev;
	size_t size;
	uint64_t retired;	/* retire_clock when it was retired; 0: a table's */
	struct block *next;
};

struct table_key {
	CUgraphExec exec;
	CUcontext ctx;		/* the nodes' (an exec's nodes may run in several) */
};

/* What the host keeps of an entry beside the device's copy: the record
 * run its descriptor names, when it is for several launches of the node
 * (kernels/blockrec.h), and how many of them were handed out. */
struct aux {
	struct nt_san_hold *hold;	/* a reference of its own; NULL: none */
	uint32_t used;
};

struct table {
	struct table_key key;
	uint32_t launch;	/* the exec's launch that last wrote it or handed it out */
	int handed;		/* ... handed it out */
	int pending;		/* an earlier launch handed it out, not waited for since */
	int changed;		/* the exec was updated: its keys may be stale */
	unsigned bits, n;	/* 2^bits entries, n keys */
	unsigned live;		/* entries with a descriptor */
	struct nt_node_entry *host;	/* what the device block holds */
	struct aux *aux;		/* [2^bits], beside host */
	struct nt_launch_desc *dev;	/* NULL: none yet */
	struct block *blk;		/* ... its block in `blocks` */
	UT_hash_handle hh;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
static struct block *blocks;	/* every device block made, for nt_san_nodes_forget */
static size_t bytes;		/* ... their size together (NUCATRACE_GRAPH_TABLES) */
static uint64_t retire_clock;	/* blocks retired so far */
static size_t retired_bytes;	/* the size of those not freed yet (atomic: read unlocked) */
static size_t press_floor;	/* retired_bytes after the last wait for room */
static size_t press_at = SIZE_MAX;	/* retired_bytes that asks for one (atomic; press_update) */

/* press_at again, after bytes, retired_bytes or press_floor changed
 * (mutex held): half the room that live tables leave under the cap, or,
 * after a wait that freed too little (a context in error, a failed
 * free), a quarter of it more than what that wait left, until those are
 * freed by another wait. */
static void press_update(void)
{
	size_t cap = (size_t)nt_san.cfg.graph_tables_mib << 20, live = bytes - retired_bytes,
	       room = cap > live ? cap - live : 0, need = room / 2;

	if (press_floor > retired_bytes)
		press_floor = retired_bytes;
	if (press_floor + room / 4 > need)
		need = press_floor + room / 4;
	__atomic_store_n(&press_at, need ? need : 1, __ATOMIC_RELAXED);
}

static struct nt_node_entry *entries(struct nt_launch_desc *dev)
{
	return (struct nt_node_entry *)(dev + 1);
}

static int filed(const struct nt_node_entry *e)
{
	return e->key && e->desc.grid == e->key - 1;
}

/* The slot of key in host (2^bits entries): its own, or the empty one
 * where it goes. */
static unsigned find(const struct nt_node_entry *host, unsigned bits, uint64_t key)
{
	unsigned mask = (1u << bits) - 1, i = nt_node_slot(key, 64 - bits);

	while (host[i].key && host[i].key != key)
		i = (i + 1) & mask;
	return i;
}

/* t's block is handed to no launch again (mutex held). */
static void retire(struct table *t)
{
	if (t->blk) {
		t->blk->retired = ++retire_clock;
		__atomic_add_fetch(&retired_bytes, t->blk->size, __ATOMIC_RELAXED);
		press_update();
	}
	t->blk = NULL;
}

/* A new device block of 2^bits entries holding t's keys and entries;
 * copied on stream.  0, or -1 with *why set. */
static int grow(struct table *t, unsigned bits, nt_san_stream stream, const char **why)
{
	size_t n = (size_t)1 << bits, size = sizeof(struct nt_launch_desc) + n * sizeof(struct nt_node_entry);
	struct nt_launch_desc *img = NULL, *dev = NULL;
	struct nt_node_entry *host = NULL;
	struct aux *aux = NULL;
	struct block *b = NULL;

	*why = "out of memory";
	if (bytes + size > (size_t)nt_san.cfg.graph_tables_mib << 20) {
		*why = "graph node tables full (NUCATRACE_GRAPH_TABLES MiB; those of destroyed graph execs "
		       "are freed once the device is waited for: at a window's open or close, at a graph "
		       "launch when they fill half of it, or with their context)";
		return -1;
	}
	if (!(img = calloc(1, size)) || !(host = calloc(n, sizeof(*host))) || !(aux = calloc(n, sizeof(*aux))) ||
	    !(b = calloc(1, sizeof(*b))) || nt_san.sanitizerAlloc(t->key.ctx, (void **)&dev, size))
		goto fail;
	for (unsigned i = 0; t->host && i < 1u << t->bits; i++) {
		if (t->host[i].key) {
			unsigned j = find(host, bits, t->host[i].key);

			host[j] = t->host[i];
			aux[j] = t->aux[i];
		}
	}
	img->magic = NT_DESC_MAGIC;
	img->node_shift = 64 - bits;
	img->nodes = entries(dev);
	memcpy(entries(img), host, n * sizeof(*host));
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(dev, img, size, stream)) {
		nt_san.sanitizerFree(t->key.ctx, dev);
		goto fail;
	}
	free(img);
	free(t->host);
	free(t->aux);
	retire(t);
	t->host = host;
	t->aux = aux;
	t->bits = bits;
	t->dev = dev;
	t->blk = b;
	b->ctx = t->key.ctx;
	b->dev = dev;
	b->size = size;
	b->next = blocks;
	blocks = b;
	bytes += size;
	press_update();
	return 0;
fail:
	free(img);
	free(host);
	free(aux);
	free(b);
	return -1;
}

/* The table of exec's nodes in ctx, or NULL (mutex held). */
static struct table *table_get(CUgraphExec exec, CUcontext ctx)
{
	struct table_key k = { exec, ctx };
	struct table *t;

	HASH_FIND(hh, tables, &k, sizeof(k), t);
	return t;
}

/* ... made when missing; NULL: out of memory. */
static struct table *table_of(CUgraphExec exec, CUcontext ctx)
{
	struct table *t = table_get(exec, ctx);

	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->key = (struct table_key){ exec, ctx };
		HASH_ADD(hh, tables, key, sizeof(t->key), t);
	}
	return t;
}

/* Entry i's run let go (mutex held; its launches traced keep theirs). */
static void unhold(struct aux *a)
{
	if (a->hold)
		nt_san_release(a->hold);
	*a = (struct aux){ 0 };
}

/* Write entry i of t, its run `a` (mutex held): 0, or -1 with nothing
 * changed. */
static int put(struct table *t, unsigned i, const struct nt_node_entry *e, const struct aux *a,
	       nt_san_stream stream)
{
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(entries(t->dev) + i, (void *)e, sizeof(*e), stream))
		return -1;
	t->n += !t->host[i].key;
	t->live += filed(e) - filed(&t->host[i]);
	t->host[i] = *e;
	unhold(&t->aux[i]);
	t->aux[i] = *a;
	if (a->hold)
		nt_san_hold_ref(a->hold);
	return 0;
}

/* Every run t's entries hold let go (mutex held). */
static void unhold_all(struct table *t)
{
	for (unsigned i = 0; t->aux && i < 1u << t->bits; i++)
		unhold(&t->aux[i]);
}

/* t out of the tables and freed, its runs let go (mutex held; its device
 * block retired). */
static void table_free(struct table *t)
{
	HASH_DEL(tables, t);
	unhold_all(t);
	retire(t);
	free(t->host);
	free(t->aux);
	free(t);
}

/* Every entry of t without its key (mutex held): 0 or -1. */
static int empty(struct table *t, nt_san_stream stream)
{
	size_t n = (size_t)1 << t->bits;
	struct nt_node_entry *img = calloc(n, sizeof(*img));

	if (!img)
		return -1;
	if (nt_san.sanitizerMemcpyHostToDeviceAsync(entries(t->dev), img, n * sizeof(*img), stream)) {
		free(img);
		return -1;
	}
	unhold_all(t);
	free(t->host);
	t->host = img;
	t->live = t->n = 0;
	return 0;
}

/* t is used in launch `launch` (mutex held): what earlier launches handed
 * out is pending until a wait. */
static void touch(struct table *t, uint32_t launch)
{
	if (t->launch == launch)
		return;
	t->pending |= t->handed;
	t->handed = 0;
	t->launch = launch;
}

/* t (of key k, mutex held) ready to be written in launch `launch`: the
 * stream waited for when an earlier launch was handed it and not waited
 * for since (the mutex let go meanwhile: t is looked up again), and
 * emptied when its exec changed.  A launch that hands the table out
 * before it writes it (nt_san_node_reuse) still waits for the earlier
 * ones.  t, or NULL with *why set. */
static struct table *settle(struct table *t, CUcontext ctx, CUgraphExec exec, uint32_t launch,
			    nt_san_stream stream, int *synced, const char **why)
{
	if (!t->dev)
		return t;
	touch(t, launch);
	if (t->pending && !*synced) {
		pthread_mutex_unlock(&lock);
		if (nt_san.sanitizerStreamSynchronize(stream)) {
			pthread_mutex_lock(&lock);
			*why = "cannot wait for its graph exec's last launch";
			return NULL;
		}
		*synced = 1;
		pthread_mutex_lock(&lock);
		*why = "out of memory";
		if (!(t = table_of(exec, ctx)))	/* forgotten meanwhile: made again */
			return NULL;
		if (!t->dev)
			return t;
		touch(t, launch);
	}
	if (*synced)	/* the earlier launches are done */
		t->pending = 0;
	if (t->changed && t->n && empty(t, stream)) {
		*why = "cannot pass the record buffer to the launch";
		return NULL;
	}
	t->changed = 0;
	return t;
}

const void *nt_san_node_file(CUcontext ctx, CUgraphExec exec, uint32_t launch, nt_san_stream stream,
			     uint64_t gridid, const struct nt_launch_desc *desc, struct nt_san_hold *hold,
			     int *synced, const void **grown_from, const char **why)
{
	struct nt_node_entry e = { .key = gridid + 1, .desc = *desc };
	struct aux a = { desc->replays ? hold : NULL, 1 };	/* this launch is the run's first */
	const void *data = NULL;
	struct table *t;
	unsigned i;

	*why = "out of memory";
	*grown_from = NULL;
	if (!e.key) {
		*why = "its grid id is out of range";
		return NULL;
	}
	pthread_mutex_lock(&lock);
	if (!(t = table_of(exec, ctx)) || !(t = settle(t, ctx, exec, launch, stream, synced, why)))
		goto out;
	i = t->dev ? find(t->host, t->bits, e.key) : 0;
	if (!t->dev || (!t->host[i].key && 2 * (t->n + 1) > 1u << t->bits)) {
		const void *old = t->dev;

		if (grow(t, t->dev ? t->bits + 1 : 3, stream, why))
			goto out;
		*grown_from = old;
		t->launch = launch;	/* a new block: no launch was handed it yet */
		t->pending = 0;
		i = find(t->host, t->bits, e.key);
	}
	if (put(t, i, &e, &a, stream)) {
		*why = "cannot pass the record buffer to the launch";
		goto out;
	}
	t->handed = 1;
	data = t->dev;
out:
	pthread_mutex_unlock(&lock);
	return data;
}

const void *nt_san_node_reuse(CUcontext ctx, CUgraphExec exec, uint32_t launch, uint64_t gridid,
			      const struct nt_launch_desc *want, int entry_only, struct nt_san_hold **hold,
			      uint32_t *run)
{
	const struct nt_launch_desc *d;
	const void *data = NULL;
	struct table *t;
	struct aux *a;
	unsigned i;

	pthread_mutex_lock(&lock);
	if (!(t = table_get(exec, ctx)) || !t->dev || t->changed || !t->live || !(gridid + 1))
		goto out;
	i = find(t->host, t->bits, gridid + 1);
	a = &t->aux[i];
	d = &t->host[i].desc;
	if (!filed(&t->host[i]) || !a->hold || a->used >= d->replays ||
	    nt_san_hold_entry_only(a->hold) != entry_only || d->grid != gridid || d->blocks != want->blocks ||
	    d->threads != want->threads || d->grid_x != want->grid_x || d->grid_y != want->grid_y)
		goto out;
	*run = a->used++;
	*hold = a->hold;
	nt_san_hold_ref(a->hold);
	touch(t, launch);
	t->handed = 1;
	data = t->dev;
out:
	pthread_mutex_unlock(&lock);
	return data;
}

int nt_san_node_clear(CUcontext ctx, CUgraphExec exec, uint32_t launch, nt_san_stream stream, uint64_t gridid,
		      int *synced)
{
	struct nt_node_entry e = { .key = gridid + 1, .desc = { .grid = ~0ull } };
	struct aux none = { 0 };
	const char *why;
	struct table *t;
	unsigned i;
	int ret = 0;

	pthread_mutex_lock(&lock);
	t = table_get(exec, ctx);
	if (!t || !t->dev || !t->live || !e.key)
		goto out;
	i = find(t->host, t->bits, e.key);
	if (!filed(&t->host[i]))
		goto out;
	ret = -1;
	if (!(t = settle(t, ctx, exec, launch, stream, synced, &why)))
		goto out;
	i = find(t->host, t->bits, e.key);	/* (emptied, or another table) */
	ret = t->dev && filed(&t->host[i]) ? put(t, i, &e, &none, stream) : 0;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

int nt_san_node_filed(CUcontext ctx, CUgraphExec exec, uint64_t gridid)
{
	struct table *t;
	int ret = 0;

	pthread_mutex_lock(&lock);
	if ((t = table_get(exec, ctx)) && t->dev && t->live && gridid + 1)
		ret = filed(&t->host[find(t->host, t->bits, gridid + 1)]);
	pthread_mutex_unlock(&lock);
	return ret;
}

void nt_san_nodes_exec_changed(CUgraphExec exec)
{
	struct table *t, *tmp;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp) {
		if (t->key.exec == exec)
			t->changed = 1;
	}
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_forget(CUcontext ctx)
{
	struct table *t, *tmp;
	struct block **p = &blocks;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp) {
		if (t->key.ctx == ctx)
			table_free(t);
	}
	while (*p) {
		struct block *b = *p;

		if (b->ctx == ctx) {
			*p = b->next;
			nt_san.sanitizerFree(ctx, b->dev);
			bytes -= b->size;
			if (b->retired)
				__atomic_sub_fetch(&retired_bytes, b->size, __ATOMIC_RELAXED);
			free(b);
		} else {
			p = &b->next;
		}
	}
	press_update();
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_forget_exec(CUgraphExec exec)
{
	struct table *t, *tmp;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp) {
		if (t->key.exec == exec)
			table_free(t);
	}
	pthread_mutex_unlock(&lock);
}

uint64_t nt_san_nodes_mark(void)
{
	uint64_t m;

	pthread_mutex_lock(&lock);
	m = retire_clock;
	pthread_mutex_unlock(&lock);
	return m;
}

/* Freed with the mutex let go (a free may wait like cudaFree, and a
 * graph launch begun during a switch may take the mutex inside the
 * driver); a block that cannot be freed goes back, retired. */
void nt_san_nodes_reclaim(CUcontext ctx, uint64_t mark)
{
	struct block **p = &blocks, *gone = NULL, *b;

	pthread_mutex_lock(&lock);
	while ((b = *p)) {
		if (b->ctx == ctx && b->retired && b->retired <= mark) {
			*p = b->next;
			b->next = gone;
			gone = b;
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&lock);
	while ((b = gone)) {
		gone = b->next;
		if (!nt_san.sanitizerFree(ctx, b->dev)) {
			pthread_mutex_lock(&lock);
			bytes -= b->size;
			__atomic_sub_fetch(&retired_bytes, b->size, __ATOMIC_RELAXED);
			press_update();
			pthread_mutex_unlock(&lock);
			free(b);
			continue;
		}
		pthread_mutex_lock(&lock);
		b->next = blocks;
		blocks = b;
		pthread_mutex_unlock(&lock);
	}
}

int nt_san_nodes_pressed(CUcontext *ctxs, int max)
{
	size_t r = __atomic_load_n(&retired_bytes, __ATOMIC_RELAXED);
	int n = 0;

	/* relaxed reads first: this is asked at every graph launch */
	if (!r || r < __atomic_load_n(&press_at, __ATOMIC_RELAXED))
		return 0;
	if (!ctxs)
		return 1;
	pthread_mutex_lock(&lock);
	for (struct block *b = blocks; b && n < max; b = b->next)
		if (b->retired)
			nt_san_note_ctx(ctxs, &n, b->ctx);
	pthread_mutex_unlock(&lock);
	return n;
}

void nt_san_nodes_pressed_done(void)
{
	pthread_mutex_lock(&lock);
	press_floor = retired_bytes;
	press_update();
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_retire(void)
{
	struct table *t, *tmp;

	pthread_mutex_lock(&lock);
	HASH_ITER(hh, tables, t, tmp)
		unhold_all(t);
	pthread_mutex_unlock(&lock);
}

void nt_san_nodes_reset(void)
{
	pthread_mutex_init(&lock, NULL);
}
