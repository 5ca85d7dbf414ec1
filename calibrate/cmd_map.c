/* nucatrace map: look at, compare and share stored maps. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "map/heatmap.h"
#include "util/json.h"
#include "util/outfile.h"
#include "util/text.h"
#include "map_cmds.h"
#include "map/mapio.h"
#include "map/mapspec.h"
#include "map/store.h"
#include "analysis/summary.h"
#include "usage.h"

static const char usage[] =
	"nucatrace map [--store PATH] <list|show|fit|diff|export|import> [args]\n"
	"   list                        calibrations in the store\n"
	"   show [SPEC] [--json] [--color] [--svg FILE] [--matrix-svg FILE]\n"
	"   fit [SPEC] [--part lines|first|repeat] [--groups R] [--json]\n"
	"   diff SPEC SPEC [--json]\n"
	"   export [SPEC] [--format json|csv] [--output FILE]\n"
	"   import [--force] FILE...\n"
	"'nucatrace map <subcommand> --help' shows one; --store also goes after it.";

static const char spec_help[] =
	"SPEC: a map file (a path with '/' or ending in .json or .csv), a calibration id,\n"
	"a GPU UUID or its unique start such as GPU-af5e0b1a (that GPU's latest map),\n"
	"or 'latest' (the newest map; the default).\n";

static const char usage_list[] = "nucatrace map list [--store PATH]";
static const char usage_show[] =
	"nucatrace map show [SPEC] [--json] [--color] [--svg FILE] [--matrix-svg FILE] [--store PATH]";
static const char usage_export[] =
	"nucatrace map export [SPEC] [--format json|csv] [--output FILE] [--store PATH]";
static const char usage_import[] = "nucatrace map import [--force] [--store PATH] FILE...";

int map_common_option(int o, const char *sub_usage, const char *cmd, char **argv,
		      const char **store_path)
{
	switch (o) {
	case 'h':
		printf("usage: %s\n%s%s", sub_usage, strstr(sub_usage, "SPEC") ? "\n" : "",
		       strstr(sub_usage, "SPEC") ? spec_help : "");
		return 1;
	case 'S':
		*store_path = optarg;
		return 0;
	default:
		usage_bad_option(sub_usage, cmd, o, argv);
	}
}

static struct nt_store *open_store(const char *path, int create)
{
	struct nt_store *s;
	struct nt_err err;

	if (nt_store_open_default(path, create, &s, &err))
		die("%s", err.msg);
	return s;
}

struct nt_map *map_load_spec(const char *spec, const char *store_path)
{
	struct nt_map *m;
	struct nt_err err;

	if (nt_map_load_spec(spec, store_path, &m, &err))
		die("%s", err.msg);
	return m;
}

/* t as "2025-11-30 00:10:00", or "?" when it is no time gmtime can show
 * (a store row edited behind nucatrace's back). */
static const char *utc_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!nt_map_time_ok(t) || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

static int print_entry(const struct nt_store_entry *e, void *arg)
{
	char when[32], uuid[NT_TEXT_ROOM(NT_UUID_LEN)], name[NT_TEXT_ROOM(96)];

	(void)arg;
	utc_time(e->created_at, when, sizeof(when));
	printf("%5lld  %-19s  %-40s  %-12s  %3d SMs  %s%s%s%s%s\n", (long long)e->id, when,
	       nt_text_safe(uuid, sizeof(uuid), e->uuid, 0), nt_text_safe(name, sizeof(name), e->name, 0),
	       e->sm_count, "chain", e->parts & NT_MAP_NOISE ? ",noise" : "",
	       e->parts & NT_MAP_LINES ? ",lines" : "", e->parts & NT_MAP_FIRST_TOUCH ? ",first-touch" : "",
	       e->parts & NT_MAP_PROBE ? ",probe-cost" : "");
	return 0;
}

static int map_list(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = { MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 } };
	struct nt_store *s;
	struct nt_err err;
	int o, r;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		if (map_common_option(o, usage_list, "map list", argv, &store_path))
			return 0;
	if (optind < argc)
		usage_error(usage_list, "map list takes no arguments");
	s = open_store(store_path, 0);
	printf("%5s  %-19s  %-40s  %-12s  %7s  %s\n", "id", "measured (UTC)", "GPU", "name", "SMs",
	       "parts");
	r = nt_store_list(s, print_entry, NULL, &err);
	nt_store_close(s);
	return r ? error("%s", err.msg) : 0;
}

