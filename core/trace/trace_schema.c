/* The trace schema as data: statements and row binding made from
 * trace_tables.def (trace_impl.h says why). */
#include "trace/trace_impl.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum kind { K_END, K_ROWID, K_I32, K_I64, K_I32N, K_I64N, K_U64, K_TEXT, K_PTEXT, K_BLOB };

struct column {
	const char *name, *decl;
	enum kind kind;		/* K_END: not a column (a TABLE or INDEX row) */
	size_t off, size;
	int since;		/* the schema version that added it */
};

struct table {
	const char *name, *constraints, *options;
	int first;		/* its first column in items[]; they end at a K_END */
	int since, until;
};

/* row_<table> is the table's row type, for offsetof() below */
#define TABLE(name, type, constraints, options, since, until) typedef type row_##name;
#define COL(table, name, decl, kind, member, since)
#define INDEX(name, sql)
#include "trace/trace_tables.def"
#undef TABLE
#undef COL
#undef INDEX

/* Every row of the .def, in order; the enum gives each its position. */
enum {
#define TABLE(name, type, constraints, options, since, until) ITEM_TABLE_##name,
#define COL(table, name, decl, kind, member, since) ITEM_##table##_##name,
#define INDEX(name, sql) ITEM_INDEX_##name,
#include "trace/trace_tables.def"
#undef TABLE
#undef COL
#undef INDEX
	ITEM_END
};

