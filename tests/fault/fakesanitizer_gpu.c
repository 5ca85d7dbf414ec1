/*
 * A simulated GPU behind the stand-in libsanitizer-public.so, for CPU
 * tests of the blocks backend (tests/cli, FAKESANITIZER_GPU=1).  It keeps
 * the sanitizer's state the way the real one does, as far as the
 * interposer can tell: a subscriber, modules patched and unpatched,
 * per-launch and per-function callback data, memory (host memory here);
 * and a test program (tests/fault/fake_app.c) drives it through the
 * fakegpu_*() calls below, which play the driver: context and module
 * callbacks, launches (the driver API callback with the launch's
 * parameters, then launch begin and end) and graph launches (graph begin,
 * a node callback per kernel node, graph end).  A kernel's first launch
 * loads it, and a patching call in its callbacks, or in a graph launch's,
 * aborts: on the H200 it hung.
 *
 * A launch runs when it is queued (the end of its launch callback; a
 * graph's nodes once the graph is queued), at once: its blocks run the
 * block callbacks of kernels/patch.cu, written again here in C, when its
 * module is patched then, with the data the launch was given (per-launch
 * data, else the function's).  fakegpu_stats() prints what ran, so that a
 * test can check that every untraced launch ran the program's own code
 * and every traced one recorded every block.
 *
 * A module's cubin is handed to its load callback when
 * FAKESANITIZER_CUBINS names a folder of fake_mod<N>.cubin (built from
 * tests/fault/cubins/fake_modules.cu), else none.
 *
 * A graph exec is made (instantiated: cuGraphInstantiateWithFlags' entry,
 * the graphs domain's exec-created callback, the call's exit, its graph
 * described by fakecuda_graph_define) at its first launch, and again at
 * the first launch after fakegpu_graph_destroy;
 * fakegpu_failed_instantiate's call fails after the exec-created
 * callback; a launch whose node runs another
 * function than before sets that node's kernel first
 * (cuGraphExecKernelNodeSetParams).  An exec keeps the code its modules
 * had when it was made: a node launch of a module patched since then is
 * counted as broken (on the H200 such launches ran into "illegal
 * instruction", or ran another kernel: session 18).
 *
 * The driver (fakecuda_gpu.c under FAKECUDA_TWINS=1) may set an exec's
 * nodes to other functions (cuGraphExecUpdate: fakegpu_exec_set), as the
 * interposer does to point an exec at instrumented twins: the nodes then
 * run those, with the code their modules have at that moment, until set
 * again; the program's own functions for the nodes stay what
 * fakegpu_graph() compares with.  fakegpu_func_name() gives a function's
 * name as a launch named it, fakegpu_func_named() names one (a twin's),
 * fakegpu_func_find() finds a launched one by module and name.
 *
 * The driver may also make an exec of its own (cuGraphInstantiateWithFlags
 * of a clone: fakegpu_instantiate_as, the interposer's shadow exec), whose
 * nodes run what the clone's name, with the grids of the exec the clone's
 * graph was made for, and launch any exec made by handle
 * (cuGraphLaunch: fakegpu_graph_launch).  fakegpu_stats() counts the
 * driver's updates of execs (fakegpu_exec_set): a shadow route makes
 * none.
 *
 * A launch that ran is still counted as queued on its module until the
 * device's work is waited for (cuCtxSynchronize: fakegpu_device_idle):
 * a patch of a module with launches queued is counted (not known to be
 * safe: PyTorch's training step ran into "misaligned address" just after
 * such patches on H100s, session 38, and less often once the interposer
 * waited first).  An unpatch waits for the work queued before it (below),
 * so it is not.
 *
 * With FAKESANITIZER_GRAPH_NO_END=N the N-th graph launch (from 1) has
 * no end callback, as when it fails.
 *
 * With FAKESANITIZER_CHILDREN=N every grid, plain or graph node, launches
 * N children from the device, as dynamic parallelism does: grids of the
 * same shape with grid ids of their own, that the host never hears of
 * and that run with their parent's data (the Sanitizer does not say what
 * data such a grid gets; this is the case that would mix records).
 *
 * Without FAKESANITIZER_GPU every entry point fails like fakesanitizer.c's.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>	/* cuLaunchKernel_params */

#include "interposer/blocks/sanitizer_abi.h"
#include "kernels/blockrec.h"
#include "tests/fault/fakegpu.h"

#define MAX_IDS 4096
#define MAX_EXEC_NODES 8	/* of an exec's nodes, those whose code is checked */
#define ENTRY_ONLY 4	/* instr: the entry site runs nt_block_enter_only */
#define NULL_CB 8	/* instr: callbacks that do nothing (NUCATRACE_PATCH_NULL) */

