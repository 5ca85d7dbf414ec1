/* nucatrace report: what placement on slow SMs cost the traced kernels. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "format.h"
#include "map/mapspec.h"
#include "util/parse.h"
#include "report/report.h"
#include "map/store.h"
#include "usage.h"

static const char usage[] =
	"nucatrace report [--json] [--launches] [--top N] [--html FILE] [--perfetto FILE]\n"
	"       [--csv DIR] [--map SPEC] [--store PATH] [--shuffle-check N] [--threads N]\n"
	"       [--no-probe-correction] TRACE...";

static const char help[] =
	"Join trace files with the GPUs' calibration maps: per kernel, how block time\n"
	"depends on the SM's L2 latency; per launch, a replay of the block dispatch that\n"
	"must reproduce the measured makespan, and what it says the program lost to slow\n"
	"SMs and could win back with a placement-aware schedule.  Several traces make one\n"
	"report; the ranks of one job are also set side by side, their steps lined up at\n"
	"their collectives: which rank finished its compute last, by how much, and how\n"
	"much of that its slow SMs explain.\n"
	"\n"
	"  --json        machine-readable output (docs/report.md)\n"
	"  --launches    also list every traced launch\n"
	"  --top N       show the N kernels with the most recoverable time (default 20)\n"
	"  --html FILE   also write the report as one self-contained HTML page: the SM\n"
	"                latency heat map, kernels, scatter plots and a block timeline\n"
	"  --perfetto F  also write a Perfetto/Chrome trace to F: a track per SM with a\n"
	"                slice per block, and a kernels track (open in ui.perfetto.dev)\n"
	"  --csv DIR     also write kernels.csv, launches.csv, blocks.csv and steps.csv\n"
	"                (the job view of several ranks) into DIR\n"
	"  --map SPEC    the map to use when a trace carries none: a map file, a\n"
	"                calibration id or a GPU UUID in the store\n"
	"  --store PATH  the map store for traces without a map (default: as calibrate)\n"
	"  --shuffle-check N\n"
	"                also redo every kernel's verdict against N maps with their TPCs\n"
	"                shuffled at random, which carry no physics: how often the verdict\n"
	"                calls a kernel L2-sensitive by chance, on these very traces\n"
	"  --threads N   up to N threads (default: one per CPU): traces read and\n"
	"                fitted side by side, launches replayed side by side (of one\n"
	"                trace too); the report is the same whatever N\n"
	"  --no-probe-correction\n"
	"                fit block times as traced: by default a kernel with native times\n"
	"                has the instrumentation's per-SM cost, whose shape the trace's\n"
	"                kernels that are mostly instrumentation give, taken off first\n";

struct map_source {
	struct nt_map *fixed;	/* --map */
	const char *store_path;
};

/* A trace without a map: --map, else the store's latest map of its GPU. */
static int get_map(const char *uuid, struct nt_map **out, void *arg)
{
	struct map_source *src = arg;
	struct nt_store *s = NULL;
	int ret = -1;

	if (src->fixed) {
		if (strcmp(src->fixed->gpu.uuid, uuid))
			warning("the map given with --map is of %s, the trace's GPU is %s",
				src->fixed->gpu.uuid, uuid);
		*out = nt_map_dup(src->fixed);
		return *out ? 0 : -1;
	}
	if (!nt_store_open_default(src->store_path, 0, &s, NULL))
		ret = nt_store_latest(s, uuid, out, NULL);
	nt_store_close(s);
	return ret;
}

