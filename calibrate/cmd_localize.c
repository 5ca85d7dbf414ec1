/* nucatrace localize: how well a kernel can tell which SM it runs on
 * from a short L2 latency probe (core/analysis/localize.h, docs/localize.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/calib.h"
#include "commands.h"
#include "util/json.h"
#include "analysis/localize.h"
#include "map_cmds.h"
#include "util/parse.h"
#include "map/store.h"
#include "usage.h"

#include "kernels/localize_eval.h"

static const char usage[] =
	"nucatrace localize --eval [--device N|all] [--store PATH] [--map SPEC] [--lines K]\n"
	"       [--reps R] [--rounds N] [--json]\n"
	"       | --eval --map SPEC --rows SPEC [--lines K] [--json]";

static const char help[] =
	"Evaluate self-localisation: every SM runs one block that calls the probe of\n"
	"include/nucatrace/localize.cuh (it times a few L2 lines and compares them with\n"
	"the map, without reading %%smid) and also records %%smid as the truth.  Prints\n"
	"the accuracy at SM, TPC and group level and the probe's cost in cycles, with\n"
	"the blocks taking turns and with all of them at once.\n"
	"\n"
	"  --eval          the only mode so far\n"
	"  --device N|all  which GPU (default all)\n"
	"  --store PATH    the maps (default: as calibrate); the GPU's latest map is used\n"
	"  --map SPEC      use this map instead (a file, an id, a UUID; see 'map show')\n"
	"  --rows SPEC     no GPU: classify every SM's row of this map's line matrix with\n"
	"                  the table built from --map (another run of the same GPU)\n"
	"  --lines K       lines the probe times, 1..%d (default %d)\n"
	"  --reps R        timed walks per line, the fastest counts (default %d)\n"
	"  --rounds N      launches in each mode (default 5)\n"
	"  --json          machine-readable output on stdout\n";

struct loc_cmd {
	struct nt_loc_opts opts;
	int device;		/* -1: all */
	const char *store_path, *map_spec, *rows_spec;
	int rounds, json;
};

/* What one mode (or the CPU evaluation) saw. */
struct mode_stats {
	const char *name, *key;	/* for people, for JSON */
	struct nt_loc_score score;
	int moved, missing, agree;
	int n;			/* values in the arrays */
	double *probe, *total, *fit;
	struct nt_loc_result *res;	/* each probe's answer and values (JSON "probes") */
	int *truth;			/* its %smid */
};

/* The options into c: 0, or 1 when --help was asked for (and printed). */
static int parse(struct loc_cmd *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "eval", no_argument, NULL, 'e' }, { "device", required_argument, NULL, 'd' },
		{ "store", required_argument, NULL, 'S' }, { "map", required_argument, NULL, 'm' },
		{ "rows", required_argument, NULL, 'r' }, { "lines", required_argument, NULL, 'l' },
		{ "reps", required_argument, NULL, 'R' }, { "rounds", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int o, eval = 0;
	long v;

	memset(c, 0, sizeof(*c));
	nt_loc_defaults(&c->opts);
	c->device = -1;
	c->rounds = 5;
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (o) {
		case 'e': eval = 1; break;
		case 'd':
			if (strcmp(optarg, "all") && nt_parse_int(optarg, 0, 1023, &v))
				usage_error(usage, "--device: '%s' is not a device number or 'all'", optarg);
			c->device = strcmp(optarg, "all") ? (int)v : -1;
			break;
		case 'S': c->store_path = optarg; break;
		case 'm': c->map_spec = optarg; break;
		case 'r': c->rows_spec = optarg; break;
		case 'l':
			if (nt_parse_int(optarg, 1, NT_LOC_MAX_LINES, &v))
				usage_error(usage, "--lines: '%s' is not a number in 1..%d", optarg,
					    NT_LOC_MAX_LINES);
			c->opts.n_lines = (int)v;
			break;
		case 'R':
			if (nt_parse_int(optarg, 1, 64, &v))
				usage_error(usage, "--reps: '%s' is not a number in 1..64", optarg);
			c->opts.reps = (int)v;
			break;
		case 'n':
			if (nt_parse_int(optarg, 1, 1000, &v))
				usage_error(usage, "--rounds: '%s' is not a number in 1..1000", optarg);
			c->rounds = (int)v;
			break;
		case 'j': c->json = 1; break;
		case 'h':
			printf("usage: %s\n\n", usage);
			printf(help, NT_LOC_MAX_LINES, c->opts.n_lines, c->opts.reps);
			return 1;
		default: usage_bad_option(usage, "localize", o, argv);
		}
	}
	if (optind < argc)
		usage_error(usage, "unexpected argument '%s'", argv[optind]);
	if (!eval)
		usage_error(usage, "localize: --eval is the only mode so far (kernels call "
			    "include/nucatrace/localize.cuh)");
	if (c->rows_spec && !c->map_spec)
		usage_error(usage, "--rows needs --map: the map the table is built from");
	return 0;
}

