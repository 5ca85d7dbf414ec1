/*
 * Per CUDA context, the record buffers of traced launches (san.h): a
 * recpool of slabs whose scratch and descriptors are in device memory
 * and whose records are in pinned host memory, with a copy of them on the
 * device (a plain launch's blocks write there, san_fetch.c), all from the
 * sanitizer's own allocator.  A launch that finds no room waits for the collector
 * to give runs back, up to NUCATRACE_WAIT seconds, rather than be
 * dropped: `--sample all` asks for every launch.
 */
#include "san.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "interposer/collector.h"
#include "gpu/cudrv.h"
#include "recpool.h"
#include "util/clock.h"

struct ctx_buf {
	CUcontext ctx;
	struct nt_recpool *pool;
	int dead;			/* the context is gone: runs come back to nothing */
	UT_hash_handle hh;
};

struct nt_san_hold {
	struct ctx_buf *cb;
	struct nt_recrun run;
	unsigned tag;
	/* records on the device (san_fetch.c): the event that marks the
	 * launch's end; ended (atomic): END_* below; fetched: copied to
	 * run.rec */
	CUevent done;
	int ended, fetched;	/* fetched: atomic */
	int entry_only;		/* its records are struct nt_entry_rec */
	int uploaded;		/* desc copied to run.desc (else a graph node's: san_nodes.c) */
	/* a graph node's for desc.replays launches (kernels/blockrec.h):
	 * each of them traced holds a reference, and its node's entry one
	 * (san_nodes.c); a plain launch's: 1 */
	int refs;
	struct nt_launch_desc desc;
	/* records on the device and not yet fetched: in the list unfetched
	 * (nt_san.lock); claimed (atomic, set under the lock) by the thread
	 * fetching them, the collector's or a launch's waiting for room */
	struct nt_san_hold *prev, *next;
	int listed, claimed;
};

/* A hold's end: the launch is not yet handed to the collector, its end
 * is awaited (the launch's thread marks it), was marked, could not be, or
 * the hold was released before its end came (the launch's thread, which
 * still holds it, frees it then: the collector gives up on launches at
 * exit, and a context may go with a launch of another thread in flight). */
enum { END_UNCOMMITTED = -2, END_FAILED = -1, END_AWAITED = 0, END_MARKED = 1, END_ORPHANED = 2 };

static struct ctx_buf *contexts;
static unsigned last_tag;
/* slots in graph nodes' runs for several launches (atomic): they are
 * held from one of the node's launches to its last, so they are kept to
 * a share of the buffers, and the other launches' runs keep coming back */
static uint64_t replay_slots;
static struct nt_san_hold *unfetched;	/* nt_san.lock */

/* With nt_san.lock held. */
static void unlist(struct nt_san_hold *h)
{
	if (!h->listed)
		return;
	if (h->prev)
		h->prev->next = h->next;
	else
		unfetched = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->prev = h->next = NULL;
	h->listed = 0;
}

static void slab_release(void *arg, struct nt_recslab_mem *m)
{
	CUcontext ctx = arg;

	if (m->rec)
		nt_san.sanitizerFreeHost(ctx, m->rec);
	if (m->drec)
		nt_san.sanitizerFree(ctx, m->drec);
	if (m->scratch)
		nt_san.sanitizerFree(ctx, m->scratch);
	if (m->desc)
		nt_san.sanitizerFree(ctx, m->desc);
}

/* A slab, zeroed, made with no lock held: the scratch must be in place
 * before a launch on any stream uses it, so the stream that zeroes it is
 * waited for (new slabs are rare: at a context's first traced launch,
 * and doubling under load). */
