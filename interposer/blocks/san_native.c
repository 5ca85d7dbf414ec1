/*
 * Native timing (san.h): a kernel configuration that is traced also has
 * a few of its untraced launches timed with a pair of events on their
 * stream while its module runs the program's own code, so that a report
 * can set what a traced launch took against what the kernel takes
 * without instrumentation.  Event times include what the stream waits
 * between the two records: a launch made onto an idle stream adds its
 * launch latency, so the report takes the shortest of a configuration's
 * times.
 *
 * No event is made or destroyed in a launch's callbacks: on the H200
 * cuEventCreate there waited for ever for a driver lock the launch held
 * (PyTorch launching on a stream of its own, session 12, run 8).  Events
 * come from a small pool that nt_san_native_prepare() fills as a launch
 * enters the driver, before its locks (as module switches do), and go
 * back to it; only the collector's thread destroys any.  A context that
 * goes away takes its events with it: timings of it still in flight are
 * marked dead, never queried again nor put back (the driver may hand the
 * next context the same handle).
 */
#include "san.h"

#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "interposer/collector.h"
#include "gpu/cudrv.h"

/* Native times per configuration over the run. */
#define PER_CONFIG 5

struct config_key {
	CUfunction f;
	uint32_t grid[3], block[3];
};

struct want {
	struct config_key key;
	int got, pending;
	UT_hash_handle hh;
};
static int unmet;	/* wants with fewer than PER_CONFIG times (atomic) */

struct timing {
	CUcontext ctx;
	CUevent before, after;
	struct want *w;
	char *kernel;		/* the launch data's name lives only in its callback */
	int ok;
	int dead;		/* its context went away: no longer w's (nt_san.lock) */
	struct timing *prev, *next;	/* live (nt_san.lock) */
};

static struct want *wants;
static struct timing *live;	/* timings not yet done (nt_san.lock) */
static const struct nt_cuda *cu;
static int off;			/* native timing failed once: no more */

/* Events made ahead, per context (nt_san.lock): POOL for each context
 * that launches, at most POOL_MAX in all; the collector's thread destroys
 * a context's events beyond POOL as they come back, and an event given
 * back in a launch's callbacks to a full pool is leaked, never destroyed
 * there. */
#define POOL 8
#define POOL_MAX 64
static struct {
	CUcontext ctx;
	CUevent e;
} pool[POOL_MAX];
static int n_pool;
/* A launch that was to be timed found no events of its context: the
 * next launch's entry makes some.  Otherwise a launch's entry makes no
 * driver call for us. */
static int starved;

/* Two events of ctx from the pool (nt_san.lock held): 0, or -1 when short. */
static int take_events(CUcontext ctx, CUevent *a, CUevent *b)
{
	int i, j;

	for (i = 0; i < n_pool && pool[i].ctx != ctx; i++)
		;
	for (j = i + 1; j < n_pool && pool[j].ctx != ctx; j++)
		;
	if (j >= n_pool)
		return -1;
	*a = pool[i].e;
	*b = pool[j].e;
	pool[j] = pool[--n_pool];	/* j first: it is the later one */
	pool[i] = pool[--n_pool];
	return 0;
}

static int pooled(CUcontext ctx)
{
	int n = 0;

	for (int i = 0; i < n_pool; i++)
		n += pool[i].ctx == ctx;
	return n;
}

/* e of ctx back to the pool (nt_san.lock held); 0, or -1 when full (all
 * POOL_MAX taken, or with ctx_cap POOL of ctx's). */
static int put_event(CUcontext ctx, CUevent e, int ctx_cap)
{
	if (!e)
		return 0;
	if (n_pool == POOL_MAX || (ctx_cap && pooled(ctx) >= POOL))
		return -1;
	pool[n_pool].ctx = ctx;
	pool[n_pool++].e = e;
	return 0;
}

int nt_san_native_unmet(void)
{
	return !__atomic_load_n(&off, __ATOMIC_RELAXED) && __atomic_load_n(&unmet, __ATOMIC_RELAXED) > 0;
}

int nt_san_native_needed(void)
{
	return !__atomic_load_n(&off, __ATOMIC_RELAXED) && __atomic_load_n(&starved, __ATOMIC_RELAXED);
}

