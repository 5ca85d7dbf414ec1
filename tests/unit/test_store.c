/* store.h: round trips, history, and leaving other people's files alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "map/mapio.h"
#include "map/mapspec.h"
#include "map/store.h"
#include "maptest.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

static struct nt_store *open_ok(const char *path, int create)
{
	struct nt_store *s = NULL;
	struct nt_err err = { "" };

	if (nt_store_open(path, create, &s, &err))
		fail_msg("open '%s': %s", path, err.msg);
	return s;
}

/* Open must fail with a message naming the file and containing want,
 * and leave the file's bytes as they were. */
static void open_refused(const char *path, const char *want)
{
	struct nt_store *s = (struct nt_store *)1;
	struct nt_err err = { "" };
	size_t len_before, len_after;
	char *before = slurp(path, &len_before), *after;

	for (int create = 0; create < 2; create++) {
		assert_int_equal(nt_store_open(path, create, &s, &err), -1);
		assert_null(s);
		assert_non_null(strstr(err.msg, path));
		if (!strstr(err.msg, want))
			fail_msg("'%s' does not say '%s'", err.msg, want);
	}
	after = slurp(path, &len_after);
	assert_int_equal(len_before, len_after);
	assert_memory_equal(before, after, len_before);
	free(before);
	free(after);
}

static void test_default_path(void **state)
{
	char buf[256];

	(void)state;
	setenv("NUCATRACE_STORE", "/x/y.db", 1);
	assert_string_equal(nt_store_default_path(buf, sizeof(buf)), "/x/y.db");
	setenv("NUCATRACE_STORE", "", 1);
	setenv("XDG_DATA_HOME", "/data", 1);
	assert_string_equal(nt_store_default_path(buf, sizeof(buf)), "/data/nucatrace/maps.db");
	unsetenv("XDG_DATA_HOME");
	setenv("HOME", "/home/u", 1);
	assert_string_equal(nt_store_default_path(buf, sizeof(buf)), "/home/u/.local/share/nucatrace/maps.db");
	assert_null(nt_store_default_path(buf, 10));
	unsetenv("HOME");
	assert_null(nt_store_default_path(buf, sizeof(buf)));
	unsetenv("NUCATRACE_STORE");
}

static void round_trip(void **state, int n_line, unsigned parts, int n_probe)
{
	char *path = path_in(state, "rt.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *m = sample_map(5, n_line, parts, 3), *back = NULL;
	struct nt_err err = { "" };
	int64_t id = 0;

	if (n_probe)
		sample_probe(m, n_probe);

	if (nt_store_add(s, m, &id, &err))
		fail_msg("%s", err.msg);
	assert_true(id > 0);
	nt_store_close(s);
	s = open_ok(path, 0);
	if (nt_store_get(s, id, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	assert_true(isnan(back->chain[2]));
	nt_map_free(back);
	nt_map_free(m);
	nt_store_close(s);
	free(path);
}

static void test_round_trip_all(void **state)
{
	round_trip(state, 4, NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH, 3);
}

static void test_round_trip_parts(void **state)
{
	round_trip(state, 0, 0, 0);
	round_trip(state, 3, NT_MAP_LINES, 0);
	round_trip(state, 2, NT_MAP_FIRST_TOUCH, 0);
	round_trip(state, 0, NT_MAP_NOISE, 0);
	round_trip(state, 0, 0, 1);
	round_trip(state, 0, 0, NT_MAP_MAX_PROBES);
}

static void test_schema_is_plain_sql(void **state)
{
	char *path = path_in(state, "sql.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *m = sample_map(4, 3, NT_MAP_LINES | NT_MAP_FIRST_TOUCH, 1);
	int64_t id;

	sample_probe(m, 2);
	assert_int_equal(nt_store_add(s, m, &id, NULL), 0);
	nt_store_close(s);
	assert_int_equal(sql_int(path, "PRAGMA application_id"), NT_STORE_APP_ID);
	assert_int_equal(sql_int(path, "PRAGMA user_version"), NT_STORE_SCHEMA);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM sm_value"), 4);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM sm_value WHERE chain IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM line_value"), 12);
	assert_int_equal(sql_int(path, "SELECT byte_offset FROM line_offset WHERE line = 2"),
			 m->line_offset[2]);
	assert_int_equal(sql_int(path, "SELECT chain_bytes FROM calib"), m->params.chain_bytes);
	assert_int_equal(sql_int(path, "SELECT parts FROM calib"),
			 NT_MAP_LINES | NT_MAP_FIRST_TOUCH | NT_MAP_PROBE);
	assert_int_equal(sql_int(path, "SELECT threads FROM probe WHERE probe = 1"), 64);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM probe WHERE body_traced IS NULL"), 1);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM probe_value"), 8);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM probe_value WHERE cost IS NULL"), 2);
	nt_map_free(m);
	free(path);
}

