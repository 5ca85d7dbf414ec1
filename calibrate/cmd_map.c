/* nucatrace map: look at, compare and share stored maps. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "heatmap.h"
#include "json.h"
#include "map_cmds.h"
#include "mapio.h"
#include "store.h"
#include "summary.h"

static const char usage[] =
	"nucatrace map [--store PATH] <list|show|fit|diff|export|import> [args]\n"
	"   list                        calibrations in the store\n"
	"   show [SPEC] [--json] [--color] [--svg FILE] [--matrix-svg FILE]\n"
	"   fit [SPEC] [--part lines|first|repeat] [--groups R] [--json]\n"
	"   diff SPEC SPEC [--json]\n"
	"   export [SPEC] [--format json|csv] [--output FILE]\n"
	"   import FILE...\n"
	"SPEC: a map file (.json/.csv), a calibration id, a GPU UUID (its latest map)\n"
	"or 'latest' (the default).";

static struct nt_store *open_store(const char *path, int create)
{
	char buf[4096];
	struct nt_store *s;
	struct nt_err err;

	if (!path && !(path = nt_store_default_path(buf, sizeof(buf))))
		die("no store path: set NUCATRACE_STORE or HOME, or use --store");
	if (nt_store_open(path, create, &s, &err))
		die("%s", err.msg);
	return s;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* A map file is JSON when its first non-blank byte is '{'. */
static int looks_json(const char *path)
{
	FILE *f = fopen(path, "r");
	int c = EOF;

	if (!f)
		return 0;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

struct nt_map *map_load_spec(const char *spec, const char *store_path)
{
	struct nt_map *m = NULL;
	struct nt_store *s;
	struct nt_err err;
	struct stat sb;
	int r;

	if (!spec)
		spec = "latest";
	if (!stat(spec, &sb)) {
		r = looks_json(spec) ? nt_map_read_json(spec, &m, &err) : nt_map_read_csv(spec, &m, &err);
		if (r)
			die("%s", err.msg);
		return m;
	}
	if (strchr(spec, '/') || strstr(spec, ".json") || strstr(spec, ".csv"))
		die("cannot read map file '%s': %s", spec, strerror(errno));
	s = open_store(store_path, 0);
	if (all_digits(spec))
		r = nt_store_get(s, strtoll(spec, NULL, 10), &m, &err);
	else
		r = nt_store_latest(s, strcmp(spec, "latest") ? spec : NULL, &m, &err);
	nt_store_close(s);
	if (r)
		die("%s", err.msg);
	return m;
}

static int print_entry(const struct nt_store_entry *e, void *arg)
{
	char when[32];
	time_t t = (time_t)e->created_at;

	(void)arg;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime(&t));
	printf("%5lld  %s  %-40s  %-12s  %3d SMs  %s%s%s%s\n", (long long)e->id, when, e->uuid,
	       e->name, e->sm_count, "chain", e->parts & NT_MAP_NOISE ? ",noise" : "",
	       e->parts & NT_MAP_LINES ? ",lines" : "", e->parts & NT_MAP_FIRST_TOUCH ? ",first-touch" : "");
	return 0;
}

static int map_list(int argc, char **argv, const char *store_path)
{
	struct nt_store *s;
	struct nt_err err;
	int r;

	if (argc > 1)
		usage_error(usage, "map list takes no arguments");
	s = open_store(store_path, 0);
	printf("%5s  %-19s  %-40s  %-12s  %7s  %s\n", "id", "measured (UTC)", "GPU", "name", "SMs",
	       "parts");
	r = nt_store_list(s, print_entry, NULL, &err);
	nt_store_close(s);
	return r ? error("%s", err.msg) : 0;
}

static FILE *create_file(const char *path)
{
	FILE *f = fopen(path, "wx");

	if (!f)
		die("cannot create '%s': %s%s", path, strerror(errno),
		    errno == EEXIST ? " (nucatrace does not overwrite files)" : "");
	return f;
}

static int close_file(FILE *f, const char *path)
{
	if (fclose(f))
		return error("cannot write '%s': %s", path, strerror(errno));
	return 0;
}

static void provenance(const struct nt_map *m)
{
	char when[32];
	time_t t = (time_t)m->created_at;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
	printf("  measured %s on %s by nucatrace %s\n", when, m->host[0] ? m->host : "?",
	       m->tool_version[0] ? m->tool_version : "?");
	if (m->command[0])
		printf("  command: %s\n", m->command);
}

