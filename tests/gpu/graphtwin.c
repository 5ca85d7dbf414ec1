/*
 * Which routes let a graph exec made before a sampling window run
 * instrumented code in the window, and the program's exec run right
 * after it (issue 33)?  A standalone program on the Compute Sanitizer's
 * patching API, one route per run (an illegal instruction ends the
 * context):
 *
 *   graphtwin KERNELS.cubin PATCH.fatbin ROUTE
 *
 * The program's module M (bump, tally: tests/gpu/graphtwin_kernels.cu)
 * runs a graph G of three bump nodes through its exec E, made at the
 * start; a reference module R, never patched, runs the same graph on a
 * buffer of its own.  After each batch of launches the buffers must be
 * equal, bit for bit.  Block-exit sites patched with an empty callback
 * (sc_exit_empty of tests/gpu/sitecost_patch.cu) make a launch about ten
 * times slower, so a batch's time says whether it ran patched code.
 *
 * Routes:
 *   plain     E and the reference only (the control)
 *   reinst    three windows: M patched, an exec S made from G while it is,
 *             S launched, M unpatched, S destroyed; E launched after each
 *   twin      a second copy T of the module (the twin) loaded and patched
 *             once; a shadow exec made from a clone of G whose nodes name
 *             T's bump; shadow and E launched in turn, three times
 *   retarget  E's nodes pointed at T's bump with
 *             cuGraphExecKernelNodeSetParams, launched, pointed back,
 *             launched, three times
 *   twin-cycle the twin's shadow exec launched, T unpatched, launched,
 *             T patched again, launched (may T be unpatched between
 *             windows?)
 *   clone-retarget  as retarget, with the node handles of a clone of G
 *             made at instantiation, G itself destroyed (PyTorch destroys
 *             its captured graph once the exec is made)
 *   update    as clone-retarget, through cuGraphExecUpdate with the clone
 *             (its nodes pointed at the twin, then back)
 *   tally     a graph of tally nodes (module-scope __device__ state) run
 *             through a twin: M's variable does not see the twin's
 *             additions, which is why such kernels must not be twinned
 *
 * The Sanitizer's node-launch callbacks count, per batch, the node
 * launches that ran M's, the twin's and the reference's functions: what a
 * tracer would see.
 *
 * Prints one line per batch and "route ROUTE: ok" or "route ROUTE:
 * FAILED" last; exit status 0 only for ok.
 *
 *   gcc -O2 -I$CUDA/include -I$CUDA/compute-sanitizer/include -o graphtwin \
 *       tests/gpu/graphtwin.c -L$CUDA/lib64/stubs -lcuda \
 *       -L$CUDA/compute-sanitizer -lsanitizer-public -Wl,-rpath,$CUDA/compute-sanitizer
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <sanitizer.h>

#define N (1 << 24)
#define THREADS 256
#define BATCH 5

static int failed;

#define CU(x) cu_check((x), #x, __LINE__)
static int cu_check(CUresult r, const char *what, int line)
{
	const char *s = NULL;

	if (r == CUDA_SUCCESS)
		return 0;
	cuGetErrorName(r, &s);
	printf("line %d: %s: %s\n", line, what, s ? s : "?");
	fflush(stdout);
	exit(2);
}

#define SAN(x) san_check((x), #x, __LINE__)
static int san_check(SanitizerResult r, const char *what, int line)
{
	const char *s = NULL;

	if (r == SANITIZER_SUCCESS)
		return 0;
	sanitizerGetResultString(r, &s);
	printf("line %d: %s: %s\n", line, what, s ? s : "?");
	fflush(stdout);
	exit(3);
}

static void *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *p;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(p = malloc((size_t)n + 1)) || fread(p, 1, (size_t)n, f) != (size_t)n) {
		printf("%s: cannot read\n", path);
		exit(2);
	}
	p[n] = 0;
	fclose(f);
	return p;
}

static CUmodule mod_prog, mod_twin;
static int seen_prog, seen_twin, seen_other;

static void on_callback(void *userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
			const void *data)
{
	const Sanitizer_GraphNodeLaunchData *g = data;

	(void)userdata;
	if (domain != SANITIZER_CB_DOMAIN_GRAPHS || cbid != SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN ||
	    g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL || g->isGraphUpload)
		return;
	if (g->launchData.module == mod_prog)
		seen_prog++;
	else if (mod_twin && g->launchData.module == mod_twin)
		seen_twin++;
	else
		seen_other++;
}

static CUstream stream;
static CUdeviceptr y_prog, y_ref;
static float a_val[3] = { 1, 2, 3 };
static int n_val = N;

/* A graph of three bump nodes of function f on y (args kept in node_args). */
static CUgraph make_graph(CUfunction f, CUdeviceptr *y, CUgraphNode nodes[3])
{
	CUgraph g;

	CU(cuGraphCreate(&g, 0));
	for (int k = 0; k < 3; k++) {
		CUDA_KERNEL_NODE_PARAMS p = { 0 };
		void **args = malloc(3 * sizeof(*args));

		args[0] = y;
		args[1] = &a_val[k];
		args[2] = &n_val;
		p.func = f;
		p.gridDimX = N / THREADS;
		p.gridDimY = p.gridDimZ = 1;
		p.blockDimX = THREADS;
		p.blockDimY = p.blockDimZ = 1;
		p.kernelParams = args;
		CU(cuGraphAddKernelNode(&nodes[k], g, k ? &nodes[k - 1] : NULL, k ? 1 : 0, &p));
	}
	return g;
}