struct seen {
	int n;
	struct nt_store_entry e[8];
	int stop_at;
};

static int collect(const struct nt_store_entry *e, void *arg)
{
	struct seen *s = arg;

	s->e[s->n++] = *e;
	return s->n == s->stop_at ? 42 : 0;
}

static void test_history(void **state)
{
	char *path = path_in(state, "h.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *a = sample_map(3, 0, 0, 1), *b = sample_map(3, 2, NT_MAP_LINES, 2);
	struct nt_map *got = NULL;
	struct nt_err err = { "" };
	struct seen seen = { 0 };
	int64_t n, id[3];

	strcpy(b->gpu.uuid, a->gpu.uuid);
	a->created_at = 1000;
	b->created_at = 2000;
	assert_int_equal(nt_store_add(s, b, &id[0], NULL), 0);
	assert_int_equal(nt_store_add(s, a, &id[1], NULL), 0);	/* older, added later */
	a->created_at = 500;
	strcpy(a->gpu.uuid, "GPU-other");
	assert_int_equal(nt_store_add(s, a, &id[2], NULL), 0);

	assert_int_equal(nt_store_count(s, NULL, &n, NULL), 0);
	assert_int_equal(n, 3);
	assert_int_equal(nt_store_count(s, b->gpu.uuid, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(nt_store_latest(s, b->gpu.uuid, &got, &err), 0);
	assert_maps_equal(b, got);
	nt_map_free(got);
	assert_int_equal(nt_store_latest(s, NULL, &got, &err), 0);
	assert_maps_equal(b, got);
	nt_map_free(got);
	assert_int_equal(nt_store_latest(s, "GPU-other", &got, &err), 0);
	assert_maps_equal(a, got);
	nt_map_free(got);
	assert_int_equal(nt_store_latest(s, "GPU-none", &got, &err), -1);
	assert_null(got);
	assert_non_null(strstr(err.msg, "GPU-none"));
	assert_int_equal(nt_store_get(s, 99, &got, &err), -1);
	assert_non_null(strstr(err.msg, "99"));

	assert_int_equal(nt_store_list(s, collect, &seen, NULL), 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.e[0].id, id[0]);
	assert_string_equal(seen.e[0].uuid, b->gpu.uuid);
	assert_string_equal(seen.e[0].name, b->gpu.name);
	assert_string_equal(seen.e[0].host, "node-2");
	assert_int_equal(seen.e[0].sm_count, 3);
	assert_int_equal(seen.e[0].created_at, 2000);
	assert_int_equal(seen.e[0].parts, NT_MAP_LINES);
	assert_int_equal(seen.e[0].n_line, 2);
	assert_true(seen.e[0].sm_clock_mhz == b->sm_clock_mhz);
	assert_string_equal(seen.e[2].uuid, "GPU-other");
	seen = (struct seen){ .stop_at = 2 };
	assert_int_equal(nt_store_list(s, collect, &seen, NULL), 42);
	assert_int_equal(seen.n, 2);

	nt_store_close(s);
	nt_map_free(a);
	nt_map_free(b);
	free(path);
}

static void test_bad_map_refused(void **state)
{
	char *path = path_in(state, "bad.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *m = sample_map(3, 2, NT_MAP_FIRST_TOUCH, 1);
	struct nt_err err = { "" };
	double *keep = m->ft_repeat;
	int64_t n;

	m->ft_repeat = NULL;
	assert_int_equal(nt_store_add(s, m, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "ft_repeat"));
	assert_int_equal(nt_store_count(s, NULL, &n, NULL), 0);
	assert_int_equal(n, 0);
	m->ft_repeat = keep;
	nt_store_close(s);
	nt_map_free(m);
	free(path);
}

/* A calibration edited behind nucatrace's back is refused, naming the
 * store and the calibration, never read as a smaller or absurd map. */
static void test_damaged_rows(void **state)
{
	static const struct {
		const char *stmt, *want;
	} cases[] = {
		{ "DELETE FROM sm_value WHERE sm = 1", "sm_value has 2 of 3 rows" },
		{ "DELETE FROM line_offset WHERE line = 0", "line_offset has 1 of 2 rows" },
		{ "DELETE FROM line_value WHERE sm = 2 AND line = 1", "line_value has 5 of 6 rows" },
		{ "UPDATE calib SET sm_count = 4", "sm_count differs from n_sm" },
		{ "UPDATE calib SET n_sm = 4, sm_count = 4", "sm_value has 3 of 4 rows" },
		{ "UPDATE calib SET n_sm = 5000, sm_count = 5000", "bad sizes" },
		{ "UPDATE calib SET n_line = 100000", "bad sizes" },
		{ "UPDATE sm_value SET chain = 1e200 WHERE sm = 2",
		  "chain of sm 2 is 1e+200: not a latency of 0..1000000 cycles" },
		{ "UPDATE sm_value SET noise = -1 WHERE sm = 0", "noise of sm 0 is -1" },
		{ "UPDATE line_value SET ft_first = 2e6 WHERE sm = 1 AND line = 0",
		  "ft_first of sm 1 line 0 is 2e+06" },
		{ "UPDATE calib SET uuid = ''", "GPU UUID \"\" is not one" },
		{ "UPDATE calib SET sm_clock_mhz = 9e999", "sm_clock_mhz inf is not a clock" },
		{ "UPDATE sm_value SET chain = NULL", "no SM has a chain latency" },
		{ "UPDATE calib SET created_at = 100000000000000000",
		  "created_at is not a time in the years 1970..9999" },
		{ "UPDATE sm_value SET chain = 'fast' WHERE sm = 0", "chain of sm 0 is not a number" },
		{ "UPDATE line_value SET sm = 'x' WHERE sm = 0 AND line = 1", "index out of range" },
		{ "UPDATE calib SET parts = 16", "bad sizes" },
		/* the probe part */
		{ "UPDATE probe_value SET cost = -5 WHERE probe = 1 AND sm = 2",
		  "cost of probe 1 sm 2 is -5: not a latency of 0..1000000 cycles" },
		{ "UPDATE probe_value SET cost = 'slow' WHERE probe = 0 AND sm = 1",
		  "cost of probe 0 sm 1 is not a number" },
		{ "UPDATE probe SET body_traced = 2e6 WHERE probe = 0", "body_traced of probe 0 is 2e+06" },
		{ "UPDATE probe SET iters = 'many' WHERE probe = 1", "iters of probe 1 is not a 32-bit integer" },
		{ "UPDATE probe SET blocks = 1e10", "blocks of probe 0 is not a 32-bit integer" },
		{ "UPDATE probe SET threads = 0 WHERE probe = 1", "probe[1].threads 0 is not within 1..1024" },
		{ "DELETE FROM probe_value WHERE probe = 1 AND sm = 0", "probe_value has 5 of 6 rows" },
		{ "DELETE FROM probe WHERE probe = 1", "index out of range" },
		{ "UPDATE probe SET probe = 5 WHERE probe = 1", "index out of range" },
		{ "DELETE FROM probe", "probe has 0 rows, not 1..16" },
		{ "UPDATE calib SET parts = parts & ~8", "probe has 2 of 0 rows" },
		{ "DROP TABLE probe_value", "it has a probe part, the store no probe tables" },
	};
	char *path = path_in(state, "damaged.db");
	struct nt_map *m = sample_map(3, 2, NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH, 1), *back;
	struct nt_err err;
	char want[512];

	sample_probe(m, 2);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nt_store *s;
		int64_t id;

		remove(path);
		s = open_ok(path, 1);
		if (nt_store_add(s, m, &id, &err))
			fail_msg("%s", err.msg);
		nt_store_close(s);
		sql(path, cases[i].stmt);
		s = open_ok(path, 0);
		back = (struct nt_map *)1;
		assert_int_equal(nt_store_get(s, id, &back, &err), -1);
		assert_null(back);
		snprintf(want, sizeof(want), "map store '%s': calibration %lld is damaged: %s", path,
			 (long long)id, cases[i].want);
		if (strncmp(err.msg, want, strlen(want)))
			fail_msg("after '%s':\n  got  %s\n  want %s", cases[i].stmt, err.msg, want);
		nt_store_close(s);
	}
	nt_map_free(m);
	free(path);
}

static void test_resolve_uuid(void **state)
{
	char *path = path_in(state, "uuids.db"), uuid[NT_UUID_LEN];
	struct nt_store *s = open_ok(path, 1);
	struct nt_err err = { "" };
	const int seeds[] = { 1, 2, 0x10, 0x10 };

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct nt_map *m = sample_map(2, 0, 0, seeds[i]);

		if (nt_store_add(s, m, NULL, &err))
			fail_msg("%s", err.msg);
		nt_map_free(m);
	}
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-00000001", uuid, sizeof(uuid), &err), 0);
	assert_string_equal(uuid, "GPU-00000001-1c2d-3e4f-5a6b-7c8d9e0f1a2b");
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-0000001", uuid, sizeof(uuid), &err), 0);
	assert_string_equal(uuid, "GPU-00000010-1c2d-3e4f-5a6b-7c8d9e0f1a2b");
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-00000002-1c2d-3e4f-5a6b-7c8d9e0f1a2b", uuid,
					       sizeof(uuid), &err), 0);
	assert_string_equal(uuid, "GPU-00000002-1c2d-3e4f-5a6b-7c8d9e0f1a2b");
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-0000000", uuid, sizeof(uuid), &err), -1);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "'GPU-0000000' is the start of 2 GPU UUIDs"));
	assert_non_null(strstr(err.msg, "GPU-00000001-1c2d-3e4f-5a6b-7c8d9e0f1a2b, "
				"GPU-00000002-1c2d-3e4f-5a6b-7c8d9e0f1a2b"));
	/* no LIKE wildcards */
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-0000000_", uuid, sizeof(uuid), &err), -1);
	assert_non_null(strstr(err.msg, "no calibration of GPU 'GPU-0000000_'"));
	assert_int_equal(nt_store_resolve_uuid(s, "GPU-%1", uuid, sizeof(uuid), &err), -1);
	assert_int_equal(nt_store_resolve_uuid(s, "gpu-00000001", uuid, sizeof(uuid), &err), -1);
	nt_store_close(s);
	free(path);
}