static int slab_alloc(CUcontext ctx, nt_san_stream stream, uint32_t slots, struct nt_recslab_mem *m)
{
	size_t scratch = (size_t)slots * sizeof(*m->scratch), rec = (size_t)slots * sizeof(*m->rec);
	size_t desc = (size_t)slots / NT_RECPOOL_UNIT * sizeof(*m->desc);

	memset(m, 0, sizeof(*m));
	if (nt_san.sanitizerAlloc(ctx, (void **)&m->scratch, scratch) ||
	    nt_san.sanitizerAllocHost(ctx, (void **)&m->rec, rec) ||
	    nt_san.sanitizerAlloc(ctx, (void **)&m->drec, rec) ||
	    nt_san.sanitizerAlloc(ctx, (void **)&m->desc, desc) ||
	    nt_san.sanitizerMemset(m->scratch, 0, scratch, stream) ||
	    nt_san.sanitizerStreamSynchronize(stream)) {
		slab_release(ctx, m);
		return -1;
	}
	memset(m->rec, 0, rec);
	return 0;
}

/* With nt_san.lock held. */
static struct ctx_buf *ctx_get(CUcontext ctx)
{
	struct ctx_buf *cb;

	HASH_FIND_PTR(contexts, &ctx, cb);
	if (cb)
		return cb;
	if (!(cb = calloc(1, sizeof(*cb))))
		return NULL;
	cb->ctx = ctx;
	if (!(cb->pool = nt_recpool_new(nt_san.cfg.buffer_blocks, nt_san.cfg.buffer_max))) {
		free(cb);
		return NULL;
	}
	HASH_ADD_PTR(contexts, ctx, cb);
	return cb;
}

/* A run of `blocks` in ctx's pool, growing it as it asks, every
 * allocation outside nt_san.lock. */
static enum nt_recpool_status take_run(CUcontext ctx, nt_san_stream stream, uint32_t blocks, uint32_t tags,
				       struct nt_san_hold *h)
{
	enum nt_recpool_status st;
	struct nt_recpool_grow g;

	for (;;) {
		struct nt_recslab_mem mem;

		pthread_mutex_lock(&nt_san.lock);
		h->cb = ctx_get(ctx);
		st = h->cb ? nt_recpool_take(h->cb->pool, blocks, &h->run, &g) : NT_RECPOOL_NO_MEMORY;
		if (st == NT_RECPOOL_OK) {	/* tags last_tag + 1 .. + tags, never 0 */
			if (last_tag > UINT32_MAX - tags)
				last_tag = 0;
			h->tag = last_tag + 1;
			last_tag += tags;
		}
		pthread_mutex_unlock(&nt_san.lock);
		if (st != NT_RECPOOL_GROW)
			return st;
		for (int i = 0; i < g.n_freed; i++)
			slab_release(ctx, &g.freed[i]);
		if (!g.slots)
			continue;
		if (slab_alloc(ctx, stream, g.slots, &mem))
			return NT_RECPOOL_NO_MEMORY;
		pthread_mutex_lock(&nt_san.lock);
		st = h->cb->dead || nt_recpool_add(h->cb->pool, g.slots, &mem) ? NT_RECPOOL_FULL : NT_RECPOOL_OK;
		pthread_mutex_unlock(&nt_san.lock);
		if (st != NT_RECPOOL_OK)
			slab_release(ctx, &mem);
	}
}

void nt_san_context_destroyed(CUcontext ctx)
{
	struct nt_recpool *pool = NULL;
	struct ctx_buf *cb;

	nt_collector_flush_context((uint64_t)(uintptr_t)ctx);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(contexts, &ctx, cb);
	if (cb) {
		HASH_DEL(contexts, cb);
		pool = cb->pool;
		cb->pool = NULL;
		/* The struct stays: a launch the collector gives up on later
		 * still calls release() on it. */
		cb->dead = 1;
	}
	pthread_mutex_unlock(&nt_san.lock);
	nt_recpool_free(pool, slab_release, ctx);
}

static void fill_desc(struct nt_launch_desc *d, const struct nt_recrun *run, uint64_t grid, uint32_t blocks,
		      uint32_t threads, uint32_t grid_x, uint32_t grid_y, unsigned tag, int on_device, uint32_t replays)
{
	d->magic = NT_DESC_MAGIC;
	d->grid = grid;
	d->scratch = run->scratch;
	d->rec = on_device ? run->drec : run->rec;
	d->on_device = on_device;
	d->threads = threads;
	d->grid_x = grid_x;
	d->grid_y = grid_y;
	d->tag = tag;
	d->blocks = blocks;
	d->replays = replays;
	d->node_shift = 0;
	d->nodes = NULL;
}

