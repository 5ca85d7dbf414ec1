/* Reading a trace back: meta values, maps, and walks over the tables
 * with one cursor each. */
#include "map/mapio.h"
#include "trace/blockpack.h"
#include "trace/trace_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nt_trace_get_meta(struct nt_trace *t, const char *key, char *buf, size_t len, struct nt_err *err)
{
	sqlite3_stmt *st = nt_trace_stmt(t, NT_ST_META_GET, err);
	const char *v;
	int rc, ret = -1;

	if (!st)
		return -1;
	if (len)
		buf[0] = '\0';
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		ret = 1;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		nt_trace_db_error(t, err, "cannot read meta");
		goto out;
	}
	v = (const char *)sqlite3_column_text(st, 0);
	if (!v)
		v = "";
	if (strlen(v) >= len) {
		nt_err_set(err, "trace '%s': meta \"%s\" is longer than %zu bytes", t->path, key,
			   len ? len - 1 : 0);
		goto out;
	}
	memcpy(buf, v, strlen(v) + 1);
	ret = 0;
out:
	sqlite3_reset(st);
	return ret;
}

int nt_trace_get_map(struct nt_trace *t, const char *uuid, struct nt_map **out, struct nt_err *err)
{
	sqlite3_stmt *st = nt_trace_stmt(t, NT_ST_MAP_GET, err);
	char *name = NULL;
	int rc, ret = -1;

	*out = NULL;
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		nt_err_set(err, "no map for %s in '%s'", uuid, t->path);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		nt_trace_db_error(t, err, "cannot read map");
		goto out;
	}
	if (!sqlite3_column_text(st, 0)) {	/* NOT NULL, unless another tool wrote it */
		nt_err_set(err, "trace '%s': maps row %s has no JSON", t->path, uuid);
		goto out;
	}
	if (asprintf(&name, "%s: map of %s", t->path, uuid) < 0) {
		name = NULL;
		nt_err_set(err, "trace '%s': out of memory", t->path);
		goto out;
	}
	ret = nt_map_read_json_text((const char *)sqlite3_column_text(st, 0), name, out, err);
out:
	sqlite3_reset(st);
	free(name);
	return ret;
}

typedef int (*launch_cb)(const struct nt_trace_launch *, const struct nt_trace_kernel *, void *);

/* The caller's callback, of whichever walk this is. */
struct walk {
	int (*device)(const struct nt_trace_device *, void *);
	int (*kernel)(const struct nt_trace_kernel *, void *);
	launch_cb launch;
	int (*block)(const struct nt_trace_block *, void *);
	int (*drop)(const struct nt_trace_drop *, void *);
	int (*native)(const struct nt_trace_native *, void *);
	void *arg;
};

/* Step st to the end, calling each(st, w) per row; each's nonzero
 * return stops and is returned.  st is finalized unless kept. */
static int walk(struct nt_trace *t, sqlite3_stmt *st, int keep, int (*each)(sqlite3_stmt *, struct walk *),
		struct walk *w, const char *what, struct nt_err *err)
{
	int rc, ret = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = each(st, w)))
			break;
	if (!ret && rc != SQLITE_DONE)
		ret = nt_trace_db_error(t, err, what);
	if (keep)
		sqlite3_reset(st);
	else
		sqlite3_finalize(st);
	return ret;
}