/* A SPEC: a map file of either format, an id, a UUID or its start,
 * "latest"; a clear message for each way it names nothing. */
static void test_load_spec(void **state)
{
	char *path = path_in(state, "spec.db"), *json = path_in(state, "m.json"), *csv = path_in(state, "m.csv");
	char *missing = path_in(state, "missing.json");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *a = sample_map(3, 0, 0, 1), *b = sample_map(3, 0, 0, 2), *m = NULL;
	struct nt_err err = { "" };
	int64_t id_a = 0;
	FILE *f;

	if (nt_store_add(s, a, &id_a, &err) || nt_store_add(s, b, NULL, &err))
		fail_msg("%s", err.msg);
	nt_store_close(s);
	if (!(f = fopen(json, "w")) || nt_map_write_json(f, a, 1) || fclose(f) ||
	    !(f = fopen(csv, "w")) || nt_map_write_csv(f, b) || fclose(f))
		fail_msg("cannot write the map files");
	assert_int_equal(nt_map_load_spec(NULL, path, &m, &err), 0);
	assert_maps_equal(m, b);
	nt_map_free(m);
	assert_int_equal(nt_map_load_spec("1", path, &m, &err), 0);
	assert_maps_equal(m, a);
	nt_map_free(m);
	assert_int_equal(nt_map_load_spec("GPU-00000001", path, &m, &err), 0);
	assert_maps_equal(m, a);
	nt_map_free(m);
	assert_int_equal(nt_map_load_spec(json, path, &m, &err), 0);
	assert_maps_equal(m, a);
	nt_map_free(m);
	assert_int_equal(nt_map_load_spec(csv, NULL, &m, &err), 0);	/* a file needs no store */
	assert_maps_equal(m, b);
	nt_map_free(m);
	assert_int_equal(nt_map_read_file(json, &m, &err), 0);
	assert_maps_equal(m, a);
	nt_map_free(m);

	m = (struct nt_map *)1;
	assert_int_equal(nt_map_load_spec("", path, &m, &err), -1);
	assert_null(m);
	assert_string_equal(err.msg, "an empty SPEC names no map");
	assert_int_equal(nt_map_load_spec(missing, path, &m, &err), -1);
	assert_non_null(strstr(err.msg, "cannot read map file"));
	assert_non_null(strstr(err.msg, missing));
	assert_int_equal(nt_map_load_spec("GPU-0000000", path, &m, &err), -1);
	assert_non_null(strstr(err.msg, "is the start of 2 GPU UUIDs"));
	assert_int_equal(nt_map_load_spec("7", path, &m, &err), -1);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(nt_map_load_spec("latest", missing, &m, &err), -1);
	assert_non_null(strstr(err.msg, "no map store at"));
	assert_null(m);
	nt_map_free(a);
	nt_map_free(b);
	free(path);
	free(json);
	free(csv);
	free(missing);
}

