/* Pending launches, the background thread that drains them into the
 * trace file, and the exit summary (collector.h). */
#include "collector.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uthash.h>

#include "util/demangle.h"
#include "trace/sampling.h"
#include "sink.h"

#include <pthread.h>

/* A traced launch waiting for its block records. */
struct pending {
	uint64_t seq;
	struct nt_launch_info l;
	char *kernel;			/* owned copy of l.kernel */
	const volatile struct nt_block_rec *rec;
	uint32_t n, tag, done;		/* records known complete: rec[0..done) */
	void (*release)(void *);
	void *cookie;
	double since;			/* when it was queued */
	struct pending *next;
};

/* A kernels-mode record waiting for the collector's thread. */
struct krec {
	uint64_t seq;
	struct nt_kernel_record r;
	char *kernel;
	struct krec *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t progress;
	struct nt_config cfg;
	struct nt_sampling *sampling;
	uint64_t seq;
	struct pending *head, **tail;
	struct krec *kheap;		/* newest first */
	int npending, stop, started, thread_running;
	char backend[16];
	uint64_t abandon;		/* context whose pending launches to drop */
	void (*exit_hook)(void);
	int hooked;
	pthread_t thread;
	struct nt_sink *sink;
} col = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.progress = PTHREAD_COND_INITIALIZER,
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

void nt_warn(const char *fmt, ...)
{
	static const char *seen[16];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int nseen;
	int i, fresh = 0;
	va_list ap;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nseen && seen[i] != fmt; i++)
		;
	if (i == nseen && nseen < 16) {
		seen[nseen++] = fmt;
		fresh = 1;
	}
	pthread_mutex_unlock(&lock);
	if (!fresh || getenv("NUCATRACE_QUIET"))
		return;
	va_start(ap, fmt);
	fputs("nucatrace: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void *drain_thread(void *arg);

/* Called with the lock held, at the first launch. */
static void hook_exit(void)
{
	if (!col.hooked && col.exit_hook) {
		atexit(col.exit_hook);
		col.hooked = 1;
	}
}

/* The thread starts with the first traced launch: processes that never
 * launch a kernel (shells, compilers under `nucatrace run`) get none.
 * Called with the lock held. */
static void start_thread(void)
{
	hook_exit();
	if (col.thread_running || col.stop)
		return;
	if (pthread_create(&col.thread, NULL, drain_thread, NULL)) {
		nt_warn("cannot start the collector thread: %s", strerror(errno));
		return;
	}
	col.thread_running = 1;
}

/* A child after fork() has no collector thread and must not touch the
 * parent's trace file or GPU buffers: it forgets them (they belong to
 * the parent) and starts afresh, with its own trace file if it traces. */
static void after_fork_child(void)
{
	pthread_mutex_init(&col.lock, NULL);
	pthread_cond_init(&col.progress, NULL);
	col.thread_running = 0;
	col.head = NULL;
	col.tail = &col.head;
	col.npending = 0;
	col.kheap = NULL;
	col.abandon = 0;
	col.sink = col.started ? nt_sink_new(&col.cfg, col.backend, nt_sampling_string(col.sampling), NULL) : NULL;
	if (!col.sink)
		col.started = 0;
}

void nt_collector_exit_hook(void (*fn)(void))
{
	col.exit_hook = fn;
}

void nt_collector_touch(void)
{
	pthread_mutex_lock(&col.lock);
	if (col.started)
		start_thread();
	pthread_mutex_unlock(&col.lock);
}

int nt_collector_sample(const struct nt_launch_info *l, uint64_t *seq)
{
	int traced;

	char *dm = NULL;

	pthread_mutex_lock(&col.lock);
	*seq = ++col.seq;
	/* match= also looks at the demangled name, made once per kernel */
	if (col.started && col.sampling && nt_sampling_needs_demangled(col.sampling, l->kernel))
		dm = nt_demangle(l->kernel);
	traced = col.started && !col.stop && nt_sampling_decide(col.sampling, l->kernel, dm);
	hook_exit();
	pthread_mutex_unlock(&col.lock);
	free(dm);
	return traced;
}

int nt_collector_traced(uint64_t seq, const struct nt_launch_info *l,
			const volatile struct nt_block_rec *rec, uint32_t n, uint32_t tag,
			void (*release)(void *cookie), void *cookie)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p || !(p->kernel = strdup(l->kernel))) {
		free(p);
		return -1;
	}
	p->seq = seq;
	p->l = *l;
	p->l.kernel = p->kernel;
	p->rec = rec;
	p->n = n;
	p->tag = tag;
	p->release = release;
	p->cookie = cookie;
	p->since = now_s();
	pthread_mutex_lock(&col.lock);
	if (!col.started || col.stop) {
		pthread_mutex_unlock(&col.lock);
		free(p->kernel);
		free(p);
		return -1;
	}
	*col.tail = p;
	col.tail = &p->next;
	col.npending++;
	start_thread();
	pthread_mutex_unlock(&col.lock);
	return 0;
}

