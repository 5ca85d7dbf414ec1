/* Adding rows to a trace: each kind through one kept statement. */
#include "map/mapio.h"
#include "trace/blockpack.h"
#include "trace/trace_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bind row to statement id, step it once, and leave it reset. */
static int insert(struct nt_trace *t, enum nt_trace_stmt id, enum nt_trace_table tb, const void *row,
		  const char *what, struct nt_err *err)
{
	sqlite3_stmt *st = nt_trace_stmt(t, id, err);
	int param = 1, ret = -1;

	if (!st)
		return -1;
	if (nt_trace_bind_row(st, &param, tb, row) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
		nt_trace_db_error(t, err, what);
		goto out;
	}
	ret = 0;
out:
	sqlite3_reset(st);
	return ret;
}

int nt_trace_set_meta(struct nt_trace *t, const char *key, const char *value, struct nt_err *err)
{
	struct nt_trace_meta_row row = { key, value };

	return insert(t, NT_ST_META_SET, NT_TB_meta, &row, "cannot set meta", err);
}

int nt_trace_add_device(struct nt_trace *t, const struct nt_trace_device *d, struct nt_err *err)
{
	return insert(t, NT_ST_DEVICE_ADD, NT_TB_devices, d, "cannot add device", err);
}

int nt_trace_add_map(struct nt_trace *t, const struct nt_map *m, struct nt_err *err)
{
	struct nt_trace_map_row row = { m->gpu.uuid, NULL };
	char *json = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&json, &len);
	int ret = -1;

	if (!f)
		return nt_err_set(err, "trace '%s': out of memory", t->path);
	if (nt_map_write_json(f, m, 0)) {
		fclose(f);
		nt_err_set(err, "trace '%s': cannot add the map of %s: it is not a valid map", t->path,
			   m->gpu.uuid);
		goto out;
	}
	if (fclose(f)) {
		nt_err_set(err, "trace '%s': out of memory", t->path);
		goto out;
	}
	row.json = json;
	ret = insert(t, NT_ST_MAP_ADD, NT_TB_maps, &row, "cannot add map", err);
out:
	free(json);
	return ret;
}

int nt_trace_add_kernel(struct nt_trace *t, const struct nt_trace_kernel *k, int64_t *id,
			struct nt_err *err)
{
	sqlite3_stmt *st;
	int rc;

	if (!k->mangled)
		return nt_err_set(err, "trace '%s': a kernel without a name", t->path);
	if (!(st = nt_trace_stmt(t, NT_ST_KERNEL_FIND, err)))
		return -1;
	sqlite3_bind_text(st, 1, k->mangled, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (int64_t)k->module);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE)
		return nt_trace_db_error(t, err, "cannot look up kernel");
	if (insert(t, NT_ST_KERNEL_ADD, NT_TB_kernels, k, "cannot add kernel", err))
		return -1;
	*id = sqlite3_last_insert_rowid(t->db);
	return 0;
}

int nt_trace_add_launch(struct nt_trace *t, const struct nt_trace_launch *l, struct nt_err *err)
{
	char what[64];

	snprintf(what, sizeof(what), "cannot add launch %lld", (long long)l->launch);
	return insert(t, NT_ST_LAUNCH_ADD, NT_TB_launches, l, what, err);
}

/* Bind b[0..n) to st's rows, each with launch as its launch column. */
static int bind_blocks(sqlite3_stmt *st, int64_t launch, const struct nt_trace_block *b, size_t n)
{
	int param = 1, rc = SQLITE_OK;

	for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
		int first = param;

		rc = nt_trace_bind_row(st, &param, NT_TB_blocks, &b[i]);
		if (rc == SQLITE_OK)	/* launch is the table's first column */
			rc = sqlite3_bind_int64(st, first, launch);
	}
	return rc;
}

/* One row per statement: slower, but a failure names its block. */
static int add_one_by_one(struct nt_trace *t, int64_t launch, const struct nt_trace_block *b, size_t n,
			  struct nt_err *err)
{
	sqlite3_stmt *st = nt_trace_stmt(t, NT_ST_BLOCK_ADD, err);
	int ret = -1;

	if (!st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (bind_blocks(st, launch, &b[i], 1) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
			nt_err_set(err, "trace '%s': cannot add block %lld of launch %lld: %s", t->path,
				   (long long)b[i].block, (long long)launch, sqlite3_errmsg(t->db));
			goto out;
		}
		sqlite3_reset(st);
	}
	ret = 0;
out:
	sqlite3_reset(st);
	return ret;
}

