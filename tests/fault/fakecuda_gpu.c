/*
 * The calls of the stand-in libcuda that answer like a driver of one GPU
 * when FAKECUDA_GPU=1 (an "NVIDIA Fake H200": 132 SMs, compute
 * capability 9.0, 60 MiB of L2): what the interposer asks of the driver
 * while the simulated GPU of fakesanitizer_gpu.c runs launches.  Without
 * FAKECUDA_GPU they fail like every other call of fakecuda.c.  Events
 * are done as soon as they are recorded, 12.5 us apart.
 * FAKECUDA_UUID_MS=N makes cuDeviceGetUuid take N ms (a thread of the
 * interposer's held up in the driver).  FAKECUDA_EVENT_MS=N makes an
 * event complete N ms after it is recorded.  FAKECUDA_SYNC_FAILS=N makes
 * the first N calls of cuCtxSynchronize fail (a context in error), the
 * work waited for all the same.  An event used after it was
 * destroyed, or after its context was (fakecuda_context_destroyed(),
 * which fake_app calls as it destroys the context), aborts: the driver
 * may have given its handle to another event by then.
 *
 * Graphs: fakecuda_graph_define(G, N, FUNCS, MODS) makes graph G of N
 * kernel nodes (node i runs function FUNCS[i] of module MODS[i]), which
 * cuGraphGetNodes and its kin then describe; with FAKECUDA_CONDITIONAL=1
 * its first node is a conditional node instead (whose bodies the driver
 * cannot list).
 *
 * Instrumented twins (FAKECUDA_TWINS=1 as well; else these calls fail):
 * cuGraphClone copies a graph's nodes under a new handle, and
 * cuGraphNodeFindInClone, cuGraphKernelNodeSetParams and cuGraphDestroy
 * act on it; cuGraphExecUpdate sets the exec's nodes to the graph's
 * functions in the simulated GPU (fakegpu_exec_set); cuModuleLoadData
 * loads a module under a new handle (its load callback comes through
 * fakegpu_module), cuModuleGetFunction gives it a function of that name,
 * and cuFuncGetName names a function as its launches did.
 *
 * Shadow execs and routed launches (FAKECUDA_TWINS=1 as well):
 * cuGraphExecGetFlags says every exec was made with upload and node
 * priorities.
 * cuGraphInstantiateWithFlags makes an exec of a graph (a clone) under a
 * handle of 4090-4095, reused once destroyed (as the driver reuses
 * handles), its nodes' grids those of the exec its graph was cloned
 * from (fakegpu_instantiate_as); cuGraphExecDestroy destroys one;
 * cuGraphLaunch launches an exec made (fakegpu_graph_launch); and
 * cuGetProcAddress_v2 answers cuGraphLaunch with the driver's (not the
 * exported name: another library's may stand before it), as the CUDA
 * runtime looks it up, and cuGetProcAddress (CUDA 12's form) with itself.  FAKECUDA_SHADOW_FAILS=make fails the
 * instantiation, =launch the launch of such an exec.
 *
 * Stream capture: fakecuda_capture_begin(S) starts a capture of stream S
 * in CU_STREAM_CAPTURE_MODE_GLOBAL (PyTorch's mode) and
 * fakecuda_capture_end() ends it, 1 when it was invalidated.  Meanwhile a
 * call that the real driver deems potentially unsafe (fakecuda_unsafe:
 * here event queries; allocations, waits and module patching in the fake
 * sanitizer), made by any thread whose capture mode is not relaxed
 * (cuThreadExchangeStreamCaptureMode), fails and invalidates it.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/fault/fakegpu.h"

/* A function of the simulated GPU's sanitizer (fakesanitizer_gpu.c), or
 * NULL when it is not loaded.  The handle is closed at once: the
 * interposer that loaded the library keeps it loaded. */
static void *sanitizer_fn(const char *name)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	void *f = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);
	return f;
}

/* A call that waited for ever on the H200 when made in a launch's
 * callbacks (fakesanitizer_gpu.c's fakegpu_in_launch): abort, as the
 * simulated GPU's sanitizer does. */
