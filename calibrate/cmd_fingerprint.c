/* nucatrace fingerprint: which GPU is this, from its per-SM latency map alone. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/calib.h"
#include "commands.h"
#include "analysis/fingerprint.h"
#include "map_cmds.h"
#include "map/store.h"
#include "usage.h"
#include "util/version.h"

#include <sys/stat.h>

static const char usage[] =
	"nucatrace fingerprint [--device N|all] [--store PATH] [--threshold N] [--output DIR]\n"
	"       | --eval [--threshold N] [--store PATH | MAP...]";

static const char help[] =
	"Measure a quick map (the chain map twice, about a second) of each GPU and find\n"
	"the stored GPUs it matches.  Two levels (core/analysis/fingerprint.h, docs/fingerprint.md):\n"
	"the signature, how many TPCs (SM pairs) differ by more than %.0f cycles once a\n"
	"global offset is removed, tells chips apart whose disabled units differ; the\n"
	"fine distance, noise-scaled differences on every SM, ranks the GPUs that share\n"
	"a signature, and is only meaningful between maps measured the same way.  The\n"
	"GPU's UUID is not used to match; it is printed beside the answer as the truth.\n"
	"\n"
	"  --device N|all   which GPU (default all)\n"
	"  --store PATH     the maps to match against (default: as calibrate)\n"
	"  --threshold N    a stored GPU whose map differs on more than N TPCs is another\n"
	"                   GPU (default %d; GPUs that differ at all differ on 5 or more)\n"
	"  --output DIR     also write each measured quick map to DIR/<uuid>.json (made if\n"
	"                   missing; existing files are refused), for later --eval runs\n"
	"  --eval           no GPU needed: identify each map of the store (or each MAP\n"
	"                   file) against all the others, and print the confusion matrix\n";

struct id_list {
	int64_t *id;
	size_t n, cap;
};

static int on_entry(const struct nt_store_entry *e, void *arg)
{
	struct id_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		int64_t *p = realloc(l->id, cap * sizeof(*p));

		if (!p)
			return -1;
		l->id = p;
		l->cap = cap;
	}
	l->id[l->n++] = e->id;
	return 0;
}

/* Every map in the store; dies with a clear message when there is none. */
static struct nt_map **store_maps(const char *store_path, int *n)
{
	struct id_list ids = { 0 };
	struct nt_store *s;
	struct nt_map **maps;
	struct nt_err err;

	if (nt_store_open_default(store_path, 0, &s, &err))
		die("%s", err.msg);
	if (nt_store_list(s, on_entry, &ids, &err))
		die("%s", err.msg);
	if (!ids.n)
		die("the store '%s' has no maps: calibrate the GPUs you want to recognise first",
		    nt_store_path(s));
	maps = calloc(ids.n, sizeof(*maps));
	if (!maps)
		die("out of memory");
	for (size_t i = 0; i < ids.n; i++)
		if (nt_store_get(s, ids.id[i], &maps[i], &err))
			die("%s", err.msg);
	nt_store_close(s);
	free(ids.id);
	*n = (int)ids.n;
	return maps;
}

static void free_maps(struct nt_map **maps, int n)
{
	for (int i = 0; i < n; i++)
		nt_map_free(maps[i]);
	free(maps);
}

static void on_progress(const char *stage)
{
	nt_progress("fingerprint: %s", stage);
}

/* The quick map as JSON in dir/<uuid>.json, never over an existing file. */
static int write_quick_map(const char *dir, const struct nt_map *m)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s.json", dir, m->gpu.uuid) >= (int)sizeof(path))
		return error("--output: path too long");
	return map_write_new_json(path, m);
}

