/*
 * Fuzz target: a trace file, read and reported as `nucatrace report
 * --launches --html --perfetto --csv` would (fuzz.h, docs/fuzzing.md).
 * The input is written to a scratch file and opened as a trace (SQLite
 * on arbitrary bytes is fine: the reader must refuse what it cannot
 * use); every format is written, to /dev/null or a scratch folder.  A
 * trace without a map gets a 16-SM one, as from --map.  Crashes,
 * undefined behaviour, leaks and hangs are the findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "fuzz.h"
#include "map/mapio.h"
#include "report/report.h"

static const char map_json[] =
	"{\"format\":\"nucatrace-map\",\"version\":1,\"gpu\":{\"uuid\":\"GPU-0badda7a-0000-4000-8000-"
	"000000000016\",\"name\":\"Fuzz GPU\",\"sm_count\":16,\"cc\":\"9.0\",\"l2_bytes\":62914560,"
	"\"driver\":\"\",\"cuda_version\":13000,\"clock_khz\":1980000},\"params\":{\"chain_bytes\":"
	"2097152,\"chain_loads\":4096,\"chain_reps\":5,\"line_loads\":0,\"line_reps\":0,"
	"\"footprint_bytes\":0,\"statistic\":\"min\"},\"created_at_unix\":1796083200,\"tool_version\":"
	"\"0.1.0\",\"host\":\"fuzz\",\"command\":\"\",\"sm_clock_mhz\":1980,\"chain\":[280,287,294,285,"
	"292,283,290,281,288,295,286,293,284,291,282,289]}";

static int get_map(const char *uuid, struct nt_map **out, void *arg)
{
	(void)uuid;
	*out = nt_map_dup(arg);
	return *out ? 0 : -1;
}

static void remove_trace(const char *path)
{
	static const char *const side[] = { "", "-wal", "-shm", "-journal" };
	char p[512];

	for (size_t i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, side[i]);
		unlink(p);
	}
}

static void write_csv(const struct nt_report *r, const char *dir)
{
	static const char *const files[] = { "kernels.csv", "launches.csv", "blocks.csv" };
	struct nt_report_csv c;
	struct nt_err err;
	char p[512];

	if (!nt_report_csv_open(&c, dir, &err))
		nt_report_csv_write(&c, r, &err);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nt_map *map;
	const struct nt_format *const formats[] = {
		&nt_format_text, &nt_format_json, &nt_format_perfetto, &nt_format_html,
	};
	struct nt_format_opts o = { .top = 20, .launches = 1 };
	char path[256], dir[256];
	const char *paths[1] = { path };
	struct nt_report *r;
	struct nt_err err;

	if (!map && nt_map_read_json_text(map_json, "fuzz map", &map, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		abort();
	}
	fuzz_path(path, sizeof(path), "trace.sqlite");
	fuzz_path(dir, sizeof(dir), "csv");
	remove_trace(path);
	fuzz_write(path, data, size);
	if (!nt_report_build(paths, 1, 1, 0, get_map, map, &r, &err)) {
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			formats[i]->write(fuzz_null(), r, &o);
		write_csv(r, dir);
		nt_report_free(r);
	}
	remove_trace(path);
	return 0;
}