static int map_show(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "color", no_argument, NULL, 'c' },
		{ "svg", required_argument, NULL, 's' }, { "matrix-svg", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const char *svg = NULL, *msvg = NULL;
	struct nt_map_report rep;
	int json = 0, color = 0, o, ret = 0;
	struct nt_err err;
	struct nt_map *m;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'j': json = 1; break;
		case 'c': color = 1; break;
		case 's': svg = optarg; break;
		case 'm': msvg = optarg; break;
		default: usage_error(usage, "map show: unknown option");
		}
	}
	if (argc - optind > 1)
		usage_error(usage, "map show takes one SPEC");
	m = map_load_spec(optind < argc ? argv[optind] : NULL, store_path);
	if (nt_map_report_build(m, &rep, &err))
		die("%s", err.msg);
	if (json) {
		struct nt_json j;

		nt_json_init(&j, stdout, 1);
		nt_summary_json(&j, m, &rep, NULL, -1);
		ret = nt_json_finish(&j);
	} else {
		nt_summary_text(stdout, m, &rep, NULL, -1, NULL);
		provenance(m);
		printf("\nL2 hit latency per SM (chain map, cycles):\n");
		nt_heatmap_term(stdout, m->chain, m->n_sm, 16, color, "cycles");
	}
	if (svg) {
		FILE *f = create_file(svg);
		char title[256];

		snprintf(title, sizeof(title), "%s %s: L2 hit latency per SM", m->gpu.name, m->gpu.uuid);
		ret |= nt_heatmap_svg(f, m->chain, m->n_sm, 16, title, "cycles") | close_file(f, svg);
	}
	if (msvg) {
		FILE *f;
		char title[256];

		if (!m->line_lat)
			die("--matrix-svg: this map has no line matrix (calibrated with --no-lines?)");
		f = create_file(msvg);
		snprintf(title, sizeof(title), "%s %s: SM x line L2 latency", m->gpu.name, m->gpu.uuid);
		ret |= nt_heatmap_svg_matrix(f, m->line_lat, m->n_sm, m->n_line, title, "cycles") |
		       close_file(f, msvg);
	}
	nt_map_report_free(&rep);
	nt_map_free(m);
	return ret ? -1 : 0;
}

static int map_export(int argc, char **argv, const char *store_path)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' }, { "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = "json", *out = NULL;
	struct nt_map *m;
	FILE *f = stdout;
	int o, ret;

	optind = 1;
	while ((o = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (o) {
		case 'f': format = optarg; break;
		case 'o': out = optarg; break;
		default: usage_error(usage, "map export: unknown option");
		}
	}
	if (strcmp(format, "json") && strcmp(format, "csv"))
		usage_error(usage, "--format: '%s' is neither json nor csv", format);
	if (argc - optind > 1)
		usage_error(usage, "map export takes one SPEC");
	m = map_load_spec(optind < argc ? argv[optind] : NULL, store_path);
	if (out)
		f = create_file(out);
	ret = strcmp(format, "csv") ? nt_map_write_json(f, m, 1) : nt_map_write_csv(f, m);
	if (out)
		ret |= close_file(f, out);
	else if (fflush(stdout))
		ret = -1;
	nt_map_free(m);
	return ret ? error("cannot write the map to '%s'", out ? out : "stdout") : 0;
}

static int map_import(int argc, char **argv, const char *store_path)
{
	struct nt_store *s;
	struct nt_err err;
	int ret = 0;

	if (argc < 2)
		usage_error(usage, "map import needs at least one FILE");
	s = open_store(store_path, 1);
	for (int i = 1; i < argc; i++) {
		struct nt_map *m = NULL;
		int64_t id;
		int r = looks_json(argv[i]) ? nt_map_read_json(argv[i], &m, &err)
					    : nt_map_read_csv(argv[i], &m, &err);

		if (r || nt_store_add(s, m, &id, &err)) {
			ret = error("%s", err.msg);
		} else {
			printf("imported '%s' (%s, %s) as calibration %lld\n", argv[i], m->gpu.name,
			       m->gpu.uuid, (long long)id);
		}
		nt_map_free(m);
	}
	nt_store_close(s);
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
			printf("usage: %s\n", usage);
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