static void hangs_in_launch(const char *what)
{
	int (*in_launch)(void) = (int (*)(void))sanitizer_fn("fakegpu_in_launch");
	int in = in_launch && in_launch();

	if (!in)
		return;
	fprintf(stderr, "fake cuda: %s called in a launch's callbacks (hangs on a real GPU)\n", what);
	abort();
}

static int gpu(void)
{
	return getenv("FAKECUDA_GPU") != NULL;
}

static CUresult no(void)
{
	const char *e = getenv("FAKECUDA_RESULT");

	return (CUresult)(e ? atoi(e) : CUDA_ERROR_NO_DEVICE);
}

CUresult cuDeviceGetCount(int *n)
{
	if (!gpu())
		return no();
	*n = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	if (!gpu() || ordinal)
		return gpu() ? CUDA_ERROR_INVALID_DEVICE : no();
	*d = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	(void)d;
	if (!gpu())
		return no();
	strncpy(name, "NVIDIA Fake H200", (size_t)len);
	name[len - 1] = '\0';
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
	const char *ms = getenv("FAKECUDA_UUID_MS");

	(void)d;
	if (!gpu())
		return no();
	if (ms)
		nanosleep(&(struct timespec){ atoi(ms) / 1000, atoi(ms) % 1000 * 1000000L }, NULL);
	for (int i = 0; i < 16; i++)
		u->bytes[i] = (char)(0x10 + i);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	if (!gpu())
		return no();
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 60 << 20; break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
	default: *v = 0; break;
	}
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
	if (!gpu())
		return no();
	*v = 13000;
	return CUDA_SUCCESS;
}

/* The simulated GPU's one context (fake_app's context 1). */
CUresult cuCtxGetCurrent(CUcontext *c)
{
	if (!gpu())
		return no();
	*c = (CUcontext)1;
	return CUDA_SUCCESS;
}

static long capturing;		/* the stream being captured, 0 for none */
static const char *invalidated;	/* the call that broke the capture */
static _Thread_local CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

__attribute__((visibility("default"))) void fakecuda_capture_begin(long stream)
{
	__atomic_store_n(&invalidated, NULL, __ATOMIC_SEQ_CST);
	__atomic_store_n(&capturing, stream, __ATOMIC_SEQ_CST);
}

__attribute__((visibility("default"))) int fakecuda_capture_end(void)
{
	const char *why = __atomic_load_n(&invalidated, __ATOMIC_SEQ_CST);

	__atomic_store_n(&capturing, 0, __ATOMIC_SEQ_CST);
	if (why)
		fprintf(stderr, "fake cuda: the stream capture was invalidated by %s\n", why);
	return why != NULL;
}

/* 1 when a call named what must fail here: a capture is on and this
 * thread's mode is not relaxed (the capture is then invalidated). */