static double pct(int k, int n)
{
	return n ? 100.0 * k / n : NAN;
}

static void stats_free(struct mode_stats *ms)
{
	free(ms->probe);
	free(ms->total);
	free(ms->fit);
	free(ms->res);
	free(ms->truth);
}

static int stats_alloc(struct mode_stats *ms, const char *name, const char *key, int cap)
{
	memset(ms, 0, sizeof(*ms));
	ms->name = name;
	ms->key = key;
	ms->probe = malloc((size_t)cap * sizeof(double));
	ms->total = malloc((size_t)cap * sizeof(double));
	ms->fit = malloc((size_t)cap * sizeof(double));
	ms->res = malloc((size_t)cap * sizeof(*ms->res));
	ms->truth = malloc((size_t)cap * sizeof(int));
	return ms->probe && ms->total && ms->fit && ms->res && ms->truth ? 0 : -1;
}

/* One launch's records into ms: the truth is %smid before the call; a
 * block whose smid changed during the call is left out. */
static int score_launch(const struct nt_loc_table *t, const struct nt_loc_eval_rec *recs, int n_sm,
			struct mode_stats *ms)
{
	for (int b = 0; b < n_sm; b++) {
		const struct nt_loc_eval_rec *r = &recs[b];
		struct nt_loc_result cpu;

		if (r->smid0 == NT_LOC_REC_NONE) {
			ms->missing++;
			continue;
		}
		if (r->smid0 >= (unsigned long long)n_sm)
			return error("a block ran on smid %llu but the device reports %d SMs: "
				     "non-contiguous SM ids are not supported", r->smid0, n_sm);
		if (r->smid1 != r->smid0) {
			ms->moved++;
			continue;
		}
		nt_loc_score_add(&ms->score, t, (int)r->smid0, &r->res);
		nt_loc_classify(t, r->res.x, &cpu);
		ms->agree += cpu.sm == r->res.sm && cpu.tpc == r->res.tpc && cpu.group == r->res.group;
		ms->probe[ms->n] = (double)r->res.probe_cycles;
		ms->total[ms->n] = (double)r->res.total_cycles;
		ms->fit[ms->n] = r->res.fit;
		ms->res[ms->n] = r->res;
		ms->truth[ms->n] = (int)r->smid0;
		ms->n++;
	}
	return 0;
}

