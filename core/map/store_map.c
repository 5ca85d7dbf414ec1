/* Calibrations in and out of the store (store.h has the schema). */
#include "map/mapfields.h"
#include "map/store_impl.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The calib columns after the three sizes are the fields of mapfields.def,
 * in its order. */
#define N_SIZES 3

static const char insert_sql[] = "INSERT INTO calib(n_sm, n_line, parts"
#define F(group, key, kind, member) ", " #key
#include "map/mapfields.def"
#undef F
	") VALUES(?, ?, ?"
#define F(group, key, kind, member) ", ?"
#include "map/mapfields.def"
#undef F
	")";

static const char select_sql[] = "SELECT n_sm, n_line, parts"
#define F(group, key, kind, member) ", " #key
#include "map/mapfields.def"
#undef F
	" FROM calib WHERE id = ?";

static void bind_real(sqlite3_stmt *st, int col, double v)
{
	if (isnan(v))	/* SQLite would store NULL anyway; say so */
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_double(st, col, v);
}

static double column_real(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

static const double *cell(const double *mat, size_t i)
{
	return mat ? &mat[i] : NULL;
}

/* Run an insert once and make it ready for the next row. */
static int step_reset(struct nt_store *s, sqlite3_stmt *st, struct nt_err *err)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return nt_store_db_error(s, err, "cannot add map");
	return 0;
}

static int insert_arrays(struct nt_store *s, const struct nt_map *m, int64_t id, struct nt_err *err)
{
	sqlite3_stmt *sm = NULL, *off = NULL, *val = NULL;
	int n_line = nt_map_lines_of(m), ret = -1;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO sm_value VALUES(?, ?, ?, ?)", -1, &sm, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO line_offset VALUES(?, ?, ?)", -1, &off, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO line_value VALUES(?, ?, ?, ?, ?, ?)", -1, &val, NULL)) {
		nt_store_db_error(s, err, "cannot add map");
		goto out;
	}
	for (int i = 0; i < m->n_sm; i++) {
		sqlite3_bind_int64(sm, 1, id);
		sqlite3_bind_int(sm, 2, i);
		bind_real(sm, 3, m->chain[i]);
		bind_real(sm, 4, m->noise ? m->noise[i] : NAN);
		if (step_reset(s, sm, err))
			goto out;
	}
	for (int l = 0; l < n_line; l++) {
		sqlite3_bind_int64(off, 1, id);
		sqlite3_bind_int(off, 2, l);
		sqlite3_bind_int64(off, 3, m->line_offset[l]);
		if (step_reset(s, off, err))
			goto out;
	}
	for (int i = 0; i < m->n_sm && n_line; i++) {
		for (int l = 0; l < n_line; l++) {
			size_t c = (size_t)i * n_line + l;
			const double *v[3] = { cell(m->line_lat, c), cell(m->ft_first, c),
					       cell(m->ft_repeat, c) };

			sqlite3_bind_int64(val, 1, id);
			sqlite3_bind_int(val, 2, i);
			sqlite3_bind_int(val, 3, l);
			for (int k = 0; k < 3; k++)
				bind_real(val, 4 + k, v[k] ? *v[k] : NAN);
			if (step_reset(s, val, err))
				goto out;
		}
	}
	ret = 0;
out:
	sqlite3_finalize(sm);
	sqlite3_finalize(off);
	sqlite3_finalize(val);
	return ret;
}

