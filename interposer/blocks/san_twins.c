/*
 * Instrumented twins: tracing the kernel nodes of a graph exec made
 * before a window, without patching a module it runs (san.h, issue 33).
 *
 * A module that a live exec runs is never patched (san_execs.c): an exec
 * made before its module was patched broke once it was.  So for a window
 * the exec is pointed at a twin instead: a second copy of the module,
 * loaded from the cubin kept as the module loaded, patched like any
 * module in the window.  The exec's kernel nodes name the twin's
 * functions for the window and the module's own again before it closes.
 * On the H200 (docs/results/2026-12-03-graph-twins.md, tests/gpu/graphtwin.c)
 * an exec pointed at a patched twin's functions ran instrumented code and
 * its node callbacks named the twin; pointed back, it ran the program's
 * own code; its output was bit-identical throughout, with the module
 * loaded eagerly or lazily.  cuGraphExecKernelNodeSetParams needs the
 * nodes of the graph the exec was made from, which PyTorch destroys once
 * its exec is made (and the driver refused a clone's nodes), so every
 * exec's graph is cloned as it is made, and the exec is pointed with
 * cuGraphExecUpdate from the clone: its kernel nodes set to the twins'
 * functions, then back to the program's.
 *
 * The update sets every node of the exec from the clone, so the clone
 * must be the program's graph as the exec now runs it:
 *   - the program's own cuGraphExecUpdate: the clone made again from its
 *     graph;
 *   - cuGraphExecKernelNodeSetParams: done to the clone's node as well
 *     (cuGraphNodeFindInClone);
 *   - any other change in place (memcpy, memset, host, event, semaphore,
 *     batch-memop and child-graph nodes, a node enabled or disabled, the
 *     generic cuGraphExecNodeSetParams): the exec is never pointed again.
 * And before any such call the exec is pointed back, so that the change
 * applies to the program's own exec.
 *
 * Shadow execs.  The Compute Sanitizer makes an exec whose kernel nodes
 * were once updated to other functions and back about 0.5 us a replay
 * slower for the rest of its life (docs/results/2026-12-05-dark-cost.md).
 * Where the program's graph launches come through libnucatrace
 * (NUCATRACE_GRAPH_ROUTE=shadow, the default; interposer/graphroute.h),
 * an exec is pointed at twins without being changed: a shadow exec is made from
 * the clone with its kernel nodes set to the twins' functions (then set
 * back), and launched in the exec's place until it is pointed back, when
 * the shadow is destroyed (the driver frees one still running once it
 * is done).  A shadow is made after its twins are patched, and destroyed
 * before they are unpatched, as in tests/gpu/graphtwin.c's `twin` route
 * (docs/results/2026-12-03-graph-twins.md: shadow patched, the program's
 * exec plain, alternating, bit-identical).  When the driver refuses to
 * make or launch one, that exec is pointed by update instead, and after
 * a refused launch every exec is.  A shadow is an exec like any other
 * to the rest of the backend (its own graph number, node tables and
 * launch ids); made and changed by us, its calls are left alone
 * (nt_san_twin_own), but its destruction is seen like the program's.
 *
 * A twin has module-scope variables (__device__, __managed__,
 * __constant__) of its own, which its kernels would write and read in
 * place of the program's: a module that has any gets no twin, and its
 * nodes are dropped with the reason.  A cubin is kept compressed (zstd),
 * TWIN_IMAGES_MAX bytes in all; a module loaded beyond that gets none.
 *
 * Nothing here runs inside a launch's callbacks: images are kept in the
 * module-load callback, clones made in the exec calls' exit callbacks,
 * and execs pointed at a graph launch's entry into the driver and back
 * at a window's close (backend_sanitizer.c, with a switch's conditions:
 * this thread alone in CUDA lately, nothing in flight).  Our own driver
 * calls that the callbacks see (the update, the twin's load) are marked
 * (nt_san_twin_own) and left alone there.
 *
 * Tables under nt_san.lock; the driver is called without it.
 */
#include "san.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "gpu/cudrv.h"
#include "interposer/collector.h"

