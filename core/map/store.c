/* Opening, creating and checking the store file; store_map.c reads and
 * writes the calibrations in it. */
#include "map/store_impl.h"
#include "util/infile.h"
#include "util/outfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#define SQL_TEXT " TEXT"
#define SQL_INT " INTEGER"
#define SQL_I64 " INTEGER"
#define SQL_REAL " REAL"

static const char calib_sql[] = "CREATE TABLE calib(id INTEGER PRIMARY KEY"
#define F(group, key, kind, member) ", " #key SQL_##kind
#include "map/mapfields.def"
#undef F
	", n_sm INTEGER NOT NULL, n_line INTEGER NOT NULL, parts INTEGER NOT NULL)";

static const char *const schema[] = {
#define T(name, sql) sql,
#include "map/store_tables.def"
#undef T
};

const char *nt_store_default_path(char *buf, size_t len)
{
	const char *env = getenv("NUCATRACE_STORE");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if ((env = getenv("XDG_DATA_HOME")) && *env)
		n = snprintf(buf, len, "%s/nucatrace/maps.db", env);
	else if ((env = getenv("HOME")) && *env)
		n = snprintf(buf, len, "%s/.local/share/nucatrace/maps.db", env);
	else
		return NULL;
	return n < 0 || (size_t)n >= len ? NULL : buf;
}

int nt_store_db_error(struct nt_store *s, struct nt_err *err, const char *what)
{
	return nt_err_set(err, "map store '%s': %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/* The folders the store's path needs (0700: maps are the user's). */
static int mkdir_parents(const char *path, struct nt_err *err)
{
	char *dir = strdup(path), *slash;
	struct nt_err e;
	int ret = 0;

	if (!dir)
		return nt_err_set(err, "map store '%s': out of memory", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((ret = nt_mkdir_p(dir, 0700, &e)))
			nt_err_set(err, "cannot create map store '%s': %s", path, e.msg);
	}
	free(dir);
	return ret;
}

enum file_state { FILE_EMPTY, FILE_CURRENT };

/* What the open file is: an empty database (ours to set up), one of ours
 * at a schema we can use, or something to leave alone (-1). */
static int probe(sqlite3 *db, const char *path, enum file_state *state, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = -1, rc, app_id, version, tables;

	rc = sqlite3_prepare_v2(db, "SELECT (SELECT application_id FROM pragma_application_id), "
				"(SELECT user_version FROM pragma_user_version), "
				"(SELECT count(*) FROM sqlite_schema)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		nt_err_set(err, "'%s' is not a nucatrace map store: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	app_id = sqlite3_column_int(st, 0);
	version = sqlite3_column_int(st, 1);
	tables = sqlite3_column_int(st, 2);
	if (app_id == 0 && version == 0 && tables == 0) {
		*state = FILE_EMPTY;
	} else if (app_id != NT_STORE_APP_ID) {
		nt_err_set(err, "'%s' is not a nucatrace map store: an SQLite database of another "
			   "application (application_id 0x%08x)", path, (unsigned)app_id);
		goto out;
	} else if (version > NT_STORE_SCHEMA || version < 1) {
		nt_err_set(err, "map store '%s' has schema version %d; this nucatrace reads version %d%s",
			   path, version, NT_STORE_SCHEMA, version > NT_STORE_SCHEMA ? ": upgrade nucatrace" : "");
		goto out;
	} else {
		*state = FILE_CURRENT;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

static int probe_readonly(const char *path, enum file_state *state, struct nt_err *err)
{
	sqlite3 *db = NULL;
	int ret = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		nt_err_set(err, "cannot open map store '%s': %s", path,
			   db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db, NT_STORE_BUSY_MS);
	ret = probe(db, path, state, err);
out:
	sqlite3_close(db);
	return ret;
}

/* Set up a new store; under the write lock, as another process may be
 * doing the same. */
static int init_schema(struct nt_store *s, struct nt_err *err)
{
	enum file_state state;
	char sql[64];
	int ret = -1;

	if (nt_store_exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (probe(s->db, s->path, &state, err))
		goto out;
	if (state == FILE_EMPTY) {
		for (size_t i = 0; i < sizeof(schema) / sizeof(schema[0]); i++)
			if (nt_store_exec(s, schema[i], err))
				goto out;
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", NT_STORE_APP_ID);
		if (nt_store_exec(s, sql, err))
			goto out;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", NT_STORE_SCHEMA);
		if (nt_store_exec(s, sql, err))
			goto out;
	}
	ret = nt_store_exec(s, "COMMIT", err);
out:
	if (ret)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}

int nt_store_exec(struct nt_store *s, const char *sql, struct nt_err *err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return nt_store_db_error(s, err, sql);
	return 0;
}

int nt_store_open(const char *path, int create, struct nt_store **out, struct nt_err *err)
{
	struct nt_store *s = NULL;
	struct stat st;
	enum file_state state = FILE_EMPTY;
	int exists, ret = -1;

	*out = NULL;
	if (!*path)
		return nt_err_set(err, "map store path is empty");
	exists = !stat(path, &st);
	if (!exists && errno != ENOENT)
		return nt_err_set(err, "cannot open map store '%s': %s", path, strerror(errno));
	if (exists && nt_infile_check(path, "map store", err))
		return -1;
	if (!exists && !create)
		return nt_err_set(err, "no map store at '%s' (run 'nucatrace calibrate' first)", path);
	if (!exists && mkdir_parents(path, err))
		return -1;
	if (exists && probe_readonly(path, &state, err))
		return -1;
	/* a read-only command must not turn someone's empty file into a store */
	if (exists && state == FILE_EMPTY && !create)
		return nt_err_set(err, "'%s' is not a nucatrace map store: it is empty (calibrate or "
				  "'map import' makes one there)", path);

	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		nt_err_set(err, "map store '%s': out of memory", path);
		goto out;
	}
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE),
			    NULL) != SQLITE_OK) {
		nt_err_set(err, "cannot open map store '%s': %s", path,
			   s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(s->db, NT_STORE_BUSY_MS);
	if (nt_store_exec(s, "PRAGMA foreign_keys = ON", err))
		goto out;
	/* an up-to-date store needs no write lock: it may be read-only */
	if (state == FILE_EMPTY && init_schema(s, err))
		goto out;
	*out = s;
	ret = 0;
out:
	if (ret)
		nt_store_close(s);
	return ret;
}

int nt_store_open_default(const char *path, int create, struct nt_store **out, struct nt_err *err)
{
	char buf[PATH_MAX];

	*out = NULL;
	if (!path && !(path = nt_store_default_path(buf, sizeof(buf))))
		return nt_err_set(err, "no store path: set NUCATRACE_STORE or HOME, or use --store");
	return nt_store_open(path, create, out, err);
}

int nt_store_lock(const struct nt_store *s, int wait, struct nt_err *err)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s.calibrating", s->path) >= (int)sizeof(path))
		return nt_err_set(err, "map store path '%s' is too long", s->path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return nt_err_set(err, "cannot open the lock '%s': %s", path, strerror(errno));
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		if (errno == EINTR)
			continue;
		nt_err_set(err, "%s '%s': %s", errno == EWOULDBLOCK ? "another process holds the lock" :
			   "cannot lock", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void nt_store_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* drops the flock */
}

void nt_store_close(struct nt_store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

const char *nt_store_path(const struct nt_store *s)
{
	return s->path;
}
