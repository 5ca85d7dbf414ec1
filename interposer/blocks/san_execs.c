/*
 * Graph execs and the modules their kernel nodes run (san.h).  A graph
 * exec keeps running the code its modules had when it was made: on the
 * H200 (session 18, runs 1-2) an exec made while its module was not
 * patched ran into "illegal instruction" once the module was patched,
 * whether its nodes were traced or not, and an exec made while the module
 * was patched, replayed after the module was unpatched and patched again,
 * ran another kernel of the module in its nodes' place (the output
 * changed, no error).  An exec made while its module was patched ran right
 * after the module was unpatched.  So a module that a live exec runs is
 * never patched (san_modules.c asks nt_san_exec_holds); unpatching it is
 * safe.
 *
 * An exec's modules are listed as its instantiation returns (the driver
 * API callback's exit, where the driver holds none of its locks): the
 * graph's kernel nodes, child graphs' too.  A conditional node's bodies
 * cannot be listed (CUDA 13.0 has no getter for them), nor can anything
 * when a query fails: such an exec is opaque and holds every module of
 * its context (of every context, when its context is not known).  So is
 * an exec seen made (the graphs domain's callback, which comes first)
 * whose instantiation call is not one of those listed.  An exec updated
 * in place (cuGraphExecUpdate and the cuGraphExec*SetParams calls) adds
 * the new kernels' modules to its own; none is ever taken away.
 *
 * While another thread is inside such a call (between its entry and exit
 * callbacks) no module is patched.  An exec whose call begins on another
 * thread after a patch was decided and before it is done is the remaining
 * risk; switches wait for 10 ms without other threads first
 * (backend_sanitizer.c).  An exec is forgotten as its destroy call
 * enters the driver, when its last launch may still run (the driver frees
 * it after); a patch of one of its modules then is not known to be safe.
 *
 * Tables under nt_san.lock; the driver is queried without it.
 */
#include "san.h"

#include <stdlib.h>

/* Never exit() the host program on a failed allocation. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "interposer/collector.h"
#include "gpu/cudrv.h"

/* A list of modules, each once, the way the driver query fills it. */
struct mods {
	CUmodule *v;
	int n, cap;
	int unknown;		/* a module could not be known */
};

struct exec {
	CUgraphExec exec;
	CUcontext ctx;
	int opaque;		/* its modules are not all known */
	int listed;		/* ... as far as its instantiation said */
	int counted;		/* ... counted as unlisted (nt_collector_graph_exec) */
	struct mods known;	/* those known */
	UT_hash_handle hh;
};

struct use {
	CUmodule mod;
	unsigned execs;		/* live execs that list it */
	UT_hash_handle hh;
};

const char NT_SAN_HELD[] = "a live CUDA graph exec runs its module (an exec runs the code its modules had "
			  "when it was made: on the H200, patching a module after an exec that runs it was made "
			  "broke the exec); instrumented again once the exec is destroyed";

static struct exec *execs;
static struct use *uses;
static unsigned n_opaque;
/* Calls that make or change an exec under way, in all threads and in
 * this one: while another thread's is, no module is patched (the exec
 * it makes may run any of them). */
static unsigned making;
static _Thread_local unsigned my_making;

/* mod into m: 1 added, 0 already there, -1 out of memory (m->unknown
 * set). */
static int mods_add(struct mods *m, CUmodule mod)
{
	for (int i = 0; i < m->n; i++)
		if (m->v[i] == mod)
			return 0;
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 8;
		CUmodule *v = realloc(m->v, (size_t)cap * sizeof(*v));

		if (!v) {
			m->unknown = 1;
			return -1;
		}
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = mod;
	return 1;
}

/* The module of a kernel given as a function or, when that is NULL, as
 * a library kernel in context kctx (NULL: the current one; a library
 * kernel's function is looked up in the current context only). */
static void add_kernel(struct mods *m, const struct nt_cuda *cu, CUfunction f, CUkernel k, CUcontext kctx)
{
	CUcontext cur = NULL;
	CUmodule mod;

	if (!f && k && (!kctx || (!cu->cuCtxGetCurrent(&cur) && cur == kctx)) && cu->cuKernelGetFunction(&f, k))
		f = NULL;	/* not found */
	if (!f || cu->cuFuncGetModule(&mod, f)) {
		m->unknown = 1;
		return;
	}
	mods_add(m, mod);
}

