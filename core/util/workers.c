/* The same job on n items over a few threads (workers.h). */
#include "util/workers.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct pool {
	pthread_mutex_t lock;
	int next, n, failed;	/* failed: lowest failed item, n when none */
	int (*fn)(int i, void *arg);
	void *arg;
};

static void *work(void *p)
{
	struct pool *w = p;

	for (;;) {
		int i;

		pthread_mutex_lock(&w->lock);
		i = w->next < w->failed ? w->next++ : w->n;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->n)
			return NULL;
		if (w->fn(i, w->arg)) {
			pthread_mutex_lock(&w->lock);
			if (i < w->failed)
				w->failed = i;
			pthread_mutex_unlock(&w->lock);
		}
	}
}

int nt_workers_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (n < 1024 ? (int)n : 1024) : 1;
}

int nt_workers_run(int n, int threads, int (*fn)(int i, void *arg), void *arg)
{
	struct pool w = { .next = 0, .n = n, .failed = n, .fn = fn, .arg = arg };
	pthread_t *tid;
	int started = 0;

	if (n <= 0)
		return -1;
	if (threads <= 0)
		threads = nt_workers_cpus();
	if (threads > n)
		threads = n;
	pthread_mutex_init(&w.lock, NULL);
	tid = threads > 1 ? malloc((size_t)(threads - 1) * sizeof(*tid)) : NULL;
	for (int t = 0; tid && t < threads - 1; t++)
		if (!pthread_create(&tid[started], NULL, work, &w))
			started++;
	work(&w);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	pthread_mutex_destroy(&w.lock);
	return w.failed < n ? w.failed : -1;
}
