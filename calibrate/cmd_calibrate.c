/* nucatrace calibrate: measure each GPU's L2 latency map and store it. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/calib.h"
#include "calib_stability.h"
#include "probe_cost.h"
#include "commands.h"
#include "util/json.h"
#include "map_cmds.h"
#include "util/parse.h"
#include "map/store.h"
#include "analysis/summary.h"
#include "usage.h"
#include "util/version.h"

static const char usage[] =
	"nucatrace calibrate [--device N|all] [--store PATH | --no-store] [--output PATH]\n"
	"       [--quick] [--no-noise] [--no-lines] [--no-first-touch] [--lines N]\n"
	"       [--chain-bytes SIZE] [--chain-loads N] [--reps N] [--statistic min|median]\n"
	"       [--no-probe-cost] [--probe-cost-keep DIR] [--force] [--json] [--quiet] | --list\n"
	"       | --stability MINUTES [--device N] [--json] [--output FILE] [--force]";

static const char help[] =
	"Measure each selected GPU's per-SM L2 hit-latency map and keep it in the store.\n"
	"\n"
	"  --device N|all      which GPU (CUDA ordinal), default all\n"
	"  --store PATH        the map store (default $NUCATRACE_STORE, else\n"
	"                      $XDG_DATA_HOME/nucatrace/maps.db)\n"
	"  --no-store          measure and print, keep nothing\n"
	"  --output PATH       also write each map as JSON: to PATH, or to PATH/<uuid>.json\n"
	"                      when PATH ends in '/', is a folder or several GPUs are\n"
	"                      measured (made if missing); existing files are refused\n"
	"  --quick             the chain map only (about a second)\n"
	"  --no-probe-cost     skip the probe cost: what block tracing adds to a block\n"
	"                      on each SM, measured by running calibration kernels\n"
	"                      untraced and under libnucatrace.so (a few seconds)\n"
	"  --probe-cost-keep DIR  make DIR and leave the probe cost's trace, the blocks'\n"
	"                      own body times and the traced run's stderr there\n"
	"  --no-noise          skip the repeated chain map (noise floor)\n"
	"  --no-lines          skip the SM x line matrix\n"
	"  --no-first-touch    skip the first-touch matrices\n"
	"  --lines N           lines in the line and first-touch matrices (default 256)\n"
	"  --chain-bytes SIZE  chain buffer (default 2M)\n"
	"  --chain-loads N     timed loads per chain walk (default 4096)\n"
	"  --reps N            timed repetitions of each chain walk (default 5)\n"
	"  --statistic S       min (default) or median over the repetitions\n"
	"  --force             keep (store, write) the map even when the GPU looked busy\n"
	"  --json              machine-readable output on stdout\n"
	"  --quiet             no progress on stderr\n"
	"  --list              list the GPUs here and exit (exit 2 when none is usable)\n"
	"  --stability MINUTES chain maps idle, under a full-GPU load, idle again, for\n"
	"                      MINUTES (0.5..1440) on one GPU: per-SM drift against the\n"
	"                      noise floor and the SM clock (docs/stability.md); keeps\n"
	"                      nothing in the store; --output FILE: the JSON report\n"
	"\n"
	"A map whose run-to-run noise is far above the usual floor (other work on the\n"
	"GPU) is reported, and neither stored nor written to --output unless --force.\n";

/* Median run-to-run |difference| above which the GPU is taken as busy:
 * an idle H200 repeats within a few hundredths of a cycle. */
#define BUSY_NOISE_CYCLES 1.0

enum {
	OPT_NO_STORE = 256, OPT_QUICK, OPT_NO_NOISE, OPT_NO_LINES, OPT_NO_FT, OPT_LINES,
	OPT_CHAIN_BYTES, OPT_CHAIN_LOADS, OPT_REPS, OPT_STATISTIC, OPT_FORCE, OPT_JSON, OPT_LIST,
	OPT_STABILITY, OPT_NO_PROBE_COST, OPT_PROBE_COST_KEEP, OPT_PROBE_COST_CHILD,
};

