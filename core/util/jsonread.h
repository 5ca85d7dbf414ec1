/*
 * jsonread.h - reading a JSON file through SQLite's JSON functions.
 *
 * We do not hand-write a JSON parser: the file is read into memory and
 * handed, as parameter ?1, to SQL over an in-memory SQLite database, so
 * json_each(), json_type(), json_array_length() ... do the parsing and
 * the caller only checks shapes and types and copies values out.
 *
 *	struct nt_jsonread r;
 *
 *	if (nt_jsonread_open(&r, path, err))
 *		return -1;		(unreadable, or not valid JSON)
 *	st = nt_jsonread_query(&r, "SELECT key, type, atom FROM json_each(?1, ?2)", "$.chain");
 *	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
 *		...
 *	ret = nt_jsonread_done(&r, rc);
 *	sqlite3_finalize(st);
 *	nt_jsonread_close(&r);
 *
 * Every message starts with the file's name in quotes; keys in messages
 * are JSON paths without the leading "$.".
 */
#ifndef NT_JSONREAD_H
#define NT_JSONREAD_H

#include "util/err.h"

#include <sqlite3.h>
#include <stddef.h>

struct nt_jsonread {
	const char *path;
	sqlite3 *db;
	char *doc;
	int len;
	struct nt_err *err;	/* where every helper reports */
};

/* Read path (at most 1 GiB) and check that it is valid JSON. */
int nt_jsonread_open(struct nt_jsonread *r, const char *path, struct nt_err *err);
/* The same over a string already in memory (copied); name stands for
 * the file in messages. */
int nt_jsonread_open_text(struct nt_jsonread *r, const char *text, const char *name, struct nt_err *err);
void nt_jsonread_close(struct nt_jsonread *r);

/* sql prepared with the document bound to ?1 and jpath to ?2; NULL
 * (and r->err set) on failure. */
sqlite3_stmt *nt_jsonread_query(struct nt_jsonread *r, const char *sql, const char *jpath);

/* After a sqlite3_step() loop: 0 when rc is SQLITE_DONE, else -1. */
int nt_jsonread_done(struct nt_jsonread *r, int rc);

/* The JSON type at jpath (json_type(); "" when absent) and its array
 * length (0 when not an array). */
int nt_jsonread_shape(struct nt_jsonread *r, const char *jpath, char *type, size_t size, int *len);

/* 1 when jpath is there and of type want ("array", "object"), 0 when
 * absent, -1 (with a message) when it is something else. */
int nt_jsonread_member(struct nt_jsonread *r, const char *jpath, const char *want, int *len);

/* The number in columns (col: json type, col + 1: atom) of st; null is
 * NAN.  -1 with a message naming key when it is not a number. */
int nt_jsonread_number(struct nt_jsonread *r, sqlite3_stmt *st, int col, const char *key, double *v);

#endif