#define TWIN_IMAGES_MAX ((size_t)512 << 20)	/* compressed cubins kept, in all */

/* The driver calls only this file makes, looked up when first needed:
 * a driver without them (before CUDA 12.3) has no twins. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define TWIN_CU(X) \
	X(cuGraphClone) X(cuGraphDestroy) X(cuGraphNodeFindInClone) X(cuGraphKernelNodeSetParams) \
	X(cuGraphExecUpdate) X(cuFuncGetName) X(cuGraphInstantiateWithFlags) X(cuGraphExecDestroy)
static struct {
#define TWIN_DECL(name) __typeof__(name) *name;
	TWIN_CU(TWIN_DECL)
#undef TWIN_DECL
	__typeof__(cuGraphExecGetFlags) *cuGraphExecGetFlags;	/* may be missing: flags 0 */
	int looked, ok;
} tc;

/* A module of the program as it loaded: its cubin, compressed, or why
 * it has no twin; its twin once loaded. */
struct image {
	CUmodule mod;
	CUcontext ctx;
	void *z;
	size_t zsize, size;
	const char *why;	/* no twin (static), or NULL */
	char *variable;		/* ... a module-scope variable's name */
	CUmodule twin;
	int twin_failed;
	int refused;		/* a twin of it was wanted and its variable said no */
	UT_hash_handle hh;
};

/* A twin's function for one of the program's. */
struct twin_fn {
	CUfunction f, tf;
	CUmodule mod;		/* f's */
	CUcontext ctx;
	UT_hash_handle hh;
};

/* A graph exec: the clone of what it runs, or why it has none. */
struct texec {
	CUgraphExec exec;
	CUcontext ctx;
	CUgraph clone;
	const char *why;
	unsigned nodes;		/* the clone's kernel nodes */
	int shadowable;		/* a shadow exec may be made of the clone */
	int pointed;		/* its nodes name twins now ... */
	CUgraphExec shadow;	/* ... in this exec, launched in its place */
	UT_hash_handle hh;
};

static struct image *images;
static struct twin_fn *fns;
static struct texec *texecs;
static size_t image_bytes;
static unsigned n_pointed;
static _Thread_local int own;	/* our own driver call under way */
static int shadows_refused;	/* the driver refused to launch a shadow: none more */
static unsigned shadows_out;	/* shadows handed out for launches not yet done (nt_san.lock):
				 * none is destroyed meanwhile */

static const char TWIN_FAILED[] = "its module's instrumented twin could not be loaded";
static const char NO_DRIVER[] = "the CUDA driver lacks the calls a twin needs (CUDA 12.3 or later)";
static const char CHANGED[] =
	"its graph exec was changed in place by a call nucatrace does not mirror, so it is not pointed at "
	"instrumented twins";

static int bind(void)
{
	const struct nt_cuda *cu = nt_san_cuda();

	if (tc.looked)
		return tc.ok;
	tc.looked = 1;
	if (!cu || !cu->handle)
		return 0;
	tc.ok = 1;
#define TWIN_BIND(name)                                     \
	if (!(*(void **)&tc.name = dlsym(cu->handle, STR(name)))) \
		tc.ok = 0;
	TWIN_CU(TWIN_BIND)
#undef TWIN_BIND
	*(void **)&tc.cuGraphExecGetFlags = dlsym(cu->handle, "cuGraphExecGetFlags");
	return tc.ok;
}

int nt_san_twin_own(void)
{
	return own;
}

/* ---- images ----------------------------------------------------------- */

/* im, out of the table (its bytes taken off image_bytes by the caller). */
static void image_free(struct image *im)
{
	free(im->z);
	free(im->variable);
	free(im);
}