static struct {
	pthread_mutex_t lock;
	nt_san_callback cb;
	void *userdata;
	/* by module id; instr: 1 entry site, 2 exit site, ENTRY_ONLY the
	 * entry-only callback at the entry site */
	unsigned char patched[MAX_IDS], instr[MAX_IDS];
	const void *fdata[MAX_IDS];			/* by function id */
	unsigned launch_ids[MAX_IDS];			/* by graph exec id */
	unsigned exec_gen[MAX_IDS];			/* ... execs made on the handle before */
	unsigned char made[MAX_IDS];			/* ... made and not destroyed */
	long exec_funcs[MAX_IDS][MAX_EXEC_NODES];	/* ... the functions its nodes run */
	long exec_mods[MAX_IDS][MAX_EXEC_NODES];	/* ... and their modules */
	long exec_prog[MAX_IDS][MAX_EXEC_NODES];	/* ... the functions the program gave them */
	unsigned exec_code[MAX_IDS][MAX_EXEC_NODES];	/* ... their modules' patches then */
	const char *fname[MAX_IDS];			/* by function id: its name */
	unsigned patch_count[MAX_IDS];			/* by module: patched so often */
	unsigned queued[MAX_IDS];			/* ... launches run since the device's last wait */
	long queued_patches;	/* patches of a module with launches of it queued */
	long queued_lazy;	/* functions loaded lazily into a patched module with launches of it queued */
	long func_mod[MAX_IDS], func_ctx[MAX_IDS];	/* by function id: its module and context (fakegpu_launch) */
	unsigned char loaded[MAX_IDS];			/* ... its code loaded (first launch, or cuFuncLoad) */
	long broken_runs;	/* graph node launches of a module patched after their exec was made */
	long exec_sets;		/* execs' nodes set by the driver for the interposer (cuGraphExecUpdate) */
	unsigned long long clock;
	long patches, unpatches, native_runs, patched_runs, recorded_runs, silent_runs, null_runs;
	long blocks, beyond;
	long allocs, frees;
	long waits;		/* sanitizerStreamSynchronize calls */
	long children;		/* grids launched from the device */
	long no_data_set;	/* patched graph node launches whose data was never set */
	long plain_no_data;	/* patched plain launches given no data in their callbacks */
	unsigned char fset[MAX_IDS];	/* by function: its data ever set */
	/* what the subscriber enabled, whole domains and single
	 * callbacks: only those come, as on the GPU */
	unsigned char domain_on[16], callback_on[16][1024];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local struct {
	int set;
	const void *data;
	int loading;	/* in callbacks where a patching call hangs */
} launch;

/* What hangs the real driver: on the H200 sanitizerAddPatches and
 * sanitizerPatchModule called in the callbacks of the launch that first
 * loads its kernel (lazy loading), or of a graph launch, waited for ever
 * on a lock that launch held; so did sanitizerPatchModule and
 * cuEventCreate in the callbacks of any launch of PyTorch's on a stream
 * of its own (session 12, runs 5 and 8).  So none of those, nor
 * unpatching or destroying events, in any launch's callbacks; fakecuda's
 * event calls ask fakegpu_in_launch(). */
__attribute__((visibility("default"))) int fakegpu_in_launch(void)
{
	return launch.loading;
}

/* The driver's lock: a thread in a launch's callbacks (between launch
 * begin and end) holds it, and another thread's record copy
 * (sanitizerMemcpyDeviceToHost) or event query (fakecuda's cuEventQuery,
 * through fakegpu_driver_lock) waits for it, as on the H200, where a
 * launch waiting in its callback for the collector to free record space
 * waited NUCATRACE_WAIT seconds, and then dropped, while the collector's
 * copy waited for it (session 26).  A wait of a second or more is said
 * once on stderr ("fake gpu: ... waited for another thread's launch
 * callbacks") and counted in fakegpu_stats' "lock_waits". */
static pthread_mutex_t driver_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static long lock_waits;

__attribute__((visibility("default"))) void fakegpu_driver_lock(const char *what, int take)
{
	struct timespec a, b;

	if (!take) {
		pthread_mutex_unlock(&driver_lock);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_mutex_lock(&driver_lock);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 >= 1.0 &&
	    __atomic_add_fetch(&lock_waits, 1, __ATOMIC_RELAXED) == 1)
		fprintf(stderr, "fake gpu: %s waited %.1f s for another thread's launch callbacks\n", what,
			(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
}

static void hangs_on_gpu(const char *what)
{
	if (!launch.loading)
		return;
	fprintf(stderr, "fake sanitizer: %s called in a launch's callbacks (hangs on a real GPU)\n",
		what);
	abort();
}

/* 1 when the call named what fails: a stream capture is on and the
 * calling thread's capture mode is not relaxed (fakecuda_gpu.c). */
static int unsafe(const char *what)
{
	const char *lib = getenv("NUCATRACE_LIBCUDA");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	int (*check)(const char *) = h ? (int (*)(const char *))dlsym(h, "fakecuda_unsafe") : NULL;
	int no = check && check(what);

	if (h)
		dlclose(h);
	return no;
}

static int gpu(void)
{
	return getenv("FAKESANITIZER_GPU") != NULL;
}

static nt_san_result no(void)
{
	const char *e = getenv("FAKESANITIZER_RESULT");

	return e ? atoi(e) : NT_SAN_ERROR_MAX_LIMIT_REACHED;
}

static long id_of(const void *handle)
{
	long id = (long)(uintptr_t)handle;

	return id > 0 && id < MAX_IDS ? id : 0;
}

static int first_launch(long func)
{
	int first;

	pthread_mutex_lock(&g.lock);
	first = !g.loaded[id_of((void *)func)];
	g.loaded[id_of((void *)func)] = 1;
	pthread_mutex_unlock(&g.lock);
	return first;
}

static void call(nt_san_domain domain, uint32_t cbid, const void *data);

/* func's code loads now (CUDA's lazy loading), when it has not yet: the
 * FUNCTIONS_LAZY_LOADED callback, counted when its module is patched
 * with launches of it queued (the Sanitizer then patches the function
 * beside them). */
static void lazy_load(long ctx, long mod, long func)
{
	CUfunction f = (CUfunction)func;
	struct nt_san_lazy_data ld = { (CUcontext)ctx, (CUmodule)mod, &f, 1 };

	if (!first_launch(func))
		return;
	pthread_mutex_lock(&g.lock);
	g.queued_lazy += g.patched[id_of((void *)mod)] && g.queued[id_of((void *)mod)] > 0;
	pthread_mutex_unlock(&g.lock);
	call(NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED, &ld);
}

/* The driver's cuFuncIsLoaded, cuFuncGetModule and cuFuncLoad
 * (fakecuda_gpu.c) for a function the program launches: its state (1
 * loaded, 0 not), module; -1: a function not known here. */
__attribute__((visibility("default"))) int fakegpu_func_loaded(long func, long *mod)
{
	long id = id_of((void *)func);
	int r;

	pthread_mutex_lock(&g.lock);
	r = id && g.func_mod[id] ? g.loaded[id] : -1;
	if (mod && r >= 0)
		*mod = g.func_mod[id];
	pthread_mutex_unlock(&g.lock);
	return r;
}

__attribute__((visibility("default"))) int fakegpu_func_load(long func)
{
	long id = id_of((void *)func), ctx, mod;

	pthread_mutex_lock(&g.lock);
	ctx = g.func_ctx[id];
	mod = id ? g.func_mod[id] : 0;
	pthread_mutex_unlock(&g.lock);
	if (!mod)
		return -1;
	lazy_load(ctx, mod, func);
	return 0;
}

nt_san_result sanitizerSubscribe(nt_san_subscriber *sub, nt_san_callback cb, void *userdata)
{
	if (!gpu())
		return no();
	g.cb = cb;
	g.userdata = userdata;
	*sub = (nt_san_subscriber)&g;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerUnsubscribe(nt_san_subscriber sub)
{
	(void)sub;
	if (!gpu())
		return no();
	g.cb = NULL;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerEnableDomain(uint32_t enable, nt_san_subscriber sub, nt_san_domain domain)
{
	(void)sub;
	if (!gpu())
		return no();
	if ((unsigned)domain >= 16)
		return (nt_san_result)1;	/* SANITIZER_ERROR_INVALID_PARAMETER */
	g.domain_on[domain] = enable != 0;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerEnableCallback(uint32_t enable, nt_san_subscriber sub, nt_san_domain domain,
				      uint32_t cbid)
{
	(void)sub;
	if (!gpu())
		return no();
	if ((unsigned)domain >= 16 || cbid >= 1024)
		return (nt_san_result)1;	/* SANITIZER_ERROR_INVALID_PARAMETER */
	g.callback_on[domain][cbid] = enable != 0;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerGetResultString(nt_san_result r, const char **str)
{
	(void)r;
	if (!gpu())
		return no();
	*str = "fake sanitizer error";
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerAddPatches(const void *image, CUcontext ctx)
{
	(void)image, (void)ctx;
	if (!gpu())
		return no();
	hangs_on_gpu("sanitizerAddPatches");
	if (unsafe("sanitizerAddPatches"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerPatchInstructions(nt_san_instruction id, CUmodule module, const char *callback)
{
	if (!gpu())
		return no();
	pthread_mutex_lock(&g.lock);
	g.instr[id_of(module)] |= id == NT_SAN_INSTRUCTION_BLOCK_ENTER ? 1 : 2;
	if (callback && !strcmp(callback, "nt_block_enter_only"))
		g.instr[id_of(module)] |= ENTRY_ONLY;
	if (callback && strlen(callback) > 5 && !strcmp(callback + strlen(callback) - 5, "_null"))
		g.instr[id_of(module)] |= NULL_CB;
	pthread_mutex_unlock(&g.lock);
	return NT_SAN_SUCCESS;
}

/* An unpatch waits for the work queued before it (on the H200 one
 * waited for the sampled launch queued before it, about 4.7 ms, issue 10;
 * 74 took 0.9 s behind queued graph replays, session 17): a graph launch
 * queued meanwhile runs first (run_pending). */
static void run_pending(void);

nt_san_result sanitizerPatchModule(CUmodule module)
{
	if (!gpu())
		return no();
	hangs_on_gpu("sanitizerPatchModule");
	if (unsafe("sanitizerPatchModule"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	g.queued_patches += g.queued[id_of(module)] > 0;
	g.patched[id_of(module)] = 1;
	g.patch_count[id_of(module)]++;
	g.patches++;
	pthread_mutex_unlock(&g.lock);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerUnpatchModule(CUmodule module)
{
	if (!gpu())
		return no();
	hangs_on_gpu("sanitizerUnpatchModule");
	if (unsafe("sanitizerUnpatchModule"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	run_pending();
	pthread_mutex_lock(&g.lock);
	g.patched[id_of(module)] = 0;
	/* as on the H200: a module patched again needs its instructions
	 * again (san_modules.c), and mixed mode gives it others */
	g.instr[id_of(module)] = 0;
	g.unpatches++;
	pthread_mutex_unlock(&g.lock);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerSetLaunchCallbackData(nt_san_launch l, CUfunction kernel, nt_san_stream stream,
					     const void *userdata)
{
	(void)l, (void)kernel, (void)stream;
	if (!gpu())
		return no();
	launch.set = 1;
	launch.data = userdata;
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerSetCallbackData(CUfunction kernel, const void *userdata)
{
	if (!gpu())
		return no();
	pthread_mutex_lock(&g.lock);
	g.fdata[id_of(kernel)] = userdata;
	g.fset[id_of(kernel)] = 1;
	pthread_mutex_unlock(&g.lock);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerAlloc(CUcontext ctx, void **ptr, size_t size)
{
	(void)ctx;
	if (!gpu())
		return no();
	if (unsafe("sanitizerAlloc"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	__atomic_add_fetch(&g.allocs, 1, __ATOMIC_RELAXED);
	return (*ptr = calloc(1, size)) ? NT_SAN_SUCCESS : NT_SAN_ERROR_NOT_INITIALIZED;
}

nt_san_result sanitizerAllocHost(CUcontext ctx, void **ptr, size_t size)
{
	return sanitizerAlloc(ctx, ptr, size);
}

nt_san_result sanitizerFree(CUcontext ctx, void *ptr)
{
	(void)ctx;
	if (!gpu())
		return no();
	if (unsafe("sanitizerFree"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	__atomic_add_fetch(&g.frees, 1, __ATOMIC_RELAXED);
	free(ptr);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerFreeHost(CUcontext ctx, void *ptr)
{
	return sanitizerFree(ctx, ptr);
}

nt_san_result sanitizerMemcpyHostToDeviceAsync(void *dst, void *src, size_t count, nt_san_stream stream)
{
	(void)stream;
	if (!gpu())
		return no();
	memcpy(dst, src, count);
	return NT_SAN_SUCCESS;
}

/* The interposer's copies of block records (san_fetch.c): counted, said
 * at exit with FAKESANITIZER_SAY_COPIES. */
static long d2h_copies, d2h_bytes;

__attribute__((destructor)) static void copies_summary(void)
{
	/* how many depends on when the pool of events ran dry: not said */
	if (d2h_copies && getenv("FAKESANITIZER_SAY_COPIES"))
		fprintf(stderr, "fake gpu: block records copied to the host%s\n",
			d2h_bytes % sizeof(struct nt_entry_rec) ? " (not whole entry-only records)" : "");
}

nt_san_result sanitizerMemcpyDeviceToHost(void *dst, void *src, size_t count, nt_san_stream stream)
{
	(void)stream;
	if (!gpu())
		return no();
	if (unsafe("sanitizerMemcpyDeviceToHost"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	fakegpu_driver_lock("sanitizerMemcpyDeviceToHost", 1);
	memcpy(dst, src, count);
	fakegpu_driver_lock(NULL, 0);
	__atomic_add_fetch(&d2h_copies, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&d2h_bytes, (long)count, __ATOMIC_RELAXED);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerMemset(void *ptr, int value, size_t count, nt_san_stream stream)
{
	(void)stream;
	if (!gpu())
		return no();
	memset(ptr, value, count);
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerStreamSynchronize(nt_san_stream stream)
{
	(void)stream;
	if (!gpu())
		return no();
	if (unsafe("sanitizerStreamSynchronize"))
		return NT_SAN_ERROR_NOT_INITIALIZED;
	__atomic_add_fetch(&g.waits, 1, __ATOMIC_RELAXED);
	run_pending();
	return NT_SAN_SUCCESS;
}

nt_san_result sanitizerGetStreamHandle(CUcontext ctx, CUstream stream, nt_san_stream *h)
{
	(void)ctx;
	if (!gpu())
		return no();
	*h = (nt_san_stream)(stream ? (uintptr_t)stream : 0x5151);
	return NT_SAN_SUCCESS;
}

/* The GPU: one launch, its blocks one after another (the block callbacks
 * of kernels/patch.cu, for a block of `threads` threads in one go). */
static void run_children(long mod, const void *data, unsigned grid, unsigned threads);

/* What a launch whose data was never set, for it or its function, is
 * handed: not NULL (on the H200 a graph node's pointer faulted with
 * "misaligned address", session 12, run 4) but a misaligned pointer into
 * bytes that are no descriptor, which the callbacks must not read through
 * (kernels/blockrec.h nt_desc_ours). */
static const void *unset_data(void)
{
	static unsigned char junk[256];

	memset(junk, 0xa5, sizeof(junk));
	return junk + 3;
}

static void run(long mod, const void *data, unsigned long long gridid, unsigned grid, unsigned threads)
{
	const struct nt_launch_desc *d = nt_node_find(data, gridid);

	run_children(mod, data, grid, threads);

	pthread_mutex_lock(&g.lock);
	g.queued[mod]++;
	if (!g.patched[mod] || ((g.instr[mod] & ~NULL_CB) != 3 && g.instr[mod] != (1 | ENTRY_ONLY) &&
				g.instr[mod] != (1 | NULL_CB))) {
		g.native_runs++;
		pthread_mutex_unlock(&g.lock);
		return;
	}
	g.patched_runs++;
	if (g.instr[mod] & NULL_CB) {	/* callbacks that record nothing */
		g.null_runs++;
		pthread_mutex_unlock(&g.lock);
		return;
	}
	if (!d) {
		g.silent_runs++;
		pthread_mutex_unlock(&g.lock);
		return;
	}
	g.recorded_runs++;
	for (unsigned b = 0; b < grid; b++) {
		struct nt_block_rec *r;
		unsigned run = 0, tag;

		if (b < d->blocks && d->replays)	/* a node's descriptor for several launches */
			run = d->scratch[b].runs++;	/* (counted at entry, whatever the block's threads) */
		if (b >= d->blocks || threads != d->threads || (d->replays && run >= d->replays)) {
			g.beyond++;	/* (past its launches: as beyond its buffer) */
			continue;
		}
		tag = d->tag + run;
		if (g.instr[mod] & ENTRY_ONLY) {	/* thread 0 at the block's start */
			volatile struct nt_entry_rec *e =
				(volatile struct nt_entry_rec *)d->rec + (size_t)run * d->blocks + b;
			unsigned long long t = g.clock, c = g.clock * 2;

			e->w[NT_ENTRY_SM_C_HI] = NT_ENTRY_WORD(tag, NT_ENTRY_SM_C((b * 7) % 132, c));
			e->w[NT_ENTRY_C_LO] = NT_ENTRY_WORD(tag, c);
			e->w[NT_ENTRY_T_HI] = NT_ENTRY_WORD(tag, t >> 32);
			__atomic_store_n(&e->w[NT_ENTRY_T_LO], NT_ENTRY_WORD(tag, t), __ATOMIC_RELEASE);
			g.clock += 1000 + (b % 7) * 10;
			g.blocks++;
			continue;
		}
		r = &d->rec[(size_t)run * d->blocks + b];
		r->t_start = g.clock;
		r->c_start = g.clock * 2;
		g.clock += 1000 + (b % 7) * 10;
		r->t_end = g.clock;
		r->c_end = g.clock * 2;
		r->smid = (b * 7) % 132;
		r->warps = (threads + 31) / 32;
		__atomic_store_n(&r->tag, tag, __ATOMIC_RELEASE);
		g.blocks++;
	}
	pthread_mutex_unlock(&g.lock);
}

static unsigned long long grid_ids;

/* FAKESANITIZER_CHILDREN grids launched by a grid from the device. */
static void run_children(long mod, const void *data, unsigned grid, unsigned threads)
{
	static __thread int depth;
	const char *e = getenv("FAKESANITIZER_CHILDREN");
	long n = e ? atol(e) : 0;

	if (depth)
		return;
	depth = 1;
	for (long i = 0; i < n; i++) {
		run(mod, data, __atomic_add_fetch(&grid_ids, 1, __ATOMIC_RELAXED), grid, threads);
		__atomic_add_fetch(&g.children, 1, __ATOMIC_RELAXED);
	}
	depth = 0;
}

/* The GPU runs a graph launch late: when a stream is next waited for, or
 * after the next graph launch's callbacks, as a GPU still busy with it
 * would (a plain launch waits for it).  So what those callbacks copy into
 * a node table (interposer/blocks/san_nodes.c) is what the late launch's nodes
 * read, unless the copier waited for the stream first: on the H200 the
 * copy was not ordered after the exec's last launch. */
#define MAX_NODES 64
/* An exec's nodes as last launched (the first SHAPE_NODES). */
#define SHAPE_NODES 8
struct shape {
	int n;
	long mods[SHAPE_NODES], funcs[SHAPE_NODES];
	const char *names[SHAPE_NODES];
	unsigned grids[SHAPE_NODES], blocks[SHAPE_NODES];
};
static struct shape shapes[MAX_IDS];
static struct {
	int n;
	long mods[MAX_NODES];
	const void *data[MAX_NODES];
	unsigned long long gridid[MAX_NODES];
	unsigned grids[MAX_NODES], blocks[MAX_NODES];
} pending;

static void run_pending(void)
{
	typeof(pending) p;

	pthread_mutex_lock(&g.lock);
	p = pending;
	pending.n = 0;
	pthread_mutex_unlock(&g.lock);
	for (int i = 0; i < p.n; i++)
		run(p.mods[i], p.data[i], p.gridid[i], p.grids[i], p.blocks[i]);
}

/* The device's work waited for (the driver's cuCtxSynchronize). */
__attribute__((visibility("default"))) void fakegpu_device_idle(void)
{
	run_pending();
	pthread_mutex_lock(&g.lock);
	memset(g.queued, 0, sizeof(g.queued));
	pthread_mutex_unlock(&g.lock);
}

static long graph_launches, node_calls;

static void call(nt_san_domain domain, uint32_t cbid, const void *data)
{
	if (domain == NT_SAN_CB_DOMAIN_GRAPHS && cbid == NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN)
		__atomic_add_fetch(&graph_launches, 1, __ATOMIC_RELAXED);
	if (!g.cb || (unsigned)domain >= 16 || cbid >= 1024 || !(g.domain_on[domain] || g.callback_on[domain][cbid]))
		return;
	if (domain == NT_SAN_CB_DOMAIN_GRAPHS && cbid == NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN)
		__atomic_add_fetch(&node_calls, 1, __ATOMIC_RELAXED);
	g.cb(g.userdata, domain, cbid, data);
}

__attribute__((visibility("default"))) void fakegpu_context(long ctx)
{
	struct nt_san_context_data d = { (CUcontext)ctx, 0 };

	call(NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_CONTEXT_CREATION_FINISHED, &d);
}

/* cuCtxDestroy of ctx (the simulated GPU's only one): the callback, then
 * its modules and their data are gone. */
__attribute__((visibility("default"))) void fakegpu_context_destroy(long ctx)
{
	struct nt_san_context_data d = { (CUcontext)ctx, 0 };

	run_pending();
	call(NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &d);
	pthread_mutex_lock(&g.lock);
	memset(g.patched, 0, sizeof(g.patched));
	memset(g.instr, 0, sizeof(g.instr));
	memset(g.fdata, 0, sizeof(g.fdata));
	memset(g.fset, 0, sizeof(g.fset));
	memset(g.queued, 0, sizeof(g.queued));	/* a context goes once its work is done */
	pthread_mutex_unlock(&g.lock);
}

/* Module mod's cubin, FAKESANITIZER_CUBINS/fake_mod<mod>.cubin, read
 * into *image (NULL when the variable is unset or the file unreadable). */
static size_t module_cubin(long mod, char **image)
{
	const char *dir = getenv("FAKESANITIZER_CUBINS");
	char path[4096];
	FILE *f;
	long n = -1;

	*image = NULL;
	snprintf(path, sizeof(path), "%s/fake_mod%ld.cubin", dir ? dir : "", mod);
	if (!dir || !(f = fopen(path, "rb")))
		return 0;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) && (*image = malloc(n)) &&
	    fread(*image, 1, n, f) != (size_t)n) {
		free(*image);
		*image = NULL;
	}
	fclose(f);
	return *image ? (size_t)n : 0;
}

__attribute__((visibility("default"))) void fakegpu_module(long ctx, long mod)
{
	char *image;
	size_t size = module_cubin(mod, &image);
	struct nt_san_module_data d = { (CUcontext)ctx, (CUmodule)mod, size, image, NULL };

	call(NT_SAN_CB_DOMAIN_RESOURCE, NT_SAN_CBID_RESOURCE_MODULE_LOADED, &d);
	free(image);	/* valid during the callback only, as the driver's */
}

static void launch_data(struct nt_san_launch_data *d, long ctx, long mod, long func, const char *name,
			unsigned grid, unsigned block, long stream)
{
	memset(d, 0, sizeof(*d));
	if (id_of((void *)func) && !g.fname[id_of((void *)func)])
		g.fname[id_of((void *)func)] = name;
	d->context = (CUcontext)ctx;
	d->stream = (CUstream)stream;
	d->hStream = (nt_san_stream)(stream ? stream : 0x5151);
	d->module = (CUmodule)mod;
	d->function = (CUfunction)func;
	d->functionName = name;
	d->gridDim_x = grid, d->gridDim_y = 1, d->gridDim_z = 1;
	d->blockDim_x = block, d->blockDim_y = 1, d->blockDim_z = 1;
	d->gridId = __atomic_add_fetch(&grid_ids, 1, __ATOMIC_RELAXED);
	d->hLaunch = (nt_san_launch)(uintptr_t)d->gridId;
}

/* cuLaunchKernel of function func of module mod, as the driver calls its
 * subscriber: the API callback, launch begin, (queued, runs), launch end. */
__attribute__((visibility("default"))) void fakegpu_launch(long ctx, long mod, long func, const char *name,
							   unsigned grid, unsigned block, unsigned smem,
							   long stream)
{
	cuLaunchKernel_params p = { 0 };
	struct nt_san_api_data api = { 0 };
	struct nt_san_launch_data d;
	const void *data;

	run_pending();
	pthread_mutex_lock(&g.lock);
	if (id_of((void *)func)) {	/* what cuFuncGetModule says */
		g.func_mod[id_of((void *)func)] = mod;
		g.func_ctx[id_of((void *)func)] = ctx;
	}
	pthread_mutex_unlock(&g.lock);
	launch_data(&d, ctx, mod, func, name, grid, block, stream);	/* (names func for cuKernelGetName) */
	/* FAKECUDA_KERNEL_HANDLES=1: the launch names a CUkernel, as the CUDA
	 * runtime's launches do since CUDA 12 (fakecuda_gpu.c's cuKernel
	 * calls answer for it); the launch callbacks still name the function */
	p.f = (CUfunction)(func + (getenv("FAKECUDA_KERNEL_HANDLES") ? FAKEGPU_KERNEL_BASE : 0));
	p.gridDimX = grid, p.gridDimY = 1, p.gridDimZ = 1;
	p.blockDimX = block, p.blockDimY = 1, p.blockDimZ = 1;
	p.sharedMemBytes = smem;
	api.callbackSite = NT_SAN_API_ENTER;
	api.functionName = "cuLaunchKernel";
	api.functionParams = &p;
	call(NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuLaunchKernel, &api);
	launch.set = 0;
	launch.loading = 1;	/* any launch's callbacks (session 12, runs 5 and 8) */
	pthread_mutex_lock(&driver_lock);
	lazy_load(ctx, mod, func);	/* CUDA's lazy loading: at its first launch */
	call(NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_BEGIN, &d);
	pthread_mutex_lock(&g.lock);
	data = launch.set ? launch.data : g.fset[id_of((void *)func)] ? g.fdata[id_of((void *)func)] : unset_data();
	g.plain_no_data += !launch.set && !g.fset[id_of((void *)func)] && g.patched[id_of((void *)mod)];
	pthread_mutex_unlock(&g.lock);
	run(id_of((void *)mod), data, d.gridId, grid, block);
	call(NT_SAN_CB_DOMAIN_LAUNCH, NT_SAN_CBID_LAUNCH_END, &d);
	pthread_mutex_unlock(&driver_lock);
	launch.loading = 0;
}

/* Node i's grid id: the same at every launch of its exec. */
static unsigned long long node_grid(long exec, int i)
{
	return (unsigned long long)exec * 1000000 + g.exec_gen[id_of((void *)exec)] * 64ull + (unsigned)i;
}

/* A driver API call as the driver tells its subscriber of it, at site
 * (enter, or exit having returned r). */
static void api_call(uint32_t cbid, const char *name, const void *params, int site, CUresult r)
{
	struct nt_san_api_data api = { 0 };

	api.callbackSite = site;
	api.functionName = name;
	api.functionParams = params;
	api.functionReturnValue = &r;
	api.context = (CUcontext)1;
	call(NT_SAN_CB_DOMAIN_DRIVER_API, cbid, &api);
}

/* cudaGraphExecDestroy: the handle may come back for the next exec made,
 * whose launch ids start again and whose nodes have grid ids of their
 * own, as on the H200 (session 12, run 2). */
__attribute__((visibility("default"))) void fakegpu_graph_destroy(long exec)
{
	cuGraphExecDestroy_params p = { (CUgraphExec)exec };

	api_call(NT_SAN_CBID_DRIVER_cuGraphExecDestroy, "cuGraphExecDestroy", &p, NT_SAN_API_ENTER, CUDA_SUCCESS);
	pthread_mutex_lock(&g.lock);
	g.launch_ids[id_of((void *)exec)] = 0;
	g.exec_gen[id_of((void *)exec)]++;
	g.made[id_of((void *)exec)] = 0;
	pthread_mutex_unlock(&g.lock);
}

/* fakecuda_graph_define() of the fake driver (NUCATRACE_LIBCUDA). */
static void define_graph(long graph, int n, const long *funcs, const long *mods)
{
	const char *lib = getenv("NUCATRACE_LIBCUDA");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	void (*define)(long, int, const long *, const long *) =
		h ? (void (*)(long, int, const long *, const long *))dlsym(h, "fakecuda_graph_define") : NULL;

	if (define)
		define(graph, n, funcs, mods);
	if (h)
		dlclose(h);
}

/* Node i of exec runs func of mod from now on: its code is that of the
 * module as it is now; prog: the program set it (else the driver, for
 * the interposer). */
static void exec_run(long exec, int i, long func, long mod, int prog)
{
	if (i >= MAX_EXEC_NODES)
		return;
	pthread_mutex_lock(&g.lock);
	g.exec_funcs[id_of((void *)exec)][i] = func;
	g.exec_mods[id_of((void *)exec)][i] = mod;
	g.exec_code[id_of((void *)exec)][i] = g.patch_count[id_of((void *)mod)];
	if (prog)
		g.exec_prog[id_of((void *)exec)][i] = func;
	pthread_mutex_unlock(&g.lock);
}

static void exec_node(long exec, int i, long func, long mod)
{
	exec_run(exec, i, func, mod, 1);
}

/* cuGraphExecUpdate of the fake driver: exec's first n nodes run funcs[i]
 * of mods[i]. */
__attribute__((visibility("default"))) void fakegpu_exec_set(long exec, int n, const long *funcs, const long *mods)
{
	pthread_mutex_lock(&g.lock);
	g.exec_sets++;
	pthread_mutex_unlock(&g.lock);
	for (int i = 0; i < n; i++)
		exec_run(exec, i, funcs[i], mods[i], 0);
}

__attribute__((visibility("default"))) const char *fakegpu_func_name(long f)
{
	return id_of((void *)f) ? g.fname[id_of((void *)f)] : NULL;
}

__attribute__((visibility("default"))) void fakegpu_func_named(long f, const char *name)
{
	if (id_of((void *)f))
		g.fname[id_of((void *)f)] = strdup(name);
}

/* The function named name that a launch made known in module mod (what
 * fakecuda_gpu.c's cuModuleGetFunction finds there and then loads), or 0. */
__attribute__((visibility("default"))) long fakegpu_func_find(long mod, const char *name)
{
	long f = 0;

	pthread_mutex_lock(&g.lock);
	for (long id = 1; id < MAX_IDS && !f; id++)
		if (g.func_mod[id] == mod && g.fname[id] && !strcmp(g.fname[id], name))
			f = id;
	pthread_mutex_unlock(&g.lock);
	return f;
}

/* The functions of module mod that launches made known, up to n of them
 * into out (fakecuda_gpu.c's cuModuleEnumerateFunctions, loading none):
 * how many there are. */
__attribute__((visibility("default"))) int fakegpu_module_funcs(long mod, long *out, int n)
{
	int k = 0;

	pthread_mutex_lock(&g.lock);
	for (long id = 1; id < MAX_IDS; id++)
		if (g.func_mod[id] == mod && g.fname[id]) {
			if (k < n)
				out[k] = id;
			k++;
		}
	pthread_mutex_unlock(&g.lock);
	return k;
}

/* cuGraphInstantiateWithFlags of exec (graph handle the same number),
 * made from n kernel nodes: its callbacks, the exec made or not (the call
 * fails after the exec-created callback). */
static void instantiate(long exec, int n, const long *mods, const long *funcs, int fails)
{
	CUgraphExec handle = (CUgraphExec)exec;
	cuGraphInstantiateWithFlags_params p = { &handle, (CUgraph)exec, 0 };
	struct nt_san_graphexec_data d = { (CUgraph)exec, handle, 0, 0, NULL };

	api_call(NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", &p,
		 NT_SAN_API_ENTER, CUDA_SUCCESS);
	/* the driver fixes the exec's code before it tells us */
	define_graph(exec, n, funcs, mods);
	for (int i = 0; i < n; i++)
		exec_node(exec, i, funcs[i], mods[i]);
	call(NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED, &d);
	g.made[id_of((void *)exec)] = !fails;
	api_call(NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", &p,
		 NT_SAN_API_EXIT, fails ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS);
}

/* An instantiation of exec (n kernel nodes) that fails after the
 * exec-created callback, as when the driver runs out of memory. */
__attribute__((visibility("default"))) void fakegpu_failed_instantiate(long exec, int n, const long *mods,
								      const long *funcs)
{
	instantiate(exec, n, mods, funcs, 1);
}

/* exec made from n kernel nodes, or its nodes' kernels set anew where
 * they differ. */
static void make_exec(long exec, int n, const long *mods, const long *funcs)
{
	CUgraphExec handle = (CUgraphExec)exec;

	if (!g.made[id_of((void *)exec)]) {
		instantiate(exec, n, mods, funcs, 0);
		return;
	}
	for (int i = 0; i < n && i < MAX_EXEC_NODES; i++) {
		CUDA_KERNEL_NODE_PARAMS kp = { 0 };
		cuGraphExecKernelNodeSetParams_v2_params p = { handle, (CUgraphNode)(uintptr_t)(exec * 100 + i + 1),
							       &kp };

		if (g.exec_prog[id_of((void *)exec)][i] == funcs[i])
			continue;
		kp.func = (CUfunction)funcs[i];
		api_call(NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams_v2",
			 &p, NT_SAN_API_ENTER, CUDA_SUCCESS);
		exec_node(exec, i, funcs[i], mods[i]);
		api_call(NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams_v2",
			 &p, NT_SAN_API_EXIT, CUDA_SUCCESS);
	}
}

/* cudaGraphLaunch of graph exec `exec`, whose n kernel nodes are
 * (mods[i], funcs[i], names[i], grids[i], blocks[i]): the API callback,
 * graph launch begin, the node callbacks, graph launch end; the nodes
 * take their functions' data when the graph is queued, after every node
 * callback, and run then. */
__attribute__((visibility("default"))) void fakegpu_graph(long ctx, long exec, int n, const long *mods,
							  const long *funcs, const char *const *names,
							  const unsigned *grids, const unsigned *blocks,
							  long stream)
{
	struct nt_san_graph_launch_data gl = { (CUcontext)ctx, (CUstream)stream,
					       (nt_san_stream)(stream ? stream : 0x5151), (CUgraphExec)exec,
					       0 };
	cuGraphLaunch_params p = { (CUgraphExec)exec, (CUstream)stream };
	struct nt_san_api_data api = { 0 };
	const void *data[MAX_NODES];
	int set[MAX_NODES];
	unsigned id;
	long rf[MAX_NODES], rm[MAX_NODES];	/* what the nodes run */
	struct shape *sh = &shapes[id_of((void *)exec)];

	make_exec(exec, n, mods, funcs);
	pthread_mutex_lock(&g.lock);
	if (n <= SHAPE_NODES) {	/* for the driver's own launches of it (fakegpu_graph_launch) */
		for (int i = 0; i < n; i++) {
			sh->mods[i] = mods[i];
			sh->funcs[i] = funcs[i];
			sh->names[i] = names[i];
			sh->grids[i] = grids[i];
			sh->blocks[i] = blocks[i];
		}
		sh->n = n;
	}
	pthread_mutex_unlock(&g.lock);
	api.callbackSite = NT_SAN_API_ENTER;
	api.functionName = "cuGraphLaunch";
	api.functionParams = &p;
	call(NT_SAN_CB_DOMAIN_DRIVER_API, NT_SAN_CBID_DRIVER_cuGraphLaunch, &api);
	/* the nodes run what the exec holds once its launch is made, after
	 * the call's entry (where the interposer may update it) */
	pthread_mutex_lock(&g.lock);
	for (int i = 0; i < n && i < MAX_NODES; i++) {
		int own = i < MAX_EXEC_NODES && g.exec_funcs[id_of((void *)exec)][i];

		rf[i] = own ? g.exec_funcs[id_of((void *)exec)][i] : funcs[i];
		rm[i] = own ? g.exec_mods[id_of((void *)exec)][i] : mods[i];
	}
	pthread_mutex_unlock(&g.lock);
	funcs = rf;
	mods = rm;
	for (int i = 0; i < n && i < MAX_NODES; i++)
		first_launch(funcs[i]);
	launch.loading = 1;
	call(NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN, &gl);
	pthread_mutex_lock(&g.lock);
	id = g.launch_ids[id_of((void *)exec)]++;
	pthread_mutex_unlock(&g.lock);
	for (int i = 0; i < n && i < MAX_NODES; i++) {
		struct nt_san_graph_node_data nd;

		memset(&nd, 0, sizeof(nd));
		nd.graphExec = (CUgraphExec)exec;
		nd.launchId = id;
		nd.node = (CUgraphNode)(uintptr_t)(exec * 100 + i + 1);
		nd.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
		launch_data(&nd.launchData, ctx, mods[i], funcs[i], names[i], grids[i], blocks[i], 0);
		nd.launchData.gridId = node_grid(exec, i);
		nd.launchData.apiContext = (CUcontext)ctx;
		nd.launchData.apiStream = (CUstream)stream;
		nd.launchData.hApiStream = gl.hStream;
		launch.set = 0;
		call(NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN, &nd);
		set[i] = launch.set;
	}
	/* The nodes take their functions' data as the graph is queued, after
	 * every node callback (on the H200, two nodes of one kernel in a
	 * graph got the data the second was given: interposer/blocks/san_nodes.c). */
	/* A node whose data was never set, per function or for its launch,
	 * got a pointer on the H200 that faulted in patched code
	 * ("misaligned address", session 12, run 4): counted, run with
	 * none. */
	pthread_mutex_lock(&g.lock);
	for (int i = 0; i < n && i < MAX_NODES; i++) {
		data[i] = g.fset[id_of((void *)funcs[i])] ? g.fdata[id_of((void *)funcs[i])] : unset_data();
		if (!set[i] && !g.fset[id_of((void *)funcs[i])] && g.patched[id_of((void *)mods[i])])
			g.no_data_set++;
		if (i < MAX_EXEC_NODES && g.exec_code[id_of((void *)exec)][i] != g.patch_count[id_of((void *)mods[i])])
			g.broken_runs++;
	}
	pthread_mutex_unlock(&g.lock);
	{
		static long launches;
		const char *no_end = getenv("FAKESANITIZER_GRAPH_NO_END");

		if (!no_end || ++launches != atol(no_end))
			call(NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_LAUNCH_END, &gl);
	}
	launch.loading = 0;
	run_pending();	/* the last graph launch, late */
	pthread_mutex_lock(&g.lock);
	for (int i = 0; i < n && i < MAX_NODES; i++) {
		pending.mods[i] = id_of((void *)mods[i]);
		pending.data[i] = data[i];
		pending.gridid[i] = node_grid(exec, i);
		pending.grids[i] = grids[i];
		pending.blocks[i] = blocks[i];
	}
	pending.n = n < MAX_NODES ? n : MAX_NODES;
	pthread_mutex_unlock(&g.lock);
}

/* cuGraphInstantiateWithFlags of the fake driver: exec made from graph
 * (a clone of origin's), n kernel nodes running funcs[i] of mods[i], the
 * grids and names of origin's nodes; the callbacks as for the program's
 * (the interposer leaves its own alone). */
__attribute__((visibility("default"))) void fakegpu_instantiate_as(long exec, long graph, long origin, int n,
								  const long *funcs, const long *mods)
{
	CUgraphExec handle = (CUgraphExec)exec;
	cuGraphInstantiateWithFlags_params p = { &handle, (CUgraph)graph, 0 };
	struct nt_san_graphexec_data d = { (CUgraph)graph, handle, 0, 0, NULL };
	struct shape *s = &shapes[id_of((void *)exec)];
	const struct shape *o = &shapes[id_of((void *)origin)];

	api_call(NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", &p,
		 NT_SAN_API_ENTER, CUDA_SUCCESS);
	for (int i = 0; i < n; i++)
		exec_node(exec, i, funcs[i], mods[i]);
	pthread_mutex_lock(&g.lock);
	*s = *o;
	s->n = n < o->n ? n : o->n;
	for (int i = 0; i < s->n; i++) {
		s->funcs[i] = funcs[i];
		s->mods[i] = mods[i];
	}
	pthread_mutex_unlock(&g.lock);
	call(NT_SAN_CB_DOMAIN_GRAPHS, NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED, &d);
	g.made[id_of((void *)exec)] = 1;
	api_call(NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", &p,
		 NT_SAN_API_EXIT, CUDA_SUCCESS);
}

/* cuGraphLaunch of the fake driver: exec, made, launched on stream with
 * what its nodes ran last (fakegpu_graph); -1 for an exec not made. */
__attribute__((visibility("default"))) int fakegpu_graph_launch(long exec, long stream)
{
	struct shape s;

	pthread_mutex_lock(&g.lock);
	s = shapes[id_of((void *)exec)];
	pthread_mutex_unlock(&g.lock);
	if (!s.n || !g.made[id_of((void *)exec)])
		return -1;
	fakegpu_graph(1, exec, s.n, s.mods, s.funcs, s.names, s.grids, s.blocks, stream);
	return 0;
}

__attribute__((visibility("default"))) void fakegpu_stats(void)
{
	run_pending();
	printf("fake gpu: %ld patches, %ld unpatches; %ld launches ran native code, %ld patched code "
	       "(%ld recording, %ld with no data); %ld blocks recorded, %ld blocks beyond their buffer; "
	       "%ld stream waits\n",
	       g.patches, g.unpatches, g.native_runs, g.patched_runs, g.recorded_runs, g.silent_runs,
	       g.blocks, g.beyond, g.waits);
	if (g.null_runs)
		printf("fake gpu: %ld launches ran callbacks that do nothing\n", g.null_runs);
	if (g.children)
		printf("fake gpu: %ld grids launched from the device\n", g.children);
	if (graph_launches)
		printf("fake gpu: %ld graph launches, %ld node callbacks delivered\n", graph_launches, node_calls);
	if (g.exec_sets)
		printf("fake gpu: %ld graph exec updates by the driver for the interposer\n", g.exec_sets);
	if (g.broken_runs)
		printf("fake gpu: %ld graph node launches ran a module patched after their exec was made (broken "
		       "on the H200: illegal instruction, or another kernel's code)\n", g.broken_runs);
	if (g.plain_no_data)
		printf("fake gpu: %ld launches ran patched code with no data set in their callbacks (the "
		       "Sanitizer's data then is not known to be NULL on the GPU)\n", g.plain_no_data);
	if (g.no_data_set)
		printf("fake gpu: %ld graph node launches ran patched code with no data ever set (a fault on "
		       "the H200)\n", g.no_data_set);
	if (g.queued_patches)
		printf("fake gpu: %ld module patches with launches of the module queued (not known to be "
		       "safe on the GPU)\n", g.queued_patches);
	if (g.queued_lazy)
		printf("fake gpu: %ld function%s loaded lazily into a patched module with launches of it "
		       "queued (not known to be safe on the GPU)\n", g.queued_lazy, g.queued_lazy == 1 ? "" : "s");
	if (lock_waits)
		printf("fake gpu: %ld calls waited a second or more for the driver's lock (another thread's "
		       "launch callbacks)\n", lock_waits);
}