/* A statement of its own: the caller's callback may start another walk. */
static sqlite3_stmt *prepare(struct nt_trace *t, const char *sql, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(t->db, sql, -1, &st, NULL) != SQLITE_OK) {
		nt_trace_db_error(t, err, sql);
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

static sqlite3_stmt *select_all(struct nt_trace *t, enum nt_trace_table tb, const char *order,
				struct nt_err *err)
{
	char sql[2048];

	if (nt_trace_sql_select(tb, t->version, order, sql, sizeof(sql))) {
		nt_err_set(err, "trace '%s': statement too long", t->path);
		return NULL;
	}
	return prepare(t, sql, err);
}

static int each_device(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_device d;

	memset(&d, 0, sizeof(d));
	nt_trace_read_row(st, 0, NT_TB_devices, &d);
	return w->device(&d, w->arg);
}

int nt_trace_foreach_device(struct nt_trace *t, int (*cb)(const struct nt_trace_device *, void *),
			    void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = select_all(t, NT_TB_devices, "ORDER BY device", err);

	if (!st)
		return -1;
	return walk(t, st, 0, each_device, &(struct walk){ .device = cb, .arg = arg }, "cannot read devices", err);
}

/* Text columns declared NOT NULL may still be NULL in a trace another
 * tool wrote: the readers hand "" for them, never NULL (trace.h). */
static void kernel_row(sqlite3_stmt *st, int col, struct nt_trace_kernel *k)
{
	nt_trace_read_row(st, col, NT_TB_kernels, k);
	if (!k->mangled)
		k->mangled = "";
}

static int each_kernel(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_kernel k;

	kernel_row(st, 0, &k);
	return w->kernel(&k, w->arg);
}

int nt_trace_foreach_kernel(struct nt_trace *t, int (*cb)(const struct nt_trace_kernel *, void *),
			    void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = select_all(t, NT_TB_kernels, "ORDER BY kernel", err);

	if (!st)
		return -1;
	return walk(t, st, 0, each_kernel, &(struct walk){ .kernel = cb, .arg = arg }, "cannot read kernels", err);
}

static int each_launch(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_launch l;
	struct nt_trace_kernel k;
	int col, known;

	memset(&l, 0, sizeof(l));	/* its padding too: a row may be compared whole */
	col = nt_trace_read_row(st, 0, NT_TB_launches, &l);
	known = sqlite3_column_type(st, col) != SQLITE_NULL;	/* k.kernel */
	kernel_row(st, col, &k);
	return w->launch(&l, known ? &k : NULL, w->arg);
}

int nt_trace_foreach_launch(struct nt_trace *t, launch_cb cb, void *arg, struct nt_err *err)
{
	char sql[4096] = "SELECT ";
	sqlite3_stmt *st;

	if (nt_trace_sql_columns(NT_TB_launches, t->version, "l", sql, sizeof(sql)) ||
	    !strcat(sql, ", ") || nt_trace_sql_columns(NT_TB_kernels, t->version, "k", sql, sizeof(sql)) ||
	    strlen(sql) + 100 > sizeof(sql))
		return nt_err_set(err, "trace '%s': statement too long", t->path);
	strcat(sql, " FROM launches l LEFT JOIN kernels k ON k.kernel = l.kernel ORDER BY l.launch");
	if (!(st = prepare(t, sql, err)))
		return -1;
	return walk(t, st, 0, each_launch, &(struct walk){ .launch = cb, .arg = arg }, "cannot read launches", err);
}

static int each_block(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_block b;

	nt_trace_read_row(st, 0, NT_TB_blocks, &b);
	return w->block(&b, w->arg);
}

/* Schema 1-3: a row per block record. */
static int foreach_row(struct nt_trace *t, int64_t launch, int (*cb)(const struct nt_trace_block *, void *),
		       void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = t->st[NT_ST_BLOCK_GET];
	int keep = 1;

	/* the kept statement, unless a walk of it is under way (cb nested) */
	if (st && sqlite3_stmt_busy(st)) {
		char sql[2048];

		keep = 0;
		if (nt_trace_sql_select(NT_TB_blocks, t->version, "WHERE launch = ?1 ORDER BY block", sql,
					sizeof(sql)))
			return nt_err_set(err, "trace '%s': statement too long", t->path);
		st = prepare(t, sql, err);
	} else {
		st = nt_trace_stmt(t, NT_ST_BLOCK_GET, err);
	}
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, launch);
	return walk(t, st, keep, each_block, &(struct walk){ .block = cb, .arg = arg }, "cannot read blocks", err);
}

/* One chunk row of launch: its records to cb, in order. */
static int each_chunk(struct nt_trace *t, sqlite3_stmt *st, int64_t launch, struct nt_blockpack *pack,
		      struct nt_trace_block *buf, int (*cb)(const struct nt_trace_block *, void *), void *arg,
		      struct nt_err *err)
{
	struct nt_trace_chunk_row row;
	struct nt_err why;
	size_t n;
	int ret = 0;