void nt_collector_kernel(const struct nt_kernel_record *r)
{
	struct krec *k = malloc(sizeof(*k));

	if (!k || !(k->kernel = strdup(r->l.kernel))) {
		free(k);
		return;
	}
	k->r = *r;
	k->r.l.kernel = k->kernel;
	pthread_mutex_lock(&col.lock);
	if (!col.started || col.stop) {
		pthread_mutex_unlock(&col.lock);
		free(k->kernel);
		free(k);
		return;
	}
	k->seq = ++col.seq;
	k->next = col.kheap;
	col.kheap = k;
	start_thread();
	pthread_mutex_unlock(&col.lock);
}

/* Write queued kernels-mode records, oldest first. */
static void write_kernels(void)
{
	struct krec *k, *rev = NULL, *next;

	pthread_mutex_lock(&col.lock);
	k = col.kheap;
	col.kheap = NULL;
	pthread_mutex_unlock(&col.lock);
	for (; k; k = next) {
		next = k->next;
		k->next = rev;
		rev = k;
	}
	for (k = rev; k; k = next) {
		next = k->next;
		if (nt_sink_kernel(col.sink, k->seq, &k->r))
			nt_warn("a launch could not be written to the trace file (see above); it is lost");
		free(k->kernel);
		free(k);
	}
}

/* Under the lock: once stop is set, the sink may be gone. */
void nt_collector_dropped(uint64_t seq, const struct nt_launch_info *l, const char *reason)
{
	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop && col.sink)
		nt_sink_drop(col.sink, seq, l, reason);
	pthread_mutex_unlock(&col.lock);
}

/* Wait (lock held) for the progress signal, at most ns nanoseconds. */
static void wait_progress(long ns)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ns;
	if (t.tv_nsec >= 1000000000)
		t.tv_sec++, t.tv_nsec -= 1000000000;
	pthread_cond_timedwait(&col.progress, &col.lock, &t);
}

/* Advance p->done over the records the GPU has finished. */
static int scan(struct pending *p)
{
	while (p->done < p->n && __atomic_load_n(&p->rec[p->done].tag, __ATOMIC_ACQUIRE) == p->tag)
		p->done++;
	return p->done == p->n;
}

static void finish(struct pending *p)
{
	if (nt_sink_launch(col.sink, p->seq, &p->l, p->rec, p->n))
		nt_warn("a launch could not be written to the trace file (see above); it is lost");
	p->release(p->cookie);
	free(p->kernel);
	free(p);
}

/* One pass: take the list, finish what is complete, put the rest back
 * in order.  The list is ours while detached, so the scan runs without
 * the lock that the program's launch callbacks take. */