static void print_header(const struct nt_map *m, const struct nt_loc_table *t)
{
	char when[32] = "?";
	time_t tt = (time_t)m->created_at;
	struct tm tm;

	if (nt_map_time_ok(m->created_at) && gmtime_r(&tt, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("  map of %s, %s UTC: %d groups\n", m->gpu.uuid, when, t->n_groups);
	printf("  probe: %d lines (", t->n_line);
	for (int k = 0; k < t->n_line; k++)
		printf("%s%d", k ? " " : "", t->line[k]);
	printf("), %d warm loads + %d walk%s of %d loads each\n", t->warm, t->reps,
	       t->reps == 1 ? "" : "s", t->loads);
	printf("  %-18s %-15s %-15s %-15s %5s %6s %8s %8s\n", "", "SM", "TPC", "group", "p_tpc", "fit",
	       "probe", "call");
}

static void print_row(const struct mode_stats *ms)
{
	const struct nt_loc_score *s = &ms->score;
	char a[3][32];
	int k[3] = { s->sm, s->tpc, s->group };

	for (int i = 0; i < 3; i++)
		snprintf(a[i], sizeof(a[i]), "%d/%d %.1f%%", k[i], s->n, pct(k[i], s->n));
	printf("  %-18s %-15s %-15s %-15s %5.3f %6.2f", ms->name, a[0], a[1], a[2],
	       s->n ? (s->conf_right + s->conf_wrong) / s->n : NAN, nt_median(ms->fit, ms->n));
	if (ms->probe)
		printf(" %8.0f %8.0f\n", nt_median(ms->probe, ms->n), nt_median(ms->total, ms->n));
	else
		printf(" %8s %8s\n", "-", "-");
}

static void json_mode(struct nt_json *j, const struct mode_stats *ms, const struct nt_loc_table *t)
{
	const struct nt_loc_score *s = &ms->score;

	nt_json_begin_object(j);
	nt_json_kv_str(j, "mode", ms->key);
	nt_json_kv_int(j, "classified", s->n);
	nt_json_kv_int(j, "sm_right", s->sm);
	nt_json_kv_int(j, "tpc_right", s->tpc);
	nt_json_kv_int(j, "group_right", s->group);
	nt_json_kv_double(j, "sm_accuracy", s->n ? (double)s->sm / s->n : NAN);
	nt_json_kv_double(j, "tpc_accuracy", s->n ? (double)s->tpc / s->n : NAN);
	nt_json_kv_double(j, "group_accuracy", s->n ? (double)s->group / s->n : NAN);
	nt_json_kv_double(j, "mean_p_tpc", s->n ? (s->conf_right + s->conf_wrong) / s->n : NAN);
	nt_json_kv_double(j, "median_fit", nt_median(ms->fit, ms->n));
	nt_json_kv_double(j, "max_fit", s->fit_max);
	if (ms->probe) {
		nt_json_kv_double(j, "probe_cycles_median", nt_median(ms->probe, ms->n));
		nt_json_kv_double(j, "call_cycles_median", nt_median(ms->total, ms->n));
		nt_json_kv_int(j, "cpu_agree", ms->agree);
		nt_json_kv_int(j, "moved", ms->moved);
		nt_json_kv_int(j, "missing", ms->missing);
	}
	if (ms->res) {
		/* every probe: %smid, the answer, its fit, then the cycles per
		 * load measured on each line of the table */
		nt_json_key(j, "probes");
		nt_json_begin_array(j);
		for (int p = 0; p < ms->n; p++) {
			double row[3 + NT_LOC_MAX_LINES];

			row[0] = ms->truth[p];
			row[1] = ms->res[p].sm;
			row[2] = ms->res[p].fit;
			for (int k = 0; k < t->n_line; k++)
				row[3 + k] = ms->res[p].x[k];
			nt_json_double_array(j, row, 3 + t->n_line);
		}
		nt_json_end_array(j);
	}
	nt_json_end_object(j);
}

static void json_table(struct nt_json *j, const struct nt_map *m, const struct nt_loc_table *t)
{
	int64_t lines[NT_LOC_MAX_LINES];

	for (int k = 0; k < t->n_line; k++)
		lines[k] = t->line[k];
	nt_json_kv_str(j, "map_uuid", m->gpu.uuid);
	nt_json_kv_int(j, "map_created_at", m->created_at);
	nt_json_key(j, "lines");
	nt_json_int_array(j, lines, t->n_line);
	nt_json_kv_int(j, "loads", t->loads);
	nt_json_kv_int(j, "reps", t->reps);
	nt_json_kv_int(j, "warm", t->warm);
	nt_json_kv_int(j, "n_groups", t->n_groups);
	/* the map's cycles per load on those lines, per SM: what probes are
	 * compared with */
	nt_json_key(j, "templates");
	nt_json_begin_array(j);
	for (int s = 0; s < t->n_sm; s++) {
		double row[NT_LOC_MAX_LINES];

		for (int k = 0; k < t->n_line; k++)
			row[k] = t->tmpl[s][k];
		nt_json_double_array(j, row, t->n_line);
	}
	nt_json_end_array(j);
}

/* --map A --rows B: no GPU. */
static int eval_rows(const struct loc_cmd *c)
{
	struct nt_map *a = map_load_spec(c->map_spec, c->store_path);
	struct nt_map *b = map_load_spec(c->rows_spec, c->store_path);
	struct nt_loc_result *per = calloc((size_t)b->n_sm, sizeof(*per));
	struct mode_stats ms = { .name = "the --rows map", .key = "rows" };
	struct nt_loc_table *t = malloc(sizeof(*t));
	double fit[NT_MAP_MAX_SM];
	struct nt_err err;
	int ret = -1;

	if (!per || !t)
		die("out of memory");
	if (strcmp(a->gpu.uuid, b->gpu.uuid))
		warning("the maps are of two GPUs (%s, %s): an smid need not be the same place "
			"on both", a->gpu.uuid, b->gpu.uuid);
	if (nt_loc_build(a, &c->opts, t, NULL, &err) ||
	    nt_loc_eval_rows(t, a, b, 0, &ms.score, per, &err)) {
		error("%s", err.msg);
		goto out;
	}
	for (int s = 0; s < b->n_sm; s++)
		if (per[s].tpc >= 0)
			fit[ms.n++] = per[s].fit;
	ms.fit = fit;
	if (c->json) {
		struct nt_json j;

		nt_json_init(&j, stdout, 1);
		nt_json_begin_object(&j);
		json_table(&j, a, t);
		nt_json_kv_str(&j, "rows_uuid", b->gpu.uuid);
		nt_json_key(&j, "modes");
		nt_json_begin_array(&j);
		json_mode(&j, &ms, t);
		nt_json_end_array(&j);
		nt_json_end_object(&j);
		if (nt_json_finish(&j)) {
			error("cannot write the report to stdout");
			goto out;
		}
	} else {
		printf("table from %s, rows of %s (%d SMs; no GPU)\n", c->map_spec, c->rows_spec,
		       b->n_sm);
		print_header(a, t);
		print_row(&ms);
	}
	ret = 0;
out:
	free(t);
	free(per);
	nt_map_free(a);
	nt_map_free(b);
	return ret;
}

/* The latest map of this GPU, or --map; NULL after saying why. */
static struct nt_map *map_for(const struct loc_cmd *c, int d, const struct nt_gpu *g)
{
	struct nt_map *m = NULL;
	struct nt_store *s;
	struct nt_err err;
	int64_t mine = 0, all = 0;

	if (c->map_spec) {
		m = map_load_spec(c->map_spec, c->store_path);
		if (strcmp(m->gpu.uuid, g->uuid))
			warning("device %d: --map is a map of %s, not of this GPU (%s): an smid need "
				"not be the same place on both", d, m->gpu.uuid, g->uuid);
	} else {
		if (nt_store_open_default(c->store_path, 0, &s, &err))
			die("%s", err.msg);
		if (nt_store_count(s, g->uuid, &mine, &err) || nt_store_count(s, NULL, &all, &err))
			die("%s", err.msg);
		if (!mine) {
			error("device %d (%s, %s): the store '%s' holds %lld map(s), none of this GPU: "
			      "run 'nucatrace calibrate --device %d' first", d, g->name, g->uuid, nt_store_path(s),
			      (long long)all, d);
		} else if (nt_store_latest(s, g->uuid, &m, &err)) {
			error("%s", err.msg);
			m = NULL;
		}
		nt_store_close(s);
		if (!m)
			return NULL;
	}
	if (strcmp(m->gpu.name, g->name) || m->n_sm != g->sm_count || m->gpu.cc_major != g->cc_major ||
	    m->gpu.cc_minor != g->cc_minor) {
		error("device %d is a %s with %d SMs (cc %d.%d); the map of %s is of a %s with %d SMs "
		      "(cc %d.%d): another GPU model", d, g->name, g->sm_count, g->cc_major, g->cc_minor,
		      m->gpu.uuid, m->gpu.name, m->n_sm, m->gpu.cc_major, m->gpu.cc_minor);
		nt_map_free(m);
		return NULL;
	}
	return m;
}

static int run_device(const struct loc_cmd *c, struct nt_cuda *cu, int d, const struct nt_gpu *g,
		      struct nt_json *js)
{
	struct nt_map *m = map_for(c, d, g);
	struct nt_loc_table *t = malloc(sizeof(*t));
	struct nt_loc_eval_rec *recs = NULL;
	struct mode_stats ms[2] = { 0 };
	struct nt_loc_gpu *gpu = NULL;
	struct nt_err err;
	int ret = -1;

	if (!m || !t)
		goto out;
	if (nt_loc_build(m, &c->opts, t, NULL, &err)) {
		error("device %d: %s", d, err.msg);
		goto out;
	}
	recs = calloc((size_t)m->n_sm, sizeof(*recs));
	if (!recs || stats_alloc(&ms[0], "blocks take turns", "serial", c->rounds * m->n_sm) ||
	    stats_alloc(&ms[1], "all SMs at once", "concurrent", c->rounds * m->n_sm))
		die("out of memory");
	nt_progress("localize: device %d: warming up, writing the lines", d);
	if (nt_loc_gpu_open(cu, d, m, t, &gpu, &err)) {
		error("device %d: %s", d, err.msg);
		goto out;
	}
	for (int r = 0; r < c->rounds; r++)
		for (int mode = 0; mode < 2; mode++) {
			nt_progress("localize: device %d: round %d of %d", d, r + 1, c->rounds);
			if (nt_loc_gpu_run(gpu, mode == 0, recs, &err)) {
				error("device %d: %s", d, err.msg);
				goto out;
			}
			if (score_launch(t, recs, m->n_sm, &ms[mode]))
				goto out;
		}
	nt_progress_done();
	if (js) {
		nt_json_begin_object(js);
		nt_json_kv_int(js, "device", d);
		nt_json_kv_str(js, "uuid", g->uuid);
		nt_json_kv_str(js, "name", g->name);
		nt_json_kv_int(js, "sm_count", g->sm_count);
		nt_json_kv_double(js, "sm_clock_mhz", nt_loc_gpu_clock_mhz(gpu));
		nt_json_kv_double(js, "probe_bias_cycles", nt_loc_gpu_bias(gpu));
		nt_json_kv_int(js, "rounds", c->rounds);
		json_table(js, m, t);
		nt_json_key(js, "modes");
		nt_json_begin_array(js);
		json_mode(js, &ms[0], t);
		json_mode(js, &ms[1], t);
		nt_json_end_array(js);
		nt_json_end_object(js);
	} else {
		printf("GPU %d  %s  %s\n", d, g->name, g->uuid);
		print_header(m, t);
		print_row(&ms[0]);
		print_row(&ms[1]);
		printf("  probe, call: median clock64 cycles of timing the lines and of the whole call\n");
		printf("  %d rounds of %d blocks in each mode, SM clock %.0f MHz, %d blocks moved, %d "
		       "missing\n", c->rounds, m->n_sm, nt_loc_gpu_clock_mhz(gpu), ms[0].moved + ms[1].moved,
		       ms[0].missing + ms[1].missing);
		printf("  the probe reads %+.2f cycles per load above the map (measured at the start, "
		       "one launch\n  with %%smid known, and added to the table)\n", nt_loc_gpu_bias(gpu));
		printf("  the device's answers equal the CPU classifier's on %d of %d probes\n",
		       ms[0].agree + ms[1].agree, ms[0].n + ms[1].n);
	}
	ret = 0;
out:
	nt_progress_done();
	nt_loc_gpu_close(gpu);
	stats_free(&ms[0]);
	stats_free(&ms[1]);
	free(recs);
	free(t);
	nt_map_free(m);
	return ret;
}

int cmd_localize(int argc, char **argv)
{
	struct loc_cmd c;
	struct nt_cuda cu;
	struct nt_json js;
	struct nt_err err;
	int count, first, last, usable = 0, failed = 0;
	CUresult r;

	if (parse(&c, argc, argv))
		return 0;	/* --help */
	if (c.rows_spec)
		return eval_rows(&c);
	if (nt_cuda_load(&cu, &err))
		die_code(NT_EXIT_NOGPU, "%s", err.msg);
	if ((r = cu.cuDeviceGetCount(&count)) || count == 0)
		die_code(NT_EXIT_NOGPU, "no CUDA GPU visible%s%s", r ? ": " : "",
			 r ? nt_cuda_strerror(&cu, r) : "");
	if (c.device >= count)
		die("--device %d: only %d GPU(s) here", c.device, count);
	first = c.device < 0 ? 0 : c.device;
	last = c.device < 0 ? count - 1 : c.device;
	if (c.json) {
		nt_json_init(&js, stdout, 1);
		nt_json_begin_object(&js);
		nt_json_key(&js, "devices");
		nt_json_begin_array(&js);
	}
	for (int d = first; d <= last; d++) {
		struct nt_gpu g;

		if (nt_gpu_query(&cu, d, &g, &err)) {
			failed |= error("device %d: %s", d, err.msg) != 0;
			continue;
		}
		usable++;
		failed |= run_device(&c, &cu, d, &g, c.json ? &js : NULL) != 0;
	}
	if (c.json) {
		nt_json_end_array(&js);
		nt_json_end_object(&js);
		if (nt_json_finish(&js))
			failed = error("cannot write the report to stdout") != 0;
	}
	nt_cuda_unload(&cu);
	if (!usable)
		return NT_EXIT_NOGPU;
	return failed;
}
