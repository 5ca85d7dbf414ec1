/* nucatrace run: trace an unmodified program (LD_PRELOAD of libnucatrace.so). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/calib.h"
#include "util/parse.h"
#include "usage.h"
#include "util/version.h"
#include "commands.h"
#include "map/store.h"
#include "trace/sampling.h"
#include "trace/trace_name.h"
#include "util/library.h"
#include "util/outfile.h"

static const char usage[] =
	"nucatrace run [--mode blocks|kernels|auto|off] [--blocks mixed|full|entry] [--sample POLICY]\n"
	"       [--output-dir DIR] [--output PATTERN] [--store PATH] [--no-calibrate]\n"
	"       [--buffer-blocks N] [--count-all] [--quiet] [--] PROGRAM [ARGS...]";

static const char help[] =
	"Run PROGRAM with libnucatrace.so preloaded: every traced kernel launch gets,\n"
	"per thread block, the SM that ran it and its start and end times, in one trace\n"
	"file per process (SQLite, docs/trace-format.md).\n"
	"\n"
	"  --mode M           blocks: each block's SM and times (Compute Sanitizer);\n"
	"                     kernels: one record per launch, every launch (CUPTI,\n"
	"                     lowest overhead); auto (default): blocks where the\n"
	"                     sanitizer library is, else kernels; off: run untraced\n"
	"  --blocks B         blocks mode: full patches each block's entry and exit:\n"
	"                     its start and end are measured; entry patches the entry\n"
	"                     alone (about 0.1 us a block against about 5 us for the\n"
	"                     exit): its SM and start are measured, its end inferred\n"
	"                     by the report from its SM's next start (not in a launch\n"
	"                     of one wave); mixed (default): each window= window\n"
	"                     traced entry-only, then as many launches full (a\n"
	"                     policy without window=, such as all: full)\n"
	"  --sample POLICY    blocks mode: which launches to trace, in which windows,\n"
	"                     e.g. all, first=8,every=1000, match=*gemm*, max=100,\n"
	"                     window=1000,skip=1000,blocks=1000000,budget=1 (the\n"
	"                     default: 1,000 launches after the first 1,000, at most\n"
	"                     a million blocks, then more windows in at most 1% of\n"
	"                     the run's time); gpu=S also ends a window once its\n"
	"                     traced launches took S seconds of GPU time; kernels\n"
	"                     mode records every launch\n"
	"  --output-dir DIR   where trace files go (default: the current folder)\n"
	"  --output PATTERN   file name; %h host, %p pid, %r -rank<N>, %t time\n"
	"  --store PATH       the map store (calibration maps are copied into traces)\n"
	"  --no-calibrate     do not measure a quick map of a GPU the store lacks\n"
	"  --buffer-blocks N  block records buffered per CUDA context (default 262144)\n"
	"  --count-all        blocks mode: count every launch (the launch callbacks stay\n"
	"                     on between sampling windows; by default they go off\n"
	"                     while the policy can open no window, saving the program\n"
	"                     their cost, and those launches go uncounted)\n"
	"  --quiet            no summary from the traced program\n"
	"\n"
	"nucatrace run becomes PROGRAM (exec): the exit status, the signals it gets\n"
	"and the process id are PROGRAM's.\n";

static void setenv_or_die(const char *name, const char *value)
{
	if (value && setenv(name, value, 1))
		die("cannot set %s: %s", name, strerror(errno));
}

static void on_progress(const char *stage)
{
	nt_progress("calibrate: %s", stage);
}

/* A quick chain map of every GPU the store has no map of, so the trace
 * can carry one.  Problems here are warnings: tracing goes ahead. */
static void calibrate_missing(const char *store_path)
{
	struct nt_store *store = NULL;
	struct nt_calib_opts o;
	struct nt_cuda cu;
	struct nt_err err;
	int count = 0, lock = -1;

	if (nt_cuda_load(&cu, &err))
		return;
	if (cu.cuDeviceGetCount(&count) || !count)
		goto out;
	if (nt_store_open_default(store_path, 1, &store, &err)) {
		warning("%s; not calibrating", err.msg);
		goto out;
	}
	/* The ranks of a job on this machine, each under its own `nucatrace
	 * run`: one calibrates what is missing, the others wait, then find it. */
	if ((lock = nt_store_lock(store, 1, &err)) < 0) {
		warning("%s; not calibrating", err.msg);
		goto out;
	}
	nt_calib_defaults(&o);
	o.parts = 0;
	o.progress = on_progress;
	for (int d = 0; d < count; d++) {
		struct nt_map *m = NULL;
		struct nt_calib_stats st;
		struct nt_gpu g;
		int64_t id;

		if (nt_gpu_query(&cu, d, &g, &err))
			continue;
		if (!nt_store_latest(store, g.uuid, &m, &err)) {
			nt_map_free(m);
			continue;
		}
		fprintf(stderr, "nucatrace: no map of %s in the store yet: a quick calibration first "
				"(--no-calibrate skips it)\n", g.uuid);
		if (nt_calib_run(&cu, d, &o, &m, &st, &err)) {
			warning("device %d: %s", d, err.msg);
			continue;
		}
		nt_progress_done();
		snprintf(m->command, sizeof(m->command), "nucatrace run (quick calibration)");
		snprintf(m->tool_version, sizeof(m->tool_version), "%s", nt_version);
		gethostname(m->host, sizeof(m->host) - 1);
		if (nt_store_add(store, m, &id, &err))
			warning("%s", err.msg);
		nt_map_free(m);
	}
out:
	nt_store_unlock(lock);
	nt_store_close(store);
	nt_cuda_unload(&cu);
}