void nt_san_twin_image(CUcontext ctx, CUmodule mod, const void *cubin, size_t size, const char *variable)
{
	struct image *im, *old;
	size_t bound, zsize = 0;

	if (own || !mod || !bind())
		return;		/* a twin loading, or a driver without twins */
	if (!(im = calloc(1, sizeof(*im))))
		return;
	im->mod = mod;
	im->ctx = ctx;
	if (variable) {
		im->why = "its module has module-scope variables (__device__, __managed__ or __constant__), which "
			  "an instrumented twin of it would not share";
		im->variable = strdup(variable);
	} else if (!cubin || !size) {
		im->why = "its module's cubin was not given as it loaded";
	} else if (image_bytes >= TWIN_IMAGES_MAX) {
		im->why = "the cubins kept for instrumented twins reached their limit (512 MiB)";
	} else if (!(im->z = malloc(bound = ZSTD_compressBound(size))) ||
		   ZSTD_isError(im->zsize = ZSTD_compress(im->z, bound, cubin, size, 1))) {
		free(im->z);
		im->z = NULL;
		im->zsize = 0;
		im->why = "out of memory for its module's cubin";
	} else {
		void *fit = realloc(im->z, im->zsize);

		im->z = fit ? fit : im->z;
		im->size = size;
		zsize = im->zsize;
	}
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(images, &mod, old);
	if (old && old->ctx == ctx) {	/* the same module, seen loading again */
		pthread_mutex_unlock(&nt_san.lock);
		image_free(im);
		return;
	}
	if (old) {	/* the handle again in another context: a new module */
		HASH_DEL(images, old);
		image_bytes -= old->zsize;
		image_free(old);
	}
	HASH_ADD_PTR(images, mod, im);
	HASH_FIND_PTR(images, &mod, old);
	if (old)
		image_bytes += im->zsize;
	else	/* the table could not grow */
		image_free(im);
	pthread_mutex_unlock(&nt_san.lock);
	if (zsize)
		nt_collector_twin_image(size, zsize);
}

void nt_san_twin_unloading(CUmodule mod)
{
	struct image *im;
	struct twin_fn *fn, *tmp;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(images, &mod, im);
	if (im) {
		HASH_DEL(images, im);
		image_bytes -= im->zsize;
		image_free(im);
	}
	/* its functions' handles may name another module's next */
	HASH_ITER(hh, fns, fn, tmp)
		if (fn->mod == mod) {
			HASH_DEL(fns, fn);
			free(fn);
		}
	pthread_mutex_unlock(&nt_san.lock);
}

const char *nt_san_twin_why(CUmodule mod)
{
	struct image *im;

	/* the one reason a user can act on; otherwise the module's drop
	 * says it is held (NT_SAN_HELD) */
	HASH_FIND_PTR(images, &mod, im);
	return im && im->variable ? im->why : NULL;
}

/* The twin of mod (loaded in the current context, mod's), or NULL with
 * why. */
static CUmodule twin_of(CUmodule mod, const char **why)
{
	const struct nt_cuda *cu = nt_san_cuda();
	struct image *im;
	CUmodule twin = NULL;
	void *cubin = NULL;
	char *refused = NULL;	/* its variable, the first time it stops a twin */
	CUresult r;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(images, &mod, im);
	if (im && im->variable && !im->refused) {
		im->refused = 1;
		refused = strdup(im->variable);
	}
	if (!im)
		*why = "its module's cubin was not kept (loaded before nucatrace started?)";
	else if (im->why)
		*why = im->why;
	else if (im->twin_failed)
		*why = TWIN_FAILED;
	else if (!(twin = im->twin) && (!(cubin = malloc(im->size)) ||
					ZSTD_decompress(cubin, im->size, im->z, im->zsize) != im->size))
		*why = "out of memory for its module's instrumented twin";
	pthread_mutex_unlock(&nt_san.lock);
	if (refused)
		nt_collector_twin_refused(refused);
	free(refused);
	if (twin || *why) {
		free(cubin);
		return twin;
	}
	own = 1;	/* its load callback: a twin, no image to keep */
	r = cu->cuModuleLoadData(&twin, cubin);
	own = 0;
	free(cubin);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(images, &mod, im);
	if (im && !r)
		im->twin = twin;
	else if (im)
		im->twin_failed = 1;
	pthread_mutex_unlock(&nt_san.lock);
	if (r) {
		nt_warn("cannot load an instrumented twin of a CUDA module (%s); graph execs made before a window "
			"do not trace its kernels", nt_cuda_strerror(cu, r));
		*why = TWIN_FAILED;
		return NULL;
	}
	nt_collector_twin_loaded();
	return twin;
}

