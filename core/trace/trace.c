/* Creating, opening, checking and closing trace files; trace_write.c
 * adds rows, trace_read.c reads them, trace_schema.c knows the tables. */
#include "trace/blockpack.h"
#include "trace/trace_impl.h"
#include "trace/trace_name.h"
#include "util/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef NT_VERSION
#define NT_VERSION "unknown"
#endif

#define BUSY_MS 10000
#define CMDLINE_MAX 65536

int nt_trace_db_error(struct nt_trace *t, struct nt_err *err, const char *what)
{
	return nt_err_set(err, "trace '%s': %s: %s", t->path, what, sqlite3_errmsg(t->db));
}

int nt_trace_exec(struct nt_trace *t, const char *sql, struct nt_err *err)
{
	if (sqlite3_exec(t->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return nt_trace_db_error(t, err, sql);
	return 0;
}

static int stmt_sql(const struct nt_trace *t, enum nt_trace_stmt id, char *buf, size_t len)
{
	switch (id) {
	case NT_ST_META_SET:
		return nt_trace_sql_insert(NT_TB_meta, 1, 1, buf, len);
	case NT_ST_META_GET:
		return snprintf(buf, len, "SELECT value FROM meta WHERE key = ?1") < 0 ? -1 : 0;
	case NT_ST_DEVICE_ADD:
		return nt_trace_sql_insert(NT_TB_devices, 1, 1, buf, len);
	case NT_ST_MAP_ADD:
		return nt_trace_sql_insert(NT_TB_maps, 1, 1, buf, len);
	case NT_ST_MAP_GET:
		return snprintf(buf, len, "SELECT json FROM maps WHERE uuid = ?1") < 0 ? -1 : 0;
	case NT_ST_KERNEL_FIND:
		return snprintf(buf, len, "SELECT kernel FROM kernels WHERE mangled = ?1 AND module = ?2") < 0 ? -1 : 0;
	case NT_ST_KERNEL_ADD:
		return nt_trace_sql_insert(NT_TB_kernels, 0, 1, buf, len);
	case NT_ST_LAUNCH_ADD:
		return nt_trace_sql_insert(NT_TB_launches, 0, 1, buf, len);
	case NT_ST_LAUNCH_OCCUPANCY:
		return snprintf(buf, len, "UPDATE launches SET max_blocks_per_sm = ?2 WHERE launch = ?1") < 0 ? -1 : 0;
	case NT_ST_BLOCK_ADD:
		return nt_trace_sql_insert(NT_TB_blocks, 0, 1, buf, len);
	case NT_ST_BLOCKS_ADD:
		return nt_trace_sql_insert(NT_TB_blocks, 0, NT_TRACE_BLOCK_ROWS, buf, len);
	case NT_ST_BLOCKS_FEW_ADD:
		return nt_trace_sql_insert(NT_TB_blocks, 0, NT_TRACE_BLOCK_FEW, buf, len);
	case NT_ST_BLOCK_GET:
		return nt_trace_sql_select(NT_TB_blocks, t->version, "WHERE launch = ?1 ORDER BY block", buf, len);
	case NT_ST_CHUNK_ADD:
		return nt_trace_sql_insert(NT_TB_block_chunks, 0, 1, buf, len);
	case NT_ST_CHUNK_GET:
		return nt_trace_sql_select(NT_TB_block_chunks, t->version, "WHERE launch = ?1 ORDER BY chunk", buf,
					   len);
	case NT_ST_DROP_ADD:
		return nt_trace_sql_insert(NT_TB_drops, 0, 1, buf, len);
	case NT_ST_NATIVE_ADD:
		return nt_trace_sql_insert(NT_TB_native, 0, 1, buf, len);
	case NT_ST_COUNT:
		break;
	}
	return -1;
}

sqlite3_stmt *nt_trace_stmt(struct nt_trace *t, enum nt_trace_stmt id, struct nt_err *err)
{
	char sql[16384];

	if (t->st[id]) {
		sqlite3_reset(t->st[id]);
		sqlite3_clear_bindings(t->st[id]);
		return t->st[id];
	}
	if (stmt_sql(t, id, sql, sizeof(sql))) {
		nt_err_set(err, "trace '%s': statement %d too long", t->path, (int)id);
		return NULL;
	}
	if (sqlite3_prepare_v3(t->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &t->st[id], NULL) != SQLITE_OK) {
		nt_trace_db_error(t, err, sql);
		return NULL;
	}
	return t->st[id];
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int set_meta_i64(struct nt_trace *t, const char *key, int64_t v, struct nt_err *err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return nt_trace_set_meta(t, key, buf, err);
}

/* The program's arguments as one shell-quoted line ("" if unreadable). */
static char *read_cmdline(void)
{
	FILE *f = fopen("/proc/self/cmdline", "rb");
	char *raw = malloc(CMDLINE_MAX), *out = NULL;
	size_t n = 0, o = 0;

	if (!f || !raw)
		goto out;
	n = fread(raw, 1, CMDLINE_MAX - 1, f);
	raw[n] = '\0';
	if (!(out = malloc(4 * n + 3)))	/* worst case: every byte a quote */
		goto out;
	for (size_t i = 0; i < n; i += strlen(raw + i) + 1) {
		const char *a = raw + i;
		int plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					 "0123456789_-+=./:,@%") == strlen(a);

		if (o)
			out[o++] = ' ';
		if (!plain)
			out[o++] = '\'';
		for (; *a; a++) {
			if (*a == '\'' && !plain) {
				memcpy(out + o, "'\\''", 4);
				o += 4;
			} else {
				out[o++] = *a;
			}
		}
		if (!plain)
			out[o++] = '\'';
	}
	out[o] = '\0';
out:
	if (f)
		fclose(f);
	free(raw);
	return out;
}

/* The keys nt_trace_create() fills (trace.h). */
static int process_meta(struct nt_trace *t, struct nt_err *err)
{
	char host[256] = "", exe[4096] = "";
	char *cmdline = read_cmdline();
	ssize_t n;
	int rank = nt_trace_rank(), ret = -1;

	gethostname(host, sizeof(host) - 1);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (nt_trace_set_meta(t, "format", NT_TRACE_FORMAT, err) ||
	    set_meta_i64(t, "version", NT_TRACE_SCHEMA, err) ||
	    nt_trace_set_meta(t, "tool_version", NT_VERSION, err) ||
	    nt_trace_set_meta(t, "host", host, err) ||
	    set_meta_i64(t, "pid", getpid(), err) ||
	    set_meta_i64(t, "ppid", getppid(), err) ||
	    (rank >= 0 && set_meta_i64(t, "rank", rank, err)) ||
	    nt_trace_set_meta(t, "cmdline", cmdline ? cmdline : "", err) ||
	    nt_trace_set_meta(t, "exe", exe, err) ||
	    set_meta_i64(t, "start_unix_ns", now_ns(), err) ||
	    nt_trace_set_meta(t, "complete", "0", err))
		goto out;
	ret = 0;
out:
	free(cmdline);
	return ret;
}

static int init_file(struct nt_trace *t, struct nt_err *err)
{
	char sql[64];
	sqlite3_stmt *st = NULL;
	int wal;

	/* WAL: a crash loses only the batch in flight, and the writer never
	 * rewrites the main file under a reader */
	if (sqlite3_prepare_v2(t->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
		return nt_trace_db_error(t, err, "PRAGMA journal_mode = WAL");
	wal = sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	if (!wal)
		return nt_trace_db_error(t, err, "cannot use WAL mode");
	/* a 16 MiB page cache: a batch of blocks then goes in at about twice
	 * the speed of the default 2 MiB */
	if (nt_trace_exec(t, "PRAGMA synchronous = NORMAL", err) ||
	    nt_trace_exec(t, "PRAGMA cache_size = -16384", err) || nt_trace_begin(t, err) ||
	    nt_trace_schema_create(t, err))
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", NT_TRACE_APP_ID);
	if (nt_trace_exec(t, sql, err))
		return -1;
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", NT_TRACE_SCHEMA);
	if (nt_trace_exec(t, sql, err) || process_meta(t, err))
		return -1;
	return nt_trace_commit(t, err);
}

static struct nt_trace *trace_new(const char *path, struct nt_err *err)
{
	struct nt_trace *t = calloc(1, sizeof(*t));

	if (!t || !(t->path = strdup(path))) {
		free(t);
		nt_err_set(err, "trace '%s': out of memory", path);
		return NULL;
	}
	return t;
}

static void remove_file(const char *path)
{
	char side[4096];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

int nt_trace_create(const char *path, struct nt_trace **out, struct nt_err *err)
{
	struct nt_trace *t = NULL;
	struct stat fst, st;
	int fd, made = 0, ret = -1;

	*out = NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno == EEXIST && !lstat(path, &st) && S_ISLNK(st.st_mode))
			return nt_err_set(err, "cannot create trace '%s': it is a symbolic link", path);
		if (errno == EEXIST)
			return nt_err_set(err, "cannot create trace '%s': it already exists", path);
		return nt_err_set(err, "cannot create trace '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &fst)) {
		nt_err_set(err, "cannot create trace '%s': %s", path, strerror(errno));
		goto out;
	}
	made = 1;
	if (!(t = trace_new(path, err)))
		goto out;
	t->writer = 1;
	t->version = NT_TRACE_SCHEMA;
	if (sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		nt_err_set(err, "cannot create trace '%s': %s", path,
			   t->db ? sqlite3_errmsg(t->db) : "out of memory");
		goto out;
	}
	/* the file SQLite opened must be the one we made */
	if (stat(path, &st) || st.st_dev != fst.st_dev || st.st_ino != fst.st_ino) {
		nt_err_set(err, "cannot create trace '%s': it was replaced while being created", path);
		goto out;
	}
	sqlite3_busy_timeout(t->db, BUSY_MS);
	if (init_file(t, err))
		goto out;
	*out = t;
	ret = 0;
out:
	close(fd);
	if (ret) {
		nt_trace_close(t);
		if (made && !stat(path, &st) && st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
			remove_file(path);
	}
	return ret;
}

/* Is the open file a trace we can read?  Touches only what a reader may. */
static int check(struct nt_trace *t, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	char format[32];
	int ret = -1, rc, app_id, version, tables;

	rc = sqlite3_prepare_v2(t->db, "SELECT (SELECT application_id FROM pragma_application_id), "
				"(SELECT user_version FROM pragma_user_version), "
				"(SELECT count(*) FROM sqlite_schema)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		if (sqlite3_errcode(t->db) == SQLITE_CORRUPT)
			nt_err_set(err, "trace '%s' is damaged (truncated or overwritten): %s", t->path,
				   sqlite3_errmsg(t->db));
		else
			nt_err_set(err, "'%s' is not a nucatrace trace: %s", t->path, sqlite3_errmsg(t->db));
		goto out;
	}
	app_id = sqlite3_column_int(st, 0);
	version = sqlite3_column_int(st, 1);
	tables = sqlite3_column_int(st, 2);
	if (app_id != NT_TRACE_APP_ID) {
		if (!tables)
			nt_err_set(err, "'%s' is not a nucatrace trace: it is empty", t->path);
		else
			nt_err_set(err, "'%s' is not a nucatrace trace: an SQLite database of another "
				   "application (application_id 0x%08x)", t->path, (unsigned)app_id);
		goto out;
	}
	if (version < 1 || version > NT_TRACE_SCHEMA) {
		nt_err_set(err, "trace '%s' has schema version %d; this nucatrace reads versions 1 to %d%s",
			   t->path, version, NT_TRACE_SCHEMA, version > NT_TRACE_SCHEMA ? ": upgrade nucatrace" : "");
		goto out;
	}
	t->version = version;
	rc = nt_trace_get_meta(t, "format", format, sizeof(format), err);
	if (rc < 0) {
		if (sqlite3_errcode(t->db) == SQLITE_CORRUPT)
			nt_err_set(err, "trace '%s' is damaged (truncated or overwritten): %s", t->path,
				   sqlite3_errmsg(t->db));
		goto out;
	}
	if (rc || strcmp(format, NT_TRACE_FORMAT)) {
		nt_err_set(err, "'%s' is not a nucatrace trace: meta format is not \"%s\"", t->path,
			   NT_TRACE_FORMAT);
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

int nt_trace_open(const char *path, struct nt_trace **out, struct nt_err *err)
{
	struct nt_trace *t = NULL;
	int ret = -1;

	*out = NULL;
	/* SQLite would wait forever in open() on a FIFO */
	if (nt_infile_check(path, "trace", err))
		return -1;
	if (!(t = trace_new(path, err)))
		return -1;
	if (sqlite3_open_v2(path, &t->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		nt_err_set(err, "cannot open trace '%s': %s", path,
			   t->db ? sqlite3_errmsg(t->db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(t->db, BUSY_MS);
	if (check(t, err))
		goto out;
	*out = t;
	ret = 0;
out:
	if (ret)
		nt_trace_close(t);
	return ret;
}

int nt_trace_begin(struct nt_trace *t, struct nt_err *err)
{
	return nt_trace_exec(t, "BEGIN IMMEDIATE", err);
}

int nt_trace_commit(struct nt_trace *t, struct nt_err *err)
{
	return nt_trace_exec(t, "COMMIT", err);
}

int nt_trace_finish(struct nt_trace *t, struct nt_err *err)
{
	if (!t->writer)
		return nt_err_set(err, "trace '%s': opened for reading", t->path);
	if (!sqlite3_get_autocommit(t->db) && nt_trace_commit(t, err))
		return -1;
	if (nt_trace_begin(t, err))
		return -1;
	if (set_meta_i64(t, "end_unix_ns", now_ns(), err) || nt_trace_set_meta(t, "complete", "1", err) ||
	    nt_trace_commit(t, err)) {
		sqlite3_exec(t->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	for (int i = 0; i < NT_ST_COUNT; i++)	/* no statement may hold the file */
		sqlite3_reset(t->st[i]);
	/* a finished trace is one plain file, readable without -wal/-shm
	 * beside it (read-only media, copies); if a reader holds it open this
	 * fails, and the trace stays in WAL mode, just as complete */
	sqlite3_exec(t->db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	return 0;
}

void nt_trace_close(struct nt_trace *t)
{
	if (!t)
		return;
	for (int i = 0; i < NT_ST_COUNT; i++)
		sqlite3_finalize(t->st[i]);
	sqlite3_close(t->db);
	nt_blockpack_free(t->pack);
	free(t->unpacked);
	free(t->path);
	free(t);
}

const char *nt_trace_path_of(const struct nt_trace *t)
{
	return t->path;
}
