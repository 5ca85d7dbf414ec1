/* Reading JSON through SQLite; jsonread.h says why. */
#include "util/jsonread.h"
#include "util/infile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_BYTES (1 << 30)


static int read_whole(const char *path, char **buf, int *len, struct nt_err *err)
{
	FILE *f = nt_infile_open(path, NULL, err);
	size_t n = 0, cap = 0;
	char *b = NULL, *nb;
	int ret = -1;

	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			if (cap > JSON_MAX_BYTES || !(nb = realloc(b, cap))) {
				nt_err_set(err, "'%s': too large to read", path);
				goto out;
			}
			b = nb;
		}
		n += fread(b + n, 1, cap - n, f);
		if (ferror(f)) {
			nt_err_set(err, "cannot read '%s': %s", path, strerror(errno));
			goto out;
		}
		if (feof(f))
			break;
	}
	*buf = b;
	*len = (int)n;
	b = NULL;
	ret = 0;
out:
	free(b);
	fclose(f);
	return ret;
}

/* r->doc is loaded: make the database and check the document. */
static int parse(struct nt_jsonread *r, const char *path, struct nt_err *err)
{
	sqlite3_stmt *st;
	int valid;

	if (sqlite3_open(":memory:", &r->db) != SQLITE_OK) {
		nt_err_set(err, "'%s': cannot open SQLite to parse it", path);
		goto fail;
	}
	if (!(st = nt_jsonread_query(r, "SELECT json_valid(?1)", "$")))
		goto fail;
	valid = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (valid)
		return 0;
	nt_err_set(err, "'%s': not valid JSON (truncated or malformed)", path);
fail:
	nt_jsonread_close(r);
	return -1;
}

int nt_jsonread_open(struct nt_jsonread *r, const char *path, struct nt_err *err)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	if (read_whole(path, &r->doc, &r->len, err))
		return -1;
	return parse(r, path, err);
}

int nt_jsonread_open_text(struct nt_jsonread *r, const char *text, const char *name, struct nt_err *err)
{
	size_t len = strlen(text);

	memset(r, 0, sizeof(*r));
	r->path = name;
	r->err = err;
	if (len > JSON_MAX_BYTES)
		return nt_err_set(err, "'%s': too large to read", name);
	if (!(r->doc = malloc(len + 1)))
		return nt_err_set(err, "'%s': out of memory", name);
	memcpy(r->doc, text, len + 1);
	r->len = (int)len;
	return parse(r, name, err);
}

void nt_jsonread_close(struct nt_jsonread *r)
{
	sqlite3_close(r->db);
	free(r->doc);
	r->db = NULL;
	r->doc = NULL;
}

/* A statement over the document (?1) and a JSON path (?2). */
sqlite3_stmt *nt_jsonread_query(struct nt_jsonread *r, const char *sql, const char *jpath)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL)) {
		nt_err_set(r->err, "'%s': %s", r->path, sqlite3_errmsg(r->db));
		return NULL;
	}
	sqlite3_bind_text(st, 1, r->doc, r->len, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, jpath, -1, SQLITE_STATIC);
	return st;
}

/* Finish a loop of sqlite3_step(): 0 when it ran to the end. */
int nt_jsonread_done(struct nt_jsonread *r, int rc)
{
	if (rc != SQLITE_DONE)
		return nt_err_set(r->err, "'%s': %s", r->path, sqlite3_errmsg(r->db));
	return 0;
}

/* The JSON type at jpath ("" when absent) and its array length. */
int nt_jsonread_shape(struct nt_jsonread *r, const char *jpath, char *type, size_t size, int *len)
{
	sqlite3_stmt *st = nt_jsonread_query(r, "SELECT json_type(?1, ?2), json_array_length(?1, ?2)", jpath);
	int ret = -1;

	if (!st)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		nt_jsonread_done(r, SQLITE_ERROR);
		goto out;
	}
	snprintf(type, size, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
	*len = sqlite3_column_int(st, 1);
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* A number, or null for NAN, from a (type, atom) pair of columns. */
int nt_jsonread_number(struct nt_jsonread *r, sqlite3_stmt *st, int col, const char *key, double *v)
{
	const char *type = (const char *)sqlite3_column_text(st, col);

	if (type && !strcmp(type, "null")) {
		*v = NAN;
		return 0;
	}
	if (!type || (strcmp(type, "integer") && strcmp(type, "real")))
		return nt_err_set(r->err, "'%s': \"%s\" is not a number", r->path, key);
	*v = sqlite3_column_double(st, col + 1);
	return 0;
}

/* Whether jpath is there (0/1), and -1 when it is but is not `want`. */
int nt_jsonread_member(struct nt_jsonread *r, const char *jpath, const char *want, int *len)
{
	char type[16];

	if (nt_jsonread_shape(r, jpath, type, sizeof(type), len))
		return -1;
	if (!*type)
		return 0;
	if (strcmp(type, want))
		return nt_err_set(r->err, "'%s': \"%s\" is not an %s", r->path, jpath + 2, want);
	return 1;
}
