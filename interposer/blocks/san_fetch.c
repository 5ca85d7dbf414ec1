/*
 * Block records kept on the device (san.h).  A plain launch's blocks
 * write their records into the run's device copy (kernels/blockrec.h):
 * a store to the GPU's own memory, where one to pinned host memory
 * crosses PCIe for every block, and the full record's exit needs no
 * system-scope fence before its tag.  On the H200, entry-only tracing ran
 * the triad at 3.5x its native time with the records written to the host,
 * 1.35x with them on the device, against 1.07x for the entry site alone
 * (docs/results/2026-12-03-entry-site.md).  An event recorded after the
 * launch on its stream says when all of them are written; the
 * collector's thread then copies them to the launch's host records in one
 * go, on a stream of its own, and reads them there as usual.
 *
 * As for native timing (san_native.c), no event is made in a launch's
 * callbacks: a pool per context is filled as a launch enters the driver,
 * and a traced launch that finds it empty writes its records to the host
 * instead.  The copy streams are made on the collector's thread, one per
 * context, never in a callback.  A context that goes away takes its
 * events and its stream with it (nothing destroyed: the driver may hand
 * the next context the same handles).  The copy is the Compute
 * Sanitizer's (its allocations are the buffers): on the H200 the driver's
 * cuMemcpyDtoHAsync did not take them.
 */
#include "san.h"

#include <stdlib.h>

#include "interposer/collector.h"
#include "gpu/cudrv.h"

/* Events made ahead per context, and in all: a window's traced launches
 * queued faster than the GPU runs them each hold one. */
#define POOL 64
#define POOL_MAX 1024

static struct {
	CUcontext ctx;
	CUevent e;
} pool[POOL_MAX];
static int n_pool;	/* nt_san.lock */
static int starved;	/* atomic: a traced launch found no event */
static int off;		/* atomic: events or copies failed once: records go to the host */

struct copy_stream {
	CUcontext ctx;
	nt_san_stream s;	/* a stream of our own, not blocking the program's */
	struct copy_stream *next;
};
static struct copy_stream *streams;	/* nt_san.lock */