/* Whole chunks of rows rows each from b[*i], through statement id. */
static int add_chunks(struct nt_trace *t, enum nt_trace_stmt id, size_t rows, int64_t launch,
		      const struct nt_trace_block *b, size_t n, size_t *i, struct nt_err *err)
{
	sqlite3_stmt *st;

	if (n - *i < rows)
		return 0;
	if (!(st = nt_trace_stmt(t, id, err)))
		return -1;
	for (; n - *i >= rows; *i += rows) {
		int ok = bind_blocks(st, launch, &b[*i], rows) == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE;

		sqlite3_reset(st);
		/* a failed INSERT adds none of its rows: again one by one, for
		 * the message naming the block (when they all go in then, the
		 * chunk's failure passed: go on) */
		if (!ok && add_one_by_one(t, launch, &b[*i], rows, err))
			return -1;
	}
	return 0;
}

int nt_trace_add_chunk(struct nt_trace *t, int64_t launch, size_t blocks, const void *data, size_t len,
		       struct nt_err *err)
{
	struct nt_trace_chunk_row row = { 0, launch, (int64_t)blocks, { data, len } };
	char what[64];

	if (!nt_trace_has_table(NT_TB_block_chunks, t->version))
		return nt_err_set(err, "trace '%s': schema %d has no block chunks", t->path, t->version);
	snprintf(what, sizeof(what), "cannot add blocks of launch %lld", (long long)launch);
	return insert(t, NT_ST_CHUNK_ADD, NT_TB_block_chunks, &row, what, err);
}

static int by_block(const void *a, const void *b)
{
	const struct nt_trace_block *x = a, *y = b;

	return (x->block > y->block) - (x->block < y->block);
}

/* Schema 4 on: packed, NT_BLOCKPACK_MAX records a chunk, in block order
 * (as the rows of older versions read back). */
static int add_packed(struct nt_trace *t, int64_t launch, const struct nt_trace_block *b, size_t n,
		      struct nt_err *err)
{
	struct nt_trace_block *sorted = NULL;
	int ret = -1;

	for (size_t i = 1; i < n && !sorted; i++)
		if (b[i].block < b[i - 1].block) {
			if (!(sorted = malloc(n * sizeof(*b))))
				return nt_err_set(err, "trace '%s': out of memory", t->path);
			memcpy(sorted, b, n * sizeof(*b));
			qsort(sorted, n, sizeof(*b), by_block);
			b = sorted;
		}
	if (!t->pack && !(t->pack = nt_blockpack_new(NT_BLOCKPACK_LEVEL))) {
		nt_err_set(err, "trace '%s': out of memory", t->path);
		goto out;
	}
	for (size_t i = 0; i < n; i += NT_BLOCKPACK_MAX) {
		size_t m = n - i < NT_BLOCKPACK_MAX ? n - i : NT_BLOCKPACK_MAX, len;
		const void *data;

		if (nt_blockpack_pack(t->pack, b + i, m, &data, &len, err) ||
		    nt_trace_add_chunk(t, launch, m, data, len, err))
			goto out;
	}
	ret = 0;
out:
	free(sorted);
	return ret;
}

int nt_trace_add_blocks(struct nt_trace *t, int64_t launch, const struct nt_trace_block *b, size_t n,
			struct nt_err *err)
{
	size_t i = 0;

	if (!nt_trace_has_table(NT_TB_blocks, t->version))
		return add_packed(t, launch, b, n, err);
	if (add_chunks(t, NT_ST_BLOCKS_ADD, NT_TRACE_BLOCK_ROWS, launch, b, n, &i, err) ||
	    add_chunks(t, NT_ST_BLOCKS_FEW_ADD, NT_TRACE_BLOCK_FEW, launch, b, n, &i, err))
		return -1;
	return add_one_by_one(t, launch, &b[i], n - i, err);
}

int nt_trace_set_occupancy(struct nt_trace *t, int64_t launch, int32_t max_blocks_per_sm, struct nt_err *err)
{
	sqlite3_stmt *st = nt_trace_stmt(t, NT_ST_LAUNCH_OCCUPANCY, err);
	int ret = 0;

	if (!st)
		return -1;
	if (sqlite3_bind_int64(st, 1, launch) != SQLITE_OK || sqlite3_bind_int(st, 2, max_blocks_per_sm) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		ret = nt_trace_db_error(t, err, "cannot set a launch's occupancy");
	sqlite3_reset(st);
	return ret;
}

int nt_trace_add_drop(struct nt_trace *t, const struct nt_trace_drop *d, struct nt_err *err)
{
	if (!d->reason)
		return nt_err_set(err, "trace '%s': a drop without a reason", t->path);
	return insert(t, NT_ST_DROP_ADD, NT_TB_drops, d, "cannot add drop", err);
}

int nt_trace_add_native(struct nt_trace *t, const struct nt_trace_native *n, struct nt_err *err)
{
	return insert(t, NT_ST_NATIVE_ADD, NT_TB_native, n, "cannot add a native time", err);
}