static void preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (!old || !*old) {
		setenv_or_die("LD_PRELOAD", lib);
		return;
	}
	if (asprintf(&v, "%s:%s", old, lib) < 0)
		die("out of memory");
	setenv_or_die("LD_PRELOAD", v);
	free(v);
}

/* Become the program: nothing is left to do after it, and a launcher
 * that signals its worker (torchrun's SIGTERM, Slurm's) or waits for its
 * process id then reaches the program itself, not a parent that would
 * die and leave it running. */
static int run_child(char **argv)
{
	execvp(argv[0], argv);
	fprintf(stderr, "nucatrace: cannot run '%s': %s\n", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* The traces' folder: made when missing, and writable, before the
 * program runs (else its traces would be lost at the end). */
static void output_dir_ready(void)
{
	const char *dir = getenv("NUCATRACE_OUTPUT_DIR");
	struct nt_err err;

	if (!dir || !*dir)
		dir = ".";
	if (nt_mkdir_p(dir, 0777, &err))
		die("output folder: %s", err.msg);
	if (access(dir, W_OK | X_OK))
		die("output folder '%s': cannot write there: %s", dir, strerror(errno));
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' }, { "sample", required_argument, NULL, 's' },
		{ "output-dir", required_argument, NULL, 'd' }, { "output", required_argument, NULL, 'o' },
		{ "store", required_argument, NULL, 'S' }, { "no-calibrate", no_argument, NULL, 'n' },
		{ "buffer-blocks", required_argument, NULL, 'b' }, { "quiet", no_argument, NULL, 'q' },
		{ "count-all", no_argument, NULL, 'c' }, { "blocks", required_argument, NULL, 'B' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *mode = "auto", *store = NULL;
	struct nt_sampling *sampling;
	char lib[PATH_MAX], path[PATH_MAX];
	struct nt_err err;
	int calibrate = 1, o;
	long v;

	optind = 1;
	/* '+': stop at the program's name, its options are its own. */
	while ((o = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
		switch (o) {
		case 'm':
			if (strcmp(optarg, "blocks") && strcmp(optarg, "kernels") &&
			    strcmp(optarg, "auto") && strcmp(optarg, "off"))
				usage_error(usage, "--mode: '%s' is not blocks, kernels, auto or off",
					    optarg);
			mode = optarg;
			break;
		case 'B':
			if (strcmp(optarg, "mixed") && strcmp(optarg, "full") && strcmp(optarg, "entry"))
				usage_error(usage, "--blocks: '%s' is not mixed, full or entry", optarg);
			setenv_or_die("NUCATRACE_BLOCKS", optarg);
			break;
		case 's':	/* refused now, not at the first traced launch */
			if (nt_sampling_parse(optarg, &sampling, &err))
				usage_error(usage, "--sample: %s", err.msg);
			nt_sampling_free(sampling);
			setenv_or_die("NUCATRACE_SAMPLE", optarg);
			break;
		case 'd': setenv_or_die("NUCATRACE_OUTPUT_DIR", optarg); break;
		case 'o':
			if (nt_trace_path(path, sizeof(path), ".", optarg, &err))
				usage_error(usage, "--output: %s", err.msg);
			setenv_or_die("NUCATRACE_OUTPUT_PATTERN", optarg);
			break;
		case 'S': store = optarg; setenv_or_die("NUCATRACE_STORE", optarg); break;
		case 'n': calibrate = 0; break;
		case 'q': setenv_or_die("NUCATRACE_QUIET", "1"); break;
		case 'c': setenv_or_die("NUCATRACE_COUNT_ALL", "1"); break;
		case 'b':
			if (nt_parse_int(optarg, 1024, 1L << 26, &v))
				usage_error(usage, "--buffer-blocks: '%s' is not a number in 1024..67108864",
					    optarg);
			setenv_or_die("NUCATRACE_BUFFER_BLOCKS", optarg);
			break;
		case 'h': printf("usage: %s\n\n%s", usage, help); return 0;
		default: usage_error(usage, "unknown option");
		}
	}
	if (optind == argc)
		usage_error(usage, "which program?");
	setenv_or_die("NUCATRACE_MODE", mode);
	if (strcmp(mode, "off"))
		output_dir_ready();
	if (nt_library_path(lib, sizeof(lib), &err))
		die("%s", err.msg);
	if (calibrate && strcmp(mode, "off"))
		calibrate_missing(store);
	if (strcmp(mode, "off"))
		preload(lib);
	fflush(NULL);
	return run_child(argv + optind);
}