#define MAX_DEPTH 16	/* child graphs in child graphs */

static int walk(const struct nt_cuda *cu, CUgraph graph, int depth, nt_san_kernel_node_fn fn, void *arg, int *memory)
{
	CUgraphNode *nodes = NULL;
	size_t n = 0;
	int ret = 0;

	if (depth > MAX_DEPTH || cu->cuGraphGetNodes(graph, NULL, &n) ||
	    (n && (!(nodes = malloc(n * sizeof(*nodes))) || cu->cuGraphGetNodes(graph, nodes, &n)))) {
		free(nodes);
		return -1;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		CUgraphNodeType type;
		CUDA_KERNEL_NODE_PARAMS p;
		CUgraph child;

		if (cu->cuGraphNodeGetType(nodes[i], &type))
			ret = -1;
		else if (type == CU_GRAPH_NODE_TYPE_KERNEL)
			ret = cu->cuGraphKernelNodeGetParams(nodes[i], &p) || fn(nodes[i], &p, arg) ? -1 : 0;
		else if (type == CU_GRAPH_NODE_TYPE_GRAPH)
			ret = cu->cuGraphChildGraphNodeGetGraph(nodes[i], &child) ? -1 :
			      walk(cu, child, depth + 1, fn, arg, memory);
		else if (type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
			ret = -1;	/* its bodies cannot be listed */
		else if (memory && (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || type == CU_GRAPH_NODE_TYPE_MEM_FREE))
			*memory = 1;
	}
	free(nodes);
	return ret;
}

int nt_san_graph_kernels(const struct nt_cuda *cu, CUgraph graph, nt_san_kernel_node_fn fn, void *arg, int *memory)
{
	return walk(cu, graph, 0, fn, arg, memory);
}

struct add_arg {
	struct mods *m;
	const struct nt_cuda *cu;
};

static int add_node(CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *p, void *arg)
{
	struct add_arg *a = arg;

	(void)node;
	add_kernel(a->m, a->cu, p->func, p->kern, p->ctx);
	return a->m->unknown;
}

static void add_graph(struct mods *m, const struct nt_cuda *cu, CUgraph graph)
{
	struct add_arg a = { m, cu };

	if (nt_san_graph_kernels(cu, graph, add_node, &a, NULL))
		m->unknown = 1;
}

/* e's record gone from the tables (nt_san.lock held). */
static void drop(struct exec *e)
{
	for (int i = 0; i < e->known.n; i++) {
		struct use *u;

		HASH_FIND_PTR(uses, &e->known.v[i], u);
		if (u && !--u->execs) {
			HASH_DEL(uses, u);
			free(u);
		}
	}
	n_opaque -= e->opaque != 0;
	if (e->opaque && !e->counted)	/* never listed */
		nt_collector_graph_exec(0, 1);
	HASH_DEL(execs, e);
	free(e->known.v);
	free(e);
}

/* m's modules into e (nt_san.lock held); e opaque when one is not known. */
static void merge(struct exec *e, const struct mods *m)
{
	int opaque = m->unknown;

	for (int i = 0; i < m->n && !opaque; i++) {
		int added = mods_add(&e->known, m->v[i]);
		struct use *u = NULL;

		if (added > 0) {
			HASH_FIND_PTR(uses, &m->v[i], u);
			if (!u && (u = calloc(1, sizeof(*u)))) {
				struct use *in;

				u->mod = m->v[i];
				HASH_ADD_PTR(uses, mod, u);
				HASH_FIND_PTR(uses, &m->v[i], in);
				if (!in)	/* the table could not grow */
					free(u), u = NULL;
			}
			if (u)
				u->execs++;
		}
		/* a module listed but not held (drop() skips it): opaque */
		opaque = added < 0 || (added > 0 && !u);
	}
	if (opaque && !e->opaque) {
		e->opaque = 1;
		n_opaque++;
	}
	if (opaque && !e->counted) {
		e->counted = 1;
		nt_collector_graph_exec(0, 1);
	}
}

/* exec's record, made when missing (nt_san.lock held); NULL when out of
 * memory.  A new one is opaque until its modules are listed. */
static struct exec *record(CUgraphExec exec, CUcontext ctx, int fresh)
{
	struct exec *e;

	HASH_FIND_PTR(execs, &exec, e);
	if (e && fresh)	/* its handle reused, with no destroy seen */
		drop(e), e = NULL;
	if (!e && (e = calloc(1, sizeof(*e)))) {
		struct exec *in;

		e->exec = exec;
		e->ctx = ctx;
		e->opaque = 1;
		HASH_ADD_PTR(execs, exec, e);
		HASH_FIND_PTR(execs, &exec, in);
		if (!in) {	/* the table could not grow */
			free(e);
			return NULL;
		}
		n_opaque++;
		nt_collector_graph_exec(1, 0);
	}
	return e;
}

void nt_san_exec_made(CUcontext ctx, CUgraphExec exec)
{
	pthread_mutex_lock(&nt_san.lock);
	record(exec, ctx, 1);
	pthread_mutex_unlock(&nt_san.lock);
}

/* The modules of graph (graph) or of one kernel (f, or k in kctx), to exec;
 * replace: exec was made from graph just now, and these are all of its
 * modules. */
static void learn(CUcontext ctx, CUgraphExec exec, CUgraph graph, CUfunction f, CUkernel k, CUcontext kctx,
		  int replace)
{
	const struct nt_cuda *cu = nt_san_cuda();
	struct mods m = { 0 };
	struct exec *e;

	if (!cu)
		m.unknown = 1;
	else if (graph)
		add_graph(&m, cu, graph);
	else
		add_kernel(&m, cu, f, k, kctx);
	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(execs, &exec, e);
	if (replace && e && e->listed)	/* an older exec's handle */
		drop(e), e = NULL;
	if (!e)
		e = record(exec, ctx, 0);
	if (e && !e->ctx)	/* not known when it was made */
		e->ctx = ctx;
	if (e && replace) {	/* made, not yet listed: all of it now */
		e->opaque = 0;
		e->listed = 1;
		n_opaque--;
	}
	if (e)
		merge(e, &m);
	pthread_mutex_unlock(&nt_san.lock);
	free(m.v);
}

void nt_san_exec_instantiated(CUcontext ctx, CUgraphExec exec, CUgraph graph)
{
	learn(ctx, exec, graph, NULL, NULL, NULL, 1);
}

void nt_san_exec_updated(CUcontext ctx, CUgraphExec exec, CUgraph graph, CUfunction f, CUkernel k,
			 CUcontext kctx)
{
	learn(ctx, exec, graph, f, k, kctx, 0);
}

void nt_san_exec_call(int enter)
{
	pthread_mutex_lock(&nt_san.lock);
	if (enter) {
		making++;
		my_making++;
	} else if (my_making) {
		making--;
		my_making--;
	}
	pthread_mutex_unlock(&nt_san.lock);
}

void nt_san_exec_gone(CUgraphExec exec)
{
	struct exec *e;

	pthread_mutex_lock(&nt_san.lock);
	HASH_FIND_PTR(execs, &exec, e);
	if (e)
		drop(e);
	pthread_mutex_unlock(&nt_san.lock);
}

void nt_san_execs_forget(CUcontext ctx)
{
	struct exec *e, *tmp;

	pthread_mutex_lock(&nt_san.lock);
	HASH_ITER(hh, execs, e, tmp)
		if (e->ctx == ctx)
			drop(e);
	pthread_mutex_unlock(&nt_san.lock);
}

const char *nt_san_exec_holds(CUmodule mod, CUcontext ctx)
{
	struct exec *e, *tmp;
	struct use *u;

	HASH_FIND_PTR(uses, &mod, u);
	if (u)
		return NT_SAN_HELD;
	if (making > my_making)
		return "another thread was making or changing a CUDA graph exec, which may run its module";
	if (n_opaque)
		HASH_ITER(hh, execs, e, tmp)
			if (e->opaque && (e->ctx == ctx || !e->ctx))
				return "a live CUDA graph exec whose kernels could not be listed (a conditional "
				       "node, or a failed driver query) may run its module, and an exec breaks "
				       "when a module it runs is patched after it was made";
	return NULL;
}