/* fmt into o, committed: 0, or -1 having said why (o is then gone). */
static int write_output(struct nt_outfile *o, const struct nt_format *fmt, const struct nt_report *r,
			const struct nt_format_opts *fo)
{
	struct nt_err err;

	return nt_outfile_finish(o, fmt->write(o->f, r, fo) != 0, &err) ? error("%s", err.msg) : 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "launches", no_argument, NULL, 'l' },
		{ "top", required_argument, NULL, 't' }, { "map", required_argument, NULL, 'm' },
		{ "store", required_argument, NULL, 'S' }, { "help", no_argument, NULL, 'h' },
		{ "perfetto", required_argument, NULL, 'p' }, { "csv", required_argument, NULL, 'c' },
		{ "html", required_argument, NULL, 'H' }, { "shuffle-check", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 'T' }, { "no-probe-correction", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const struct nt_format *fmt = &nt_format_text;
	struct nt_format_opts fo = { .top = 20 };
	struct map_source src = { 0 };
	const char *map_spec = NULL, *perfetto = NULL, *csv = NULL, *html = NULL;
	struct nt_outfile pf = { 0 }, hf = { 0 };
	struct nt_report_csv cf = { 0 };
	struct nt_report *r;
	struct nt_err err;
	long v;
	int o, ret, check = 0, threads = 0, flags = 0;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (o) {
		case 'j': fmt = &nt_format_json; break;
		case 'l': fo.launches = 1; break;
		case 'm': map_spec = optarg; break;
		case 'S': src.store_path = optarg; break;
		case 'p': perfetto = optarg; break;
		case 'c': csv = optarg; break;
		case 'H': html = optarg; break;
		case 'P': flags |= NT_REPORT_NO_PROBE_CORRECTION; break;
		case 'h': printf("usage: %s\n\n%s", usage, help); return 0;
		case 't':
			if (nt_parse_int(optarg, 0, 1000000, &v))
				usage_error(usage, "--top: '%s' is not a number of kernels", optarg);
			fo.top = (int)v;
			break;
		case 'k':
			if (nt_parse_int(optarg, 1, 10000, &v))
				usage_error(usage, "--shuffle-check: '%s' is not a number of maps (1..10000)", optarg);
			check = (int)v;
			break;
		case 'T':
			if (nt_parse_int(optarg, 1, 1024, &v))
				usage_error(usage, "--threads: '%s' is not a number of threads (1..1024)", optarg);
			threads = (int)v;
			break;
		default: usage_bad_option(usage, "report", o, argv);
		}
	}
	if (optind == argc)
		usage_error(usage, "report: which trace files?");
	if (map_spec && nt_map_load_spec(map_spec, src.store_path, &src.fixed, &err))
		die("%s", err.msg);
	/* Output files are opened before any work, so a bad path fails fast;
	 * an existing file is never overwritten, and none is left behind by
	 * a failure (util/outfile.h: dying removes them too). */
	if ((perfetto && nt_outfile_open(&pf, perfetto, &err)) || (html && nt_outfile_open(&hf, html, &err)) ||
	    (csv && nt_report_csv_open(&cf, csv, &err)))
		die("%s", err.msg);
	/* Each launch's replay allocates and frees buffers of its blocks;
	 * glibc gave them back to the kernel each time (trimmed or
	 * unmapped), and the next launch's page faults took 5% of a report
	 * on 10M records (docs/results/2026-12-05-report-heap.md). */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	if (nt_report_build((const char *const *)argv + optind, argc - optind, threads, flags, get_map, &src, &r,
			    &err)) {
		nt_map_free(src.fixed);
		nt_report_csv_abort(&cf);
		die("%s", err.msg);
	}
	if (check && nt_report_shuffle_check(r, check, NT_REPORT_CHECK_SEED, &err)) {
		nt_report_free(r);
		nt_map_free(src.fixed);
		nt_report_csv_abort(&cf);
		die("%s", err.msg);
	}
	ret = fmt->write(stdout, r, &fo) ? error("cannot write the report") : 0;
	if (perfetto)
		ret |= write_output(&pf, &nt_format_perfetto, r, &fo);
	if (html)
		ret |= write_output(&hf, &nt_format_html, r, &fo);
	if (csv && nt_report_csv_write(&cf, r, &err))
		ret = error("%s", err.msg);
	nt_report_free(r);
	nt_map_free(src.fixed);
	return ret;
}
