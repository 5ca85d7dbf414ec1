/*
 * maptest.h - what the map tests share: a sample map with awkward
 * values, a field-by-field comparison, scratch files, and the real maps
 * of tests/data/maps.
 *
 * Include after <cmocka.h>.  Each test binary is built from one .c file,
 * so these are static; unused ones are fine.
 */
#ifndef NT_MAPTEST_H
#define NT_MAPTEST_H

#include "map/map.h"
#include "map/mapfields.h"
#include "map/mapio.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#define TEST_HELPER static __attribute__((unused))

/* The real map tests/data/maps/h200-<name>.json (under $NT_TEST_DATA):
 * a new map, or NULL after printing why. */
TEST_HELPER struct nt_map *real_map(const char *name)
{
	const char *dir = getenv("NT_TEST_DATA");
	struct nt_map *m = NULL;
	struct nt_err err;
	char path[512];

	snprintf(path, sizeof(path), "%s/maps/h200-%s.json", dir ? dir : "tests/data", name);
	if (nt_map_read_json(path, &m, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	return m;
}

/* A map of n_sm SMs with the given parts, every field set, values that
 * need all 17 digits, and a few NAN cells.  seed varies the values. */
TEST_HELPER struct nt_map *sample_map(int n_sm, int n_line, unsigned parts, int seed)
{
	struct nt_map *m = nt_map_new(n_sm, n_line, parts);

	assert_non_null(m);
	snprintf(m->gpu.uuid, sizeof(m->gpu.uuid), "GPU-%08x-1c2d-3e4f-5a6b-7c8d9e0f1a2b", seed);
	snprintf(m->gpu.name, sizeof(m->gpu.name), "NVIDIA H200 \"t\\est\" \xc3\xbc\t%d", seed);
	m->gpu.sm_count = n_sm;
	m->gpu.cc_major = 9;
	m->gpu.cc_minor = 0;
	m->gpu.l2_bytes = 62914560LL + seed;
	snprintf(m->gpu.driver, sizeof(m->gpu.driver), "580.159.04");
	m->gpu.cuda_version = 13000;
	m->gpu.clock_khz = 1980000;
	m->params.chain_bytes = 8LL << 30;	/* does not fit an int */
	m->params.chain_loads = 4096;
	m->params.chain_reps = 9;
	m->params.line_loads = 256;
	m->params.line_reps = 5;
	m->params.footprint_bytes = 48LL << 20;
	snprintf(m->params.statistic, sizeof(m->params.statistic), "median");
	m->created_at = 1764461400 + seed;
	snprintf(m->tool_version, sizeof(m->tool_version), "0.1.0");
	snprintf(m->host, sizeof(m->host), "node-%d", seed);
	snprintf(m->command, sizeof(m->command),
		 "nucatrace calibrate --reps 9,a \"quoted\" back\\slash\nsecond line\r");
	m->sm_clock_mhz = 1980.0 / 7.0;
	for (int i = 0; i < n_sm; i++) {
		m->chain[i] = 600.0 + i / 7.0 + seed;
		if (m->noise)
			m->noise[i] = 0.1 * i + 1e-300;
	}
	if (n_sm > 1)	/* readers refuse a map with no SM measured */
		m->chain[n_sm / 2] = NAN;
	for (int l = 0; m->line_offset && l < n_line; l++)
		m->line_offset[l] = (int64_t)l * 128 + (5LL << 32);
	for (size_t c = 0; m->line_offset && c < (size_t)n_sm * n_line; c++) {
		if (m->line_lat)
			m->line_lat[c] = c % 5 == 3 ? NAN : 550.0 + c / 3.0;
		if (m->ft_first) {
			m->ft_first[c] = c % 7 == 2 ? NAN : 1200.0 + c * 0.1;
			m->ft_repeat[c] = 590.25 - c * 1e-9;
		}
	}
	return m;
}

/* Give m a probe part of n configurations: every count set, values
 * that need all 17 digits, a NAN body and a few NAN costs. */
TEST_HELPER void sample_probe(struct nt_map *m, int n)
{
	assert_int_equal(nt_map_set_probe(m, n), 0);
	for (int p = 0; p < n; p++) {
		m->probe[p] = (struct nt_map_probe){
			.threads = 32 << (p % 6), .iters = p * 1000, .blocks = 132 * (p + 1),
			.body_native = 1000.0 / 3 + p, .body_traced = p == 1 ? NAN : 1e5 / 7 + p,
		};
		for (int s = 0; s < m->n_sm; s++)
			m->probe_cost[(size_t)p * m->n_sm + s] =
				(p + s) % 5 == 3 ? NAN : 700.0 / 3 + s * 1e-7 + p;
	}
}

TEST_HELPER void assert_same_double(double a, double b, const char *what, size_t i)
{
	if ((isnan(a) && isnan(b)) || a == b)
		return;
	fail_msg("%s[%zu]: %.17g != %.17g", what, i, a, b);
}

TEST_HELPER void assert_same_vec(const double *a, const double *b, size_t n, const char *what)
{
	if (!a || !b) {
		if (a || b)
			fail_msg("%s present in only one map", what);
		return;
	}
	for (size_t i = 0; i < n; i++)
		assert_same_double(a[i], b[i], what, i);
}

/* Every field and cell of a and b is the same (NAN equals NAN). */
TEST_HELPER void assert_maps_equal(const struct nt_map *a, const struct nt_map *b)
{
	size_t cells;

	for (int i = 0; i < nt_map_n_fields; i++) {
		const struct nt_map_field *f = &nt_map_fields[i];

		if (f->kind == NT_FK_TEXT && strcmp(nt_map_field_text(a, f), nt_map_field_text(b, f)))
			fail_msg("%s: '%s' != '%s'", f->key, nt_map_field_text(a, f),
				 nt_map_field_text(b, f));
		if ((f->kind == NT_FK_INT || f->kind == NT_FK_I64) &&
		    nt_map_field_int(a, f) != nt_map_field_int(b, f))
			fail_msg("%s: %lld != %lld", f->key, (long long)nt_map_field_int(a, f),
				 (long long)nt_map_field_int(b, f));
		if (f->kind == NT_FK_REAL)
			assert_same_double(nt_map_field_real(a, f), nt_map_field_real(b, f), f->key, 0);
	}
	assert_int_equal(a->n_sm, b->n_sm);
	assert_int_equal(nt_map_parts_of(a), nt_map_parts_of(b));
	assert_int_equal(nt_map_lines_of(a), nt_map_lines_of(b));
	cells = (size_t)a->n_sm * nt_map_lines_of(a);
	assert_same_vec(a->chain, b->chain, a->n_sm, "chain");
	assert_same_vec(a->noise, b->noise, a->n_sm, "noise");
	if (nt_map_lines_of(a))
		assert_memory_equal(a->line_offset, b->line_offset, a->n_line * sizeof(int64_t));
	assert_same_vec(a->line_lat, b->line_lat, cells, "line_lat");
	assert_same_vec(a->ft_first, b->ft_first, cells, "ft_first");
	assert_same_vec(a->ft_repeat, b->ft_repeat, cells, "ft_repeat");
	assert_int_equal(a->n_probe, b->n_probe);
	for (int p = 0; p < a->n_probe; p++) {
		assert_int_equal(a->probe[p].threads, b->probe[p].threads);
		assert_int_equal(a->probe[p].iters, b->probe[p].iters);
		assert_int_equal(a->probe[p].blocks, b->probe[p].blocks);
		assert_same_double(a->probe[p].body_native, b->probe[p].body_native, "body_native", p);
		assert_same_double(a->probe[p].body_traced, b->probe[p].body_traced, "body_traced", p);
	}
	assert_same_vec(a->probe_cost, b->probe_cost, (size_t)a->n_probe * a->n_sm, "probe_cost");
}

/* A fresh scratch directory, and its removal with all it holds. */
TEST_HELPER char *scratch_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = malloc(4096);

	assert_non_null(dir);
	snprintf(dir, 4096, "%s/nt-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return dir;
}

TEST_HELPER int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

TEST_HELPER void scratch_remove(char *dir)
{
	if (dir)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

TEST_HELPER void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The whole file, NUL-terminated; its length in *len when len is set. */
TEST_HELPER char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

/* cmocka fixtures: a scratch folder per test, and paths inside it. */
TEST_HELPER int setup(void **state)
{
	*state = scratch_dir();
	return 0;
}

TEST_HELPER int teardown(void **state)
{
	scratch_remove(*state);
	return 0;
}

TEST_HELPER char *path_in(void **state, const char *name)
{
	char *p = malloc(4096);

	assert_non_null(p);
	snprintf(p, 4096, "%s/%s", (char *)*state, name);
	return p;
}

/* SQL on a store or trace file, for tests that look under the API. */
TEST_HELPER void sql(const char *path, const char *stmt)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, stmt, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s: %s", stmt, sqlite3_errmsg(db));
	sqlite3_close(db);
}

TEST_HELPER int64_t sql_int(const char *path, const char *query)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, query, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", query, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

#endif