static const struct option options[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "store", required_argument, NULL, 's' },
	{ "output", required_argument, NULL, 'o' },
	{ "no-store", no_argument, NULL, OPT_NO_STORE },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "no-noise", no_argument, NULL, OPT_NO_NOISE },
	{ "no-lines", no_argument, NULL, OPT_NO_LINES },
	{ "no-first-touch", no_argument, NULL, OPT_NO_FT },
	{ "lines", required_argument, NULL, OPT_LINES },
	{ "chain-bytes", required_argument, NULL, OPT_CHAIN_BYTES },
	{ "chain-loads", required_argument, NULL, OPT_CHAIN_LOADS },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "statistic", required_argument, NULL, OPT_STATISTIC },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "quiet", no_argument, NULL, 'q' },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "stability", required_argument, NULL, OPT_STABILITY },
	{ "no-probe-cost", no_argument, NULL, OPT_NO_PROBE_COST },
	{ "probe-cost-keep", required_argument, NULL, OPT_PROBE_COST_KEEP },
	/* the probe cost's traced run (probe_cost.h), not for users */
	{ "probe-cost-child", required_argument, NULL, OPT_PROBE_COST_CHILD },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct calib_cmd {
	struct nt_calib_opts opts;
	int device;		/* -1: all */
	const char *store_path;
	int no_store, force, json, list;
	const char *output;
	int out_dir;		/* --output is a folder: one <uuid>.json per GPU */
	double stability;	/* minutes; 0: not asked for */
	int no_probe_cost;
	const char *probe_keep;	/* --probe-cost-keep */
	const char *probe_child;	/* --probe-cost-child: the bodies' file */
	int argc;
	char **argv;
};

static void on_progress(const char *stage)
{
	nt_progress("calibrate: %s", stage);
}

/* The options into c: 0, or 1 when --help was asked for (and printed). */
static int parse(struct calib_cmd *c, int argc, char **argv)
{
	long v;
	long long sz;
	int o;

	nt_calib_defaults(&c->opts);
	c->opts.progress = on_progress;
	c->device = -1;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":d:s:o:qh", options, NULL)) != -1) {
		switch (o) {
		case 'd':
			if (strcmp(optarg, "all") && nt_parse_int(optarg, 0, 1023, &v))
				usage_error(usage, "--device: '%s' is not a device number or 'all'", optarg);
			c->device = strcmp(optarg, "all") ? (int)v : -1;
			break;
		case 's': c->store_path = optarg; break;
		case 'o': c->output = optarg; break;
		case 'q': nt_quiet = 1; break;
		case 'h': printf("usage: %s\n\n%s", usage, help); return 1;
		case OPT_NO_STORE: c->no_store = 1; break;
		case OPT_QUICK: c->opts.parts = 0; c->no_probe_cost = 1; break;
		case OPT_NO_PROBE_COST: c->no_probe_cost = 1; break;
		case OPT_PROBE_COST_KEEP: c->probe_keep = optarg; break;
		case OPT_PROBE_COST_CHILD: c->probe_child = optarg; break;
		case OPT_NO_NOISE: c->opts.parts &= ~NT_MAP_NOISE; break;
		case OPT_NO_LINES: c->opts.parts &= ~NT_MAP_LINES; break;
		case OPT_NO_FT: c->opts.parts &= ~NT_MAP_FIRST_TOUCH; break;
		case OPT_FORCE: c->force = 1; break;
		case OPT_JSON: c->json = 1; break;
		case OPT_LIST: c->list = 1; break;
		case OPT_LINES:
			if (nt_parse_int(optarg, 2, 4096, &v))
				usage_error(usage, "--lines: '%s' is not a number in 2..4096", optarg);
			c->opts.n_lines = (int)v;
			break;
		case OPT_CHAIN_BYTES:
			if (nt_parse_size(optarg, &sz) || sz < 8192 || sz > (1LL << 32) || sz % 128)
				usage_error(usage, "--chain-bytes: '%s' is not a size of 8K..4G in "
					    "whole 128-byte lines", optarg);
			c->opts.chain_bytes = sz;
			break;
		case OPT_CHAIN_LOADS:
			if (nt_parse_int(optarg, 1, 1 << 24, &v))
				usage_error(usage, "--chain-loads: '%s' is not a number in 1..16777216", optarg);
			c->opts.chain_loads = (int)v;
			break;
		case OPT_REPS:
			if (nt_parse_int(optarg, 1, 64, &v))
				usage_error(usage, "--reps: '%s' is not a number in 1..64", optarg);
			c->opts.chain_reps = (int)v;
			break;
		case OPT_STATISTIC:
			if (strcmp(optarg, "min") && strcmp(optarg, "median"))
				usage_error(usage, "--statistic: '%s' is neither min nor median", optarg);
			c->opts.median = !strcmp(optarg, "median");
			break;
		case OPT_STABILITY: {
			char *end;

			c->stability = strtod(optarg, &end);
			if (end == optarg || *end || !(c->stability >= 0.5 && c->stability <= 1440))
				usage_error(usage, "--stability: '%s' is not a number of minutes in "
					    "0.5..1440", optarg);
			break;
		}
		default:
			usage_bad_option(usage, "calibrate", o, argv);
		}
	}
	if (optind < argc)
		usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (c->no_store && c->store_path)
		usage_error(usage, "--store and --no-store exclude each other");
	if (c->probe_keep && c->no_probe_cost)
		usage_error(usage, "--probe-cost-keep: the probe cost is not measured (--quick or "
			    "--no-probe-cost)");
	if (c->probe_child && c->device < 0)
		usage_error(usage, "--probe-cost-child needs --device N");
	if (c->stability && c->store_path)
		usage_error(usage, "--stability keeps no maps in the store: --output FILE has them");
	if (c->stability && !(c->opts.parts & NT_MAP_NOISE))
		usage_error(usage, "--stability needs the noise floor: drop --no-noise or --quick");
	c->argc = argc;
	c->argv = argv;
	return 0;
}