/* The function of twin that is f's, in ctx; NULL with why. */
static CUfunction twin_function(CUcontext ctx, CUfunction f, CUmodule mod, CUmodule twin, const char **why)
{
	const struct nt_cuda *cu = nt_san_cuda();
	struct twin_fn *fn;
	CUfunction tf = NULL;
	const char *name = NULL;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(fns, &f, fn);
	if (fn && fn->ctx == ctx)
		tf = fn->tf;
	pthread_mutex_unlock(&nt_san.lock);
	if (tf)
		return tf;
	if (tc.cuFuncGetName(&name, f) || !name || cu->cuModuleGetFunction(&tf, twin, name)) {
		*why = "its kernel could not be found in its module's instrumented twin";
		return NULL;
	}
	if ((fn = calloc(1, sizeof(*fn)))) {
		struct twin_fn *old, *in;

		fn->f = f;
		fn->tf = tf;
		fn->mod = mod;
		fn->ctx = ctx;
		pthread_mutex_lock(&nt_san.lock);
		HASH_FIND_PTR(fns, &f, old);
		if (old) {
			HASH_DEL(fns, old);
			free(old);
		}
		HASH_ADD_PTR(fns, f, fn);
		HASH_FIND_PTR(fns, &f, in);
		if (!in)
			free(fn);
		pthread_mutex_unlock(&nt_san.lock);
	}
	return tf;
}

/* ---- execs and their clones --------------------------------------------- */

/* Clones to destroy once nt_san.lock is released (the driver is never
 * called with it held: a callback of another thread may hold a driver
 * lock while it waits for ours). */
#define GRAVES 64
static CUgraph graves[GRAVES];
static CUgraphExec shadow_graves[GRAVES];
static int n_graves, n_shadow_graves;

/* clone to be destroyed (nt_san.lock held); leaked when the list is full */
static void bury(CUgraph clone)
{
	if (clone && n_graves < GRAVES)
		graves[n_graves++] = clone;
}

/* ... and a shadow exec (never launched again: its exec is gone or
 * pointed back) */
static void bury_shadow(CUgraphExec shadow)
{
	if (shadow && n_shadow_graves < GRAVES)
		shadow_graves[n_shadow_graves++] = shadow;
}

/* Destroy the clones and shadows buried so far (nt_san.lock not held).
 * A shadow's destruction comes to the callbacks like the program's
 * (its node tables go). */
static void funerals(void)
{
	CUgraph v[GRAVES];
	CUgraphExec s[GRAVES];
	int n, ns;

	pthread_mutex_lock(&nt_san.lock);
	n = n_graves;
	memcpy(v, graves, (size_t)n * sizeof(*v));
	n_graves = 0;
	ns = shadows_out ? 0 : n_shadow_graves;	/* else at the last one's end */
	memcpy(s, shadow_graves, (size_t)ns * sizeof(*s));
	n_shadow_graves -= ns;
	pthread_mutex_unlock(&nt_san.lock);
	for (int i = 0; i < ns && tc.ok; i++)
		tc.cuGraphExecDestroy(s[i]);
	for (int i = 0; i < n && tc.ok; i++)
		tc.cuGraphDestroy(v[i]);
}

/* e gone (nt_san.lock held, e out of the table). */
static void texec_free(struct texec *e)
{
	bury(e->clone);
	bury_shadow(e->shadow);
	n_pointed -= e->pointed != 0;
	free(e);
}

/* e replaced by one for exec with clone and why (nt_san.lock held). */
static void texec_set(CUgraphExec exec, CUcontext ctx, CUgraph clone, unsigned nodes, int shadowable,
		      const char *why)
{
	struct texec *e, *in;

	HASH_FIND_PTR(texecs, &exec, e);
	if (e) {
		HASH_DEL(texecs, e);
		texec_free(e);
	}
	if (!(e = calloc(1, sizeof(*e)))) {
		bury(clone);
		return;
	}
	e->exec = exec;
	e->ctx = ctx;
	e->clone = clone;
	e->nodes = nodes;
	e->shadowable = shadowable;
	e->why = why;
	HASH_ADD_PTR(texecs, exec, e);
	HASH_FIND_PTR(texecs, &exec, in);
	if (!in) {
		bury(clone);
		free(e);
	}
}