	nt_trace_read_row(st, 0, NT_TB_block_chunks, &row);
	if (row.blocks < 1 || row.blocks > NT_BLOCKPACK_MAX)
		return nt_err_set(err, "trace '%s': launch %lld: a block chunk of %lld records (1 to %d)", t->path,
				  (long long)launch, (long long)row.blocks, NT_BLOCKPACK_MAX);
	if (nt_blockpack_unpack(pack, row.data.data, row.data.len, buf, (size_t)row.blocks, &n, &why))
		return nt_err_set(err, "trace '%s': launch %lld: %s", t->path, (long long)launch, why.msg);
	if (n != (size_t)row.blocks)
		return nt_err_set(err, "trace '%s': launch %lld: a block chunk of %zu records, not the %lld its "
				  "row says", t->path, (long long)launch, n, (long long)row.blocks);
	for (size_t i = 0; i < n && !ret; i++) {
		buf[i].launch = launch;
		ret = cb(&buf[i], arg);
	}
	return ret;
}

/* Schema 4 on: chunks, unpacked one at a time into the handle's buffer
 * (a walk of its own when cb starts another). */
static int foreach_chunk(struct nt_trace *t, int64_t launch, int (*cb)(const struct nt_trace_block *, void *),
			 void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = t->st[NT_ST_CHUNK_GET];
	struct nt_blockpack *pack = t->pack;
	struct nt_trace_block *buf = t->unpacked;
	int nested = st && sqlite3_stmt_busy(st), rc, ret = -1;

	if (nested) {
		char sql[2048];

		if (nt_trace_sql_select(NT_TB_block_chunks, t->version, "WHERE launch = ?1 ORDER BY chunk", sql,
					sizeof(sql)))
			return nt_err_set(err, "trace '%s': statement too long", t->path);
		st = prepare(t, sql, err);
		pack = nt_blockpack_new(NT_BLOCKPACK_LEVEL);
		buf = malloc(NT_BLOCKPACK_MAX * sizeof(*buf));
	} else {
		st = nt_trace_stmt(t, NT_ST_CHUNK_GET, err);
		if (!t->pack)
			pack = t->pack = nt_blockpack_new(NT_BLOCKPACK_LEVEL);
		if (!t->unpacked)
			buf = t->unpacked = malloc(NT_BLOCKPACK_MAX * sizeof(*buf));
	}
	if (!st)
		goto out;
	if (!pack || !buf) {
		nt_err_set(err, "trace '%s': out of memory", t->path);
		goto out;
	}
	sqlite3_bind_int64(st, 1, launch);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = each_chunk(t, st, launch, pack, buf, cb, arg, err)))
			goto out;
	ret = rc == SQLITE_DONE ? 0 : nt_trace_db_error(t, err, "cannot read blocks");
out:
	if (nested) {
		sqlite3_finalize(st);
		nt_blockpack_free(pack);
		free(buf);
	} else if (st) {
		sqlite3_reset(st);
	}
	return ret;
}

int nt_trace_foreach_block(struct nt_trace *t, int64_t launch,
			   int (*cb)(const struct nt_trace_block *, void *), void *arg, struct nt_err *err)
{
	if (nt_trace_has_table(NT_TB_blocks, t->version))
		return foreach_row(t, launch, cb, arg, err);
	return foreach_chunk(t, launch, cb, arg, err);
}

static int each_drop(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_drop d;

	nt_trace_read_row(st, 0, NT_TB_drops, &d);
	if (!d.reason)
		d.reason = "";
	return w->drop(&d, w->arg);
}

int nt_trace_foreach_drop(struct nt_trace *t, int (*cb)(const struct nt_trace_drop *, void *),
			  void *arg, struct nt_err *err)
{
	sqlite3_stmt *st = select_all(t, NT_TB_drops, "ORDER BY rowid", err);

	if (!st)
		return -1;
	return walk(t, st, 0, each_drop, &(struct walk){ .drop = cb, .arg = arg }, "cannot read drops", err);
}

static int each_native(sqlite3_stmt *st, struct walk *w)
{
	struct nt_trace_native n;

	nt_trace_read_row(st, 0, NT_TB_native, &n);
	return w->native(&n, w->arg);
}

int nt_trace_foreach_native(struct nt_trace *t, int (*cb)(const struct nt_trace_native *, void *),
			    void *arg, struct nt_err *err)
{
	sqlite3_stmt *st;

	if (!nt_trace_has_table(NT_TB_native, t->version))
		return 0;
	if (!(st = select_all(t, NT_TB_native, "ORDER BY launch", err)))
		return -1;
	return walk(t, st, 0, each_native, &(struct walk){ .native = cb, .arg = arg },
		    "cannot read native times", err);
}
