/*
 * A CUDA program on the simulated GPU (fakesanitizer_gpu.c, fakecuda_gpu.c)
 * for CPU tests of the blocks backend: it initialises the fake driver
 * ($NUCATRACE_LIBCUDA, which starts the interposer the way the real driver
 * does), then plays a workload on the fake sanitizer
 * ($NUCATRACE_SANITIZER_LIB) and prints what the simulated GPU ran.
 *
 *   fake_app steps N [MS]  a training-like loop: N steps of 24 launches
 *                       of five kernels in three modules (grids of 1 to
 *                       3000 blocks), on two streams; MS ms apart
 *   fake_app steps-long N  the loop of `steps` with kernel names as long as
 *                       PyTorch's (64 to 1,000 bytes; the training loop's
 *                       median is 149): what a name costs a launch
 *   fake_app graph R [apart]  a graph of three kernel nodes (one function
 *                       twice) replayed R times, with plain launches of
 *                       the same function between replays (apart: of
 *                       triad, whose module the graph does not run)
 *   fake_app graph-replay R [MS]  four plain launches, then the graph of
 *                       `graph` replayed R times, MS ms apart, with no
 *                       plain launch between (a captured training step)
 *   fake_app graph-routed R [MS [streams]]  graph-replay's replays after the first
 *                       through the driver's cuGraphLaunch as the CUDA
 *                       runtime finds it: cuGetProcAddress_v2 looked up
 *                       with dlsym on the driver's handle, cuGetProcAddress
 *                       with it, then cuGraphLaunch with that (the fake driver's
 *                       FAKECUDA_TWINS calls), on stream 1 (streams: 10
 *                       on stream 1, 10 on stream 2, and so on); exits 1
 *                       when one fails
 *   fake_app dlsym      what dlsym answers the program (libnucatrace,
 *                       preloaded, exports one): the object RTLD_NEXT
 *                       finds InitializeInjection in (the first after the
 *                       program: libnucatrace), and those that hold the
 *                       functions found on the driver's handle for
 *                       cuGraphLaunch, cuGetProcAddress_v2 and cuInit
 *   fake_app graph-cycle R [destroy] [failed]  two plain launches of gemm
 *                       (module 1), the graph of `graph` made (its first
 *                       launch), then R rounds of 4 plain launches of gemm
 *                       and 5 replays; with destroy, the exec destroyed and
 *                       4 plain launches more (graph_late.cu's `early`);
 *                       with failed, an instantiation of another exec of
 *                       the graph fails first
 *   fake_app graph-big R  a graph of three kernel nodes of 600 blocks
 *                       each, replayed R times
 *   fake_app graph-update R  a graph exec of three kernel nodes of three
 *                       functions, launched R times, then updated in place
 *                       so that two nodes run one function, R times more
 *   fake_app graph-streams R  the graph of `graph`, launched R times on
 *                       two streams in turn
 *   fake_app graph-execs N [reuse]  N graph execs of three tiny kernel
 *                       nodes (one function twice), each launched once (and
 *                       destroyed, its handle reused by the exec made after
 *                       the next two)
 *   fake_app ctx-cycle N MS  the loop of `steps` for N steps, then its
 *                       context destroyed and made again (the same handle,
 *                       its modules loaded again), N steps more, MS ms of
 *                       rest before the end
 *   fake_app capture N MS  the loop of `steps` for N steps, then 24
 *                       launches on stream 3 captured in global mode (as
 *                       PyTorch captures a CUDA graph) and 6 on stream 1
 *                       not captured, MS ms before
 *                       the capture ends, then N steps more; exits 1 when
 *                       the capture was invalidated (a call of the tracer
 *                       that capture deems unsafe, made meanwhile)
 *   fake_app big N      N launches of 300,000 blocks, more than a first
 *                       record buffer holds
 *   fake_app threads N  8 threads launching N times each, at once, kernels
 *                       of two modules on a stream of their own
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*context_fn)(long);
typedef void (*module_fn)(long, long);
typedef void (*launch_fn)(long, long, long, const char *, unsigned, unsigned, unsigned, long);
typedef void (*graph_fn)(long, long, int, const long *, const long *, const char *const *, const unsigned *,
			 const unsigned *, long);

static launch_fn launch;
static long per_thread;
static const char *names[] = { "_Z4gemmPfS_", "_Z4fillPfi", "_Z7softmaxPf", "_Z5triadPfS_S_",
			       "_Z6reduceIfEvPT_" };

/* names[] as long as PyTorch's mangled names: each the same to the end,
 * where its short name ends it (a name's hash and comparison read all of
 * it). */