static int count_node(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p, void *arg)
{
	(void)node;
	(void)p;
	++*(unsigned *)arg;
	return 0;
}

void nt_san_twin_exec_made(CUcontext ctx, CUgraphExec exec, CUgraph graph)
{
	CUgraph clone = NULL;
	const char *why = NULL;
	unsigned nodes = 0;
	int shadow = 0, memory = 0;

	if (!bind())
		why = NO_DRIVER;
	else if (!graph || tc.cuGraphClone(&clone, graph))
		why = "its graph could not be cloned when its exec was made";
	/* a count (nt_san_twin_point lists them); a second exec of the
	 * graph may run beside the program's when every node was listed
	 * (no conditional node) and none allocates or frees memory (an
	 * allocation's address is fixed as its exec is made, and the
	 * kernels the program captured use the program's) */
	else if (!nt_san_graph_kernels(nt_san_cuda(), clone, count_node, &nodes, &memory))
		shadow = !memory;
	pthread_mutex_lock(&nt_san.lock);
	texec_set(exec, ctx, clone, nodes, shadow, why);
	pthread_mutex_unlock(&nt_san.lock);
	funerals();
}

void nt_san_twin_exec_gone(CUgraphExec exec)
{
	struct texec *e;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e) {
		HASH_DEL(texecs, e);
		texec_free(e);
	}
	pthread_mutex_unlock(&nt_san.lock);
	funerals();
}

/* The exec from its clone (its kernel nodes as the clone has them now). */
static CUresult update(CUgraphExec exec, CUgraph clone)
{
	CUgraphExecUpdateResultInfo info;
	CUresult r;

	own = 1;
	r = tc.cuGraphExecUpdate(exec, clone, &info);
	own = 0;
	nt_san_nodes_exec_changed(exec);	/* its nodes' grid ids may change */
	return r;
}

/* Point exec back at the program's functions, if it is pointed at twins;
 * 0, or -1 when that failed. */
static int point_back(CUgraphExec exec)
{
	struct texec *e;
	CUgraph clone = NULL;
	int failed;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e && e->pointed && e->shadow) {	/* the exec itself never changed */
		bury_shadow(e->shadow);
		e->shadow = NULL;
		e->pointed = 0;
		n_pointed--;
	} else if (e && e->pointed) {
		clone = e->clone;
	}
	pthread_mutex_unlock(&nt_san.lock);
	if (!clone) {
		funerals();
		return 0;
	}
	failed = update(exec, clone) != CUDA_SUCCESS;
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e && e->clone == clone && !failed) {
		e->pointed = 0;
		n_pointed--;
	}
	pthread_mutex_unlock(&nt_san.lock);
	return failed ? -1 : 0;
}

void nt_san_twin_exec_changing(CUgraphExec exec)
{
	if (point_back(exec))
		nt_warn("cannot point a CUDA graph exec back at the program's kernels before the program changes "
			"it; it may run instrumented code");
}

void nt_san_twin_exec_updated(CUcontext ctx, CUgraphExec exec, CUgraph graph)
{
	nt_san_twin_exec_made(ctx, exec, graph);
}

void nt_san_twin_exec_kernel_set(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct texec *e;
	CUgraph clone = NULL;
	CUgraphNode cn;
	int ok;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e)
		clone = e->clone;
	pthread_mutex_unlock(&nt_san.lock);
	if (!clone)
		return;
	ok = p && !tc.cuGraphNodeFindInClone(&cn, node, clone) && !tc.cuGraphKernelNodeSetParams(cn, p);
	if (!ok)
		nt_san_twin_exec_changed(exec);
}

void nt_san_twin_exec_changed(CUgraphExec exec)
{
	struct texec *e;
	CUcontext ctx = NULL;
	int known;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	known = e != NULL;
	if (e)
		ctx = e->ctx;
	if (known)
		texec_set(exec, ctx, NULL, 0, 0, CHANGED);
	pthread_mutex_unlock(&nt_san.lock);
	funerals();
}