static int insert_probe(struct nt_store *s, const struct nt_map *m, int64_t id, struct nt_err *err)
{
	sqlite3_stmt *cf = NULL, *val = NULL;
	int ret = -1;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO probe VALUES(?, ?, ?, ?, ?, ?, ?)", -1, &cf, NULL) ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO probe_value VALUES(?, ?, ?, ?)", -1, &val, NULL)) {
		nt_store_db_error(s, err, "cannot add map");
		goto out;
	}
	for (int p = 0; p < m->n_probe; p++) {
		const struct nt_map_probe *c = &m->probe[p];

		sqlite3_bind_int64(cf, 1, id);
		sqlite3_bind_int(cf, 2, p);
		sqlite3_bind_int(cf, 3, c->threads);
		sqlite3_bind_int(cf, 4, c->iters);
		sqlite3_bind_int(cf, 5, c->blocks);
		bind_real(cf, 6, c->body_native);
		bind_real(cf, 7, c->body_traced);
		if (step_reset(s, cf, err))
			goto out;
		for (int i = 0; i < m->n_sm; i++) {
			sqlite3_bind_int64(val, 1, id);
			sqlite3_bind_int(val, 2, p);
			sqlite3_bind_int(val, 3, i);
			bind_real(val, 4, m->probe_cost[(size_t)p * m->n_sm + i]);
			if (step_reset(s, val, err))
				goto out;
		}
	}
	ret = 0;
out:
	sqlite3_finalize(cf);
	sqlite3_finalize(val);
	return ret;
}