CUevent nt_san_fetch_event(CUcontext ctx)
{
	CUevent e = NULL;

	if (__atomic_load_n(&off, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&nt_san.lock);
	for (int i = n_pool - 1; i >= 0; i--)
		if (pool[i].ctx == ctx) {
			e = pool[i].e;
			pool[i] = pool[--n_pool];
			break;
		}
	pthread_mutex_unlock(&nt_san.lock);
	if (!e)
		__atomic_store_n(&starved, 1, __ATOMIC_RELAXED);	/* made at the next launch's entry */
	return e;
}

int nt_san_fetch_needed(void)
{
	return !__atomic_load_n(&off, __ATOMIC_RELAXED) && __atomic_load_n(&starved, __ATOMIC_RELAXED);
}

static int pooled(CUcontext ctx)
{
	int n = 0;

	for (int i = 0; i < n_pool; i++)
		n += pool[i].ctx == ctx;
	return n;
}

static nt_san_stream copy_stream(const struct nt_cuda *c, CUcontext ctx, int make, const char **what, int *err);

void nt_san_fetch_prepare(void)
{
	const struct nt_cuda *c = nt_san_cuda();
	CUcontext ctx = NULL;
	int have;
	CUevent e;

	__atomic_store_n(&starved, 0, __ATOMIC_RELAXED);
	if (!c || c->cuCtxGetCurrent(&ctx) || !ctx)
		return;
	/* ... and the copy stream, for a launch that waits for room in its
	 * callback and fetches records there (san_buffers.c) */
	{
		const char *what;
		int err;

		copy_stream(c, ctx, 1, &what, &err);
	}
	pthread_mutex_lock(&nt_san.lock);
	have = pooled(ctx);
	pthread_mutex_unlock(&nt_san.lock);
	for (; have < POOL; have++) {
		int kept;

		if (c->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) {
			nt_warn("cannot make events to mark traced launches' ends; block records go to host "
				"memory (slower)");
			__atomic_store_n(&off, 1, __ATOMIC_RELAXED);
			return;
		}
		pthread_mutex_lock(&nt_san.lock);
		kept = n_pool < POOL_MAX;
		if (kept) {
			pool[n_pool].ctx = ctx;
			pool[n_pool++].e = e;
		}
		pthread_mutex_unlock(&nt_san.lock);
		if (!kept) {
			c->cuEventDestroy(e);
			return;
		}
	}
}

/* Never destroyed, whatever the thread (a launch's undo gives its event
 * back too): one that finds the pool full stays with its context, which
 * frees it.  Events are made only while a context has fewer than POOL
 * pooled, so at most the launches once in flight beyond POOL_MAX are. */
void nt_san_fetch_give(CUcontext ctx, CUevent e, int ctx_dead)
{
	if (!e || ctx_dead)	/* gone with its context */
		return;
	pthread_mutex_lock(&nt_san.lock);
	if (n_pool < POOL_MAX) {
		pool[n_pool].ctx = ctx;
		pool[n_pool++].e = e;
	}
	pthread_mutex_unlock(&nt_san.lock);
}

/* ctx's copy stream, made now if need be and make (with ctx current);
 * NULL with *what when it cannot be. */
static nt_san_stream copy_stream(const struct nt_cuda *c, CUcontext ctx, int make, const char **what, int *err)
{
	struct copy_stream *cs;
	nt_san_stream s = NULL;
	CUstream cs_s;

	pthread_mutex_lock(&nt_san.lock);
	for (cs = streams; cs && cs->ctx != ctx; cs = cs->next)
		;
	s = cs ? cs->s : NULL;
	pthread_mutex_unlock(&nt_san.lock);
	if (s || !make)
		return s;
	*what = "cuStreamCreate";
	if ((*err = c->cuStreamCreate(&cs_s, CU_STREAM_NON_BLOCKING)))
		return NULL;
	*what = "sanitizerGetStreamHandle";
	if ((*err = nt_san.sanitizerGetStreamHandle(ctx, cs_s, &s)) || !s)
		return NULL;
	if (!(cs = calloc(1, sizeof(*cs))))
		return NULL;
	cs->ctx = ctx;
	cs->s = s;
	pthread_mutex_lock(&nt_san.lock);
	cs->next = streams;
	streams = cs;
	pthread_mutex_unlock(&nt_san.lock);
	return s;
}

int nt_san_fetch_done(CUevent e)
{
	const struct nt_cuda *c = nt_san_cuda();
	CUstreamCaptureMode mode;
	int relaxed;
	CUresult r;

	if (!c)
		return -1;
	relaxed = nt_san_relax(&mode);
	r = c->cuEventQuery(e);
	if (relaxed)
		nt_san_unrelax(mode);
	return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
}

int nt_san_fetch_copy(CUcontext ctx, void *dst, const void *src, size_t bytes, int app)
{
	const struct nt_cuda *c = nt_san_cuda();
	const char *what = "cuCtxSetCurrent";
	CUstreamCaptureMode mode;
	CUcontext cur = NULL;
	nt_san_stream s;
	int relaxed, err = -1;

	/* a launch's thread: its own context, the stream made before */
	if (app)
		return c && !c->cuCtxGetCurrent(&cur) && cur == ctx && (s = copy_stream(c, ctx, 0, &what, &err)) &&
			       !nt_san.sanitizerMemcpyDeviceToHost(dst, (void *)src, bytes, s) ? 0 : -1;
	if (!c || (err = c->cuCtxSetCurrent(ctx)))
		goto out;
	relaxed = nt_san_relax(&mode);
	if ((s = copy_stream(c, ctx, 1, &what, &err))) {
		what = "sanitizerMemcpyDeviceToHost";
		err = nt_san.sanitizerMemcpyDeviceToHost(dst, (void *)src, bytes, s);
	}
	if (relaxed)
		nt_san_unrelax(mode);
out:
	if (err && !__atomic_exchange_n(&off, 1, __ATOMIC_RELAXED))
		nt_warn("cannot copy block records from the GPU (%s: error %d); they go to host memory "
			"(slower)", what, err);
	return err ? -1 : 0;
}

void nt_san_fetch_forget(CUcontext ctx)
{
	struct copy_stream **p = &streams, *cs;

	pthread_mutex_lock(&nt_san.lock);
	for (int i = 0; i < n_pool;)
		if (pool[i].ctx == ctx)
			pool[i] = pool[--n_pool];
		else
			i++;
	while ((cs = *p))
		if (cs->ctx == ctx) {
			*p = cs->next;
			free(cs);
		} else {
			p = &cs->next;
		}
	pthread_mutex_unlock(&nt_san.lock);
}

void nt_san_fetch_reset(void)
{
	n_pool = 0;	/* the parent's */
	streams = NULL;
	starved = 0;
}