static int identify(struct nt_cuda *cu, int d, struct nt_map **cands, int n, int threshold,
		    const char *output)
{
	struct nt_calib_opts o;
	struct nt_calib_stats st;
	struct nt_fp_match fm;
	struct nt_map *m;
	struct nt_err err;
	double noise;
	int ret = -1;

	nt_calib_defaults(&o);
	o.parts = NT_MAP_NOISE;
	o.progress = on_progress;
	if (nt_calib_run(cu, d, &o, &m, &st, &err))
		return error("device %d: %s", d, err.msg);
	nt_progress_done();
	snprintf(m->command, sizeof(m->command), "nucatrace fingerprint (quick map)");
	snprintf(m->tool_version, sizeof(m->tool_version), "%s", nt_version);
	if (output && write_quick_map(output, m))
		goto out;
	noise = nt_median(m->noise, m->n_sm);
	if (noise > 1.0) {
		error("device %d: median run-to-run difference %.2f cycles: the GPU is busy with other "
		      "work, no fingerprint", d, noise);
		goto out;
	}
	if (nt_fp_match(m, (const struct nt_map *const *)cands, n, threshold, &fm, &err)) {
		error("device %d: %s", d, err.msg);
		goto out;
	}
	if (fm.skipped == n) {
		error("device %d (%s, %d SMs): the store has no map of a GPU with %d SMs", d,
		      m->gpu.name, m->n_sm, m->n_sm);
		goto out;
	}
	printf("GPU %d  %s, %d SMs, noise median %.3f cycles\n", d, m->gpu.name, m->n_sm, noise);
	if (fm.unknown) {
		printf("  unknown GPU: the nearest stored GPU, %s, differs on %d TPCs (threshold %d)\n",
		       fm.best >= 0 ? cands[fm.best]->gpu.uuid : "-", fm.best_sig, fm.threshold);
	} else if (fm.shared == 1) {
		printf("  identified as %s by its signature (%d TPCs differ; fine distance %.3f)\n",
		       cands[fm.best]->gpu.uuid, fm.best_sig, fm.best_d);
		if (fm.second >= 0)
			printf("  next nearest  %s  differs on %d TPCs\n", cands[fm.second]->gpu.uuid,
			       fm.second_sig);
	} else {
		printf("  signature shared by %d stored GPUs; nearest by the fine distance %s (%.3f)\n",
		       fm.shared, cands[fm.best]->gpu.uuid, fm.best_d);
		printf("  next nearest  %s  (%.3f): the fine distance tells them apart only for maps\n"
		       "  measured the same way (docs/fingerprint.md)\n",
		       fm.second >= 0 ? cands[fm.second]->gpu.uuid : "-", fm.second_d);
	}
	printf("  the device reports %s: %s\n", m->gpu.uuid,
	       fm.unknown ? "not in the store under that UUID?"
	       : !strcmp(cands[fm.best]->gpu.uuid, m->gpu.uuid) ? "correct"
	       : fm.shared > 1 ? "another GPU of the same signature" : "WRONG");
	ret = 0;
out:
	nt_map_free(m);
	return ret;
}

static void range_line(const char *what, double lo, double hi)
{
	if (isnan(lo))
		printf("  %s distance -  (no such pair)\n", what);
	else
		printf("  %s distance %.3f .. %.3f\n", what, lo, hi);
}

