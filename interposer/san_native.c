/*
 * Native timing (san.h): a kernel configuration that is traced also has
 * a few of its untraced launches timed with a pair of events on their
 * stream while its module runs the program's own code, so that a report
 * can set what a traced launch took against what the kernel takes
 * without instrumentation.  Event times include what the stream waits
 * between the two records: a launch made onto an idle stream adds its
 * launch latency, so the report takes the shortest of a configuration's
 * times.
 */
#include "san.h"

#include <stdlib.h>
#include <string.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "collector.h"
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

struct timing {
	CUevent before, after;
	struct want *w;
	char *kernel;		/* the launch data's name lives only in its callback */
	int ok;
};

static struct want *wants;
static const struct nt_cuda *cu;
static int off;			/* native timing failed once: no more */

static _Thread_local struct {
	struct timing *t;
	struct nt_native_time nt;
} cur;

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
	}
	pthread_mutex_unlock(&nt_san.lock);
}

static int poll(void *cookie, int64_t *ns)
{
	struct timing *t = cookie;
	CUresult r = cu->cuEventQuery(t->after);
	float ms;

	if (r == CUDA_ERROR_NOT_READY)
		return 0;
	if (r || cu->cuEventElapsedTime(&ms, t->before, t->after))
		return -1;
	*ns = (int64_t)(ms * 1e6);
	t->ok = 1;
	return 1;
}

static void done(void *cookie)
{
	struct timing *t = cookie;

	pthread_mutex_lock(&nt_san.lock);
	t->w->pending--;
	t->w->got += t->ok;
	pthread_mutex_unlock(&nt_san.lock);
	cu->cuEventDestroy(t->before);
	cu->cuEventDestroy(t->after);
	free(t->kernel);
	free(t);
}

static void give_up(struct timing *t, struct want *w)
{
	if (t) {
		if (t->before)
			cu->cuEventDestroy(t->before);
		if (t->after)
			cu->cuEventDestroy(t->after);
		free(t->kernel);
		free(t);
	}
	pthread_mutex_lock(&nt_san.lock);
	w->pending--;
	pthread_mutex_unlock(&nt_san.lock);
}

int nt_san_native_begin(const struct nt_launch_info *l, CUfunction f, CUstream stream, uint64_t seq)
{
	struct config_key k;
	struct timing *t;
	struct want *w;

	if (cur.t) {	/* the last launch of this thread never ended */
		give_up(cur.t, cur.t->w);
		cur.t = NULL;
	}
	if (off || !wants)
		return 0;
	key_of(l, f, &k);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND(hh, wants, &k, sizeof(k), w);
	if (w && w->got + w->pending < PER_CONFIG)
		w->pending++;
	else
		w = NULL;
	pthread_mutex_unlock(&nt_san.lock);
	if (!w)
		return 0;
	if (!(cu = nt_san_cuda())) {
		off = 1;
		give_up(NULL, w);
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->kernel = strdup(l->kernel)) || cu->cuEventCreate(&t->before, CU_EVENT_DEFAULT) || cu->cuEventCreate(&t->after, CU_EVENT_DEFAULT) ||
	    cu->cuEventRecord(t->before, stream)) {
		nt_warn("cannot time untraced launches with events; the trace has no native times");
		off = 1;
		give_up(t, w);
		return 0;
	}
	t->w = w;
	cur.t = t;
	cur.nt.l = *l;
	cur.nt.l.kernel = t->kernel;
	cur.nt.seq = seq;
	return 1;
}

void nt_san_native_end(CUstream stream)
{
	struct timing *t = cur.t;

	if (!t)
		return;
	cur.t = NULL;
	if (cu->cuEventRecord(t->after, stream) || nt_collector_native(&cur.nt, poll, done, t))
		give_up(t, t->w);
}