/* ---- pointing an exec at twins ----------------------------------------- */

/* One kernel node of a clone, as the program has it. */
struct knode {
	CUgraphNode node;
	CUDA_KERNEL_NODE_PARAMS p;
};

struct knodes {
	struct knode *v;
	size_t n, cap;
};

static int collect(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p, void *arg)
{
	struct knodes *k = arg;

	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		struct knode *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -1;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n++] = (struct knode){ node, *p };
	return 0;
}

int nt_san_twin_wanted(CUgraphExec exec, int *pointed)
{
	struct texec *e;
	int nodes;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	nodes = e && e->clone ? (int)e->nodes : 0;
	*pointed = e && e->pointed;
	pthread_mutex_unlock(&nt_san.lock);
	return nodes;
}

const char *nt_san_twin_point(CUcontext ctx, CUgraphExec exec, int shadow)
{
	const struct nt_cuda *cu = nt_san_cuda();
	struct knodes k = { 0 };
	struct texec *e;
	CUgraph clone = NULL;
	CUgraphExec s = NULL;
	const char *why = NULL;
	size_t changed = 0;
	CUresult r = CUDA_SUCCESS;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e && e->clone && !e->pointed)
		clone = e->clone;
	shadow = shadow && e && e->shadowable && !__atomic_load_n(&shadows_refused, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&nt_san.lock);
	if (!clone || !cu || !tc.ok)
		return NULL;
	if (nt_san_graph_kernels(cu, clone, collect, &k, NULL)) {
		free(k.v);
		nt_san_twin_exec_changed(exec);	/* never again */
		return "its graph's kernel nodes could not be listed (a conditional node?)";
	}
	for (size_t i = 0; i < k.n; i++) {
		CUDA_KERNEL_NODE_PARAMS np = k.v[i].p;
		CUfunction f = np.func, tf;
		CUmodule mod, twin;
		const char *w = NULL, *name = NULL;
		int patched;

		if (!f && (!np.kern || cu->cuKernelGetFunction(&f, np.kern)))
			continue;
		/* a kernel the policy never traces (match=) stays on the
		 * program's code */
		if (cu->cuFuncGetModule(&mod, f) || tc.cuFuncGetName(&name, f) || !name || !nt_collector_may_trace(name))
			continue;
		pthread_mutex_lock(&nt_san.lock);
		patched = nt_san_module_patched(mod);
		pthread_mutex_unlock(&nt_san.lock);
		if (patched)	/* made while it was: its own code is instrumented */
			continue;
		if (!(twin = twin_of(mod, &w)) || nt_san_patch(twin, &w) || !(tf = twin_function(ctx, f, mod, twin, &w))) {
			why = why ? why : w;
			continue;
		}
		np.func = tf;
		np.kern = NULL;
		np.ctx = NULL;
		if (tc.cuGraphKernelNodeSetParams(k.v[i].node, &np)) {
			why = "its graph's kernel node could not be pointed at an instrumented twin";
			continue;
		}
		/* kept where the loop can undo it: the original stays in k */
		k.v[changed++] = k.v[i];
	}
	if (changed && shadow) {	/* the exec left as it is, when the driver makes one */
		cuuint64_t ef = 0;

		/* its nodes' priorities as the program's exec has them; the
		 * other flags are for memory nodes (none in a shadow), device
		 * launches and uploads, which a shadow needs not */
		if (tc.cuGraphExecGetFlags && tc.cuGraphExecGetFlags(exec, &ef))
			ef = 0;
		own = 1;
		if (tc.cuGraphInstantiateWithFlags(&s, clone, ef & CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
			s = NULL;
		own = 0;
	}
	if (changed && !s)
		r = update(exec, clone);
	for (size_t i = 0; i < changed; i++)	/* the clone is the program's graph again */
		if (tc.cuGraphKernelNodeSetParams(k.v[i].node, &k.v[i].p))
			r = r ? r : CUDA_ERROR_UNKNOWN;
	free(k.v);
	if (changed && r == CUDA_SUCCESS) {
		int done = 0;

		pthread_mutex_lock(&nt_san.lock);
		HASH_FIND_PTR(texecs, &exec, e);
		if (e && e->clone == clone && !e->pointed) {
			e->pointed = done = 1;
			e->shadow = s;
			n_pointed++;
		} else {	/* changed or gone meanwhile */
			bury_shadow(s);
		}
		pthread_mutex_unlock(&nt_san.lock);
		if (done)
			nt_collector_twin_pointed(s != NULL);
		else
			funerals();
	} else if (changed && s) {	/* a node of the clone could not be set back */
		pthread_mutex_lock(&nt_san.lock);
		bury_shadow(s);
		pthread_mutex_unlock(&nt_san.lock);
		nt_san_twin_exec_changed(exec);
		why = "its graph's kernel node could not be set back after a shadow exec was made";
	} else if (changed) {
		/* the clone may no longer be the program's graph: never again */
		point_back(exec);
		nt_san_twin_exec_changed(exec);
		why = "its graph exec could not be updated to run instrumented twins";
	}
	return why;
}

CUgraphExec nt_san_twin_shadow(CUgraphExec exec)
{
	struct texec *e;
	CUgraphExec s = NULL;

	if (!__atomic_load_n(&n_pointed, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(texecs, &exec, e);
	if (e && e->pointed && (s = e->shadow))
		shadows_out++;
	pthread_mutex_unlock(&nt_san.lock);
	return s;
}

void nt_san_twin_shadow_done(void)
{
	int bury;

	pthread_mutex_lock(&nt_san.lock);
	bury = !--shadows_out && n_shadow_graves;
	pthread_mutex_unlock(&nt_san.lock);
	if (bury)
		funerals();
}

void nt_san_twin_shadow_refused(CUgraphExec exec, CUresult r)
{
	const struct nt_cuda *cu = nt_san_cuda();

	if (!__atomic_exchange_n(&shadows_refused, 1, __ATOMIC_RELAXED))
		nt_warn("the CUDA driver refused to launch a shadow exec (%s); graph execs made before a window are "
			"pointed at instrumented twins instead", cu ? nt_cuda_strerror(cu, r) : "?");
	point_back(exec);
}

int nt_san_twin_any_pointed(void)
{
	return __atomic_load_n(&n_pointed, __ATOMIC_RELAXED) > 0;
}

int nt_san_twin_point_back_all(void)
{
	struct texec *e, *tmp;
	CUgraphExec *v = NULL;
	unsigned n = 0;
	int failed = 0;

	pthread_mutex_lock(&nt_san.lock);
	if (n_pointed && (v = malloc(n_pointed * sizeof(*v))))
		HASH_ITER(hh, texecs, e, tmp)
			if (e->pointed && n < n_pointed)
				v[n++] = e->exec;
	pthread_mutex_unlock(&nt_san.lock);
	for (unsigned i = 0; i < n; i++)
		failed |= point_back(v[i]) != 0;
	free(v);
	if (failed)
		nt_warn("cannot point a CUDA graph exec back at the program's kernels; it keeps running an "
			"instrumented twin's code (slower, same results)");
	return n_pointed && !v ? -1 : failed ? -1 : 0;
}

void nt_san_twins_forget(CUcontext ctx)
{
	struct image *im, *itmp;
	struct twin_fn *fn, *ftmp;
	struct texec *e, *etmp;

	pthread_mutex_lock(&nt_san.lock);
	HASH_ITER(hh, images, im, itmp)
		if (im->ctx == ctx) {
			HASH_DEL(images, im);
			image_bytes -= im->zsize;
			image_free(im);
		}
	HASH_ITER(hh, fns, fn, ftmp)
		if (fn->ctx == ctx) {
			HASH_DEL(fns, fn);
			free(fn);
		}
	HASH_ITER(hh, texecs, e, etmp)
		if (e->ctx == ctx) {
			HASH_DEL(texecs, e);
			e->shadow = NULL;	/* gone with its context: its handle may be the next exec's */
			texec_free(e);
		}
	pthread_mutex_unlock(&nt_san.lock);
	/* not in the context's destroy callback: its clones go at the next
	 * exec call */
}
