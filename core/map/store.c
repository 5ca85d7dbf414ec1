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

static const struct {
	int since;
	const char *sql;
} schema[] = {
#define T(name, since, sql) { since, sql },
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

/* What the open file is: an empty database (*version 0, ours to set
 * up), one of ours at a schema we can use (its version), or something to
 * leave alone (-1). */
static int file_version(sqlite3 *db, const char *path, int *version, struct nt_err *err)
{
	sqlite3_stmt *st = NULL;
	int ret = -1, rc, app_id, tables;

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
	*version = sqlite3_column_int(st, 1);
	tables = sqlite3_column_int(st, 2);
	if (app_id == 0 && *version == 0 && tables == 0) {
		ret = 0;
	} else if (app_id != NT_STORE_APP_ID) {
		nt_err_set(err, "'%s' is not a nucatrace map store: an SQLite database of another "
			   "application (application_id 0x%08x)", path, (unsigned)app_id);
	} else if (*version > NT_STORE_SCHEMA || *version < 1) {
		nt_err_set(err, "map store '%s' has schema version %d; this nucatrace reads versions "
			   "1 to %d%s", path, *version, NT_STORE_SCHEMA,
			   *version > NT_STORE_SCHEMA ? ": upgrade nucatrace" : "");
	} else {
		ret = 0;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

static int version_readonly(const char *path, int *version, struct nt_err *err)
{
	sqlite3 *db = NULL;
	int ret = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		nt_err_set(err, "cannot open map store '%s': %s", path,
			   db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(db, NT_STORE_BUSY_MS);
	ret = file_version(db, path, version, err);
out:
	sqlite3_close(db);
	return ret;
}

int nt_store_migrate(struct nt_store *s, struct nt_err *err)
{
	char sql[64];
	int version;

	/* under the lock, again: another process may have upgraded it */
	if (file_version(s->db, s->path, &version, err))
		return -1;
	for (size_t i = 0; i < sizeof(schema) / sizeof(schema[0]); i++)
		if (schema[i].since > version && nt_store_exec(s, schema[i].sql, err))
			return -1;
	if (!version) {
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", NT_STORE_APP_ID);
		if (nt_store_exec(s, sql, err))
			return -1;
	}
	if (version < NT_STORE_SCHEMA) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", NT_STORE_SCHEMA);
		if (nt_store_exec(s, sql, err))
			return -1;
	}
	return 0;
}

/* Set up a new store, or bring an older one to this schema; under the
 * write lock, as another process may be doing the same. */
static int upgrade(struct nt_store *s, struct nt_err *err)
{
	int ret = -1;

	if (nt_store_exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (!nt_store_migrate(s, err))
		ret = nt_store_exec(s, "COMMIT", err);
	if (ret)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	else
		s->schema = NT_STORE_SCHEMA;
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
	int exists, version = 0, ret = -1;

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
	if (exists && version_readonly(path, &version, err))
		return -1;
	/* a read-only command must not turn someone's empty file into a store */
	if (exists && !version && !create)
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
	/* A store of an older schema is read as it is, and upgraded only
	 * when a map that needs the newer tables is added (nt_store_add):
	 * an older nucatrace sharing it (a job's preloaded library) refuses
	 * a newer schema, so it is not raised for nothing. */
	s->schema = version;
	if (!version && upgrade(s, err))
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