void nt_san_native_prepare(void)
{
	const struct nt_cuda *c = nt_san_cuda();
	CUcontext ctx = NULL;
	int have = 0;
	CUevent e;

	__atomic_store_n(&starved, 0, __ATOMIC_RELAXED);
	if (!c || c->cuCtxGetCurrent(&ctx) || !ctx)
		return;
	pthread_mutex_lock(&nt_san.lock);
	have = n_pool == POOL_MAX ? POOL : pooled(ctx);
	pthread_mutex_unlock(&nt_san.lock);
	for (; have < POOL; have++) {
		int kept;

		if (c->cuEventCreate(&e, CU_EVENT_DEFAULT)) {
			nt_warn("cannot time untraced launches with events; the trace has no native times");
			__atomic_store_n(&off, 1, __ATOMIC_RELAXED);
			return;
		}
		pthread_mutex_lock(&nt_san.lock);
		kept = !put_event(ctx, e, 0);
		pthread_mutex_unlock(&nt_san.lock);
		if (!kept) {
			c->cuEventDestroy(e);
			return;
		}
	}
}

void nt_san_native_forget(CUcontext ctx)
{
	pthread_mutex_lock(&nt_san.lock);
	for (int i = 0; i < n_pool;)
		if (pool[i].ctx == ctx)
			pool[i] = pool[--n_pool];	/* gone with their context */
		else
			i++;
	for (struct timing *t = live; t; t = t->next)
		if (t->ctx == ctx && !t->dead) {
			t->dead = 1;
			t->w->pending--;	/* the next context may time it */
		}
	pthread_mutex_unlock(&nt_san.lock);
	/* a query the collector began before the mark ends first */
	nt_collector_driver_wait(0.05);
}

static _Thread_local struct {
	struct timing *t;
	struct nt_native_time nt;
} cur;

void nt_san_native_reset(void)
{
	struct want *w, *tmp;

	n_pool = 0;	/* the parent's events and timings */
	live = NULL;
	cur.t = NULL;
	starved = 0;
	HASH_ITER(hh, wants, w, tmp)
		w->pending = 0;
}

/* 1 when t's context went away (nt_san.lock not held). */
static int is_dead(const struct timing *t)
{
	int dead;

	pthread_mutex_lock(&nt_san.lock);
	dead = t->dead;
	pthread_mutex_unlock(&nt_san.lock);
	return dead;
}

/* t is done with (nt_san.lock held). */
static void unlink_timing(struct timing *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else if (live == t)
		live = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->prev = t->next = NULL;
}

static void key_of(const struct nt_launch_info *l, CUfunction f, struct config_key *k)
{
	memset(k, 0, sizeof(*k));
	k->f = f;
	memcpy(k->grid, l->grid, sizeof(k->grid));
	memcpy(k->block, l->block, sizeof(k->block));
}