/* How long a launch waiting for room waits for a call of the
 * collector's into the driver to end. */
#define MARK_WAIT_S 0.05
/* ... and how often it looks for finished launches to fetch meanwhile
 * (the collector, kept out of the driver, cannot). */
#define HELP_EVERY_S 0.002

static int fetch_help(CUcontext ctx);

struct nt_san_hold *nt_san_take(CUcontext ctx, nt_san_stream stream, uint64_t grid, uint32_t blocks,
				uint32_t threads, uint32_t grid_x, uint32_t grid_y, CUevent done, int entry_only,
				uint32_t replays, int may_wait, int upload, const char **why)
{
	double t0 = nt_now_s(), deadline = t0 + nt_san.cfg.wait_s, left;
	struct nt_san_hold *h = calloc(1, sizeof(*h));
	int waited = 0, marked = 0;
	enum nt_recpool_status st;

	if (!h) {
		*why = "out of memory";
		nt_san_fetch_give(ctx, done, 0);
		return NULL;
	}
	if (replays && (uint64_t)blocks * replays > UINT32_MAX)
		replays = UINT32_MAX / blocks;
	while ((st = take_run(ctx, stream, replays ? blocks * replays : blocks, replays ? replays : 1, h)) ==
	       NT_RECPOOL_FULL) {
		left = deadline - nt_now_s();
		*why = NULL;
		if (!may_wait)
			*why = "record buffers full (held by earlier nodes of its graph launch, which run only "
			       "once it is queued)";
		else if (!nt_collector_waits()) {	/* a window= policy: a sample, not worth a wait */
			*why = "record buffers full: the window closed rather than hold the program back "
			       "(a window= policy; --sample all waits)";
			nt_collector_close_now();
		} else if (left <= 0)
			*why = "record buffers full (waited NUCATRACE_WAIT seconds for the GPU)";
		/* The wait is inside the launch's callback, where the driver
		 * holds locks that the collector's event queries and copies
		 * may wait for: the switch mark keeps it out of the driver
		 * (its calls wait or come later), and this thread fetches the
		 * finished launches' records itself (the collector writes
		 * them and gives their runs back).  A call of the collector's
		 * that does not end may be waiting for this very thread. */
		else if (!marked && !(marked = nt_collector_switch_begin(MARK_WAIT_S)))
			*why = "record buffers full, and the collector's call into the driver did not end "
			       "(it may wait for this launch's own locks)";
		if (*why) {
			if (marked)
				nt_collector_switch_end();
			if (waited) {
				nt_san_slow(nt_now_s() - t0);
				nt_collector_room_wait(1, nt_now_s() - t0);
			}
			nt_san_fetch_give(ctx, done, 0);
			free(h);
			return NULL;
		}
		/* runs come back as the collector writes finished launches;
		 * the launches' ends are looked for every HELP_EVERY_S */
		if (!fetch_help(ctx) && nt_collector_wait_release(left < HELP_EVERY_S ? left : HELP_EVERY_S))
			nanosleep(&(struct timespec){ 0, 200000 }, NULL);
		waited = 1;
	}
	if (marked)
		nt_collector_switch_end();
	if (waited) {
		nt_san_slow(nt_now_s() - t0);
		nt_collector_room_wait(1, nt_now_s() - t0);
	}
	if (st == NT_RECPOOL_TOO_BIG) {
		*why = "grid larger than all record buffers together (NUCATRACE_BUFFER_MAX)";
	} else if (st != NT_RECPOOL_OK) {
		nt_warn("cannot allocate block record buffers; launches that need more are dropped");
		*why = "cannot allocate block record buffers";
	} else {
		h->done = done;
		h->ended = done ? END_UNCOMMITTED : END_MARKED;
		h->entry_only = entry_only;
		h->refs = 1;
		if (replays)
			__atomic_add_fetch(&replay_slots, h->run.blocks, __ATOMIC_RELAXED);
		fill_desc(&h->desc, &h->run, grid, blocks, threads, grid_x, grid_y, h->tag, done != NULL, replays);
		h->uploaded = upload;
		/* the blocks count their launches from 0 (the scratch of a
		 * plain launch's run may hold an earlier node's counts: it
		 * does not read them) */
		if (replays &&
		    nt_san.sanitizerMemset(h->run.scratch, 0, (size_t)blocks * sizeof(*h->run.scratch), stream)) {
			*why = "cannot pass the record buffer to the launch";
			nt_san_release(h);
			return NULL;
		}
		if (!upload || !nt_san.sanitizerMemcpyHostToDeviceAsync(h->run.desc, &h->desc, sizeof(h->desc), stream)) {
			if (done) {
				pthread_mutex_lock(&nt_san.lock);
				h->next = unfetched;
				if (unfetched)
					unfetched->prev = h;
				unfetched = h;
				h->listed = 1;
				pthread_mutex_unlock(&nt_san.lock);
			}
			return h;
		}
		*why = "cannot pass the record buffer to the launch";
		nt_san_release(h);
		return NULL;
	}
	nt_san_fetch_give(ctx, done, 0);
	free(h);
	return NULL;
}