/* Launch exec x BATCH times and the reference exec as often; ms per
 * launch of x; then compare the buffers. */
static double batch(const char *what, CUgraphExec x, CUgraphExec ref)
{
	CUevent e0, e1;
	float ms = 0;
	static float *hp, *hr;
	int same;

	if (!hp) {
		hp = malloc(N * sizeof(float));
		hr = malloc(N * sizeof(float));
	}
	CU(cuEventCreate(&e0, 0));
	CU(cuEventCreate(&e1, 0));
	CU(cuEventRecord(e0, stream));
	for (int i = 0; i < BATCH; i++)
		CU(cuGraphLaunch(x, stream));
	CU(cuEventRecord(e1, stream));
	for (int i = 0; i < BATCH; i++)
		CU(cuGraphLaunch(ref, stream));
	CU(cuStreamSynchronize(stream));
	CU(cuEventElapsedTime(&ms, e0, e1));
	CU(cuMemcpyDtoH(hp, y_prog, N * sizeof(float)));
	CU(cuMemcpyDtoH(hr, y_ref, N * sizeof(float)));
	same = !memcmp(hp, hr, N * sizeof(float));
	printf("%-44s %8.3f ms a launch  buffers %s  nodes seen: M %d, twin %d, other %d\n", what, ms / BATCH,
	       same ? "equal" : "DIFFER", seen_prog, seen_twin, seen_other);
	seen_prog = seen_twin = seen_other = 0;
	fflush(stdout);
	failed |= !same;
	cuEventDestroy(e0);
	cuEventDestroy(e1);
	return ms / BATCH;
}

static void patch(CUmodule m)
{
	SAN(sanitizerPatchInstructions(SANITIZER_INSTRUCTION_BLOCK_EXIT, m, "sc_exit_empty"));
	SAN(sanitizerPatchModule(m));
}

/* Every kernel node of graph g pointed at function f. */
static void retarget_graph(CUgraph g, CUfunction f)
{
	CUgraphNode nodes[16];
	size_t n = 16;

	CU(cuGraphGetNodes(g, nodes, &n));
	for (size_t i = 0; i < n; i++) {
		CUDA_KERNEL_NODE_PARAMS p;
		CUgraphNodeType t;

		CU(cuGraphNodeGetType(nodes[i], &t));
		if (t != CU_GRAPH_NODE_TYPE_KERNEL)
			continue;
		CU(cuGraphKernelNodeGetParams(nodes[i], &p));
		p.func = f;
		p.kern = NULL;
		CU(cuGraphKernelNodeSetParams(nodes[i], &p));
	}
}