void nt_san_native_want(const struct nt_launch_info *l, CUfunction f)
{
	struct config_key k;
	struct want *w;

	key_of(l, f, &k);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND(hh, wants, &k, sizeof(k), w);
	if (!w && (w = calloc(1, sizeof(*w)))) {
		w->key = k;
		HASH_ADD(hh, wants, key, sizeof(k), w);
		__atomic_add_fetch(&unmet, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&nt_san.lock);
}

/* Between nt_collector_driver_enter and leave.  An event query during
 * another thread's stream capture: relaxed (san.h). */
static int poll(void *cookie, int64_t *ns)
{
	struct timing *t = cookie;
	CUstreamCaptureMode mode;
	int relaxed;
	CUresult q, r;
	float ms;

	if (is_dead(t))
		return -1;
	relaxed = nt_san_relax(&mode);
	q = cu->cuEventQuery(t->after);
	r = q ? q : cu->cuEventElapsedTime(&ms, t->before, t->after);
	if (relaxed)
		nt_san_unrelax(mode);
	if (q == CUDA_ERROR_NOT_READY)
		return 0;
	if (r)
		return -1;
	*ns = (int64_t)(ms * 1e6);
	t->ok = 1;
	return 1;
}

/* On the collector's thread, never in a launch: events beyond the
 * context's POOL are destroyed. */
static void done(void *cookie)
{
	struct timing *t = cookie;
	int full_a = 0, full_b = 0;

	/* in the driver from before the look at dead: a context going
	 * away meanwhile waits for the destroys below (forget) */
	nt_collector_driver_enter();
	pthread_mutex_lock(&nt_san.lock);
	unlink_timing(t);
	if (!t->dead) {
		t->w->pending--;
		if (t->ok && t->w->got + 1 == PER_CONFIG)
			__atomic_sub_fetch(&unmet, 1, __ATOMIC_RELAXED);
		t->w->got += t->ok;
		full_a = put_event(t->ctx, t->before, 1);
		full_b = put_event(t->ctx, t->after, 1);
	}
	pthread_mutex_unlock(&nt_san.lock);
	if (full_a || full_b) {
		CUstreamCaptureMode mode;
		int relaxed = nt_san_relax(&mode);

		if (full_a)
			cu->cuEventDestroy(t->before);
		if (full_b)
			cu->cuEventDestroy(t->after);
		if (relaxed)
			nt_san_unrelax(mode);
	}
	nt_collector_driver_leave();
	free(t->kernel);
	free(t);
}

/* In a launch's callbacks: the events go back to the pool, never
 * destroyed here (leaked when it is full). */
static void give_up(struct timing *t, struct want *w)
{
	pthread_mutex_lock(&nt_san.lock);
	if (t)
		unlink_timing(t);
	if (!t || !t->dead) {
		if (t) {
			put_event(t->ctx, t->before, 0);
			put_event(t->ctx, t->after, 0);
		}
		w->pending--;
	}
	pthread_mutex_unlock(&nt_san.lock);
	if (t) {
		free(t->kernel);
		free(t);
	}
}

int nt_san_native_begin(const struct nt_launch_info *l, CUfunction f, CUstream stream, uint64_t seq)
{
	struct config_key k;
	struct timing *t;
	struct want *w;
	CUevent before = NULL, after = NULL;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
	CUcontext ctx;

	if (cur.t) {	/* the last launch of this thread never ended */
		give_up(cur.t, cur.t->w);
		cur.t = NULL;
	}
	if (__atomic_load_n(&off, __ATOMIC_RELAXED) || !wants || !nt_san_cuda())
		return 0;
	__atomic_store_n(&cu, nt_san_cuda(), __ATOMIC_RELEASE);	/* for poll() and done() */
	key_of(l, f, &k);
	ctx = (CUcontext)(uintptr_t)l->context;
	/* events taken and the timing live in one go: a context that goes
	 * away finds it */
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND(hh, wants, &k, sizeof(k), w);
	t = NULL;
	if (w && w->got + w->pending >= PER_CONFIG) {
		w = NULL;
	} else if (w && take_events(ctx, &before, &after)) {
		__atomic_store_n(&starved, 1, __ATOMIC_RELAXED);	/* made at the next launch's entry */
		w = NULL;
	} else if (w && !(t = calloc(1, sizeof(*t)))) {
		put_event(ctx, before, 0);
		put_event(ctx, after, 0);
		w = NULL;
	} else if (w) {
		w->pending++;
		t->ctx = ctx;
		t->before = before;
		t->after = after;
		t->w = w;
		if ((t->next = live))
			live->prev = t;
		live = t;
	}
	pthread_mutex_unlock(&nt_san.lock);
	if (!w)
		return 0;
	/* a launch being captured runs nothing now: its events would be
	 * nodes of the program's graph */
	if (cu->cuStreamIsCapturing(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE ||
	    !(t->kernel = strdup(l->kernel))) {
		give_up(t, w);
		return 0;
	}
	if (cu->cuEventRecord(t->before, stream)) {
		nt_warn("cannot time untraced launches with events; the trace has no native times");
		__atomic_store_n(&off, 1, __ATOMIC_RELAXED);
		give_up(t, w);
		return 0;
	}
	cur.t = t;
	cur.nt.l = *l;
	cur.nt.l.kernel = t->kernel;
	cur.nt.seq = seq;
	return 1;
}

void nt_san_native_end(CUstream stream)
{
	struct timing *t = cur.t;
	CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!t)
		return;
	cur.t = NULL;
	/* dead: its context went, this launch unended; capturing: a launch
	 * with no end is ended at the thread's next one, and its stream may
	 * be captured by then (an event recorded there is a graph's node,
	 * and querying it breaks the capture whatever the mode) */
	if (is_dead(t) || cu->cuStreamIsCapturing(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE ||
	    cu->cuEventRecord(t->after, stream) || nt_collector_native(&cur.nt, poll, done, t))
		give_up(t, t->w);
}