static void drain_once(void)
{
	struct pending *work, *keep = NULL, **keep_tail = &keep, *p, *next;
	int finished = 0;
	uint64_t abandon;

	pthread_mutex_lock(&col.lock);
	abandon = col.abandon;
	work = col.head;
	col.head = NULL;
	col.tail = &col.head;
	pthread_mutex_unlock(&col.lock);
	for (p = work; p; p = next) {
		next = p->next;
		p->next = NULL;
		/* An abandoned context's buffers may be freed: read nothing. */
		if (abandon && p->l.context == abandon) {
			nt_sink_drop(col.sink, p->seq, &p->l, "context destroyed before the kernel finished");
			p->release(p->cookie);
			free(p->kernel);
			free(p);
			finished++;
		} else if (scan(p)) {
			finish(p);
			finished++;
		} else {
			*keep_tail = p;
			keep_tail = &p->next;
		}
	}
	pthread_mutex_lock(&col.lock);
	if (keep) {
		*keep_tail = col.head;
		if (!col.head)
			col.tail = keep_tail;
		col.head = keep;
	}
	col.npending -= finished;
	if (abandon && col.abandon == abandon)
		col.abandon = 0;
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	write_kernels();
	nt_sink_tick(col.sink);
}

static void *drain_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&col.lock);
		if (col.stop) {
			pthread_mutex_unlock(&col.lock);
			return NULL;
		}
		wait_progress(2000000);
		pthread_mutex_unlock(&col.lock);
		drain_once();
	}
}

/* Wait until nothing is pending or the deadline passes. */
static int wait_pending(double timeout_s)
{
	double end = now_s() + timeout_s;
	int left;

	pthread_mutex_lock(&col.lock);
	while ((left = col.npending) > 0 && now_s() < end) {
		wait_progress(5000000);
	}
	pthread_mutex_unlock(&col.lock);
	return left;
}

/* The context's buffers are about to be freed: wait for its launches,
 * then have the collector's thread drop what is still unfinished before
 * anything reads the freed memory. */
void nt_collector_flush_context(uint64_t context)
{
	if (!col.started || col.stop || !wait_pending(5.0))
		return;
	nt_warn("a CUDA context went away with traced launches unfinished; they are dropped");
	pthread_mutex_lock(&col.lock);
	col.abandon = context;
	pthread_cond_broadcast(&col.progress);
	for (int i = 0; i < 200 && col.abandon == context && col.thread_running && !col.stop; i++) {
		wait_progress(10000000);
	}
	pthread_mutex_unlock(&col.lock);
	/* No thread to do it: drop them here. */
	if (col.abandon == context && !col.thread_running)
		drain_once();
}

void nt_collector_stop(void)
{
	struct pending *p, *next;
	int left;

	if (!col.started)
		return;
	left = wait_pending(col.cfg.exit_wait_s);
	pthread_mutex_lock(&col.lock);
	col.stop = 1;
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	if (col.thread_running)
		pthread_join(col.thread, NULL);
	col.thread_running = 0;
	drain_once();
	/* What the GPU never finished (the program exited without waiting
	 * for it, or the context died) is counted, not written. */
	pthread_mutex_lock(&col.lock);
	p = col.head;
	col.head = NULL;
	col.tail = &col.head;
	pthread_mutex_unlock(&col.lock);
	/* Outside the lock: release() takes the backend's, which is held
	 * around our lock in launch callbacks. */
	for (; p; p = next) {
		next = p->next;
		nt_sink_drop(col.sink, p->seq, &p->l, "incomplete at exit");
		p->release(p->cookie);
		free(p->kernel);
		free(p);
	}
	(void)left;
	nt_sink_close(col.sink, col.seq, col.cfg.quiet ? NULL : stderr);
	col.sink = NULL;
	nt_sampling_free(col.sampling);
	col.started = 0;
}

int nt_collector_start(const struct nt_config *cfg, const char *backend, struct nt_err *err)
{
	static int fork_handler;

	col.cfg = *cfg;
	col.tail = &col.head;
	col.stop = 0;
	col.thread_running = 0;
	if (nt_sampling_parse(cfg->sampling, &col.sampling, err))
		return -1;
	snprintf(col.backend, sizeof(col.backend), "%s", backend);
	col.sink = nt_sink_new(cfg, backend, nt_sampling_string(col.sampling), err);
	if (!col.sink)
		goto fail;
	if (!fork_handler++)
		pthread_atfork(NULL, NULL, after_fork_child);
	col.started = 1;
	return 0;
fail:
	nt_sink_close(col.sink, 0, NULL);
	col.sink = NULL;
	nt_sampling_free(col.sampling);
	col.sampling = NULL;
	return -1;
}