static int write_json(FILE *f, const void *m)
{
	return nt_map_write_json(f, m, 1);
}

int map_write_new_json(const char *path, const struct nt_map *m)
{
	struct nt_err err;

	return nt_outfile_write(path, write_json, m, &err) ? error("%s", err.msg) : 0;
}

/* path opened with nt_outfile_open(), or die saying why. */
static void create_file(struct nt_outfile *o, const char *path)
{
	struct nt_err err;

	if (nt_outfile_open(o, path, &err))
		die("%s", err.msg);
}

/* Commit o after its writer returned ret: 0, or -1 having said why (the
 * file is then not there). */
static int close_file(struct nt_outfile *o, int ret)
{
	struct nt_err err;

	return nt_outfile_finish(o, ret != 0, &err) ? error("%s", err.msg) : 0;
}

static void provenance(const struct nt_map *m)
{
	char when[32], host[NT_TEXT_ROOM(64)], version[NT_TEXT_ROOM(24)], command[NT_TEXT_ROOM(256)];

	utc_time(m->created_at, when, sizeof(when));
	printf("  measured %s UTC on %s by nucatrace %s\n", when,
	       m->host[0] ? nt_text_safe(host, sizeof(host), m->host, 0) : "?",
	       m->tool_version[0] ? nt_text_safe(version, sizeof(version), m->tool_version, 0) : "?");
	if (m->command[0])
		printf("  command: %s\n", nt_text_safe(command, sizeof(command), m->command, 0));
}

static int map_show(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "color", no_argument, NULL, 'c' },
		{ "svg", required_argument, NULL, 's' }, { "matrix-svg", required_argument, NULL, 'm' },
		MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 },
	};
	const char *svg = NULL, *msvg = NULL;
	struct nt_outfile svg_f = { 0 }, msvg_f = { 0 };
	struct nt_map_report rep;
	int json = 0, color = 0, o, ret = 0;
	struct nt_map *m;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json = 1; break;
		case 'c': color = 1; break;
		case 's': svg = optarg; break;
		case 'm': msvg = optarg; break;
		default:
			if (map_common_option(o, usage_show, "map show", argv, &store_path))
				return 0;
		}
	}
	if (argc - optind > 1)
		usage_error(usage_show, "map show takes one SPEC");
	m = map_load_spec(optind < argc ? argv[optind] : NULL, store_path);
	/* refuse what cannot be written before printing anything */
	if (msvg && !m->line_lat)
		die("--matrix-svg: this map has no line matrix (calibrated with --no-lines?)");
	if (svg)
		create_file(&svg_f, svg);
	if (msvg)
		create_file(&msvg_f, msvg);	/* dying removes svg_f's temporary */
	nt_map_report_build(m, &rep);
	if (json) {
		struct nt_json j;

		nt_json_init(&j, stdout, 1);
		nt_summary_json(&j, m, &rep, NULL, -1);
		if (nt_json_finish(&j))
			ret = error("cannot write the report to stdout");
	} else {
		nt_summary_text(stdout, m, &rep, NULL, -1, NULL);
		provenance(m);
		printf("\nL2 hit latency per SM (chain map, cycles):\n");
		nt_heatmap_term(stdout, m->chain, m->n_sm, 16, color, "cycles");
	}
	if (svg) {
		char title[256];

		snprintf(title, sizeof(title), "%s %s: L2 hit latency per SM", m->gpu.name, m->gpu.uuid);
		ret |= close_file(&svg_f, nt_heatmap_svg(svg_f.f, m->chain, m->n_sm, 16, title, "cycles"));
	}
	if (msvg) {
		char title[256];

		snprintf(title, sizeof(title), "%s %s: SM x line L2 latency", m->gpu.name, m->gpu.uuid);
		ret |= close_file(&msvg_f, nt_heatmap_svg_matrix(msvg_f.f, m->line_lat, m->n_sm, m->n_line,
								 title, "cycles"));
	}
	nt_map_report_free(&rep);
	nt_map_free(m);
	return ret ? -1 : 0;
}

