/* The sampling policy, the queues of what backends report, and the
 * background thread that drains them into the trace file (collector.h). */
#include "collector.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entryrec.h"
#include "graphroute.h"
#include "sink.h"
#include "trace/sampling.h"
#include "util/clock.h"
#include "util/demangle.h"

/* A traced launch waiting for its block records. */
struct pending {
	uint64_t seq;
	struct nt_launch_info l;
	char *kernel;			/* owned copy of l.kernel */
	const volatile struct nt_block_rec *rec;
	uint32_t n, tag, done;		/* records known complete: rec[0..done) */
	int64_t phase;			/* the sampling phase it was traced in (gpu=) */
	int (*fetch)(void *);		/* NULL: rec[] fills as the blocks run */
	void (*release)(void *);
	void *cookie;
	struct pending *next;
};

/* A kernels-mode record, or a drop, waiting for the collector's thread. */
struct krec {
	uint64_t seq;
	struct nt_kernel_record r;
	char *kernel;
	const char *drop;		/* a drop's reason; NULL for a record */
	struct krec *next;
};

/* A native timing whose events are not done yet. */
struct native {
	struct nt_native_time t;
	char *kernel;
	int (*poll)(void *, int64_t *);
	void (*done)(void *);
	void *cookie;
	struct native *next;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t progress;
	struct nt_config cfg;
	struct nt_sampling *sampling;
	uint64_t seq;			/* atomic: launches so far */
	int exhausted;			/* atomic: the policy traces nothing more */
	int open;			/* atomic: a window is open (its last decision) */
	int entry_phase;		/* atomic: modules patched now get the entry site alone */
	int phases;			/* of a window (nt_sampling_phases) */
	int final_drain;		/* exit reads the records (col.lock) */
	struct pending *head, **tail;
	struct krec *kheap;		/* newest first */
	uint64_t nkheap;		/* ... how many (lost when full: run.*_lost) */
	struct native *natives;
	int npending, stop, started, thread_running;
	uint64_t released;		/* pending launches finished so far */
	int waiters;			/* launches waiting for a release */
	char backend[16];
	uint64_t abandon;		/* context whose pending launches to drop */
	void (*exit_hook)(void);
	int hooked;
	pthread_t thread;
	struct nt_sink *sink;
	struct nt_run_counts run;	/* switches so far */
	double dark_since;		/* launch callbacks off since (nt_collector_dark_begin); 0: on */
	double wake_at;			/* ... the thread calls wake() then */
	void (*wake)(void);
} col = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.progress = PTHREAD_COND_INITIALIZER,
};

static void *drain_thread(void *arg);

/* Our own calls into the driver (event and device queries) and the
 * blocks backend's module switches exclude each other: each side marks
 * itself, then looks at the other (sequentially consistent, so one of two
 * sees the other).  A switch happens in a program thread's callback and
 * never waits: it is tried again at a later launch; our side waits. */
static int in_driver, switching;	/* counts: threads on each side */

/* One thread drains at a time (the collector's; or a thread whose
 * context goes away with none running; or exit), and the sink is closed
 * under the same lock: a context destroyed as the program exits must not
 * write to a sink being closed (drain_once then finds none). */
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;

void nt_collector_driver_enter(void)
{
	for (;;) {
		__atomic_add_fetch(&in_driver, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&switching, __ATOMIC_SEQ_CST))
			return;
		__atomic_sub_fetch(&in_driver, 1, __ATOMIC_SEQ_CST);
		nanosleep(&(struct timespec){ 0, 50000 }, NULL);
	}
}

