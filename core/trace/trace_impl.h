/*
 * trace_impl.h - what trace.c, trace_schema.c, trace_write.c and
 * trace_read.c share; not for callers.
 *
 * Rows move between C and SQL through trace_tables.def: a table's row is
 * a struct, each column a member of a kind, and bind/read go column by
 * column through that list (trace_schema.c), so no statement spells its
 * columns by hand.
 */
#ifndef NT_TRACE_IMPL_H
#define NT_TRACE_IMPL_H

#include "trace/trace.h"

#include <sqlite3.h>

/* Row types of the tables without a public one. */
struct nt_trace_meta_row {
	const char *key, *value;
};

struct nt_trace_map_row {
	const char *uuid, *json;
};

struct nt_trace_bytes {
	const void *data;
	size_t len;
};

struct nt_trace_chunk_row {
	int64_t chunk;		/* chosen by SQLite: chunks read in this order */
	int64_t launch;
	int64_t blocks;		/* records in it */
	struct nt_trace_bytes data;	/* blockpack.h */
};

enum nt_trace_table {
#define TABLE(name, type, constraints, options, since, until) NT_TB_##name,
#define COL(table, name, decl, kind, member, since)
#define INDEX(name, sql)
#include "trace/trace_tables.def"
#undef TABLE
#undef COL
#undef INDEX
	NT_TB_COUNT
};

/* The statements a handle prepares once and keeps. */
enum nt_trace_stmt {
	NT_ST_META_SET,
	NT_ST_META_GET,
	NT_ST_DEVICE_ADD,
	NT_ST_MAP_ADD,
	NT_ST_MAP_GET,
	NT_ST_KERNEL_FIND,
	NT_ST_KERNEL_ADD,
	NT_ST_LAUNCH_ADD,
	NT_ST_LAUNCH_OCCUPANCY,
	NT_ST_BLOCK_ADD,
	NT_ST_BLOCKS_ADD,	/* NT_TRACE_BLOCK_ROWS rows at once */
	NT_ST_BLOCKS_FEW_ADD,	/* NT_TRACE_BLOCK_FEW rows at once */
	NT_ST_BLOCK_GET,
	NT_ST_CHUNK_ADD,
	NT_ST_CHUNK_GET,
	NT_ST_DROP_ADD,
	NT_ST_NATIVE_ADD,
	NT_ST_COUNT
};

/* Blocks go in this many rows per INSERT, then the rest this few, then
 * one by one: a statement per row would take twice the time. */
#define NT_TRACE_BLOCK_ROWS 64
#define NT_TRACE_BLOCK_FEW 8

struct nt_trace {
	sqlite3 *db;
	char *path;
	int writer;
	int version;		/* the file's schema version */
	sqlite3_stmt *st[NT_ST_COUNT];
	struct nt_blockpack *pack;	/* made on first use */
	struct nt_trace_block *unpacked;	/* NT_BLOCKPACK_MAX, for the kept chunk walk */
};

/* "trace '<path>': <what>: <sqlite message>", -1 */
int nt_trace_db_error(struct nt_trace *t, struct nt_err *err, const char *what);
int nt_trace_exec(struct nt_trace *t, const char *sql, struct nt_err *err);

/* Statement id, prepared on first use and reset for reuse; NULL (err
 * set) on failure. */
sqlite3_stmt *nt_trace_stmt(struct nt_trace *t, enum nt_trace_stmt id, struct nt_err *err);

/* trace_schema.c */
/* Every CREATE of the schema, in order, on t's database. */
int nt_trace_schema_create(struct nt_trace *t, struct nt_err *err);
/* "INSERT [OR REPLACE] INTO tb(cols) VALUES(?, ...), ..." for rows rows
 * (ROWID columns left out), or "SELECT cols FROM tb <tail>" into buf for
 * a file of schema version (columns it lacks read as NULL); -1 when it
 * does not fit. */
int nt_trace_sql_insert(enum nt_trace_table tb, int replace, int rows, char *buf, size_t len);
int nt_trace_sql_select(enum nt_trace_table tb, int version, const char *tail, char *buf, size_t len);
/* "alias.c1, alias.c2, ..." appended to buf ("NULL" for a column newer
 * than version). */
int nt_trace_sql_columns(enum nt_trace_table tb, int version, const char *alias, char *buf, size_t len);
/* Does a file of schema version have table tb? */
int nt_trace_has_table(enum nt_trace_table tb, int version);
/* Bind row's columns to st's parameters from *param on (1 for the
 * first row), leaving *param after them; an SQLite code. */
int nt_trace_bind_row(sqlite3_stmt *st, int *param, enum nt_trace_table tb, const void *row);
/* Fill row from st's columns col0.. ; returns the column after them. */
int nt_trace_read_row(sqlite3_stmt *st, int col0, enum nt_trace_table tb, void *row);

#endif