static int map_export(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' }, { "output", required_argument, NULL, 'o' },
		MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 },
	};
	const char *format = "json", *out = NULL;
	struct nt_outfile of = { 0 };
	struct nt_map *m;
	FILE *f = stdout;
	int o, ret;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":o:", opts, NULL)) != -1) {
		switch (o) {
		case 'f': format = optarg; break;
		case 'o': out = optarg; break;
		default:
			if (map_common_option(o, usage_export, "map export", argv, &store_path))
				return 0;
		}
	}
	if (strcmp(format, "json") && strcmp(format, "csv"))
		usage_error(usage_export, "--format: '%s' is neither json nor csv", format);
	if (argc - optind > 1)
		usage_error(usage_export, "map export takes one SPEC");
	m = map_load_spec(optind < argc ? argv[optind] : NULL, store_path);
	if (out) {
		create_file(&of, out);
		f = of.f;
	}
	ret = strcmp(format, "csv") ? nt_map_write_json(f, m, 1) : nt_map_write_csv(f, m);
	nt_map_free(m);
	if (out)
		return close_file(&of, ret);
	if (ret || fflush(stdout))
		return error("cannot write the map to 'stdout'");
	return 0;
}

/* Read the map in a FILE, JSON or CSV; NULL after saying why. */
static struct nt_map *read_file(const char *path)
{
	struct nt_map *m = NULL;
	struct nt_err err;

	if (nt_map_read_file(path, &m, &err)) {
		error("%s", err.msg);
		return NULL;
	}
	return m;
}

/* Every FILE is read before the store is opened, so that a command whose
 * files are all bad leaves no new store behind. */
static int map_import(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' }, MAP_COMMON_OPTIONS, { NULL, 0, NULL, 0 },
	};
	struct nt_map **maps;
	struct nt_store *s;
	struct nt_err err;
	int o, n, force = 0, got = 0, ret = 0;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (o == 'f')
			force = 1;
		else if (map_common_option(o, usage_import, "map import", argv, &store_path))
			return 0;
	}
	n = argc - optind;
	if (n < 1)
		usage_error(usage_import, "map import needs at least one FILE");
	if (!(maps = calloc(n, sizeof(*maps))))
		die("out of memory");
	for (int i = 0; i < n; i++) {
		maps[i] = read_file(argv[optind + i]);
		got += maps[i] != NULL;
		ret |= maps[i] ? 0 : -1;
	}
	s = got ? open_store(store_path, 1) : NULL;
	for (int i = 0; i < n; i++) {
		const char *path = argv[optind + i];
		char name[NT_TEXT_ROOM(96)];
		int64_t id;
		int same;

		if (!maps[i])
			continue;
		same = force ? nt_store_add(s, maps[i], &id, &err) : nt_store_add_new(s, maps[i], &id, &err);
		if (same > 0)
			ret = error("'%s' is already in map store '%s' as calibration %lld (same GPU, "
				    "time and host; --force imports it again)", path, nt_store_path(s),
				    (long long)id);
		else if (same < 0)
			ret = error("%s", err.msg);
		else
			printf("imported '%s' (%s, %s) as calibration %lld\n", path,
			       nt_text_safe(name, sizeof(name), maps[i]->gpu.name, 0), maps[i]->gpu.uuid, (long long)id);
		nt_map_free(maps[i]);
	}
	nt_store_close(s);
	free(maps);
	return ret;
}

int cmd_map(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv, const char *store_path);
	} subs[] = {
		{ "list", map_list }, { "show", map_show }, { "fit", map_fit },
		{ "diff", map_diff }, { "export", map_export }, { "import", map_import },
	};
	const char *store_path = NULL;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: %s\n\n%s", usage, spec_help);
			return 0;
		}
		if (!strcmp(argv[i], "--store") && i + 1 < argc)
			store_path = argv[++i];
		else if (!strncmp(argv[i], "--store=", 8))
			store_path = argv[i] + 8;
		else
			usage_error(usage, "map: unknown option '%s'", argv[i]);
	}
	if (i == argc)
		usage_error(usage, "map: which subcommand?");
	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++)
		if (!strcmp(argv[i], subs[k].name))
			return subs[k].fn(argc - i, argv + i, store_path);
	usage_error(usage, "map: '%s' is not a subcommand", argv[i]);
}