/* The nodes of exec x (made from g, nodes[], or a clone of it) pointed
 * at function f. */
static void retarget_exec(CUgraphExec x, CUgraphNode nodes[3], CUfunction f)
{
	for (int k = 0; k < 3; k++) {
		CUDA_KERNEL_NODE_PARAMS p;

		CU(cuGraphKernelNodeGetParams(nodes[k], &p));
		p.func = f;
		p.kern = NULL;
		CU(cuGraphExecKernelNodeSetParams(x, nodes[k], &p));
	}
}

/* A clone of g and its nodes matching nodes[]; then g destroyed. */
static CUgraph clone_and_destroy(CUgraph g, CUgraphNode nodes[3], CUgraphNode cnodes[3])
{
	CUgraph c;

	CU(cuGraphClone(&c, g));
	for (int k = 0; k < 3; k++)
		CU(cuGraphNodeFindInClone(&cnodes[k], nodes[k], c));
	CU(cuGraphDestroy(g));
	return c;
}

static void update(CUgraphExec x, CUgraph c)
{
	CUgraphExecUpdateResultInfo info;

	CU(cuGraphExecUpdate(x, c, &info));
}

static int tally_route(CUmodule m, CUmodule twin)
{
	CUfunction fm, ft;
	CUdeviceptr out, var;
	unsigned long long got = 0, var_m = 0;
	size_t sz;
	void *args[1] = { &out };

	CU(cuModuleGetFunction(&fm, m, "tally"));
	CU(cuModuleGetFunction(&ft, twin, "tally"));
	CU(cuMemAlloc(&out, sizeof(got)));
	/* 10 blocks on M, then 10 on the twin: a program's M would hold 20 */
	CU(cuLaunchKernel(fm, 10, 1, 1, 64, 1, 1, 0, stream, args, NULL));
	CU(cuLaunchKernel(ft, 10, 1, 1, 64, 1, 1, 0, stream, args, NULL));
	CU(cuStreamSynchronize(stream));
	CU(cuMemcpyDtoH(&got, out, sizeof(got)));
	CU(cuModuleGetGlobal(&var, &sz, m, "tally_sum"));
	CU(cuMemcpyDtoH(&var_m, var, sizeof(var_m)));
	printf("tally: M's tally_sum %llu after 10 + 10 blocks (the twin's last copy-out %llu): "
	       "%s\n", var_m, got, var_m == 20 ? "shared" : "NOT shared: such a kernel must not be twinned");
	return var_m != 20;	/* the expected finding */
}