static const struct column items[] = {
#define TABLE(name, type, constraints, options, since, until) { #name, "", K_END, 0, 0, since },
#define COL(table, name, decl, kind, member, since) \
	{ #name, decl, K_##kind, offsetof(row_##table, member), sizeof(((row_##table *)0)->member), since },
#define INDEX(name, sql) { #name, sql, K_END, 0, 0, 1 },
#include "trace/trace_tables.def"
#undef TABLE
#undef COL
#undef INDEX
	{ "", "", K_END, 0, 0, 1 }
};

static const struct table tables[] = {
#define TABLE(name, type, constraints, options, since, until) \
	{ #name, constraints, options, ITEM_TABLE_##name + 1, since, until },
#define COL(table, name, decl, kind, member, since)
#define INDEX(name, sql)
#include "trace/trace_tables.def"
#undef TABLE
#undef COL
#undef INDEX
};

static const struct column *first_col(enum nt_trace_table tb)
{
	return &items[tables[tb].first];
}

static int append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len - used ? -1 : 0;
}

int nt_trace_sql_columns(enum nt_trace_table tb, int version, const char *alias, char *buf, size_t len)
{
	for (const struct column *c = first_col(tb); c->kind != K_END; c++) {
		const char *sep = c != first_col(tb) ? ", " : "";

		if (c->since > version ? append(buf, len, "%sNULL", sep) :
		    append(buf, len, "%s%s%s%s", sep, alias ? alias : "", alias ? "." : "", c->name))
			return -1;
	}
	return 0;
}

int nt_trace_has_table(enum nt_trace_table tb, int version)
{
	return tables[tb].since <= version && (!tables[tb].until || version <= tables[tb].until);
}

int nt_trace_sql_insert(enum nt_trace_table tb, int replace, int rows, char *buf, size_t len)
{
	int n = 0;

	buf[0] = '\0';
	if (append(buf, len, "INSERT%s INTO %s(", replace ? " OR REPLACE" : "", tables[tb].name))
		return -1;
	for (const struct column *c = first_col(tb); c->kind != K_END; c++)
		if (c->kind != K_ROWID && append(buf, len, "%s%s", n++ ? ", " : "", c->name))
			return -1;
	if (append(buf, len, ") VALUES"))
		return -1;
	for (int r = 0; r < rows; r++) {
		if (append(buf, len, "%s(", r ? ", " : ""))
			return -1;
		for (int i = 0; i < n; i++)
			if (append(buf, len, "%s?", i ? ", " : ""))
				return -1;
		if (append(buf, len, ")"))
			return -1;
	}
	return 0;
}

int nt_trace_sql_select(enum nt_trace_table tb, int version, const char *tail, char *buf, size_t len)
{
	buf[0] = '\0';
	if (append(buf, len, "SELECT ") || nt_trace_sql_columns(tb, version, NULL, buf, len))
		return -1;
	return append(buf, len, " FROM %s %s", tables[tb].name, tail);
}

int nt_trace_schema_create(struct nt_trace *t, struct nt_err *err)
{
	char sql[2048];

	for (int tb = 0; tb < NT_TB_COUNT; tb++) {
		const struct table *tab = &tables[tb];

		if (!nt_trace_has_table(tb, NT_TRACE_SCHEMA))
			continue;
		sql[0] = '\0';
		if (append(sql, sizeof(sql), "CREATE TABLE %s(", tab->name))
			return nt_err_set(err, "trace schema: statement too long");
		for (const struct column *c = first_col(tb); c->kind != K_END; c++)
			if (append(sql, sizeof(sql), "%s%s %s", c != first_col(tb) ? ", " : "", c->name, c->decl))
				return nt_err_set(err, "trace schema: statement too long");
		if (append(sql, sizeof(sql), "%s%s) %s", *tab->constraints ? ", " : "", tab->constraints,
			   tab->options))
			return nt_err_set(err, "trace schema: statement too long");
		if (nt_trace_exec(t, sql, err))
			return -1;
	}
	for (int i = 0; i < ITEM_END; i++)	/* INDEX rows: K_END with a statement */
		if (items[i].kind == K_END && *items[i].decl && nt_trace_exec(t, items[i].decl, err))
			return -1;
	return 0;
}

int nt_trace_bind_row(sqlite3_stmt *st, int *param, enum nt_trace_table tb, const void *row)
{
	int p = *param, rc = SQLITE_OK;

	for (const struct column *c = first_col(tb); c->kind != K_END && rc == SQLITE_OK; c++) {
		const char *m = (const char *)row + c->off;
		int32_t i32;
		int64_t i64;
		uint64_t u64;
		const char *s;
		struct nt_trace_bytes bytes;

		switch (c->kind) {
		case K_END:
		case K_ROWID:
			continue;
		case K_I32:
		case K_I32N:
			memcpy(&i32, m, sizeof(i32));
			rc = c->kind == K_I32N && i32 < 0 ? sqlite3_bind_null(st, p) : sqlite3_bind_int(st, p, i32);
			break;
		case K_I64:
		case K_I64N:
			memcpy(&i64, m, sizeof(i64));
			rc = c->kind == K_I64N && i64 < 0 ? sqlite3_bind_null(st, p) : sqlite3_bind_int64(st, p, i64);
			break;
		case K_U64:
			memcpy(&u64, m, sizeof(u64));
			rc = sqlite3_bind_int64(st, p, (int64_t)u64);
			break;
		case K_TEXT:
			rc = sqlite3_bind_text(st, p, m, (int)strnlen(m, c->size), SQLITE_STATIC);
			break;
		case K_PTEXT:
			memcpy(&s, m, sizeof(s));
			rc = s ? sqlite3_bind_text(st, p, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, p);
			break;
		case K_BLOB:
			memcpy(&bytes, m, sizeof(bytes));
			rc = bytes.len <= INT_MAX ? sqlite3_bind_blob(st, p, bytes.data ? bytes.data : "", (int)bytes.len,
								      SQLITE_STATIC) : SQLITE_TOOBIG;
			break;
		}
		p++;
	}
	*param = p;
	return rc;
}

int nt_trace_read_row(sqlite3_stmt *st, int col0, enum nt_trace_table tb, void *row)
{
	int col = col0;

	for (const struct column *c = first_col(tb); c->kind != K_END; c++, col++) {
		char *m = (char *)row + c->off;
		int null = sqlite3_column_type(st, col) == SQLITE_NULL;
		int32_t i32;
		int64_t i64;
		const char *s;
		struct nt_trace_bytes bytes;

		switch (c->kind) {
		case K_END:
			break;
		case K_I32:
		case K_I32N:
			i32 = null ? NT_TRACE_UNKNOWN : sqlite3_column_int(st, col);
			memcpy(m, &i32, sizeof(i32));
			break;
		case K_ROWID:
		case K_I64:
		case K_I64N:
		case K_U64:
			i64 = null ? NT_TRACE_UNKNOWN : sqlite3_column_int64(st, col);
			memcpy(m, &i64, sizeof(i64));
			break;
		case K_TEXT:
			s = (const char *)sqlite3_column_text(st, col);
			snprintf(m, c->size, "%s", s ? s : "");
			break;
		case K_PTEXT:
			s = (const char *)sqlite3_column_text(st, col);
			memcpy(m, &s, sizeof(s));
			break;
		case K_BLOB:	/* blob first: column_bytes after it */
			bytes.data = sqlite3_column_blob(st, col);
			bytes.len = (size_t)sqlite3_column_bytes(st, col);
			memcpy(m, &bytes, sizeof(bytes));
			break;
		}
	}
	return col;
}