int nt_collector_driver_try_enter(void)
{
	__atomic_add_fetch(&in_driver, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&switching, __ATOMIC_SEQ_CST))
		return 1;
	__atomic_sub_fetch(&in_driver, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void nt_collector_driver_leave(void)
{
	__atomic_sub_fetch(&in_driver, 1, __ATOMIC_SEQ_CST);
}

/* The collector's calls are short queries (events, device attributes)
 * that wait for no program thread, so a switch at a launch's entry, where
 * the program holds no driver lock, waits for them: given up, it came
 * again only at a later launch, and a window closed that much later (146
 * launches, all running patched code, in a CI run under
 * AddressSanitizer).  One that waited in vain, because the collector's
 * call was itself waiting, makes later switches give up at once until
 * one begins. */
static int wait_failed;

/* Mark a switch: 1 when the collector is not in the driver (marked), or
 * 0 (not marked). */
static int try_mark(void)
{
	__atomic_add_fetch(&switching, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&in_driver, __ATOMIC_SEQ_CST))
		return 1;
	__atomic_sub_fetch(&switching, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int nt_collector_switch_begin(double wait_s)
{
	double end = 0;

	while (!try_mark()) {
		if (wait_s <= 0 || __atomic_load_n(&wait_failed, __ATOMIC_RELAXED))
			return 0;
		if (!end)
			end = nt_now_s() + wait_s;
		else if (nt_now_s() > end) {
			__atomic_store_n(&wait_failed, 1, __ATOMIC_RELAXED);
			return 0;
		}
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	__atomic_store_n(&wait_failed, 0, __ATOMIC_RELAXED);
	return 1;
}

void nt_collector_switch_end(void)
{
	__atomic_sub_fetch(&switching, 1, __ATOMIC_SEQ_CST);
}

int nt_collector_driver_wait(double wait_s)
{
	double end = nt_now_s() + wait_s;

	while (!try_mark()) {
		if (nt_now_s() > end)
			return 0;
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	nt_collector_switch_end();
	return 1;
}

/* Take the lock if the collector takes work: 1 and locked, or 0 (not
 * started, or stopping) and not locked. */
static int lock_running(void)
{
	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop)
		return 1;
	pthread_mutex_unlock(&col.lock);
	return 0;
}

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
	sigset_t all, old;
	int r;

	if (col.thread_running || col.stop)
		return;
	/* Every signal blocked in our thread but those of a fault of its
	 * own: the program's signals go to its own threads (a blocking call
	 * there gets its EINTR); a crash here still reaches the program's
	 * crash handlers. */
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* here, not later (packpool.h says why), and before the collector
	 * that uses them */
	nt_sink_start_threads(col.sink);
	r = pthread_create(&col.thread, NULL, drain_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		nt_warn("cannot start the collector thread: %s", strerror(r));
		return;
	}
	col.thread_running = 1;
}

/* The backend's callbacks and their time, added to by any thread without
 * a lock (run_now reads them into the run's counts). */
static uint64_t cb_n, cb_ns, launch_cb_n, launch_cb_ns;

/* A child after fork() has no collector thread and must not touch the
 * parent's trace file or GPU buffers: it forgets them (they belong to
 * the parent) and starts afresh, with its own trace file if it traces. */
static void after_fork_child(void)
{
	pthread_mutex_init(&col.lock, NULL);
	pthread_mutex_init(&drain_lock, NULL);
	pthread_cond_init(&col.progress, NULL);
	col.thread_running = 0;
	col.head = NULL;
	col.tail = &col.head;
	col.npending = 0;
	col.kheap = NULL;
	col.nkheap = 0;
	memset(&col.run, 0, sizeof(col.run));	/* the parent's counts and times */
	cb_n = cb_ns = launch_cb_n = launch_cb_ns = 0;
	col.natives = NULL;
	col.abandon = 0;
	col.dark_since = 0;	/* the parent's (the child's callbacks are as the parent left them) */
	col.wake = NULL;
	in_driver = switching = wait_failed = 0;	/* the parent's threads' */
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

int nt_collector_exhausted(void)
{
	return __atomic_load_n(&col.exhausted, __ATOMIC_RELAXED);
}

uint64_t nt_collector_count(void)
{
	return __atomic_add_fetch(&col.seq, 1, __ATOMIC_RELAXED);
}

static int64_t grid_blocks(const struct nt_launch_info *l)
{
	return (int64_t)l->grid[0] * l->grid[1] * l->grid[2];
}

/* kernel's demangled name when the policy's match= asks for it (made
 * once per kernel: the policy remembers its verdict), else NULL; lock
 * held. */
static char *demangled_for_policy(const char *kernel)
{
	return nt_sampling_needs_demangled(col.sampling, kernel) ? nt_demangle(kernel) : NULL;
}

/* Whether the window's phase (or the next one's) traces block entry
 * only (config.h's blocks modes); lock held. */
static int entry_phase(void)
{
	return col.cfg.blocks == NT_BLOCKS_ENTRY ||
	       (col.cfg.blocks == NT_BLOCKS_MIXED && col.phases > 1 && !nt_sampling_phase(col.sampling));
}

int nt_collector_entry_phase(void)
{
	return __atomic_load_n(&col.entry_phase, __ATOMIC_RELAXED);
}

/* The sampling phase of this thread's last launch sampled to be traced:
 * its nt_collector_traced() follows on the same thread. */
static _Thread_local int64_t traced_phase = -1;

int nt_collector_sample(const struct nt_launch_info *l, uint64_t *seq)
{
	char *dm = NULL;
	int flags = 0;

	*seq = nt_collector_count();
	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop) {
		dm = demangled_for_policy(l->kernel);
		flags = nt_sampling_decide_grid(col.sampling, l->kernel, dm, grid_blocks(l), nt_now_s());
		if (flags & NT_SAMPLE_TRACE) {
			nt_sampling_blocks(col.sampling, grid_blocks(l));
			traced_phase = nt_sampling_phase_id(col.sampling);
		}
		__atomic_store_n(&col.open, nt_sampling_open(col.sampling), __ATOMIC_RELAXED);
		__atomic_store_n(&col.entry_phase, entry_phase(), __ATOMIC_RELAXED);
		if (nt_sampling_exhausted(col.sampling))
			__atomic_store_n(&col.exhausted, 1, __ATOMIC_RELAXED);
	}
	hook_exit();
	pthread_mutex_unlock(&col.lock);
	free(dm);
	if (flags & NT_SAMPLE_TOO_BIG) {
		nt_collector_dropped(*seq, l, NT_SAMPLING_TOO_BIG);
		flags &= ~NT_SAMPLE_TOO_BIG;
	}
	return flags;
}

int nt_collector_waits(void)
{
	int w = 1;

	pthread_mutex_lock(&col.lock);
	if (col.started && col.sampling)
		w = nt_sampling_waits(col.sampling);
	pthread_mutex_unlock(&col.lock);
	return w;
}

void nt_collector_close_now(void)
{
	pthread_mutex_lock(&col.lock);
	if (col.started && col.sampling)
		nt_sampling_close_now(col.sampling);
	pthread_mutex_unlock(&col.lock);
}

int nt_collector_may_trace(const char *mangled)
{
	char *dm = NULL;
	int r = 1;

	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop && col.sampling) {
		dm = demangled_for_policy(mangled);
		r = nt_sampling_may_trace(col.sampling, mangled, dm);
	}
	pthread_mutex_unlock(&col.lock);
	free(dm);
	return r;
}

void nt_collector_retry(const struct nt_launch_info *l)
{
	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop && col.sampling) {
		nt_sampling_retry(col.sampling, l->kernel, grid_blocks(l));
		/* it may have undone max='s last pick */
		__atomic_store_n(&col.exhausted, nt_sampling_exhausted(col.sampling), __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&col.lock);
}

int nt_collector_from_start(void)
{
	int r = 0;

	pthread_mutex_lock(&col.lock);
	if (col.started && !col.stop && col.sampling)
		r = nt_sampling_from_start(col.sampling);
	pthread_mutex_unlock(&col.lock);
	return r;
}

double nt_collector_next_open(int64_t *last_window)
{
	struct nt_sampling_stats st;
	double now = nt_now_s(), t;

	*last_window = 0;
	if (!lock_running())
		return now;	/* stopping: no switch now */
	t = nt_sampling_next_open(col.sampling, now);
	nt_sampling_stats(col.sampling, now, &st);
	*last_window = st.last_window;
	pthread_mutex_unlock(&col.lock);
	return t;
}

void nt_collector_dark_begin(double until, void (*wake)(void))
{
	if (!lock_running())
		return;
	col.dark_since = nt_now_s();
	col.run.dark_spans++;
	col.wake = isinf(until) ? NULL : wake;
	col.wake_at = until;
	start_thread();
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_dark_end(void)
{
	pthread_mutex_lock(&col.lock);
	if (col.dark_since > 0)
		col.run.dark_s += nt_now_s() - col.dark_since;
	col.dark_since = 0;
	pthread_mutex_unlock(&col.lock);
}

uint64_t nt_collector_seen(void)
{
	return __atomic_load_n(&col.seq, __ATOMIC_RELAXED);
}

int nt_collector_window_open(void)
{
	return __atomic_load_n(&col.open, __ATOMIC_RELAXED);
}

int nt_collector_would_open(int64_t launches)
{
	int r;

	if (!lock_running())
		return 0;
	r = nt_sampling_opens_next(col.sampling, launches, nt_now_s());
	pthread_mutex_unlock(&col.lock);
	return r;
}

int nt_collector_open_ahead(int64_t launches)
{
	int r;

	if (!lock_running())
		return 0;
	if ((r = nt_sampling_open_ahead(col.sampling, launches, nt_now_s()))) {
		__atomic_store_n(&col.open, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&col.entry_phase, entry_phase(), __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&col.lock);
	return r;
}

void nt_collector_left(int64_t *launches, int64_t *blocks)
{
	*launches = *blocks = -1;
	if (!lock_running())
		return;
	nt_sampling_left(col.sampling, launches, blocks);
	pthread_mutex_unlock(&col.lock);
}

int nt_collector_hold_open(int on)
{
	if (!lock_running())
		return 0;
	nt_sampling_hold(col.sampling, on);
	pthread_mutex_unlock(&col.lock);
	return 1;
}

void nt_collector_window_done(void)
{
	pthread_mutex_lock(&col.lock);
	if (col.sampling)
		nt_sampling_window_done(col.sampling, nt_now_s());
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_graph_exec(int made, int unlisted)
{
	pthread_mutex_lock(&col.lock);
	col.run.graph_execs += made;
	col.run.graph_execs_unlisted += unlisted;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_twin_image(size_t bytes, size_t compressed)
{
	pthread_mutex_lock(&col.lock);
	col.run.twin_images++;
	col.run.twin_image_bytes += bytes;
	col.run.twin_image_kept += compressed;
	pthread_mutex_unlock(&col.lock);
}

/* 1 when name is one of list's ("; " apart). */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ';'))
			return 1;
	return 0;
}

void nt_collector_twin_refused(const char *variable)
{
	char *names = col.run.twin_refused_names;
	size_t len, room;

	pthread_mutex_lock(&col.lock);
	col.run.twin_refused++;
	len = strlen(names);
	room = sizeof(col.run.twin_refused_names) - len;
	/* whole names, each once (every module of the math library's sinf
	 * has its table); the count says how many modules */
	if (variable && *variable && strlen(variable) + 2 < room && !listed(names, variable))
		snprintf(names + len, room, "%s%s", len ? "; " : "", variable);
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_twin_loaded(void)
{
	pthread_mutex_lock(&col.lock);
	col.run.twins++;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_twin_pointed(int shadow)
{
	pthread_mutex_lock(&col.lock);
	col.run.graph_execs_twinned++;
	col.run.graph_execs_shadowed += shadow != 0;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_switch_overlap(void)
{
	pthread_mutex_lock(&col.lock);
	col.run.switch_overlaps++;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_lazy_loaded(uint32_t functions, int patched, int entry_only, int in_launch)
{
	char *at = col.run.lazy_into_patched_at;
	size_t len;

	pthread_mutex_lock(&col.lock);
	col.run.lazy_loads += functions;
	if (patched) {
		col.run.lazy_into_patched += functions;
		len = strlen(at);
		/* where: launches seen so far, the module's patch sites, how
		 * many, in a launch call or not */
		if (len + 56 < sizeof(col.run.lazy_into_patched_at))
			snprintf(at + len, sizeof(col.run.lazy_into_patched_at) - len, "%s%llu %s %u %s",
				 len ? "; " : "", (unsigned long long)nt_collector_seen(), entry_only ? "entry" : "both",
				 functions, in_launch ? "launch" : "other");
	}
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_lazy_settled(int kernel)
{
	pthread_mutex_lock(&col.lock);
	col.run.lazy_settled++;
	col.run.lazy_settled_kernels += kernel != 0;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_table_wait(int made)
{
	pthread_mutex_lock(&col.lock);
	col.run.table_waits += made != 0;
	col.run.table_waits_skipped += !made;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_room_wait(int in_callback, double seconds)
{
	pthread_mutex_lock(&col.lock);
	col.run.room_waits++;
	col.run.room_waits_in_callback += in_callback != 0;
	col.run.room_wait_s += seconds;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_module_loaded(double seconds)
{
	pthread_mutex_lock(&col.lock);
	col.run.modules++;
	col.run.module_s += seconds;
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_callback_time(int launch, uint64_t n, uint64_t ns)
{
	__atomic_add_fetch(&cb_n, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cb_ns, ns, __ATOMIC_RELAXED);
	if (launch) {
		__atomic_add_fetch(&launch_cb_n, n, __ATOMIC_RELAXED);
		__atomic_add_fetch(&launch_cb_ns, ns, __ATOMIC_RELAXED);
	}
}

void nt_collector_switched(int patch, double seconds)
{
	pthread_mutex_lock(&col.lock);
	if (patch) {
		col.run.patches++;
		col.run.patch_s += seconds;
	} else {
		col.run.unpatches++;
		col.run.unpatch_s += seconds;
	}
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_settled(double seconds)
{
	pthread_mutex_lock(&col.lock);
	col.run.settles++;
	col.run.settle_s += seconds;
	pthread_mutex_unlock(&col.lock);
}

int nt_collector_traced(uint64_t seq, const struct nt_launch_info *l,
			const volatile struct nt_block_rec *rec, uint32_t n, uint32_t tag,
			int (*fetch)(void *cookie), void (*release)(void *cookie), void *cookie)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p || !(p->kernel = strdup(l->kernel))) {
		free(p);
		return -1;
	}
	p->seq = seq;
	p->l = *l;
	p->l.kernel = p->kernel;
	p->phase = traced_phase;
	p->rec = rec;
	p->n = n;
	p->tag = tag;
	p->fetch = fetch;
	p->release = release;
	p->cookie = cookie;
	if (!lock_running()) {
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

/* Wait (lock held) for the progress signal, at most ns nanoseconds. */
static void wait_progress(long ns)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ns;
	while (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&col.progress, &col.lock, &t);
}

int nt_collector_wait_release(double timeout_s)
{
	double end = nt_now_s() + timeout_s;
	uint64_t before;
	int ret = -1;

	pthread_mutex_lock(&col.lock);
	before = col.released;
	col.waiters++;
	while (col.npending && col.thread_running && !col.stop && nt_now_s() < end) {
		wait_progress(5000000);
		if (col.released != before) {
			ret = 0;
			break;
		}
	}
	col.waiters--;
	pthread_mutex_unlock(&col.lock);
	return ret;
}

int nt_collector_pending(void)
{
	return __atomic_load_n(&col.npending, __ATOMIC_RELAXED);
}

/* Kernels-mode records waiting for the trace file at most: memory stays
 * bounded when the file cannot keep up with the launches (a slow network
 * file system); the rest are counted and said at exit. */
#define KQUEUE_MAX 65536

/* Queue a kernels-mode record or a drop (copied). */
static void queue_krec(uint64_t seq, const struct nt_kernel_record *r, const char *kernel, const char *drop)
{
	struct krec *k = calloc(1, sizeof(*k));

	if (!k || !(k->kernel = strdup(kernel))) {
		free(k);
		return;
	}
	if (r)
		k->r = *r;
	k->r.l.kernel = k->kernel;
	k->drop = drop;
	if (!lock_running()) {
		free(k->kernel);
		free(k);
		return;
	}
	k->seq = r ? nt_collector_count() : seq;
	/* A kernel record (CUPTI's buffer callback, never a launch's) waits
	 * a while for room: at exit CUPTI hands over all it holds at once. */
	for (int i = 0; r && col.nkheap >= KQUEUE_MAX && i < 100 && col.thread_running && !col.stop; i++) {
		pthread_cond_broadcast(&col.progress);
		wait_progress(10000000);
	}
	if (col.nkheap >= KQUEUE_MAX) {
		if (r)
			col.run.kernels_lost++;
		else
			col.run.drops_lost++;
		pthread_mutex_unlock(&col.lock);
		free(k->kernel);
		free(k);
		return;
	}
	col.nkheap++;
	k->next = col.kheap;
	col.kheap = k;
	start_thread();
	pthread_mutex_unlock(&col.lock);
}

void nt_collector_kernel(const struct nt_kernel_record *r)
{
	queue_krec(0, r, r->l.kernel, NULL);
}

void nt_collector_dropped(uint64_t seq, const struct nt_launch_info *l, const char *reason)
{
	queue_krec(seq, NULL, l->kernel, reason);
}

int nt_collector_native(const struct nt_native_time *t, int (*poll)(void *cookie, int64_t *ns),
			void (*done)(void *cookie), void *cookie)
{
	struct native *n = calloc(1, sizeof(*n));

	if (!n || !(n->kernel = strdup(t->l.kernel))) {
		free(n);
		return -1;
	}
	n->t = *t;
	n->t.l.kernel = n->kernel;
	n->poll = poll;
	n->done = done;
	n->cookie = cookie;
	if (!lock_running()) {
		free(n->kernel);
		free(n);
		return -1;
	}
	n->next = col.natives;
	col.natives = n;
	start_thread();
	pthread_mutex_unlock(&col.lock);
	return 0;
}

/* Write queued kernels-mode records and drops, oldest first. */
static void write_krecs(void)
{
	struct krec *k, *rev = NULL, *next;

	pthread_mutex_lock(&col.lock);
	k = col.kheap;
	col.kheap = NULL;
	col.nkheap = 0;
	pthread_mutex_unlock(&col.lock);
	for (; k; k = next) {
		next = k->next;
		k->next = rev;
		rev = k;
	}
	for (k = rev; k; k = next) {
		next = k->next;
		if (k->drop)
			nt_sink_drop(col.sink, k->seq, k->kernel, k->drop);
		else if (nt_sink_kernel(col.sink, k->seq, &k->r))
			nt_warn("a launch could not be written to the trace file (see above); it is lost");
		free(k->kernel);
		free(k);
	}
}

/* Poll native timings; write the done ones.  force: give up on the rest. */
static void poll_natives(int force)
{
	struct native *n, *keep = NULL, *next;

	pthread_mutex_lock(&col.lock);
	n = col.natives;
	col.natives = NULL;
	pthread_mutex_unlock(&col.lock);
	if (!n)
		return;
	for (; n; n = next) {
		int r;

		next = n->next;
		/* a launch waiting for record space holds a switch: later */
		if (force)
			nt_collector_driver_enter();
		else if (!nt_collector_driver_try_enter()) {
			n->next = keep;
			keep = n;
			continue;
		}
		r = n->poll(n->cookie, &n->t.ns);
		if (!r && !force) {
			nt_collector_driver_leave();
			n->next = keep;
			keep = n;
			continue;
		}
		if (r == 1)
			nt_sink_native(col.sink, &n->t);
		/* still in: done() enters too, and must not wait for a
		 * switch marked meanwhile */
		n->done(n->cookie);
		nt_collector_driver_leave();
		free(n->kernel);
		free(n);
	}
	if (!keep)
		return;
	pthread_mutex_lock(&col.lock);
	for (n = keep; n->next; n = n->next)
		;
	n->next = col.natives;
	col.natives = keep;
	pthread_mutex_unlock(&col.lock);
}

/* 1 when p's records are where scan() reads them (fetched from the GPU
 * if need be), 0 not yet, -1 never. */
static int fetched(const struct pending *p)
{
	return p->fetch ? p->fetch(p->cookie) : 1;
}

/* Advance p->done over the records the GPU has finished. */
static int scan(struct pending *p)
{
	if (p->l.entry_only)
		while (p->done < p->n && nt_entry_complete((const volatile struct nt_entry_rec *)p->rec + p->done, p->tag))
			p->done++;
	else
		while (p->done < p->n && __atomic_load_n(&p->rec[p->done].tag, __ATOMIC_ACQUIRE) == p->tag)
			p->done++;
	return p->done == p->n;
}

/* At exit, once it has taken EXIT_PROGRESS_S, a line every
 * EXIT_PROGRESS_S: the program is done and we are waiting for its last
 * kernels or writing their records, not hung (a window of many million
 * blocks took minutes: issue 32).  None under quiet or
 * NUCATRACE_PROGRESS=0.  Our own write must not leave stderr's error
 * flag set for the program's exit to find. */
#define EXIT_PROGRESS_S 2.0
static int64_t exit_begin_ns;	/* atomic: when the exit began; 0: running */

static void exit_progress(void)
{
	static int64_t last_ns;	/* atomic */
	int64_t t0 = __atomic_load_n(&exit_begin_ns, __ATOMIC_RELAXED), now, last;
	const char *env;
	int had, left;

	if (!t0)	/* running: every traced launch's finish() comes here */
		return;
	now = (int64_t)(nt_now_s() * 1e9);
	last = __atomic_load_n(&last_ns, __ATOMIC_RELAXED);
	env = getenv("NUCATRACE_PROGRESS");
	if (col.cfg.quiet || (env && !strcmp(env, "0")) || now - t0 < EXIT_PROGRESS_S * 1e9 ||
	    (last && now - last < EXIT_PROGRESS_S * 1e9) ||
	    !__atomic_compare_exchange_n(&last_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	left = __atomic_load_n(&col.npending, __ATOMIC_RELAXED);
	had = ferror(stderr);
	fprintf(stderr, "nucatrace: at exit for %.0f s: %d traced launch%s left to finish on the GPU or write "
		"into the trace\n", (double)(now - t0) / 1e9, left, left == 1 ? "" : "es");
	if (!had)
		clearerr(stderr);
}

static void finish(struct pending *p, const char *drop)
{
	int64_t span_ns = 0;

	if (drop)
		nt_sink_drop(col.sink, p->seq, p->l.kernel, drop);
	else if (nt_sink_launch(col.sink, p->seq, &p->l, p->rec, p->n, &span_ns))
		nt_warn("a launch could not be written to the trace file (see above); it is lost");
	else if (span_ns > 0) {	/* towards its window's gpu= */
		pthread_mutex_lock(&col.lock);
		if (col.sampling)
			nt_sampling_gpu_time(col.sampling, p->phase, (double)span_ns / 1e9);
		pthread_mutex_unlock(&col.lock);
	}
	p->release(p->cookie);
	free(p->kernel);
	free(p);
	exit_progress();
}

/* One pass: take the list, finish what is complete, put the rest back
 * in order.  The list is ours while detached, so the scan runs without
 * the lock that the program's launch callbacks take.  drain_lock held,
 * the sink open. */
static void drain_locked(void)
{
	struct pending *work, *keep = NULL, **keep_tail = &keep, *p, *next;
	int finished = 0, f;
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
			finish(p, "context destroyed before the kernel finished");
			finished++;
		} else if ((f = fetched(p)) < 0) {
			finish(p, "block records could not be copied from the GPU");
			finished++;
		} else if (f && scan(p)) {
			finish(p, NULL);
			finished++;
		} else if (f && p->fetch) {
			finish(p, "block records incomplete when the launch had ended");
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
	col.released += (uint64_t)finished;
	if (abandon && col.abandon == abandon)
		col.abandon = 0;
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	write_krecs();
	/* A launch waiting for records to be released is inside the driver,
	 * which may hold locks an event query would need. */
	if (!__atomic_load_n(&col.waiters, __ATOMIC_RELAXED))
		poll_natives(0);
	nt_sink_tick(col.sink);
}

/* 1 when a write to the trace has failed. */
static int drain_once(void)
{
	int failed = 0;

	pthread_mutex_lock(&drain_lock);
	if (col.sink) {
		drain_locked();
		failed = nt_sink_failed(col.sink);
	}
	pthread_mutex_unlock(&drain_lock);
	return failed;
}

static void *drain_thread(void *arg)
{
	void (*wake)(void);

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&col.lock);
		if (col.stop) {
			pthread_mutex_unlock(&col.lock);
			return NULL;
		}
		wait_progress(2000000);
		wake = !col.stop && col.wake && nt_now_s() >= col.wake_at ? col.wake : NULL;
		if (wake)
			col.wake = NULL;
		pthread_mutex_unlock(&col.lock);
		if (wake)
			wake();
		drain_once();
	}
}

/* Wait until nothing is pending or the deadline passes. */
static int wait_pending(double timeout_s)
{
	double end = nt_now_s() + timeout_s;
	int left;

	pthread_mutex_lock(&col.lock);
	while ((left = col.npending) > 0 && nt_now_s() < end) {
		wait_progress(5000000);
		exit_progress();
	}
	pthread_mutex_unlock(&col.lock);
	return left;
}

/* The context's buffers are about to be freed: wait for its launches,
 * then have the collector's thread drop what is still unfinished before
 * anything reads the freed memory. */
void nt_collector_flush_context(uint64_t context)
{
	int mine;

	if (!col.started)
		return;
	/* at exit, stop() drains: no wait for the GPU, only for that */
	if (!col.stop) {
		if (!wait_pending(5.0))
			return;
		nt_warn("a CUDA context went away with traced launches unfinished; they are dropped");
	}
	pthread_mutex_lock(&col.lock);
	col.abandon = context;
	pthread_cond_broadcast(&col.progress);
	/* until the collector's thread has dropped them, or exit's last
	 * drain (which may have begun before and reads records) is over;
	 * bounded: exit's drain may wait for the driver we are in */
	for (int i = 0; i < 200 && col.abandon == context &&
			((col.thread_running && !col.stop) || col.final_drain); i++)
		wait_progress(10000000);
	mine = col.abandon == context && !col.thread_running && !col.stop;
	pthread_mutex_unlock(&col.lock);
	/* No thread to do it: drop them here. */
	if (mine) {
		struct nt_stderr_guard g;

		nt_stderr_guard_begin(&g);
		nt_stderr_guard_end(&g, drain_once());
	}
}

/* col.run as it is now, with the callbacks' counters. */
static const struct nt_run_counts *run_now(struct nt_run_counts *run)
{
	pthread_mutex_lock(&col.lock);
	*run = col.run;
	pthread_mutex_unlock(&col.lock);
	run->callbacks = __atomic_load_n(&cb_n, __ATOMIC_RELAXED);
	run->callback_ns = __atomic_load_n(&cb_ns, __ATOMIC_RELAXED);
	run->launch_callbacks = __atomic_load_n(&launch_cb_n, __ATOMIC_RELAXED);
	run->launch_callback_ns = __atomic_load_n(&launch_cb_ns, __ATOMIC_RELAXED);
	return run;
}

void nt_collector_stop(void)
{
	struct nt_run_counts run;
	struct nt_sampling *sampling;
	struct pending *p, *next;
	struct nt_stderr_guard guard;
	int failed;

	if (!col.started)
		return;
	col.run.exit_begin = nt_now_s();
	__atomic_store_n(&exit_begin_ns, (int64_t)(col.run.exit_begin * 1e9), __ATOMIC_RELAXED);
	wait_pending(col.cfg.exit_wait_s);
	pthread_mutex_lock(&col.lock);
	col.stop = 1;
	__atomic_store_n(&col.open, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&col.exhausted, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	if (col.thread_running)
		pthread_join(col.thread, NULL);
	col.thread_running = 0;
	nt_stderr_guard_begin(&guard);	/* the program's thread writes now */
	pthread_mutex_lock(&drain_lock);
	pthread_mutex_lock(&col.lock);
	col.final_drain = 1;	/* reads records: a context going away waits */
	pthread_mutex_unlock(&col.lock);
	if (col.sink) {
		drain_locked();
		poll_natives(1);
	}
	pthread_mutex_lock(&col.lock);
	col.final_drain = 0;
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	/* What the GPU never finished (the program exited without waiting
	 * for it, or the context died) is counted, not written. */
	pthread_mutex_lock(&col.lock);
	p = col.head;
	col.head = NULL;
	col.tail = &col.head;
	col.run.launches = __atomic_load_n(&col.seq, __ATOMIC_RELAXED);
	col.run.graph_routed = nt_graph_routed();
	if (col.run.kernels_lost || col.run.drops_lost)
		nt_warn("%" PRIu64 " kernel records and %" PRIu64 " drop records were lost: the trace file "
			"could not keep up with the launches", col.run.kernels_lost, col.run.drops_lost);
	nt_sampling_stats(col.sampling, nt_now_s(), &col.run.sampling);
	if (col.dark_since > 0) {
		col.run.dark_s += nt_now_s() - col.dark_since;
		col.run.dark_at_exit = 1;
		col.dark_since = 0;
	}
	col.wake = NULL;
	pthread_mutex_unlock(&col.lock);
	/* Outside the lock: release() takes the backend's, which is held
	 * around our lock in launch callbacks. */
	for (; p; p = next) {
		next = p->next;
		finish(p, "incomplete at exit");
	}
	failed = nt_sink_close(col.sink, run_now(&run), col.cfg.quiet ? NULL : stderr);
	col.sink = NULL;
	pthread_mutex_unlock(&drain_lock);
	nt_stderr_guard_end(&guard, failed);
	/* nothing pending now: a thread whose context goes away stops
	 * waiting */
	pthread_mutex_lock(&col.lock);
	col.npending = 0;
	pthread_cond_broadcast(&col.progress);
	pthread_mutex_unlock(&col.lock);
	/* Another thread's launch callback may still ask
	 * (nt_collector_window_done, nt_collector_from_start). */
	pthread_mutex_lock(&col.lock);
	sampling = col.sampling;
	col.sampling = NULL;
	col.started = 0;
	pthread_mutex_unlock(&col.lock);
	nt_sampling_free(sampling);
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
	col.exhausted = nt_sampling_exhausted(col.sampling);
	col.phases = cfg->blocks == NT_BLOCKS_MIXED && !strcmp(backend, "blocks") ?
		     nt_sampling_phases(col.sampling, 2) : 1;
	col.entry_phase = entry_phase();
	snprintf(col.backend, sizeof(col.backend), "%s", backend);
	col.sink = nt_sink_new(cfg, backend, nt_sampling_string(col.sampling), err);
	if (!col.sink) {
		nt_sampling_free(col.sampling);
		col.sampling = NULL;
		return -1;
	}
	if (!fork_handler++)
		pthread_atfork(NULL, NULL, after_fork_child);
	col.started = 1;
	return 0;
}