static void long_names(void)
{
	static const size_t len[] = { 64, 149, 219, 461, 1000 };
	static const char filler[] = "N2at6native29vectorized_elementwise_kernelILi4EN3c108BFloat16E";

	for (int k = 0; k < 5; k++) {
		size_t n = strlen(names[k]);
		char *p = malloc(len[k] + 1);

		if (!p)
			exit(99);
		for (size_t i = 0; i < len[k] - n; i++)
			p[i] = filler[i % (sizeof(filler) - 1)];
		memcpy(p + len[k] - n, names[k], n + 1);
		names[k] = p;
	}
}

static void *launcher(void *arg)
{
	long t = (long)arg;

	for (long i = 0; i < per_thread; i++)
		launch(1, 1 + (i + t) % 2, 1 + (i + t) % 2, (i + t) % 2 ? "_Z4fillPfi" : "_Z4gemmPfS_",
		       64 + (unsigned)t, 128, 0, 10 + t);
	return NULL;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "fake_app: no %s in the fake sanitizer\n", name);
		exit(99);
	}
	return p;
}

static void pause_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, ms % 1000 * 1000000L }, NULL);
}

/* n steps of the training-like loop, ms ms apart */
static void steps(long n, long ms)
{
	/* kernel k: module, function, grid, block */
	static const unsigned grids[] = { 264, 1, 64, 3000, 2 }, blocks[] = { 128, 32, 256, 256, 1024 };
	static const long mods[] = { 1, 1, 2, 3, 2 };
	static const int pattern[24] = { 1, 0, 2, 0, 2, 4, 1, 0, 2, 3, 1, 0, 2, 0, 2, 4, 1, 0, 2, 3, 4, 1, 3, 0 };

	for (long s = 0; s < n; s++) {
		for (int i = 0; i < 24; i++) {
			int k = pattern[i];

			launch(1, mods[k], k + 1, names[k], grids[k], blocks[k], k == 2 ? 4096 : 0, 1 + i % 2);
		}
		if (ms)
			pause_ms(ms);
	}
}