static int eval(struct nt_map **maps, int n, int threshold)
{
	struct nt_fp_eval ev;
	struct nt_err err;

	if (nt_fp_eval((const struct nt_map *const *)maps, n, threshold, &ev, &err))
		return error("%s", err.msg);
	printf("%d maps of %d GPUs, each identified against all the others (leave one out)\n", ev.n,
	       ev.n_ids);
	printf("  TPCs differing by more than %.0f cycles: same GPU at most ", NT_FP_SIG_CYCLES);
	printf(ev.same_sig_max < 0 ? "-" : "%d", ev.same_sig_max);
	printf(", different GPUs at least ");
	printf(ev.diff_sig_min < 0 ? "-\n" : "%d\n", ev.diff_sig_min);
	range_line("fine, same GPU:      ", ev.same_min, ev.same_max);
	range_line("fine, different GPUs:", ev.diff_min, ev.diff_max);
	printf("  signature, at most %d TPCs differing: %d of %d maps right (their GPU among the\n"
	       "    matches, or no match for a GPU with no other map); %d matched several GPUs,\n"
	       "    among which the fine distance picked the right one for %d\n", ev.threshold,
	       ev.sig_right, ev.n, ev.in_shared, ev.shared_right);
	printf("  answers: %d correct, %d wrong, %d unknown\n", ev.correct, ev.wrong, ev.unknown);
	printf("  (a map whose GPU has no other map is correct when it comes out unknown)\n\n");
	printf("confusion (rows: true GPU, columns: identified as; ? unknown)\n  %-14s", "");
	for (int j = 0; j < ev.n_ids; j++)
		printf(" %5d", j + 1);
	printf("     ?\n");
	for (int i = 0; i < ev.n_ids; i++) {
		printf("  %2d %.12s", i + 1, ev.ids[i]);
		for (int j = 0; j <= ev.n_ids; j++)
			printf(" %5d", ev.confusion[i * (ev.n_ids + 1) + j]);
		putchar('\n');
	}
	for (int i = 0; i < ev.n_ids; i++)
		printf("  %2d = %s\n", i + 1, ev.ids[i]);
	nt_fp_eval_free(&ev);
	return 0;
}

int cmd_fingerprint(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' }, { "store", required_argument, NULL, 'S' },
		{ "threshold", required_argument, NULL, 't' }, { "eval", no_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *store_path = NULL, *output = NULL;
	int threshold = -1;
	int device = -1, do_eval = 0, o, n, count, failed = 0;
	struct nt_map **maps;
	struct nt_cuda cu;
	struct nt_err err;
	char *end;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			device = strcmp(optarg, "all") ? (int)strtol(optarg, &end, 10) : -1;
			if (strcmp(optarg, "all") && (*end || device < 0))
				usage_error(usage, "--device: '%s' is not a device number or 'all'", optarg);
			break;
		case 'S': store_path = optarg; break;
		case 'e': do_eval = 1; break;
		case 'o': output = optarg; break;
		case 't': {
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 0 || v > INT_MAX)
				usage_error(usage, "--threshold: '%s' is not a count of TPCs", optarg);
			threshold = (int)v;
			break;
		}
		case 'h':
			printf("usage: %s\n\n", usage);
			printf(help, NT_FP_SIG_CYCLES, NT_FP_SIG_MATCH);
			return 0;
		default: usage_bad_option(usage, "fingerprint", o, argv);
		}
	}
	if (optind < argc && !do_eval)
		usage_error(usage, "fingerprint: MAP files go with --eval");
	if (output && do_eval)
		usage_error(usage, "fingerprint: --output goes with a measurement, not --eval");
	if (do_eval) {
		if (optind < argc) {
			n = argc - optind;
			maps = calloc(n, sizeof(*maps));
			if (!maps)
				die("out of memory");
			for (int i = 0; i < n; i++)
				maps[i] = map_load_spec(argv[optind + i], store_path);
		} else {
			maps = store_maps(store_path, &n);
		}
		failed = eval(maps, n, threshold);
		free_maps(maps, n);
		return failed;
	}
	if (output && mkdir(output, 0777) && errno != EEXIST)
		die("cannot create folder '%s' for --output: %s", output, strerror(errno));
	maps = store_maps(store_path, &n);
	if (nt_cuda_load(&cu, &err))
		die_code(NT_EXIT_NOGPU, "%s", err.msg);
	if (cu.cuDeviceGetCount(&count) || !count)
		die_code(NT_EXIT_NOGPU, "no CUDA GPU visible");
	if (device >= count)
		die("--device %d: only %d GPU(s) here", device, count);
	for (int d = device < 0 ? 0 : device; d <= (device < 0 ? count - 1 : device); d++)
		failed |= identify(&cu, d, maps, n, threshold, output) != 0;
	nt_cuda_unload(&cu);
	free_maps(maps, n);
	return failed;
}