static void command_line(char *buf, size_t len, int argc, char **argv)
{
	size_t n = snprintf(buf, len, "nucatrace");

	for (int i = 0; i < argc && n < len; i++)
		n += snprintf(buf + n, len - n, " %s", argv[i]);
}

static int list_devices(struct nt_cuda *cu, int count)
{
	int usable = 0;

	for (int d = 0; d < count; d++) {
		struct nt_err err;
		struct nt_gpu g;

		if (nt_gpu_query(cu, d, &g, &err)) {
			printf("%d  %s\n", d, err.msg);
			continue;
		}
		printf("%d  %s  %s  %d SMs  cc %d.%d  L2 %.1f MiB\n", d, g.name, g.uuid, g.sm_count,
		       g.cc_major, g.cc_minor, g.l2_bytes / 1048576.0);
		usable++;
	}
	return usable ? 0 : NT_EXIT_NOGPU;
}

/* Where --output puts the map of a GPU: PATH itself, or PATH/<uuid>.json
 * when PATH is a folder (c->out_dir).  0, or -1 when too long. */
static int output_path(const struct calib_cmd *c, const char *uuid, char *buf, size_t len)
{
	size_t n = strlen(c->output);
	int r;

	if (!c->out_dir)
		r = snprintf(buf, len, "%s", c->output);
	else
		r = snprintf(buf, len, "%s%s%s.json", c->output, c->output[n - 1] == '/' ? "" : "/",
			     uuid);
	return r < 0 || (size_t)r >= len ? -1 : 0;
}

/* Settle what --output means and refuse what would fail, before a second
 * of GPU time is spent: PATH is a folder when it ends in '/', is one, or
 * several GPUs are measured (then it is made if missing); a file, or a
 * GPU's file in the folder, must not exist yet. */
static void check_output(struct calib_cmd *c, struct nt_cuda *cu, int first, int last)
{
	size_t n = strlen(c->output);
	char path[4096], *slash;
	struct stat sb;
	int exists = !stat(c->output, &sb);

	if (!n)
		usage_error(usage, "--output: empty path");
	c->out_dir = (exists && S_ISDIR(sb.st_mode)) || c->output[n - 1] == '/' || first != last;
	if (!c->out_dir) {
		if (exists)
			die("--output '%s' exists (nucatrace does not overwrite files)", c->output);
		if (snprintf(path, sizeof(path), "%s", c->output) >= (int)sizeof(path))
			die("--output: path too long");
		slash = strrchr(path, '/');
		if (slash)
			slash[1] = '\0';
		if (access(slash ? path : ".", W_OK | X_OK))
			die("--output '%s': cannot create files in '%s': %s", c->output,
			    slash ? path : ".", strerror(errno));
		return;
	}
	if (exists && !S_ISDIR(sb.st_mode))
		die("--output '%s' is not a folder (measuring several GPUs, --output names a folder)",
		    c->output);
	if (!exists && mkdir(c->output, 0777))
		die("cannot create folder '%s' for --output: %s", c->output, strerror(errno));
	for (int d = first; d <= last; d++) {
		struct nt_err err;
		struct nt_gpu g;

		if (nt_gpu_query(cu, d, &g, &err))
			continue;	/* calibrate_one() says why */
		if (output_path(c, g.uuid, path, sizeof(path)))
			die("--output: path too long");
		if (!stat(path, &sb))
			die("'%s' exists (nucatrace does not overwrite files)", path);
	}
}