/* The file name of the object that holds p, or "none" */
static const char *holder(void *p)
{
	Dl_info info;
	const char *slash;

	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "none";
	slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

int main(int argc, char **argv)
{
	const char *cuda = getenv("NUCATRACE_LIBCUDA"), *san = getenv("NUCATRACE_SANITIZER_LIB");
	void *hc = cuda ? dlopen(cuda, RTLD_NOW) : NULL, *hs;
	int (*init)(unsigned) = hc ? (int (*)(unsigned))dlsym(hc, "cuInit") : NULL;
	long n = argc > 2 ? atol(argv[2]) : 10;
	context_fn context;
	module_fn module;
	graph_fn graph;

	if (!init || init(0)) {
		fprintf(stderr, "fake_app: cannot initialise the fake driver '%s'\n", cuda ? cuda : "(unset)");
		return 99;
	}
	/* the same library the interposer loaded */
	if (!san || !(hs = dlopen(san, RTLD_NOW))) {
		fprintf(stderr, "fake_app: cannot load the fake sanitizer '%s'\n", san ? san : "(unset)");
		return 99;
	}
	if (argc > 1 && !strcmp(argv[1], "dlsym")) {
		static const char *const names_[] = { "cuGraphLaunch", "cuGetProcAddress_v2", "cuInit" };

		printf("RTLD_NEXT InitializeInjection: %s\n", holder(dlsym(RTLD_NEXT, "InitializeInjection")));
		int (*exported)(void *, void *) = (int (*)(void *, void *))dlsym(RTLD_DEFAULT, "cuGraphLaunch");

		for (int i = 0; i < 3; i++)
			printf("driver handle %s: %s\n", names_[i], holder(dlsym(hc, names_[i])));
		/* the driver is loaded RTLD_LOCAL: a name in the global scope is
		 * libnucatrace's, which must still reach the driver */
		printf("global cuGraphLaunch: %s", holder((void *)exported));
		if (exported)
			printf(", of an exec never made: %d", exported((void *)4000, NULL));
		printf("\n");
		return 0;
	}
	context = (context_fn)sym(hs, "fakegpu_context");
	module = (module_fn)sym(hs, "fakegpu_module");
	launch = (launch_fn)sym(hs, "fakegpu_launch");
	graph = (graph_fn)sym(hs, "fakegpu_graph");
	context(1);
	for (long m = 1; m <= 3; m++)
		module(1, m);
	if (argc > 1 && !strcmp(argv[1], "steps")) {
		steps(n, argc > 3 ? atol(argv[3]) : 0);
	} else if (argc > 1 && !strcmp(argv[1], "steps-long")) {
		long_names();
		steps(n, 0);
	} else if (argc > 1 && !strcmp(argv[1], "ctx-cycle")) {
		void (*destroy)(long) = (void (*)(long))sym(hs, "fakegpu_context_destroy");
		void (*destroyed)(void) = (void (*)(void))dlsym(hc, "fakecuda_context_destroyed");

		steps(n, 0);
		destroy(1);
		if (destroyed)
			destroyed();
		context(1);
		for (long m = 1; m <= 3; m++)
			module(1, m);
		steps(n, 0);
		if (argc > 3)
			pause_ms(atol(argv[3]));
	} else if (argc > 1 && !strcmp(argv[1], "capture")) {
		void (*begin)(long) = (void (*)(long))dlsym(hc, "fakecuda_capture_begin");
		int (*end)(void) = (int (*)(void))dlsym(hc, "fakecuda_capture_end");

		if (!begin || !end) {
			fprintf(stderr, "fake_app: the fake driver cannot capture\n");
			return 99;
		}
		steps(n, 0);
		begin(3);
		for (int i = 0; i < 24; i++) {
			launch(1, 1, 2, names[1], 1, 32, 0, 3);
			if (i % 4 == 0)	/* meanwhile, on a stream not captured */
				launch(1, 2, 3, names[2], 64, 256, 4096, 1);
		}
		pause_ms(argc > 3 ? atol(argv[3]) : 0);
		if (end()) {
			printf("capture invalidated\n");
			return 1;
		}
		printf("capture ended\n");
		steps(n, 0);
	} else if (argc > 1 && !strcmp(argv[1], "graph")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };

		int apart = argc > 3 && !strcmp(argv[3], "apart");

		for (long r = 0; r < n; r++) {
			graph(1, 7, 3, mods, funcs, nn, grids, blocks, 1);
			if (apart)
				launch(1, 3, 4, names[3], 100, 128, 0, 2);
			else
				launch(1, 1, 1, names[0], 100, 128, 0, 2);
		}
	} else if (argc > 1 && !strcmp(argv[1], "graph-cycle")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };

		if (argc > 4 && !strcmp(argv[4], "failed"))
			((void (*)(long, int, const long *, const long *))sym(hs, "fakegpu_failed_instantiate"))(
				8, 3, mods, funcs);
		for (int i = 0; i < 2; i++)
			launch(1, 1, 1, names[0], 100, 128, 0, 1);
		for (long r = 0; r < n; r++) {
			for (int i = 0; i < 4; i++)
				launch(1, 1, 1, names[0], 100, 128, 0, 1);
			for (int i = 0; i < 5; i++)
				graph(1, 7, 3, mods, funcs, nn, grids, blocks, 1);
		}
		if (argc > 3 && !strcmp(argv[3], "destroy")) {
			((void (*)(long))sym(hs, "fakegpu_graph_destroy"))(7);
			for (int i = 0; i < 4; i++)
				launch(1, 1, 1, names[0], 100, 128, 0, 1);
		}
	} else if (argc > 1 && !strcmp(argv[1], "graph-big")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 2, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4fillPfi", "_Z7softmaxPf" };
		static const unsigned grids[] = { 600, 600, 600 }, blocks[] = { 128, 128, 256 };

		for (long r = 0; r < n; r++)
			graph(1, 7, 3, mods, funcs, nn, grids, blocks, 1);
	} else if (argc > 1 && !strcmp(argv[1], "graph-replay")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };

		for (int i = 0; i < 4; i++)	/* the warm-up, as PyTorch's before a capture */
			launch(1, 1, 1, names[0], 100, 128, 0, 1);
		for (long r = 0; r < n; r++) {
			graph(1, 7, 3, mods, funcs, nn, grids, blocks, 1);
			pause_ms(argc > 3 ? atol(argv[3]) : 0);
		}
	} else if (argc > 1 && !strcmp(argv[1], "graph-routed")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };
		typedef int (*lookup_fn)(const char *, void **, int, unsigned long long, int *);
		lookup_fn lookup = (lookup_fn)dlsym(hc, "cuGetProcAddress_v2");
		int (*graph_launch)(void *, void *) = NULL;
		int status;

		/* the lookup looked up with itself, then the launch with that */
		if (!lookup || lookup("cuGetProcAddress", (void **)&lookup, 12000, 0, &status) || !lookup ||
		    lookup("cuGraphLaunch", (void **)&graph_launch, 12000, 0, &status) || !graph_launch) {
			fprintf(stderr, "fake_app: the fake driver has no cuGraphLaunch to look up\n");
			return 99;
		}
		for (int i = 0; i < 4; i++)	/* the warm-up, as PyTorch's before a capture */
			launch(1, 1, 1, names[0], 100, 128, 0, 1);
		graph(1, 7, 3, mods, funcs, nn, grids, blocks, 1);	/* made, and its first replay */
		for (long r = 1; r < n; r++) {
			/* streams: 10 replays on stream 1, then 10 on stream 2, ... */
			long stream = argc > 4 && !strcmp(argv[4], "streams") ? 1 + (r / 10) % 2 : 1;

			if (graph_launch((void *)7, (void *)stream)) {
				fprintf(stderr, "fake_app: replay %ld failed\n", r);
				return 1;
			}
			pause_ms(argc > 3 ? atol(argv[3]) : 0);
		}
	} else if (argc > 1 && !strcmp(argv[1], "graph-streams")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };

		for (long r = 0; r < n; r++)
			graph(1, 9, 3, mods, funcs, nn, grids, blocks, 1 + r % 2);
	} else if (argc > 1 && !strcmp(argv[1], "graph-execs")) {
		static const long mods[] = { 1, 1, 2 }, funcs[] = { 1, 1, 3 };
		static const char *const nn[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 2, 1, 1 }, blocks[] = { 32, 32, 32 };

		int reuse = argc > 3 && !strcmp(argv[3], "reuse");
		void (*destroy)(long) = (void (*)(long))sym(hs, "fakegpu_graph_destroy");

		for (long e = 0; e < n && e < 4000; e++) {
			graph(1, reuse ? 10 + e % 3 : 10 + e, 3, mods, funcs, nn, grids, blocks, 1);
			if (reuse)
				destroy(10 + e % 3);
		}
	} else if (argc > 1 && !strcmp(argv[1], "graph-update")) {
		static const long mods[] = { 1, 1, 2 }, before[] = { 1, 2, 3 }, after[] = { 1, 1, 3 };
		static const char *const nb[] = { "_Z4gemmPfS_", "_Z4fillPfi", "_Z7softmaxPf" };
		static const char *const na[] = { "_Z4gemmPfS_", "_Z4gemmPfS_", "_Z7softmaxPf" };
		static const unsigned grids[] = { 264, 132, 64 }, blocks[] = { 128, 128, 256 };

		for (long r = 0; r < 2 * n; r++)
			graph(1, 8, 3, mods, r < n ? before : after, r < n ? nb : na, grids, blocks, 1);
	} else if (argc > 1 && !strcmp(argv[1], "threads")) {
		pthread_t th[8];

		per_thread = n;
		for (long t = 0; t < 8; t++)
			pthread_create(&th[t], NULL, launcher, (void *)t);
		for (int t = 0; t < 8; t++)
			pthread_join(th[t], NULL);
	} else if (argc > 1 && !strcmp(argv[1], "big")) {
		for (long i = 0; i < n; i++)
			launch(1, 3, 4, names[3], 300000, 256, 0, 1);
	} else {
		fprintf(stderr, "usage: fake_app steps|steps-long|ctx-cycle|capture|graph|graph-replay|graph-routed|graph-cycle|graph-big|graph-streams|graph-execs|graph-update|big|threads N\n");
		return 2;
	}
	((void (*)(void))sym(hs, "fakegpu_stats"))();
	return 0;
}
