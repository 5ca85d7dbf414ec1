/* Threads packing block records beside the collector (packpool.h). */
#include "packpool.h"

#include <pthread.h>
#include <stdlib.h>

/* One thread's own tools: its packer and its scratch records. */
struct tools {
	struct nt_blockpack *p;
	struct nt_trace_block *scratch;
};

struct nt_packpool {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	int want, started;	/* helpers asked for, running */
	pthread_t *threads;
	int stop;
	/* the run under way */
	unsigned long generation;
	size_t n, next, finished;
	nt_packpool_fn fn;
	void *arg;
	int failed;
	struct tools own;	/* the caller's */
};

static int tools_make(struct tools *t)
{
	if (!t->p)
		t->p = nt_blockpack_new(NT_BLOCKPACK_LEVEL);
	if (!t->scratch)
		t->scratch = malloc(NT_BLOCKPACK_MAX * sizeof(*t->scratch));
	return t->p && t->scratch ? 0 : -1;
}

static void tools_free(struct tools *t)
{
	nt_blockpack_free(t->p);
	free(t->scratch);
}

/* Items of the run under way until none is left; called with the lock
 * held, returns with it held. */
static void take_items(struct nt_packpool *pp, struct tools *t)
{
	while (pp->next < pp->n) {
		size_t i = pp->next++;
		int bad;

		pthread_mutex_unlock(&pp->lock);
		bad = tools_make(t) || pp->fn(i, pp->arg, t->p, t->scratch);
		pthread_mutex_lock(&pp->lock);
		pp->failed |= bad;
		if (++pp->finished == pp->n)
			pthread_cond_signal(&pp->done);
	}
}

static void *helper(void *arg)
{
	struct nt_packpool *pp = arg;
	struct tools t = { NULL, NULL };
	unsigned long seen = 0;

	pthread_mutex_lock(&pp->lock);
	for (;;) {
		while (!pp->stop && pp->generation == seen)
			pthread_cond_wait(&pp->work, &pp->lock);
		if (pp->stop)
			break;
		seen = pp->generation;
		take_items(pp, &t);
	}
	pthread_mutex_unlock(&pp->lock);
	tools_free(&t);
	return NULL;
}

struct nt_packpool *nt_packpool_new(int threads)
{
	struct nt_packpool *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->want = threads > 0 ? threads : 0;
	pthread_mutex_init(&pp->lock, NULL);
	pthread_cond_init(&pp->work, NULL);
	pthread_cond_init(&pp->done, NULL);
	return pp;
}

void nt_packpool_start(struct nt_packpool *pp)
{
	if (!pp || pp->threads || !pp->want || !(pp->threads = calloc((size_t)pp->want, sizeof(*pp->threads))))
		return;
	while (pp->started < pp->want && !pthread_create(&pp->threads[pp->started], NULL, helper, pp))
		pp->started++;
}

int nt_packpool_run(struct nt_packpool *pp, size_t n, nt_packpool_fn fn, void *arg)
{
	int failed;

	if (!n)
		return 0;
	pthread_mutex_lock(&pp->lock);
	pp->n = n;
	pp->next = pp->finished = 0;
	pp->fn = fn;
	pp->arg = arg;
	pp->failed = 0;
	pp->generation++;
	if (n > 1 && pp->started)
		pthread_cond_broadcast(&pp->work);
	take_items(pp, &pp->own);
	while (pp->finished < pp->n)
		pthread_cond_wait(&pp->done, &pp->lock);
	failed = pp->failed;
	pp->n = pp->next = 0;	/* a late helper finds nothing */
	pthread_mutex_unlock(&pp->lock);
	return failed ? -1 : 0;
}

int nt_packpool_threads(const struct nt_packpool *pp)
{
	return pp ? pp->started : 0;
}

void nt_packpool_free(struct nt_packpool *pp)
{
	if (!pp)
		return;
	pthread_mutex_lock(&pp->lock);
	pp->stop = 1;
	pthread_cond_broadcast(&pp->work);
	pthread_mutex_unlock(&pp->lock);
	for (int i = 0; i < pp->started; i++)
		pthread_join(pp->threads[i], NULL);
	free(pp->threads);
	tools_free(&pp->own);
	pthread_mutex_destroy(&pp->lock);
	pthread_cond_destroy(&pp->work);
	pthread_cond_destroy(&pp->done);
	free(pp);
}