static int write_output(const struct calib_cmd *c, const struct nt_map *m)
{
	char path[4096];

	if (output_path(c, m->gpu.uuid, path, sizeof(path)))
		return error("--output: path too long");
	return map_write_new_json(path, m);
}

static int calibrate_one(struct calib_cmd *c, struct nt_cuda *cu, struct nt_store *store, int d,
			 struct nt_json *js)
{
	struct nt_map_report rep = { 0 };
	struct nt_calib_stats st;
	struct nt_map *m = NULL;
	struct nt_err err;
	int64_t id = -1;
	int busy, keep, ret = -1;

	if (nt_calib_run(cu, d, &c->opts, &m, &st, &err)) {
		error("device %d: %s", d, err.msg);
		goto out;
	}
	nt_progress_done();
	if (!c->no_probe_cost)
		calib_probe_cost(cu, d, m, c->probe_keep);
	command_line(m->command, sizeof(m->command), c->argc, c->argv);
	snprintf(m->tool_version, sizeof(m->tool_version), "%s", nt_version);
	gethostname(m->host, sizeof(m->host) - 1);
	busy = m->noise && nt_median(m->noise, m->n_sm) > BUSY_NOISE_CYCLES;
	keep = !busy || c->force;
	if (busy)
		warning("device %d: median run-to-run difference %.2f cycles (an idle GPU repeats "
			"within %.1f): is other work running on it?%s", d, nt_median(m->noise, m->n_sm),
			BUSY_NOISE_CYCLES, keep || (!store && !c->output) ? "" : " Not kept (use --force).");
	if (store && keep && nt_store_add(store, m, &id, &err)) {
		error("%s", err.msg);
		goto out;
	}
	if (c->output && keep && write_output(c, m))
		goto out;
	nt_map_report_build(m, &rep);
	if (js)
		nt_summary_json(js, m, &rep, &st, id);
	else
		nt_summary_text(stdout, m, &rep, &st, id, store ? nt_store_path(store) : NULL);
	ret = busy && !c->force ? -1 : 0;
out:
	nt_map_report_free(&rep);
	nt_map_free(m);
	return ret;
}

int cmd_calibrate(int argc, char **argv)
{
	struct calib_cmd c = { 0 };
	struct nt_store *store = NULL;
	struct nt_cuda cu;
	struct nt_json js;
	struct nt_err err;
	int count, first, last, failed = 0;
	CUresult r;

	if (parse(&c, argc, argv))
		return 0;	/* --help */
	if (nt_cuda_load(&cu, &err))
		die_code(NT_EXIT_NOGPU, "%s", err.msg);
	if ((r = cu.cuDeviceGetCount(&count)) || count == 0)
		die_code(NT_EXIT_NOGPU, "no CUDA GPU visible%s%s", r ? ": " : "",
			 r ? nt_cuda_strerror(&cu, r) : "");
	if (c.list)
		return list_devices(&cu, count);
	if (c.probe_child)
		return calib_probe_cost_child(&cu, c.device, c.probe_child) ? 1 : 0;
	if (c.device >= count)
		die("--device %d: only %d GPU(s) here", c.device, count);
	if (c.stability) {
		char line[512];
		struct stability_cmd s = { c.stability, c.device, c.json, c.force, c.output, line };
		int ret;

		command_line(line, sizeof(line), c.argc, c.argv);
		ret = calibrate_stability(&cu, count, &c.opts, &s);
		nt_cuda_unload(&cu);
		return ret;
	}
	first = c.device < 0 ? 0 : c.device;
	last = c.device < 0 ? count - 1 : c.device;
	if (c.output)
		check_output(&c, &cu, first, last);
	if (c.probe_keep && first != last)
		usage_error(usage, "--probe-cost-keep: one GPU at a time (--device N)");
	if (!c.no_store) {
		if (nt_store_open_default(c.store_path, 1, &store, &err))
			die("%s", err.msg);
	}
	if (c.json) {
		nt_json_init(&js, stdout, 1);
		nt_json_begin_object(&js);
		nt_json_key(&js, "devices");
		nt_json_begin_array(&js);
	}
	for (int d = first; d <= last; d++)
		failed |= calibrate_one(&c, &cu, store, d, c.json ? &js : NULL) != 0;
	if (c.json) {
		nt_json_end_array(&js);
		nt_json_end_object(&js);
		if (nt_json_finish(&js))
			failed = error("cannot write the report to stdout") != 0;
	}
	nt_store_close(store);
	nt_cuda_unload(&cu);
	return failed;
}