int main(int argc, char **argv)
{
	Sanitizer_SubscriberHandle sub;
	CUdevice dev;
	CUcontext ctx;
	CUmodule m, r, twin = NULL;
	CUfunction fm, fr, ft = NULL;
	CUgraph g, gr;
	CUgraphNode nodes[3], rnodes[3];
	CUgraphExec e, er;
	void *cubin, *patches;
	const char *route;
	char uuid_s[64] = "";
	CUuuid uuid;

	if (argc != 4) {
		fprintf(stderr, "usage: graphtwin KERNELS.cubin PATCH.fatbin ROUTE\n");
		return 2;
	}
	route = argv[3];
	cubin = slurp(argv[1]);
	patches = slurp(argv[2]);
	SAN(sanitizerSubscribe(&sub, on_callback, NULL));
	SAN(sanitizerEnableCallback(1, sub, SANITIZER_CB_DOMAIN_GRAPHS, SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN));
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDeviceGetUuid(&uuid, dev));
	for (int i = 0; i < 16; i++)
		sprintf(uuid_s + 2 * i, "%02x", (unsigned char)uuid.bytes[i]);
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	printf("route %s on GPU %s, CUDA_MODULE_LOADING=%s\n", route, uuid_s,
	       getenv("CUDA_MODULE_LOADING") ? getenv("CUDA_MODULE_LOADING") : "(default)");
	CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
	SAN(sanitizerAddPatches(patches, ctx));
	CU(cuModuleLoadData(&m, cubin));
	CU(cuModuleLoadData(&r, cubin));
	mod_prog = m;
	CU(cuModuleGetFunction(&fm, m, "bump"));
	CU(cuModuleGetFunction(&fr, r, "bump"));
	CU(cuMemAlloc(&y_prog, N * sizeof(float)));
	CU(cuMemAlloc(&y_ref, N * sizeof(float)));
	CU(cuMemsetD32(y_prog, 0, N));
	CU(cuMemsetD32(y_ref, 0, N));
	CU(cuCtxSynchronize());
	g = make_graph(fm, &y_prog, nodes);
	gr = make_graph(fr, &y_ref, rnodes);
	CU(cuGraphInstantiate(&e, g, 0));
	CU(cuGraphInstantiate(&er, gr, 0));
	batch("E, before anything", e, er);

	if (strcmp(route, "plain") && strcmp(route, "reinst")) {
		CU(cuModuleLoadData(&twin, cubin));
		mod_twin = twin;
		CU(cuModuleGetFunction(&ft, twin, "bump"));
		patch(twin);
		printf("twin loaded and patched (M untouched)\n");
	}
	if (!strcmp(route, "plain")) {
		for (int w = 0; w < 3; w++)
			batch("E", e, er);
	} else if (!strcmp(route, "reinst")) {
		for (int w = 0; w < 3; w++) {
			CUgraphExec s;

			patch(m);
			CU(cuGraphInstantiate(&s, g, 0));
			batch("S, made while M is patched", s, er);
			SAN(sanitizerUnpatchModule(m));
			batch("S, M unpatched", s, er);
			CU(cuGraphExecDestroy(s));
			batch("E, after the window", e, er);
		}
	} else if (!strcmp(route, "twin")) {
		CUgraph c;
		CUgraphExec sh;

		CU(cuGraphClone(&c, g));
		retarget_graph(c, ft);
		CU(cuGraphInstantiate(&sh, c, 0));
		for (int w = 0; w < 3; w++) {
			batch("shadow exec on the twin", sh, er);
			batch("E", e, er);
		}
	} else if (!strcmp(route, "retarget")) {
		for (int w = 0; w < 3; w++) {
			retarget_exec(e, nodes, ft);
			batch("E pointed at the twin", e, er);
			retarget_exec(e, nodes, fm);
			batch("E pointed back at M", e, er);
		}
	} else if (!strcmp(route, "clone-retarget")) {
		CUgraphNode cnodes[3];

		clone_and_destroy(g, nodes, cnodes);
		batch("E, its graph destroyed", e, er);
		for (int w = 0; w < 3; w++) {
			retarget_exec(e, cnodes, ft);
			batch("E pointed at the twin (clone's nodes)", e, er);
			retarget_exec(e, cnodes, fm);
			batch("E pointed back at M (clone's nodes)", e, er);
		}
	} else if (!strcmp(route, "update")) {
		CUgraphNode cnodes[3];
		CUgraph c = clone_and_destroy(g, nodes, cnodes);

		batch("E, its graph destroyed", e, er);
		for (int w = 0; w < 3; w++) {
			retarget_graph(c, ft);
			update(e, c);
			batch("E updated from the clone on the twin", e, er);
			retarget_graph(c, fm);
			update(e, c);
			batch("E updated from the clone back on M", e, er);
		}
	} else if (!strcmp(route, "twin-cycle")) {
		CUgraph c;
		CUgraphExec sh;

		CU(cuGraphClone(&c, g));
		retarget_graph(c, ft);
		CU(cuGraphInstantiate(&sh, c, 0));
		batch("shadow exec, twin patched", sh, er);
		SAN(sanitizerUnpatchModule(twin));
		batch("shadow exec, twin unpatched", sh, er);
		patch(twin);
		batch("shadow exec, twin patched again", sh, er);
		batch("E", e, er);
	} else if (!strcmp(route, "tally")) {
		tally_route(m, twin);
		batch("E", e, er);
	} else {
		fprintf(stderr, "graphtwin: no route '%s'\n", route);
		return 2;
	}
	CU(cuCtxSynchronize());
	printf("route %s: %s\n", route, failed ? "FAILED" : "ok");
	return failed;
}
