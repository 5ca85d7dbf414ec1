/*
 * store_impl.h - what store.c and store_map.c share; not for callers.
 */
#ifndef NT_STORE_IMPL_H
#define NT_STORE_IMPL_H

#include "map/store.h"

#include <sqlite3.h>

struct nt_store {
	sqlite3 *db;
	char *path;
	int schema;	/* the file's version when opened, or since nt_store_migrate */
};

/* Bring the store to NT_STORE_SCHEMA (all of it on an empty file) inside
 * the caller's IMMEDIATE transaction.  0, or -1 and err set. */
int nt_store_migrate(struct nt_store *s, struct nt_err *err);

/* "map store '<path>': <what>: <sqlite message>", -1 */
int nt_store_db_error(struct nt_store *s, struct nt_err *err, const char *what);
int nt_store_exec(struct nt_store *s, const char *sql, struct nt_err *err);

#endif
