/* Reading a map from JSON (mapio.h has the layout): jsonread.h does the
 * parsing; this file checks shapes and types and copies values. */
#include "util/jsonread.h"
#include "map/mapfields.h"
#include "map/mapio.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A latency cell at key: a number or null, within the limits of map.h. */
static int read_latency(struct nt_jsonread *r, sqlite3_stmt *st, int col, const char *key, double *v)
{
	if (nt_jsonread_number(r, st, col, key, v))
		return -1;
	if (!nt_map_latency_ok(*v))
		return nt_err_set(r->err, "'%s': \"%s\" is %g: not a latency of 0..%.0f cycles", r->path,
				  key, *v, NT_MAP_MAX_CYCLES);
	return 0;
}

static int read_vector(struct nt_jsonread *r, const char *name, double *dst)
{
	char jpath[64], key[96];
	sqlite3_stmt *st;
	int rc, ret = -1;

	snprintf(jpath, sizeof(jpath), "$.%s", name);
	if (!(st = nt_jsonread_query(r, "SELECT key, type, atom FROM json_each(?1, ?2)", jpath)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int i = sqlite3_column_int(st, 0);

		snprintf(key, sizeof(key), "%s[%d]", name, i);
		if (read_latency(r, st, 1, key, &dst[i]))
			goto out;
	}
	ret = nt_jsonread_done(r, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

static int read_offsets(struct nt_jsonread *r, struct nt_map *m)
{
	sqlite3_stmt *st = nt_jsonread_query(r, "SELECT key, type, atom FROM json_each(?1, ?2)", "$.lines.offset");
	int rc, ret = -1;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int i = sqlite3_column_int(st, 0);

		if (strcmp((const char *)sqlite3_column_text(st, 1), "integer")) {
			nt_err_set(r->err, "'%s': \"lines.offset[%d]\" is not an integer", r->path, i);
			goto out;
		}
		m->line_offset[i] = sqlite3_column_int64(st, 2);
	}
	ret = nt_jsonread_done(r, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

/* n_sm rows of n_line numbers at $.name. */
static int read_matrix(struct nt_jsonread *r, const struct nt_map *m, const char *name, double *dst)
{
	char jpath[64], key[96];
	sqlite3_stmt *st;
	int rc, rows, ret = -1;

	snprintf(jpath, sizeof(jpath), "$.%s", name);
	if (nt_jsonread_shape(r, jpath, key, sizeof(key), &rows))
		return -1;
	if (strcmp(key, "array") || rows != m->n_sm)
		return nt_err_set(r->err, "'%s': \"%s\" is not an array of %d rows (one per SM)",
				  r->path, name, m->n_sm);
	if (!(st = nt_jsonread_query(r, "SELECT key, type, json_array_length(value) FROM json_each(?1, ?2)", jpath)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (strcmp((const char *)sqlite3_column_text(st, 1), "array") ||
		    sqlite3_column_int(st, 2) != m->n_line) {
			nt_err_set(r->err, "'%s': \"%s[%d]\" is not an array of %d numbers (one per line)",
				   r->path, name, sqlite3_column_int(st, 0), m->n_line);
			goto out;
		}
	}
	if (nt_jsonread_done(r, rc))
		goto out;
	sqlite3_finalize(st);
	if (!(st = nt_jsonread_query(r, "SELECT a.key, b.key, b.type, b.atom FROM json_each(?1, ?2) AS a, "
			 "json_each(a.value) AS b", jpath)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int i = sqlite3_column_int(st, 0), l = sqlite3_column_int(st, 1);

		snprintf(key, sizeof(key), "%s[%d][%d]", name, i, l);
		if (read_latency(r, st, 2, key, nt_map_at(dst, m, i, l)))
			goto out;
	}
	ret = nt_jsonread_done(r, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

/* The members of a probe configuration; cost is read apart. */
enum { K_THREADS, K_ITERS, K_BLOCKS, K_NATIVE, K_TRACED, K_COST, N_PROBE_KEYS };
static const char *const probe_key[N_PROBE_KEYS] = {
	"threads", "iters", "blocks", "body_native", "body_traced", "cost",
};

/* Member k (not cost) of configuration c, from columns (type, atom) at col. */
static int set_probe_member(struct nt_jsonread *r, struct nt_map_probe *c, int k, sqlite3_stmt *st,
			    int col, const char *key)
{
	int *count[3] = { &c->threads, &c->iters, &c->blocks };
	double *body[2] = { &c->body_native, &c->body_traced };
	int min = k == K_THREADS, max = k == K_THREADS ? 1024 : NT_MAP_MAX_PROBE_COUNT;
	int64_t v;

	if (k == K_NATIVE || k == K_TRACED)
		return read_latency(r, st, col, key, body[k - K_NATIVE]);
	v = sqlite3_column_int64(st, col + 1);
	if (strcmp((const char *)sqlite3_column_text(st, col), "integer") || v < min || v > max)
		return nt_err_set(r->err, "'%s': \"%s\" is not an integer of %d..%d", r->path, key, min, max);
	*count[k] = (int)v;
	return 0;
}

/* $.probe: m->n_probe objects, each with every member of probe_key and
 * a cost of one number (or null) per SM. */
static int read_probe(struct nt_jsonread *r, struct nt_map *m)
{
	unsigned char seen[NT_MAP_MAX_PROBES][N_PROBE_KEYS] = { { 0 } };
	sqlite3_stmt *st;
	char key[96];
	int rc, ret = -1;

	/* fullkey, not value: a string element's value is no JSON */
	if (!(st = nt_jsonread_query(r, "SELECT key, type, json_type(?1, fullkey || '.cost'), "
				     "json_array_length(?1, fullkey || '.cost') FROM json_each(?1, ?2)",
				     "$.probe")))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0);
		const char *cost = (const char *)sqlite3_column_text(st, 2);

		if (strcmp((const char *)sqlite3_column_text(st, 1), "object")) {
			nt_err_set(r->err, "'%s': \"probe[%d]\" is not an object", r->path, p);
			goto out;
		}
		if (cost && (strcmp(cost, "array") || sqlite3_column_int(st, 3) != m->n_sm)) {
			nt_err_set(r->err, "'%s': \"probe[%d].cost\" is not an array of %d numbers (one "
				   "per SM)", r->path, p, m->n_sm);
			goto out;
		}
		seen[p][K_COST] = cost != NULL;
	}
	if (nt_jsonread_done(r, rc))
		goto out;
	sqlite3_finalize(st);
	if (!(st = nt_jsonread_query(r, "SELECT a.key, b.key, b.type, b.atom FROM json_each(?1, ?2) AS a, "
				     "json_each(a.value) AS b", "$.probe")))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0), k;
		const char *name = (const char *)sqlite3_column_text(st, 1);

		for (k = 0; k < K_COST && strcmp(name, probe_key[k]); k++)
			;
		if (k == K_COST)
			continue;	/* cost, or a key from a newer nucatrace */
		snprintf(key, sizeof(key), "probe[%d].%s", p, probe_key[k]);
		if (set_probe_member(r, &m->probe[p], k, st, 2, key))
			goto out;
		seen[p][k] = 1;
	}
	if (nt_jsonread_done(r, rc))
		goto out;
	for (int p = 0; p < m->n_probe; p++) {
		for (int k = 0; k < N_PROBE_KEYS; k++) {
			if (!seen[p][k]) {
				nt_err_set(r->err, "'%s': missing key \"probe[%d].%s\"", r->path, p,
					   probe_key[k]);
				goto out;
			}
		}
	}
	sqlite3_finalize(st);
	if (!(st = nt_jsonread_query(r, "SELECT a.key, b.key, b.type, b.atom FROM json_each(?1, ?2) AS a, "
				     "json_each(a.value, '$.cost') AS b", "$.probe")))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = sqlite3_column_int(st, 0), sm = sqlite3_column_int(st, 1);

		snprintf(key, sizeof(key), "probe[%d].cost[%d]", p, sm);
		if (read_latency(r, st, 2, key, &m->probe_cost[(size_t)p * m->n_sm + sm]))
			goto out;
	}
	ret = nt_jsonread_done(r, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

static int is_cc_field(const struct nt_map_field *f)
{
	return f->off == offsetof(struct nt_map, gpu.cc_major) ||
	       f->off == offsetof(struct nt_map, gpu.cc_minor);
}

/* The field a JSON key of group g holds; NULL for keys handled apart. */
static const struct nt_map_field *field_for(enum nt_field_group g, const char *key)
{
	if (g == NT_FG_RUN && !strcmp(key, "created_at"))
		return NULL;	/* the ISO form; created_at_unix is the value */
	if (g == NT_FG_RUN && !strcmp(key, "created_at_unix"))
		key = "created_at";
	return nt_map_field_find(g, key);
}

static int set_field(struct nt_jsonread *r, struct nt_map *m, const struct nt_map_field *f,
		     sqlite3_stmt *st, const char *key)
{
	const char *type = (const char *)sqlite3_column_text(st, 1);
	double v;

	switch (f->kind) {
	case NT_FK_TEXT:
		if (strcmp(type, "text"))
			return nt_err_set(r->err, "'%s': \"%s\" is not a string", r->path, key);
		if (nt_map_field_set_text(m, f, (const char *)sqlite3_column_text(st, 2)))
			return nt_err_set(r->err, "'%s': \"%s\" is too long", r->path, key);
		return 0;
	case NT_FK_INT:
	case NT_FK_I64:
		if (strcmp(type, "integer") || nt_map_field_set_int(m, f, sqlite3_column_int64(st, 2)))
			return nt_err_set(r->err, "'%s': \"%s\" is not an integer in range", r->path, key);
		return 0;
	case NT_FK_REAL:
		if (nt_jsonread_number(r, st, 1, key, &v))
			return -1;
		nt_map_field_set_real(m, f, v);
		return 0;
	}
	return -1;
}

/* "9.0" */
static int set_cc(struct nt_jsonread *r, struct nt_map *m, sqlite3_stmt *st)
{
	const char *s = (const char *)sqlite3_column_text(st, 2);
	int n = -1;

	if (strcmp((const char *)sqlite3_column_text(st, 1), "text") ||
	    sscanf(s, "%d.%d%n", &m->gpu.cc_major, &m->gpu.cc_minor, &n) != 2 || s[n])
		return nt_err_set(r->err, "'%s': \"gpu.cc\" is not a string like \"9.0\"", r->path);
	return 0;
}

static int parse_iso(const char *s, int64_t *t)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	*t = (int64_t)timegm(&tm);
	return 0;
}

/* The scalar fields of group g, from the object at jpath ("gpu." is
 * prefix in messages).  Every field must be there. */
static int read_fields(struct nt_jsonread *r, struct nt_map *m, enum nt_field_group g,
		       const char *jpath, const char *prefix)
{
	unsigned char seen[NT_MAP_MAX_FIELDS] = { 0 };
	const struct nt_map_field *f;
	sqlite3_stmt *st = nt_jsonread_query(r, "SELECT key, type, atom FROM json_each(?1, ?2)", jpath);
	char key[96];
	int rc, have_iso = 0, ret = -1;
	int64_t iso = 0;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);

		snprintf(key, sizeof(key), "%s%s", prefix, k);
		if (g == NT_FG_GPU && !strcmp(k, "cc")) {
			if (set_cc(r, m, st))
				goto out;
			seen[nt_map_field_find(g, "cc_major") - nt_map_fields] = 1;
			seen[nt_map_field_find(g, "cc_minor") - nt_map_fields] = 1;
		} else if (g == NT_FG_RUN && !strcmp(k, "created_at")) {
			if (strcmp((const char *)sqlite3_column_text(st, 1), "text") ||
			    parse_iso((const char *)sqlite3_column_text(st, 2), &iso)) {
				nt_err_set(r->err, "'%s': \"created_at\" is not a time like "
					   "\"2025-11-30T00:10:00Z\"", r->path);
				goto out;
			}
			have_iso = 1;
		} else if ((f = field_for(g, k))) {
			if (set_field(r, m, f, st, key))
				goto out;
			seen[f - nt_map_fields] = 1;
		}
	}
	if (nt_jsonread_done(r, rc))
		goto out;
	for (int i = 0; i < nt_map_n_fields; i++) {
		f = &nt_map_fields[i];
		if (f->group != g || seen[i])
			continue;
		if (f->off == offsetof(struct nt_map, created_at) && have_iso) {
			m->created_at = iso;
			continue;
		}
		nt_err_set(r->err, "'%s': missing key \"%s%s\"", r->path, prefix,
			   is_cc_field(f) ? "cc" : f->off == offsetof(struct nt_map, created_at) ?
			   "created_at_unix" : f->key);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int check_header(struct nt_jsonread *r)
{
	sqlite3_stmt *st;
	const char *v;
	int ret = -1;

	st = nt_jsonread_query(r, "SELECT json_type(?1), json_type(?1, '$.format'), json_extract(?1, '$.format'), "
		   "json_type(?1, '$.version'), json_extract(?1, '$.version')", "$");
	if (!st)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		nt_jsonread_done(r, SQLITE_ERROR);
		goto out;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 0), "object")) {
		nt_err_set(r->err, "'%s': not a nucatrace map: not a JSON object", r->path);
		goto out;
	}
	v = (const char *)sqlite3_column_text(st, 2);
	if (!sqlite3_column_text(st, 1) || strcmp((const char *)sqlite3_column_text(st, 1), "text") ||
	    strcmp(v, NT_MAP_FORMAT)) {
		nt_err_set(r->err, "'%s': not a nucatrace map: \"format\" is not \"%s\"", r->path,
			   NT_MAP_FORMAT);
		goto out;
	}
	v = (const char *)sqlite3_column_text(st, 4);
	if (!v) {
		nt_err_set(r->err, "'%s': missing key \"version\"", r->path);
		goto out;
	}
	if (!sqlite3_column_text(st, 3) || strcmp((const char *)sqlite3_column_text(st, 3), "integer") ||
	    sqlite3_column_int64(st, 4) != NT_MAP_FORMAT_VERSION) {
		nt_err_set(r->err, "'%s': \"version\" %s is not supported (this nucatrace reads %d)",
			   r->path, v, NT_MAP_FORMAT_VERSION);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* Which parts there are and their sizes. */
static int read_shape(struct nt_jsonread *r, int *n_sm, int *n_line, int *n_probe, unsigned *parts)
{
	int len, has;

	if ((has = nt_jsonread_member(r, "$.chain", "array", n_sm)) < 0)
		return -1;
	if (!has || *n_sm <= 0)
		return nt_err_set(r->err, "'%s': \"chain\" is missing or empty", r->path);
	if (*n_sm > NT_MAP_MAX_SM)
		return nt_err_set(r->err, "'%s': \"chain\" has %d entries; nucatrace reads maps of at "
				  "most %d SMs", r->path, *n_sm, NT_MAP_MAX_SM);
	if ((has = nt_jsonread_member(r, "$.noise", "array", &len)) < 0)
		return -1;
	if (has && len != *n_sm)
		return nt_err_set(r->err, "'%s': \"noise\" has %d entries, \"chain\" %d", r->path, len, *n_sm);
	*parts = has ? NT_MAP_NOISE : 0;
	*n_line = 0;
	if ((has = nt_jsonread_member(r, "$.lines", "object", &len)) < 0)
		return -1;
	if (has) {
		if ((has = nt_jsonread_member(r, "$.lines.offset", "array", n_line)) < 0)
			return -1;
		if (!has || *n_line <= 0)
			return nt_err_set(r->err, "'%s': \"lines.offset\" is missing or empty", r->path);
		if (*n_line > NT_MAP_MAX_LINES)
			return nt_err_set(r->err, "'%s': \"lines.offset\" has %d entries; nucatrace reads "
					  "maps of at most %d lines", r->path, *n_line, NT_MAP_MAX_LINES);
		if ((has = nt_jsonread_member(r, "$.lines.latency", "array", &len)) < 0)
			return -1;
		*parts |= has ? NT_MAP_LINES : 0;
	}
	if ((has = nt_jsonread_member(r, "$.first_touch", "object", &len)) < 0)
		return -1;
	if (has && !*n_line)
		return nt_err_set(r->err, "'%s': \"first_touch\" needs \"lines.offset\"", r->path);
	*parts |= has ? NT_MAP_FIRST_TOUCH : 0;
	if ((has = nt_jsonread_member(r, "$.probe", "array", n_probe)) < 0)
		return -1;
	if (!has)
		*n_probe = 0;
	else if (*n_probe <= 0)
		return nt_err_set(r->err, "'%s': \"probe\" is empty", r->path);
	else if (*n_probe > NT_MAP_MAX_PROBES)
		return nt_err_set(r->err, "'%s': \"probe\" has %d entries; nucatrace reads maps of at most "
				  "%d probe configurations", r->path, *n_probe, NT_MAP_MAX_PROBES);
	return 0;
}

static int read_map(struct nt_jsonread *r, struct nt_map **out)
{
	struct nt_map *m = NULL;
	unsigned parts = 0;
	int n_sm = 0, n_line = 0, n_probe = 0, len, ret = -1;

	if (check_header(r) || read_shape(r, &n_sm, &n_line, &n_probe, &parts))
		return -1;
	if (!(m = nt_map_new(n_sm, n_line, parts)) || (n_probe && nt_map_set_probe(m, n_probe))) {
		nt_map_free(m);
		return nt_err_set(r->err, "'%s': out of memory", r->path);
	}
	if (nt_jsonread_member(r, "$.gpu", "object", &len) < 0 || nt_jsonread_member(r, "$.params", "object", &len) < 0 ||
	    read_fields(r, m, NT_FG_GPU, "$.gpu", "gpu.") ||
	    read_fields(r, m, NT_FG_PARAMS, "$.params", "params.") ||
	    read_fields(r, m, NT_FG_RUN, "$", ""))
		goto out;
	if (!nt_map_time_ok(m->created_at)) {
		nt_err_set(r->err, "'%s': \"created_at_unix\" %lld is not a time in the years 1970..9999",
			   r->path, (long long)m->created_at);
		goto out;
	}
	if (m->gpu.sm_count != n_sm) {
		nt_err_set(r->err, "'%s': \"gpu.sm_count\" is %d but \"chain\" has %d entries",
			   r->path, m->gpu.sm_count, n_sm);
		goto out;
	}
	if (read_vector(r, "chain", m->chain) || (m->noise && read_vector(r, "noise", m->noise)) ||
	    (m->line_offset && read_offsets(r, m)) ||
	    (m->line_lat && read_matrix(r, m, "lines.latency", m->line_lat)) ||
	    (m->ft_first && read_matrix(r, m, "first_touch.first", m->ft_first)) ||
	    (m->ft_repeat && read_matrix(r, m, "first_touch.repeat", m->ft_repeat)) ||
	    (m->n_probe && read_probe(r, m)) || nt_map_check_values(m, r->path, r->err))
		goto out;
	*out = m;
	m = NULL;
	ret = 0;
out:
	nt_map_free(m);
	return ret;
}

int nt_map_read_json(const char *path, struct nt_map **out, struct nt_err *err)
{
	struct nt_jsonread r;
	int ret;

	*out = NULL;
	if (nt_jsonread_open(&r, path, err))
		return -1;
	ret = read_map(&r, out);
	nt_jsonread_close(&r);
	return ret;
}

int nt_map_read_json_text(const char *text, const char *name, struct nt_map **out, struct nt_err *err)
{
	struct nt_jsonread r;
	int ret;

	*out = NULL;
	if (nt_jsonread_open_text(&r, text, name, err))
		return -1;
	ret = read_map(&r, out);
	nt_jsonread_close(&r);
	return ret;
}