static void test_find_same(void **state)
{
	char *path = path_in(state, "same.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_map *m = sample_map(2, 0, 0, 3);
	struct nt_err err = { "" };
	int64_t id = 0, found = -1;

	assert_int_equal(nt_store_find_same(s, m, &found, &err), 0);
	if (nt_store_add(s, m, &id, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(nt_store_find_same(s, m, &found, &err), 1);
	assert_int_equal(found, id);
	m->created_at++;	/* another run of the same GPU */
	assert_int_equal(nt_store_find_same(s, m, &found, &err), 0);
	m->created_at--;
	strcpy(m->host, "elsewhere");
	assert_int_equal(nt_store_find_same(s, m, &found, &err), 0);
	/* the same run with a part the stored one lacks (it came through CSV) */
	strcpy(m->host, "node-3");
	sample_probe(m, 2);
	assert_int_equal(nt_store_find_same(s, m, &found, &err), 0);
	assert_int_equal(nt_store_add_new(s, m, &found, &err), 0);
	assert_true(found > id);
	assert_int_equal(nt_store_add_new(s, m, &id, &err), 1);
	assert_int_equal(id, found);
	nt_store_close(s);
	nt_map_free(m);
	free(path);
}

static void test_missing_and_create(void **state)
{
	char *path = path_in(state, "a/b/c/maps.db"), *dir = path_in(state, "a/b");
	struct nt_store *s = (struct nt_store *)1;
	struct nt_err err = { "" };
	struct stat st;

	assert_int_equal(nt_store_open(path, 0, &s, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err.msg, path));
	assert_int_equal(stat(path, &st), -1);
	s = open_ok(path, 1);
	assert_string_equal(nt_store_path(s), path);
	nt_store_close(s);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	s = open_ok(path, 0);
	nt_store_close(s);
	free(path);
	free(dir);
}

/* The default store when no path is given; a clear message when none is set. */
static void test_open_default(void **state)
{
	char *path = path_in(state, "d/maps.db");
	struct nt_store *s = (struct nt_store *)1;
	struct nt_err err = { "" };

	unsetenv("XDG_DATA_HOME");
	unsetenv("HOME");
	unsetenv("NUCATRACE_STORE");
	assert_int_equal(nt_store_open_default(NULL, 1, &s, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err.msg, "no store path"));
	setenv("NUCATRACE_STORE", path, 1);
	assert_int_equal(nt_store_open_default(NULL, 0, &s, &err), -1);
	assert_non_null(strstr(err.msg, path));
	if (nt_store_open_default(NULL, 1, &s, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(nt_store_path(s), path);
	nt_store_close(s);
	unsetenv("NUCATRACE_STORE");
	if (nt_store_open_default(path, 0, &s, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(nt_store_path(s), path);
	nt_store_close(s);
	free(path);
}

/* Calibrations take turns on a store: a second holder fails without
 * waiting, and gets it once the first lets go. */
static void test_lock(void **state)
{
	char *path = path_in(state, "lock.db");
	struct nt_store *s = open_ok(path, 1);
	struct nt_err err = { "" };
	int a, b;

	assert_true((a = nt_store_lock(s, 1, &err)) >= 0);
	assert_int_equal(nt_store_lock(s, 0, &err), -1);
	assert_non_null(strstr(err.msg, "another process holds the lock"));
	assert_non_null(strstr(err.msg, "lock.db.calibrating"));
	nt_store_unlock(a);
	assert_true((b = nt_store_lock(s, 0, &err)) >= 0);
	nt_store_unlock(b);
	nt_store_close(s);
	free(path);
}

static void test_unwritable(void **state)
{
	char *file = path_in(state, "plain"), *path = path_in(state, "plain/sub/maps.db");
	struct nt_store *s = NULL;
	struct nt_err err = { "" };

	write_file(file, "x", 1);
	assert_int_equal(nt_store_open(path, 1, &s, &err), -1);
	assert_non_null(strstr(err.msg, file));
	assert_int_equal(nt_store_open((char *)*state, 1, &s, &err), -1);	/* a directory */
	assert_non_null(strstr(err.msg, "directory"));
	assert_int_equal(nt_store_open("", 1, &s, &err), -1);
	free(file);
	free(path);
}

/* Only a command that writes (create = 1) makes an empty file a store;
 * a reader refuses it and leaves it as it was. */
static void test_empty_file_becomes_store(void **state)
{
	char *path = path_in(state, "empty.db");
	struct nt_store *s = (struct nt_store *)1;
	struct nt_err err = { "" };
	struct stat st;

	write_file(path, "", 0);
	assert_int_equal(nt_store_open(path, 0, &s, &err), -1);
	assert_null(s);
	assert_non_null(strstr(err.msg, path));
	assert_non_null(strstr(err.msg, "it is empty"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	nt_store_close(open_ok(path, 1));
	assert_int_equal(sql_int(path, "PRAGMA application_id"), NT_STORE_APP_ID);
	nt_store_close(open_ok(path, 0));
	free(path);
}

static void test_not_a_database(void **state)
{
	char *path = path_in(state, "junk.db");
	char junk[4096];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 7 + 3);
	write_file(path, junk, sizeof(junk));
	open_refused(path, "not a database");
	write_file(path, "hello, world\n", 13);
	open_refused(path, "not a database");
	free(path);
}

static void test_foreign_database(void **state)
{
	char *path = path_in(state, "foreign.db");

	sql(path, "PRAGMA application_id = 42; CREATE TABLE t(x); INSERT INTO t VALUES(1)");
	open_refused(path, "another application");
	free(path);
	path = path_in(state, "plain.db");	/* no application_id, but tables */
	sql(path, "CREATE TABLE t(x)");
	open_refused(path, "another application");
	free(path);
}

static void test_newer_schema(void **state)
{
	char *path = path_in(state, "new.db");

	nt_store_close(open_ok(path, 1));
	sql(path, "PRAGMA user_version = 99");
	open_refused(path, "schema version 99");
	free(path);
}

/* A store of schema 1, before the probe part, as nucatrace made it then
 * (store_tables.def of that version), holding one calibration. */
static const char schema1_store[] =
	"CREATE TABLE calib(id INTEGER PRIMARY KEY, uuid TEXT, name TEXT, sm_count INTEGER, "
	"cc_major INTEGER, cc_minor INTEGER, l2_bytes INTEGER, driver TEXT, cuda_version INTEGER, "
	"clock_khz INTEGER, chain_bytes INTEGER, chain_loads INTEGER, chain_reps INTEGER, "
	"line_loads INTEGER, line_reps INTEGER, footprint_bytes INTEGER, statistic TEXT, "
	"created_at INTEGER, tool_version TEXT, host TEXT, command TEXT, sm_clock_mhz REAL, "
	"n_sm INTEGER NOT NULL, n_line INTEGER NOT NULL, parts INTEGER NOT NULL);"
	"CREATE INDEX calib_by_gpu ON calib(uuid, created_at);"
	"CREATE TABLE sm_value(calib_id INTEGER NOT NULL REFERENCES calib(id) ON DELETE CASCADE, "
	"sm INTEGER NOT NULL, chain REAL, noise REAL, PRIMARY KEY(calib_id, sm)) WITHOUT ROWID;"
	"CREATE TABLE line_offset(calib_id INTEGER NOT NULL REFERENCES calib(id) ON DELETE CASCADE, "
	"line INTEGER NOT NULL, byte_offset INTEGER NOT NULL, PRIMARY KEY(calib_id, line)) WITHOUT ROWID;"
	"CREATE TABLE line_value(calib_id INTEGER NOT NULL REFERENCES calib(id) ON DELETE CASCADE, "
	"sm INTEGER NOT NULL, line INTEGER NOT NULL, latency REAL, ft_first REAL, ft_repeat REAL, "
	"PRIMARY KEY(calib_id, sm, line)) WITHOUT ROWID;"
	"INSERT INTO calib(uuid, name, sm_count, created_at, host, sm_clock_mhz, n_sm, n_line, parts) "
	"VALUES('GPU-schema1', 'NVIDIA H200', 2, 1764461400, 'node-1', 1980, 2, 0, 1);"
	"INSERT INTO sm_value VALUES(1, 0, 280.5, 0.01), (1, 1, 290.25, NULL);"
	"PRAGMA application_id = 1314147664;"	/* 'NTMP' */
	"PRAGMA user_version = 1";

static void check_schema1_map(struct nt_store *s)
{
	struct nt_map *m = NULL;
	struct nt_err err = { "" };

	if (nt_store_get(s, 1, &m, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(m->gpu.uuid, "GPU-schema1");
	assert_string_equal(m->host, "node-1");
	assert_true(m->chain[0] == 280.5 && m->chain[1] == 290.25);
	assert_true(m->noise[0] == 0.01 && isnan(m->noise[1]));
	assert_int_equal(nt_map_parts_of(m), NT_MAP_NOISE);
	assert_int_equal(m->n_probe, 0);
	nt_map_free(m);
}

/* Readers read a store of schema 1 as it is, and never write to it. */
static void test_schema1_read(void **state)
{
	char *path = path_in(state, "v1.db"), *before, *after;
	struct nt_store *s;
	struct nt_map *m = NULL;
	struct nt_err err = { "" };
	struct seen seen = { 0 };
	size_t len_before, len_after;

	sql(path, schema1_store);
	before = slurp(path, &len_before);
	s = open_ok(path, 0);
	check_schema1_map(s);
	if (nt_store_latest(s, "GPU-schema1", &m, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(m->n_probe, 0);
	nt_map_free(m);
	assert_int_equal(nt_store_list(s, collect, &seen, &err), 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.e[0].parts, NT_MAP_NOISE);
	nt_store_close(s);
	after = slurp(path, &len_after);
	assert_int_equal(len_before, len_after);
	assert_memory_equal(before, after, len_before);
	free(after);

	/* a writer (create = 1) that may not write there: not upgraded, no
	 * failure (root may write anything: nothing to see) */
	if (geteuid()) {
		assert_int_equal(chmod(path, 0444), 0);
		assert_int_equal(chmod((char *)*state, 0555), 0);
		s = open_ok(path, 1);
		check_schema1_map(s);
		nt_store_close(s);
		assert_int_equal(chmod((char *)*state, 0700), 0);
		after = slurp(path, &len_after);
		assert_memory_equal(before, after, len_before);
		free(after);
	}
	assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
	free(before);
	free(path);
}

/* A writer upgrades a store of schema 1 in place, keeping what it holds:
 * on opening it (create = 1), or else when it adds a map. */
static void test_schema1_upgraded(void **state)
{
	char *path = path_in(state, "v1.db"), *path2 = path_in(state, "v1-reader.db");
	const char *tables = "SELECT count(*) FROM sqlite_schema WHERE name IN ('probe', 'probe_value')";
	struct nt_map *m = sample_map(2, 0, 0, 4), *plain = sample_map(2, 0, 0, 5), *back = NULL;
	struct nt_store *s;
	struct nt_err err = { "" };
	int64_t id;
	pid_t pid[4];
	int status;

	sample_probe(m, 3);
	sql(path, schema1_store);
	/* opened to write, it stays version 1 (an older nucatrace sharing it
	 * can still read it) while the maps added need no newer table */
	s = open_ok(path, 1);
	assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
	assert_int_equal(sql_int(path, tables), 0);
	check_schema1_map(s);
	if (nt_store_add(s, plain, &id, &err) || nt_store_get(s, id, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(plain, back);
	nt_map_free(back);
	assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
	/* the same map again, refused as already there: the rollback leaves
	 * it at version 1, and the next add that needs the tables makes them */
	assert_int_equal(nt_store_add_new(s, plain, &id, &err), 1);
	if (nt_store_add(s, m, &id, &err) || nt_store_get(s, id, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	nt_map_free(back);
	assert_int_equal(sql_int(path, "PRAGMA user_version"), NT_STORE_SCHEMA);
	assert_int_equal(sql_int(path, "PRAGMA application_id"), NT_STORE_APP_ID);
	assert_int_equal(sql_int(path, tables), 2);
	check_schema1_map(s);
	nt_store_close(s);

	sql(path2, schema1_store);
	s = open_ok(path2, 0);
	assert_int_equal(sql_int(path2, "PRAGMA user_version"), 1);
	if (nt_store_add(s, m, &id, &err) || nt_store_get(s, id, &back, &err))
		fail_msg("%s", err.msg);
	assert_maps_equal(m, back);
	nt_map_free(back);
	assert_int_equal(sql_int(path2, "PRAGMA user_version"), NT_STORE_SCHEMA);
	check_schema1_map(s);
	nt_store_close(s);

	/* several writers at once: one upgrades, all add */
	remove(path2);
	sql(path2, schema1_store);
	for (int p = 0; p < 4; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (!pid[p]) {
			int bad = nt_store_open(path2, 1, &s, NULL);

			for (int i = 0; !bad && i < 5; i++)
				bad = nt_store_add(s, m, NULL, NULL);
			nt_store_close(s);
			_exit(bad ? 1 : 0);
		}
	}
	for (int p = 0; p < 4; p++) {
		assert_int_equal(waitpid(pid[p], &status, 0), pid[p]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(sql_int(path2, "SELECT count(*) FROM calib"), 1 + 20);
	assert_int_equal(sql_int(path2, "SELECT count(*) FROM probe_value"), 20 * 3 * 2);
	nt_map_free(m);
	nt_map_free(plain);
	free(path);
	free(path2);
}

static void test_concurrent_writers(void **state)
{
	char *path = path_in(state, "conc.db");
	pid_t pid[4];
	int status;

	for (int p = 0; p < 4; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (!pid[p]) {
			struct nt_store *s = NULL;
			struct nt_map *m = sample_map(8, 4, NT_MAP_LINES, p);
			int bad = nt_store_open(path, 1, &s, NULL);

			for (int i = 0; !bad && i < 10; i++)
				bad = nt_store_add(s, m, NULL, NULL);
			nt_store_close(s);
			nt_map_free(m);
			_exit(bad ? 1 : 0);
		}
	}
	for (int p = 0; p < 4; p++) {
		assert_int_equal(waitpid(pid[p], &status, 0), pid[p]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(sql_int(path, "SELECT count(*) FROM calib"), 40);
	assert_int_equal(sql_int(path, "SELECT count(*) FROM line_value"), 40 * 32);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_path),
		cmocka_unit_test_setup_teardown(test_round_trip_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_parts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_is_plain_sql, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_map_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve_uuid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_spec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_becomes_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema1_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema1_upgraded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