const volatile struct nt_block_rec *nt_san_hold_records(const struct nt_san_hold *h, uint32_t run, uint32_t *tag)
{
	size_t first = (size_t)run * h->desc.blocks;

	*tag = h->tag + run;
	return h->entry_only ? (const volatile struct nt_block_rec *)((struct nt_entry_rec *)h->run.rec + first)
			     : h->run.rec + first;
}

uint64_t nt_san_replay_share(void)
{
	return nt_san.cfg.buffer_max / 4;
}

uint64_t nt_san_replay_room(void)
{
	uint64_t cap = nt_san_replay_share(), used = __atomic_load_n(&replay_slots, __ATOMIC_RELAXED);

	return used < cap ? cap - used : 0;
}

uint32_t nt_san_hold_replays(const struct nt_san_hold *h)
{
	return h->desc.replays;
}

int nt_san_hold_entry_only(const struct nt_san_hold *h)
{
	return h->entry_only;
}

void nt_san_hold_ref(struct nt_san_hold *h)
{
	__atomic_add_fetch(&h->refs, 1, __ATOMIC_RELAXED);
}

const void *nt_san_hold_desc(const struct nt_san_hold *h)
{
	return h->uploaded ? (const void *)h->run.desc : (const void *)&h->desc;
}

void nt_san_release(void *hold)
{
	struct nt_san_hold *h = hold;
	int dead, awaited = END_AWAITED;

	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;	/* another launch of its node, or the node's entry, still has it */
	if (h->desc.replays)
		__atomic_sub_fetch(&replay_slots, h->run.blocks, __ATOMIC_RELAXED);
	pthread_mutex_lock(&nt_san.lock);
	/* a waiting launch's thread fetching it (the collector gave up on
	 * it meanwhile: exit, a context going) is done in a moment */
	while (__atomic_load_n(&h->claimed, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&nt_san.lock);
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
		pthread_mutex_lock(&nt_san.lock);
	}
	unlist(h);
	dead = h->cb->dead;
	if (!dead)
		nt_recpool_give(h->cb->pool, &h->run);
	pthread_mutex_unlock(&nt_san.lock);
	/* its end not marked yet: nt_san_hold_ended() frees it */
	if (__atomic_compare_exchange_n(&h->ended, &awaited, END_ORPHANED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	nt_san_fetch_give(h->cb->ctx, h->done, dead);
	free(h);
}

void nt_san_hold_await_end(struct nt_san_hold *h)
{
	__atomic_store_n(&h->ended, END_AWAITED, __ATOMIC_RELEASE);
}

void nt_san_hold_ended(struct nt_san_hold *h, CUstream stream)
{
	const struct nt_cuda *c = nt_san_cuda();
	int awaited = END_AWAITED, marked = c && !c->cuEventRecord(h->done, stream) ? END_MARKED : END_FAILED;
	int dead;

	if (__atomic_compare_exchange_n(&h->ended, &awaited, marked, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	/* released meanwhile (END_ORPHANED) */
	pthread_mutex_lock(&nt_san.lock);
	dead = h->cb->dead;
	pthread_mutex_unlock(&nt_san.lock);
	nt_san_fetch_give(h->cb->ctx, h->done, dead);
	free(h);
}

/* Fetch h's records, claimed by this thread (app: a launch's, waiting
 * for room, the context current): 1 once they are in run.rec, 0 not
 * yet, -1 never. */
static int fetch_claimed(struct nt_san_hold *h, int app)
{
	int ended = __atomic_load_n(&h->ended, __ATOMIC_ACQUIRE), done, dead;

	if (__atomic_load_n(&h->fetched, __ATOMIC_ACQUIRE))
		return 1;
	if (ended == END_UNCOMMITTED || ended == END_AWAITED)
		return 0;	/* an event never recorded reads as passed */
	pthread_mutex_lock(&nt_san.lock);
	dead = h->cb->dead;
	pthread_mutex_unlock(&nt_san.lock);
	if (ended != END_MARKED || dead || (done = nt_san_fetch_done(h->done)) < 0)
		return -1;
	if (!done)
		return 0;
	if (nt_san_fetch_copy(h->cb->ctx, h->run.rec, h->run.drec, (size_t)h->run.blocks *
			      (h->entry_only ? sizeof(struct nt_entry_rec) : sizeof(struct nt_block_rec)), app))
		return app ? 0 : -1;	/* a launch's thread may lack the copy stream: the collector's */
	pthread_mutex_lock(&nt_san.lock);
	unlist(h);
	pthread_mutex_unlock(&nt_san.lock);
	__atomic_store_n(&h->fetched, 1, __ATOMIC_RELEASE);
	return 1;
}

static int claim(struct nt_san_hold *h)
{
	int no = 0;

	return __atomic_compare_exchange_n(&h->claimed, &no, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* On the collector's thread: 1 once the records are in run.rec (at once
 * when they were written there), 0 not yet, -1 never. */
int nt_san_hold_fetch(void *hold)
{
	struct nt_san_hold *h = hold;
	int r;

	if (!h->done || __atomic_load_n(&h->fetched, __ATOMIC_ACQUIRE))
		return 1;
	if (!claim(h))
		return 0;	/* a waiting launch's thread is fetching them */
	r = 0;
	if (nt_collector_driver_try_enter()) {	/* else one waits for room: it fetches */
		r = fetch_claimed(h, 0);
		nt_collector_driver_leave();
	}
	__atomic_store_n(&h->claimed, 0, __ATOMIC_RELEASE);
	return r;
}

/* In a launch's callback waiting for room in ctx: fetch the records of
 * ctx's finished launches (up to HELP at a time); how many were. */
#define HELP 64
static int fetch_help(CUcontext ctx)
{
	struct nt_san_hold *mine[HELP], *h;
	int n = 0, got = 0;

	pthread_mutex_lock(&nt_san.lock);
	for (h = unfetched; h && n < HELP; h = h->next)
		if (h->cb->ctx == ctx && __atomic_load_n(&h->ended, __ATOMIC_ACQUIRE) == END_MARKED && claim(h))
			mine[n++] = h;
	pthread_mutex_unlock(&nt_san.lock);
	for (int i = 0; i < n; i++) {
		got += fetch_claimed(mine[i], 1) == 1;
		__atomic_store_n(&mine[i]->claimed, 0, __ATOMIC_RELEASE);
	}
	return got;
}

int nt_san_room(CUcontext ctx, uint32_t blocks)
{
	struct ctx_buf *cb;
	int room = 1;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(contexts, &ctx, cb);
	if (cb && cb->pool)
		room = nt_recpool_room(cb->pool, blocks);
	pthread_mutex_unlock(&nt_san.lock);
	return room;
}