/* The rows of m, inside the caller's transaction; its id in *id. */
static int insert_map(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (sqlite3_prepare_v2(s->db, insert_sql, -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot add map");
		goto out;
	}
	sqlite3_bind_int(st, 1, m->n_sm);
	sqlite3_bind_int(st, 2, nt_map_lines_of(m));
	sqlite3_bind_int(st, 3, (int)nt_map_parts_of(m));
	for (int i = 0; i < nt_map_n_fields; i++) {
		const struct nt_map_field *f = &nt_map_fields[i];
		int col = N_SIZES + 1 + i;

		if (f->kind == NT_FK_TEXT)
			sqlite3_bind_text(st, col, nt_map_field_text(m, f), -1, SQLITE_STATIC);
		else if (f->kind == NT_FK_REAL)
			bind_real(st, col, nt_map_field_real(m, f));
		else
			sqlite3_bind_int64(st, col, nt_map_field_int(m, f));
	}
	if (sqlite3_step(st) != SQLITE_DONE) {
		nt_store_db_error(s, err, "cannot add map");
		goto out;
	}
	*id = sqlite3_last_insert_rowid(s->db);
	ret = insert_arrays(s, m, *id, err);
	if (!ret && m->n_probe)
		ret = insert_probe(s, m, *id, err);
out:
	sqlite3_finalize(st);
	return ret;
}

/* Add m in one transaction, unless only_new and the store holds the
 * same calibration: then 1 and its id. */
static int add(struct nt_store *s, const struct nt_map *m, int only_new, int64_t *id, struct nt_err *err)
{
	int64_t new_id;
	int ret = -1, migrate;

	if (nt_map_check(m, s->path, err))
		return -1;
	/* IMMEDIATE: the write lock from the start, so that two processes
	 * adding the same map cannot both find it missing */
	if (nt_store_exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	/* a store of an older schema: the newer tables, when m needs them */
	migrate = s->schema < NT_STORE_SCHEMA && m->n_probe > 0;
	if (migrate && nt_store_migrate(s, err))
		goto out;
	if (only_new && (ret = nt_store_find_same(s, m, &new_id, err)))
		goto out;
	if (insert_map(s, m, &new_id, err) || nt_store_exec(s, "COMMIT", err)) {
		ret = -1;
		goto out;
	}
	if (migrate)	/* only once committed: a rollback undoes it */
		s->schema = NT_STORE_SCHEMA;
	ret = 0;
out:
	if (ret >= 0 && id)
		*id = new_id;
	if (ret)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

int nt_store_add(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err)
{
	return add(s, m, 0, id, err);
}

int nt_store_add_new(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err)
{
	return add(s, m, 1, id, err);
}

static int damaged(struct nt_store *s, int64_t id, const char *why, struct nt_err *err)
{
	return nt_err_set(err, "map store '%s': calibration %lld is damaged: %s", s->path,
			  (long long)id, why);
}

/* The calib row of id: a map of its sizes and fields, and its parts. */
static int read_calib(struct nt_store *s, int64_t id, struct nt_map **out, unsigned *parts,
		      struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	struct nt_map *m = NULL;
	int rc, n_sm, n_line, ret = -1;

	if (sqlite3_prepare_v2(s->db, select_sql, -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot read map");
		goto out;
	}
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		nt_err_set(err, "map store '%s' has no calibration %lld", s->path, (long long)id);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		nt_store_db_error(s, err, "cannot read map");
		goto out;
	}
	n_sm = sqlite3_column_int(st, 0);
	n_line = sqlite3_column_int(st, 1);
	*parts = (unsigned)sqlite3_column_int(st, 2);
	if (*parts & ~(NT_MAP_NOISE | NT_MAP_LINES | NT_MAP_FIRST_TOUCH | NT_MAP_PROBE) ||
	    n_sm > NT_MAP_MAX_SM || n_line < 0 || n_line > NT_MAP_MAX_LINES ||
	    !(m = nt_map_new(n_sm, n_line, *parts))) {
		damaged(s, id, "bad sizes", err);
		goto out;
	}
	for (int i = 0; i < nt_map_n_fields; i++) {
		const struct nt_map_field *f = &nt_map_fields[i];
		int col = N_SIZES + i;
		const char *text;

		if (f->kind == NT_FK_TEXT) {
			text = (const char *)sqlite3_column_text(st, col);
			rc = nt_map_field_set_text(m, f, text ? text : "");
		} else if (f->kind == NT_FK_REAL) {
			nt_map_field_set_real(m, f, column_real(st, col));
			rc = 0;
		} else {
			rc = nt_map_field_set_int(m, f, sqlite3_column_int64(st, col));
		}
		if (rc) {
			damaged(s, id, f->key, err);
			goto out;
		}
	}
	if (!nt_map_time_ok(m->created_at)) {
		damaged(s, id, "created_at is not a time in the years 1970..9999", err);
		goto out;
	}
	if (m->gpu.sm_count != n_sm) {
		damaged(s, id, "sm_count differs from n_sm", err);
		goto out;
	}
	*out = m;
	m = NULL;
	ret = 0;
out:
	sqlite3_finalize(st);
	nt_map_free(m);
	return ret;
}

/* After a table's rows of calibration id: the walk ended well (rc) and
 * found the rows it should.  0, or -1 with err set. */
static int rows_read(struct nt_store *s, int64_t id, int rc, const char *table, size_t rows, size_t want,
		     struct nt_err *err)
{
	char why[128];

	if (rc != SQLITE_DONE)
		return nt_store_db_error(s, err, "cannot read map");
	if (rows == want)
		return 0;
	snprintf(why, sizeof(why), "%s has %zu of %zu rows", table, rows, want);
	return damaged(s, id, why, err);
}

/* Whether a latency in columns first..last of a row is not a number or
 * outside map.h's limits; then why says which, of where ("sm 2").
 * Before the row's values are read: reading converts them. */
static int bad_latency(sqlite3_stmt *st, int first, int last, const char *where, char *why, size_t len)
{
	for (int col = first; col <= last; col++) {
		int type = sqlite3_column_type(st, col);
		double v = column_real(st, col);

		if (type != SQLITE_NULL && type != SQLITE_FLOAT && type != SQLITE_INTEGER)
			snprintf(why, len, "%s of %s is not a number", sqlite3_column_name(st, col), where);
		else if (!nt_map_latency_ok(v))
			snprintf(why, len, "%s of %s is %g: not a latency of 0..%.0f cycles",
				 sqlite3_column_name(st, col), where, v, NT_MAP_MAX_CYCLES);
		else
			continue;
		return 1;
	}
	return 0;
}

static int read_arrays(struct nt_store *s, int64_t id, struct nt_map *m, struct nt_err *err)
{
	static const char *const tables[] = { "sm_value", "line_offset", "line_value" };
	static const char *const sql[] = {
		"SELECT sm, 0, chain, noise FROM sm_value WHERE calib_id = ?",
		"SELECT 0, line, byte_offset FROM line_offset WHERE calib_id = ?",
		"SELECT sm, line, latency, ft_first, ft_repeat FROM line_value WHERE calib_id = ?",
	};
	/* the primary keys rule out duplicates: the right count is every row */
	size_t n_line = nt_map_lines_of(m);
	const size_t want[] = { m->n_sm, n_line, m->n_sm * n_line };
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, ret = -1;
	char why[128], where[48];

	for (int q = 0; q < 3; q++) {
		size_t rows = 0;

		if (sqlite3_prepare_v2(s->db, sql[q], -1, &st, NULL)) {
			nt_store_db_error(s, err, "cannot read map");
			goto out;
		}
		sqlite3_bind_int64(st, 1, id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			/* types before values: reading one may convert it */
			int t0 = sqlite3_column_type(st, 0), t1 = sqlite3_column_type(st, 1);
			int sm = sqlite3_column_int(st, 0), line = sqlite3_column_int(st, 1);
			size_t c = (size_t)sm * m->n_line + line;

			if (t0 != SQLITE_INTEGER || sm < 0 || sm >= m->n_sm || t1 != SQLITE_INTEGER || line < 0 ||
			    line >= (q ? m->n_line : 1)) {
				damaged(s, id, "index out of range", err);
				goto out;
			}
			rows++;
			if (q == 2)
				snprintf(where, sizeof(where), "sm %d line %d", sm, line);
			else
				snprintf(where, sizeof(where), "sm %d", sm);
			if (q != 1 && bad_latency(st, 2, q ? 4 : 3, where, why, sizeof(why))) {
				damaged(s, id, why, err);
				goto out;
			}
			if (q == 0) {
				m->chain[sm] = column_real(st, 2);
				if (m->noise)
					m->noise[sm] = column_real(st, 3);
			} else if (q == 1) {
				m->line_offset[line] = sqlite3_column_int64(st, 2);
			} else {
				if (m->line_lat)
					m->line_lat[c] = column_real(st, 2);
				if (m->ft_first)
					m->ft_first[c] = column_real(st, 3);
				if (m->ft_repeat)
					m->ft_repeat[c] = column_real(st, 4);
			}
		}
		if (rows_read(s, id, rc, tables[q], rows, want[q], err))
			goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* The count that sql gives, with id bound to its parameter. */
static int count_rows(struct nt_store *s, const char *sql, int64_t id, int64_t *n, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = -1;

	if (!sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) {
		sqlite3_bind_int64(st, 1, id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*n = sqlite3_column_int64(st, 0);
			ret = 0;
		}
	}
	if (ret)
		nt_store_db_error(s, err, "cannot read map");
	sqlite3_finalize(st);
	return ret;
}

/* Columns first.. of a probe row as the ints they must be. */
static int probe_counts(struct nt_store *s, int64_t id, sqlite3_stmt *st, int first, int p,
			struct nt_map_probe *c, struct nt_err *err)
{
	int *count[3] = { &c->threads, &c->iters, &c->blocks };
	char why[128];

	for (int k = 0; k < 3; k++) {
		int type = sqlite3_column_type(st, first + k);	/* before the value: it may convert it */
		int64_t v = sqlite3_column_int64(st, first + k);

		if (type != SQLITE_INTEGER || v < INT_MIN || v > INT_MAX) {
			snprintf(why, sizeof(why), "%s of probe %d is not a 32-bit integer",
				 sqlite3_column_name(st, first + k), p);
			return damaged(s, id, why, err);
		}
		*count[k] = (int)v;
	}
	return 0;
}

/* The probe part when parts has it: 1..NT_MAP_MAX_PROBES rows of probe,
 * n_sm rows of probe_value for each.  Without it no rows, and in a store
 * of schema 1 no tables. */
static int read_probe(struct nt_store *s, int64_t id, struct nt_map *m, unsigned parts, struct nt_err *err)
{
	static const char *const tables[] = { "probe", "probe_value" };
	static const char *const sql[] = {
		"SELECT probe, 0, body_native, body_traced, threads, iters, blocks FROM probe "
		"WHERE calib_id = ?",
		"SELECT probe, sm, cost FROM probe_value WHERE calib_id = ?",
	};
	int has = !!(parts & NT_MAP_PROBE), rc, ret = -1;
	int64_t there, n;
	sqlite3_stmt *st = NULL;
	char why[128], where[48];

	if (count_rows(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
		       "name IN ('probe', 'probe_value')", id, &there, err))
		return -1;
	if (there < 2)
		return has ? damaged(s, id, "it has a probe part, the store no probe tables", err) : 0;
	if (count_rows(s, "SELECT count(*) FROM probe WHERE calib_id = ?", id, &n, err))
		return -1;
	if (has && (n < 1 || n > NT_MAP_MAX_PROBES)) {
		snprintf(why, sizeof(why), "probe has %lld rows, not 1..%d", (long long)n, NT_MAP_MAX_PROBES);
		return damaged(s, id, why, err);
	}
	if (!has && n) {
		snprintf(why, sizeof(why), "probe has %lld of 0 rows", (long long)n);
		return damaged(s, id, why, err);
	}
	if (n && nt_map_set_probe(m, (int)n))
		return nt_err_set(err, "map store '%s': out of memory", s->path);
	for (int q = 0; q < 2; q++) {
		size_t rows = 0, want = q ? (size_t)n * m->n_sm : (size_t)n;

		if (sqlite3_prepare_v2(s->db, sql[q], -1, &st, NULL)) {
			nt_store_db_error(s, err, "cannot read map");
			goto out;
		}
		sqlite3_bind_int64(st, 1, id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int t0 = sqlite3_column_type(st, 0), t1 = sqlite3_column_type(st, 1);	/* types first */
			int p = sqlite3_column_int(st, 0), sm = sqlite3_column_int(st, 1);

			if (t0 != SQLITE_INTEGER || p < 0 || p >= n || t1 != SQLITE_INTEGER || sm < 0 ||
			    sm >= (q ? m->n_sm : 1)) {
				damaged(s, id, "index out of range", err);
				goto out;
			}
			rows++;
			if (q)
				snprintf(where, sizeof(where), "probe %d sm %d", p, sm);
			else
				snprintf(where, sizeof(where), "probe %d", p);
			if (bad_latency(st, 2, q ? 2 : 3, where, why, sizeof(why))) {
				damaged(s, id, why, err);
				goto out;
			}
			if (q) {
				m->probe_cost[(size_t)p * m->n_sm + sm] = column_real(st, 2);
				continue;
			}
			m->probe[p].body_native = column_real(st, 2);
			m->probe[p].body_traced = column_real(st, 3);
			if (probe_counts(s, id, st, 4, p, &m->probe[p], err))
				goto out;
		}
		if (rows_read(s, id, rc, tables[q], rows, want, err))
			goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int nt_store_get(struct nt_store *s, int64_t id, struct nt_map **out, struct nt_err *err)
{
	struct nt_map *m = NULL;
	struct nt_err why;
	unsigned parts;

	*out = NULL;
	if (read_calib(s, id, &m, &parts, err))
		return -1;
	if (read_arrays(s, id, m, err) || read_probe(s, id, m, parts, err) ||
	    (nt_map_check_values(m, NULL, &why) && damaged(s, id, why.msg, err))) {
		nt_map_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

/* Run a query whose one row holds an integer, with uuid bound to ?1. */
static int query_int(struct nt_store *s, const char *sql, const char *uuid, int64_t *v,
		     int *found, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	*found = rc == SQLITE_ROW;
	if (*found)
		*v = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int nt_store_latest(struct nt_store *s, const char *uuid, struct nt_map **out, struct nt_err *err)
{
	int64_t id = 0;
	int found;

	*out = NULL;
	if (query_int(s, "SELECT id FROM calib WHERE ?1 IS NULL OR uuid = ?1 "
		      "ORDER BY created_at DESC, id DESC LIMIT 1", uuid, &id, &found, err))
		return -1;
	if (!found && uuid)
		return nt_err_set(err, "map store '%s' has no calibration of GPU '%s'", s->path, uuid);
	if (!found)
		return nt_err_set(err, "map store '%s' has no calibrations", s->path);
	return nt_store_get(s, id, out, err);
}

int nt_store_resolve_uuid(struct nt_store *s, const char *prefix, char *uuid, size_t len,
			  struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	char list[256] = "";
	size_t used = 0;
	int rc, n = 0, exact = 0, ret = -1;

	/* substr, not LIKE: '_' and '%' in a UUID prefix are no wildcards */
	if (sqlite3_prepare_v2(s->db, "SELECT DISTINCT uuid, uuid = ?1 FROM calib "
			       "WHERE substr(uuid, 1, length(?1)) = ?1 ORDER BY uuid", -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *u = (const char *)sqlite3_column_text(st, 0);

		if (!u)
			continue;
		if (sqlite3_column_int(st, 1)) {
			exact = 1;
			snprintf(uuid, len, "%s", u);
			break;
		}
		if (!n++)
			snprintf(uuid, len, "%s", u);
		if (used < sizeof(list))
			used += snprintf(list + used, sizeof(list) - used, "%s%s", n > 1 ? ", " : "", u);
	}
	if (!exact && rc != SQLITE_DONE) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	if (!exact && !n) {
		nt_err_set(err, "map store '%s' has no calibration of GPU '%s'", s->path, prefix);
		goto out;
	}
	if (!exact && n > 1) {
		nt_err_set(err, "'%s' is the start of %d GPU UUIDs in map store '%s': %s%s", prefix, n,
			   s->path, list, used >= sizeof(list) ? " ..." : "");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int nt_store_find_same(struct nt_store *s, const struct nt_map *m, int64_t *id, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = -1;

	/* every part of m: a copy without one (a CSV file has no probe part)
	 * does not stand for m */
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM calib WHERE uuid = ?1 AND created_at = ?2 "
			       "AND host = ?3 AND (parts & ?4) = ?4 ORDER BY id LIMIT 1", -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	sqlite3_bind_text(st, 1, m->gpu.uuid, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, m->created_at);
	sqlite3_bind_text(st, 3, m->host, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, (int)nt_map_parts_of(m));
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		nt_store_db_error(s, err, "cannot query");
		goto out;
	}
	ret = rc == SQLITE_ROW;
	if (ret)
		*id = sqlite3_column_int64(st, 0);
out:
	sqlite3_finalize(st);
	return ret;
}

int nt_store_count(struct nt_store *s, const char *uuid, int64_t *n, struct nt_err *err)
{
	int found;

	return query_int(s, "SELECT count(*) FROM calib WHERE ?1 IS NULL OR uuid = ?1",
			 uuid, n, &found, err);
}

static void copy_text(char *dst, size_t size, sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);

	snprintf(dst, size, "%s", t ? t : "");
}

int nt_store_list(struct nt_store *s, int (*cb)(const struct nt_store_entry *e, void *arg),
		  void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	struct nt_store_entry e;
	int rc, ret = -1;

	if (sqlite3_prepare_v2(s->db, "SELECT id, uuid, name, sm_count, created_at, parts, n_line, "
			       "sm_clock_mhz, host, tool_version FROM calib ORDER BY id",
			       -1, &st, NULL)) {
		nt_store_db_error(s, err, "cannot list maps");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&e, 0, sizeof(e));
		e.id = sqlite3_column_int64(st, 0);
		copy_text(e.uuid, sizeof(e.uuid), st, 1);
		copy_text(e.name, sizeof(e.name), st, 2);
		e.sm_count = sqlite3_column_int(st, 3);
		e.created_at = sqlite3_column_int64(st, 4);
		e.parts = (unsigned)sqlite3_column_int(st, 5);
		e.n_line = sqlite3_column_int(st, 6);
		e.sm_clock_mhz = column_real(st, 7);
		copy_text(e.host, sizeof(e.host), st, 8);
		copy_text(e.tool_version, sizeof(e.tool_version), st, 9);
		if ((ret = cb(&e, arg)))
			goto out;
	}
	if (rc != SQLITE_DONE) {
		nt_store_db_error(s, err, "cannot list maps");
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}