__attribute__((visibility("default"))) int fakecuda_unsafe(const char *what)
{
	const char *none = NULL;

	if (!__atomic_load_n(&capturing, __ATOMIC_SEQ_CST) || thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	__atomic_compare_exchange_n(&invalidated, &none, what, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return 1;
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = thread_mode;

	if (!gpu())
		return no();
	thread_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	long c = __atomic_load_n(&capturing, __ATOMIC_SEQ_CST);

	if (!gpu())
		return no();
	*st = c && (long)(uintptr_t)s == c ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

/* Streams of the interposer's own (its copies of block records), made
 * outside launches. */

CUresult cuCtxSetCurrent(CUcontext c)
{
	(void)c;
	return gpu() ? CUDA_SUCCESS : no();
}

CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	static long next = 0x7000;

	(void)flags;
	if (!gpu())
		return no();
	hangs_in_launch("cuStreamCreate");
	if (fakecuda_unsafe("cuStreamCreate"))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	*s = (CUstream)(uintptr_t)__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

/* Events by handle: the context generation they were made in, and when
 * they were last recorded (ns). */
#define MAX_EVENTS 65536
static struct {
	unsigned gen;
	long long recorded;
} events[MAX_EVENTS];
static unsigned ctx_gen = 1;

__attribute__((visibility("default"))) void fakecuda_context_destroyed(void)
{
	__atomic_add_fetch(&ctx_gen, 1, __ATOMIC_SEQ_CST);
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* e's slot; aborts when its context is gone. */
static long event_slot(CUevent e, const char *what)
{
	long id = (long)(uintptr_t)e;

	unsigned gen;

	if (id <= 0 || id >= MAX_EVENTS)
		return 0;
	gen = __atomic_load_n(&events[id].gen, __ATOMIC_SEQ_CST);
	if (gen != __atomic_load_n(&ctx_gen, __ATOMIC_SEQ_CST)) {
		fprintf(stderr, "fake cuda: %s on %s\n", what,
			gen ? "an event of a destroyed context" : "a destroyed event");
		abort();
	}
	return id;
}

/* 1 when e's last record has completed. */
static int event_done(long id)
{
	const char *ms = getenv("FAKECUDA_EVENT_MS");

	return !ms || now_ns() >= __atomic_load_n(&events[id].recorded, __ATOMIC_SEQ_CST) + atoll(ms) * 1000000LL;
}

CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	static long next = 1;
	long id;

	(void)flags;
	if (!gpu())
		return no();
	hangs_in_launch("cuEventCreate");
	id = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
	if (id < MAX_EVENTS)
		__atomic_store_n(&events[id].gen, __atomic_load_n(&ctx_gen, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
	*e = (CUevent)id;
	return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
	long id;

	(void)s;
	if (!gpu())
		return no();
	if ((id = event_slot(e, "cuEventRecord")))
		__atomic_store_n(&events[id].recorded, now_ns(), __ATOMIC_SEQ_CST);
	return CUDA_SUCCESS;
}

/* The fake sanitizer's driver lock (fakegpu_driver_lock), when loaded:
 * held by a thread in a launch's callbacks. */
static void driver_lock(const char *what, int take)
{
	void (*lock)(const char *, int) = (void (*)(const char *, int))sanitizer_fn("fakegpu_driver_lock");

	if (lock)
		lock(what, take);
}

CUresult cuEventQuery(CUevent e)
{
	long id;
	int done;

	if (!gpu())
		return no();
	if (fakecuda_unsafe("cuEventQuery"))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	driver_lock("cuEventQuery", 1);
	id = event_slot(e, "cuEventQuery");
	done = !id || event_done(id);
	driver_lock(NULL, 0);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	long ia, ib;

	if (!gpu())
		return no();
	ia = event_slot(a, "cuEventElapsedTime");
	ib = event_slot(b, "cuEventElapsedTime");
	if ((ia && !event_done(ia)) || (ib && !event_done(ib)))
		return CUDA_ERROR_NOT_READY;
	*ms = 0.0125f;
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e)
{
	if (!gpu())
		return no();
	hangs_in_launch("cuEventDestroy");
	if (event_slot(e, "cuEventDestroy"))
		__atomic_store_n(&events[(long)(uintptr_t)e].gen, 0, __ATOMIC_SEQ_CST);
	return CUDA_SUCCESS;
}

/* Graphs by handle: their kernel nodes' functions, and each function's
 * module. */
#define MAX_GRAPHS 4096
#define MAX_GRAPH_NODES 64
static struct {
	int n;
	long origin;	/* the graph defined (a clone's is its source's) */
	long funcs[MAX_GRAPH_NODES];
} graphs[MAX_GRAPHS];
static long func_mods[MAX_GRAPHS];

__attribute__((visibility("default"))) void fakecuda_graph_define(long graph, int n, const long *funcs,
								  const long *mods)
{
	if (graph <= 0 || graph >= MAX_GRAPHS || n > MAX_GRAPH_NODES)
		return;
	graphs[graph].n = n;
	graphs[graph].origin = graph;
	for (int i = 0; i < n; i++) {
		graphs[graph].funcs[i] = funcs[i];
		if (funcs[i] > 0 && funcs[i] < MAX_GRAPHS)
			func_mods[funcs[i]] = mods[i];
	}
}

/* Node i of graph g is g * 100 + i + 1: *graph and *i, or the call's
 * failure. */
static CUresult node_of(CUgraphNode node, long *graph, int *i)
{
	long id = (long)(uintptr_t)node - 1;

	if (!gpu())
		return no();
	*graph = id / 100;
	*i = (int)(id % 100);
	if (id < 0 || *graph >= MAX_GRAPHS || *i >= graphs[*graph].n)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

CUresult cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes, size_t *n)
{
	long g = (long)(uintptr_t)graph;

	if (!gpu())
		return no();
	if (g <= 0 || g >= MAX_GRAPHS || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes)
		for (size_t i = 0; i < *n && i < (size_t)graphs[g].n; i++)
			nodes[i] = (CUgraphNode)(uintptr_t)(g * 100 + (long)i + 1);
	*n = (size_t)graphs[g].n;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
	CUresult r;
	long g;
	int i;

	if ((r = node_of(node, &g, &i)))
		return r;
	*type = !i && getenv("FAKECUDA_CONDITIONAL") ? CU_GRAPH_NODE_TYPE_CONDITIONAL : CU_GRAPH_NODE_TYPE_KERNEL;
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p)
{
	CUresult r;
	long g;
	int i;

	if ((r = node_of(node, &g, &i)))
		return r;
	memset(p, 0, sizeof(*p));
	p->func = (CUfunction)(uintptr_t)graphs[g].funcs[i];
	return CUDA_SUCCESS;
}

static void *gpu_sym(const char *name);

/* A function the program launched: its loading state (1 loaded, 0 not)
 * and module from the simulated GPU; -1: not one of those. */
static int launched_func(CUfunction f, long *mod)
{
	int (*loaded)(long, long *) = (int (*)(long, long *))gpu_sym("fakegpu_func_loaded");

	return loaded ? loaded((long)(uintptr_t)f, mod) : -1;
}

CUresult cuFuncGetModule(CUmodule *mod, CUfunction f)
{
	long id = (long)(uintptr_t)f, m = 0;

	if (!gpu())
		return no();
	if (id > 0 && id < MAX_GRAPHS && func_mods[id]) {
		*mod = (CUmodule)(uintptr_t)func_mods[id];
		return CUDA_SUCCESS;
	}
	if (launched_func(f, &m) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	*mod = (CUmodule)(uintptr_t)m;
	return CUDA_SUCCESS;
}

/* CUDA's lazy loading (CUDA 12.4's calls): a function the program
 * launches loads at its first launch or here (the simulated GPU's
 * FUNCTIONS_LAZY_LOADED callback, fakesanitizer_gpu.c). */
CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction f)
{
	int r;

	if (!gpu())
		return no();
	if (!state || (r = launched_func(f, NULL)) < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	*state = r ? CU_FUNCTION_LOADING_STATE_LOADED : CU_FUNCTION_LOADING_STATE_UNLOADED;
	return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction f)
{
	int (*load)(long) = (int (*)(long))gpu_sym("fakegpu_func_load");

	if (!gpu())
		return no();
	return load && !load((long)(uintptr_t)f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* CUkernel handles (FAKECUDA_KERNEL_HANDLES=1, fakesanitizer_gpu.c's
 * fakegpu_launch): a launched function's id plus FAKEGPU_KERNEL_BASE; its
 * library, the module's id plus FAKE_LIBRARY_BASE.  Without it no launch
 * names a CUkernel, and a handle that is none is refused. */
#define FAKE_LIBRARY_BASE 0x200000

/* kernel's function id, its module in *mod; 0: not a kernel launched */
static long kernel_func(CUkernel kernel, long *mod)
{
	long k = (long)(uintptr_t)kernel - FAKEGPU_KERNEL_BASE;

	return k > 0 && k < FAKEGPU_KERNEL_BASE && launched_func((CUfunction)(uintptr_t)k, mod) >= 0 ? k : 0;
}

/* The function of a CUkernel in the current context, loaded: the driver
 * loads it here, as PyTorch's launches showed (session 44). */
CUresult cuKernelGetFunction(CUfunction *f, CUkernel kernel)
{
	long k;

	if (!gpu())
		return no();
	if (!f || !(k = kernel_func(kernel, NULL)))
		return CUDA_ERROR_INVALID_HANDLE;
	*f = (CUfunction)(uintptr_t)k;
	return cuFuncLoad(*f);
}

CUresult cuKernelGetLibrary(CUlibrary *lib, CUkernel kernel)
{
	long mod = 0;

	if (!gpu())
		return no();
	if (!lib || !kernel_func(kernel, &mod))
		return CUDA_ERROR_INVALID_HANDLE;
	*lib = (CUlibrary)(uintptr_t)(mod + FAKE_LIBRARY_BASE);
	return CUDA_SUCCESS;
}

CUresult cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
	long m = (long)(uintptr_t)lib - FAKE_LIBRARY_BASE;

	if (!gpu())
		return no();
	if (!mod || m <= 0 || m >= FAKE_LIBRARY_BASE)
		return CUDA_ERROR_INVALID_HANDLE;
	*mod = (CUmodule)(uintptr_t)m;
	return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel kernel)
{
	const char *(*name_of)(long) = (const char *(*)(long))gpu_sym("fakegpu_func_name");
	long k;

	if (!gpu())
		return no();
	if (!name || !(k = kernel_func(kernel, NULL)) || !name_of || !(*name = name_of(k)))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

/* ---- instrumented twins (FAKECUDA_TWINS=1) -------------------------------- */

static int twins(void)
{
	return gpu() && getenv("FAKECUDA_TWINS") != NULL;
}

/* A function of the simulated GPU's sanitizer (NUCATRACE_SANITIZER_LIB). */
static void *gpu_sym(const char *name)
{
	const char *lib = getenv("NUCATRACE_SANITIZER_LIB");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	void *f = h ? dlsym(h, name) : NULL;

	if (h)
		dlclose(h);	/* still loaded: the interposer holds it */
	return f;
}

static long next_clone = MAX_GRAPHS - 1, next_mod = 100, next_func = 1000;

CUresult cuGraphClone(CUgraph *clone, CUgraph graph)
{
	long g = (long)(uintptr_t)graph;

	if (!twins())
		return no();
	if (g <= 0 || g >= MAX_GRAPHS || next_clone <= MAX_GRAPHS / 2)
		return CUDA_ERROR_INVALID_VALUE;
	graphs[next_clone] = graphs[g];
	*clone = (CUgraph)(uintptr_t)next_clone--;
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph graph)
{
	long g = (long)(uintptr_t)graph;

	if (!twins())
		return no();
	if (g <= 0 || g >= MAX_GRAPHS)
		return CUDA_ERROR_INVALID_VALUE;
	graphs[g].n = 0;
	return CUDA_SUCCESS;
}

CUresult cuGraphNodeFindInClone(CUgraphNode *found, CUgraphNode node, CUgraph clone)
{
	long g, c = (long)(uintptr_t)clone;
	int i;
	CUresult r;

	if (!twins())
		return no();
	if ((r = node_of(node, &g, &i)))
		return r;
	if (c <= 0 || c >= MAX_GRAPHS || i >= graphs[c].n)
		return CUDA_ERROR_INVALID_VALUE;
	*found = (CUgraphNode)(uintptr_t)(c * 100 + i + 1);
	return CUDA_SUCCESS;
}

CUresult cuGraphKernelNodeSetParams(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUresult r;
	long g;
	int i;

	if (!twins())
		return no();
	if ((r = node_of(node, &g, &i)))
		return r;
	graphs[g].funcs[i] = (long)(uintptr_t)p->func;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info)
{
	void (*set)(long, int, const long *, const long *) =
		(void (*)(long, int, const long *, const long *))gpu_sym("fakegpu_exec_set");
	long g = (long)(uintptr_t)graph, mods[MAX_GRAPH_NODES];

	(void)info;
	if (!twins())
		return no();
	if (g <= 0 || g >= MAX_GRAPHS || !set)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < graphs[g].n; i++) {
		long f = graphs[g].funcs[i];

		mods[i] = f > 0 && f < MAX_GRAPHS ? func_mods[f] : 0;
	}
	set((long)(uintptr_t)exec, graphs[g].n, graphs[g].funcs, mods);
	return CUDA_SUCCESS;
}

#define SHADOW_FIRST 4090
static unsigned char exec_live[MAX_GRAPHS];
static long next_shadow = SHADOW_FIRST;

static int shadow_fails(const char *what)
{
	const char *f = getenv("FAKECUDA_SHADOW_FAILS");

	return f && !strcmp(f, what);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
	void (*made)(long, long, long, int, const long *, const long *) =
		(void (*)(long, long, long, int, const long *, const long *))gpu_sym("fakegpu_instantiate_as");
	long g = (long)(uintptr_t)graph, mods[MAX_GRAPH_NODES], h = 0;

	if (!twins())
		return no();
	/* flags it does not model are refused (the program's execs report
	 * upload and node priorities: cuGraphExecGetFlags) */
	if (g <= 0 || g >= MAX_GRAPHS || !graphs[g].n || !exec || !made ||
	    (flags & ~(unsigned long long)CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
		return CUDA_ERROR_INVALID_VALUE;
	if (shadow_fails("make"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < MAX_GRAPHS - SHADOW_FIRST && !h; i++) {
		long c = SHADOW_FIRST + (next_shadow - SHADOW_FIRST + i) % (MAX_GRAPHS - SHADOW_FIRST);

		if (!exec_live[c])
			h = c;
	}
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	next_shadow = h + 1;
	for (int i = 0; i < graphs[g].n; i++) {
		long f = graphs[g].funcs[i];

		mods[i] = f > 0 && f < MAX_GRAPHS ? func_mods[f] : 0;
	}
	exec_live[h] = 1;
	made(h, g, graphs[g].origin, graphs[g].n, graphs[g].funcs, mods);
	*exec = (CUgraphExec)(uintptr_t)h;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecGetFlags(CUgraphExec exec, cuuint64_t *flags)
{
	if (!twins())
		return no();
	if (!exec || !flags)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec exec)
{
	void (*destroy)(long) = (void (*)(long))gpu_sym("fakegpu_graph_destroy");
	long e = (long)(uintptr_t)exec;

	if (!twins())
		return no();
	if (e <= 0 || e >= MAX_GRAPHS || !destroy)
		return CUDA_ERROR_INVALID_VALUE;
	destroy(e);
	exec_live[e] = 0;
	return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec exec, CUstream stream)
{
	int (*launch)(long, long) = (int (*)(long, long))gpu_sym("fakegpu_graph_launch");
	long e = (long)(uintptr_t)exec;

	if (!gpu())
		return no();
	if (e >= SHADOW_FIRST && e < MAX_GRAPHS && shadow_fails("launch"))
		return CUDA_ERROR_INVALID_VALUE;
	return launch && !launch(e, (long)(uintptr_t)stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	return graph_launch(exec, stream);
}

/* The device's work waited for: counted, said at exit when any */
static long ctx_syncs;

static void __attribute__((destructor)) syncs_said(void)
{
	if (ctx_syncs)
		printf("fake gpu: %ld context synchronisations\n", ctx_syncs);
}

CUresult cuCtxSynchronize(void)
{
	const char *fails = getenv("FAKECUDA_SYNC_FAILS");
	void (*idle)(void);
	long n;

	if (!gpu())
		return no();
	n = __atomic_add_fetch(&ctx_syncs, 1, __ATOMIC_RELAXED);
	if ((idle = (void (*)(void))sanitizer_fn("fakegpu_device_idle")))
		idle();
	return fails && n <= atol(fails) ? CUDA_ERROR_ILLEGAL_ADDRESS : CUDA_SUCCESS;
}

/* cuGetProcAddress_v2's answers, as the driver gives its own functions
 * (not the exported names, which a preloaded library may stand before) */
static CUresult get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *status)
{
	(void)flags;
	if (!gpu())
		return no();
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = !strcmp(symbol, "cuGraphLaunch") ? (void *)graph_launch :
	       !strcmp(symbol, "cuGetProcAddress") && version >= 12000 ? (void *)get_proc : NULL;
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			     CUdriverProcAddressQueryResult *status)
{
	return get_proc(symbol, pfn, version, flags, status);
}

CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	void (*loaded)(long, long) = (void (*)(long, long))gpu_sym("fakegpu_module");

	(void)image;
	if (!twins())
		return no();
	if (!loaded || next_mod >= MAX_GRAPHS)
		return CUDA_ERROR_INVALID_IMAGE;
	*mod = (CUmodule)(uintptr_t)next_mod;
	loaded(1, next_mod++);	/* its load callback, in the one context */
	return CUDA_SUCCESS;
}

/* A function the program launched, found in its module by name and
 * loaded, as driver 580 loaded it (an H100: docs/results/2026-12-07-
 * shadow-default-recheck.md); else, with FAKECUDA_TWINS=1, a new one of a
 * twin module. */
CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
	void (*named)(long, const char *) = (void (*)(long, const char *))gpu_sym("fakegpu_func_named");
	long (*find)(long, const char *) = (long (*)(long, const char *))gpu_sym("fakegpu_func_find");
	long known;

	if (gpu() && f && name && find && (known = find((long)(uintptr_t)mod, name))) {
		*f = (CUfunction)(uintptr_t)known;
		return cuFuncLoad(*f);
	}
	if (!twins())
		return no();
	if (!named || !name || next_func >= MAX_GRAPHS)
		return CUDA_ERROR_NOT_FOUND;
	func_mods[next_func] = (long)(uintptr_t)mod;
	named(next_func, name);
	*f = (CUfunction)(uintptr_t)next_func++;
	return CUDA_SUCCESS;
}

/* A module's functions that launches made known, none loaded by the call
 * (CUDA 12.4's calls; its documentation: the handles may be of functions
 * not loaded yet); with FAKECUDA_KERNEL_HANDLES=1 or FAKECUDA_TWINS=1. */
static int enumerates(void)
{
	return twins() || (gpu() && getenv("FAKECUDA_KERNEL_HANDLES"));
}

CUresult cuModuleGetFunctionCount(unsigned *count, CUmodule mod)
{
	int (*funcs)(long, long *, int) = (int (*)(long, long *, int))gpu_sym("fakegpu_module_funcs");

	if (!enumerates())
		return no();
	if (!count || !funcs)
		return CUDA_ERROR_INVALID_VALUE;
	*count = (unsigned)funcs((long)(uintptr_t)mod, NULL, 0);
	return CUDA_SUCCESS;
}

CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned n, CUmodule mod)
{
	int (*funcs)(long, long *, int) = (int (*)(long, long *, int))gpu_sym("fakegpu_module_funcs");
	long ids[256];	/* (the simulated programs' modules hold a few) */
	int k;

	if (!enumerates())
		return no();
	if (!fs || !funcs || n > 256)
		return CUDA_ERROR_INVALID_VALUE;
	k = funcs((long)(uintptr_t)mod, ids, (int)n);
	for (int i = 0; i < k && i < (int)n; i++)
		fs[i] = (CUfunction)(uintptr_t)ids[i];
	return CUDA_SUCCESS;
}

/* A function's name as its launches named it (with FAKECUDA_TWINS=1, a
 * twin's as cuModuleGetFunction named it). */
CUresult cuFuncGetName(const char **name, CUfunction f)
{
	const char *(*name_of)(long) = (const char *(*)(long))gpu_sym("fakegpu_func_name");

	if (!enumerates())
		return no();
	if (!name_of || !(*name = name_of((long)(uintptr_t)f)))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}
