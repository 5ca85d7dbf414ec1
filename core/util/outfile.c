/* Outputs written under a temporary name and renamed when complete
 * (outfile.h). */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct nt_outfile *open_list;
static int atexit_set;

static void unlist(struct nt_outfile *o)
{
	for (struct nt_outfile **p = &open_list; *p; p = &(*p)->next) {
		if (*p == o) {
			*p = o->next;
			break;
		}
	}
	o->next = NULL;
}

static void release(struct nt_outfile *o, int remove_tmp)
{
	unlist(o);
	if (o->f)
		fclose(o->f);
	if (remove_tmp && o->tmp)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	o->f = NULL;
	o->path = o->tmp = NULL;
}

/* The stream writes through these, to keep the first write error's
 * errno for the message (stdio's error flag has none). */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	struct nt_outfile *o = c;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(o->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!o->error)
				o->error = w < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)w;
	}
	return (ssize_t)done;
}

static int cookie_close(void *c)
{
	struct nt_outfile *o = c;
	int ret = close(o->fd);

	o->fd = -1;
	return ret;
}

static void remove_all(void)
{
	while (open_list)
		release(open_list, 1);
}

static int exists_error(const char *path, struct nt_err *err)
{
	return nt_err_set(err, "cannot create '%s': %s (nucatrace does not overwrite files)", path,
			  strerror(EEXIST));
}

int nt_outfile_open(struct nt_outfile *o, const char *path, struct nt_err *err)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0, fd = -1;
	struct stat st;

	memset(o, 0, sizeof(*o));
	if (!*path)
		return nt_err_set(err, "cannot create '': %s", strerror(ENOENT));
	if (!lstat(path, &st))
		return exists_error(path, err);
	if (!(o->path = strdup(path)))
		return nt_err_set(err, "cannot create '%s': out of memory", path);
	for (int n = 0; fd < 0 && n < 100; n++) {
		free(o->tmp);
		if (asprintf(&o->tmp, "%.*s.%s.%ld-%d.tmp", dir_len, path, path + dir_len, (long)getpid(),
			     n) < 0) {
			o->tmp = NULL;
			break;
		}
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	o->fd = fd;
	if (fd < 0 || !(o->f = fopencookie(o, "w", (cookie_io_functions_t){ .write = cookie_write,
									     .close = cookie_close }))) {
		int e = o->tmp ? errno : ENOMEM;

		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		nt_err_set(err, "cannot create '%s': %s", path, strerror(e));
		free(o->path);
		o->path = NULL;
		return -1;
	}
	if (!atexit_set && !atexit(remove_all))
		atexit_set = 1;
	o->next = open_list;
	open_list = o;
	return 0;
}

/* tmp to path, never replacing a file there. */
static int rename_new(const char *tmp, const char *path)
{
	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: link() fails on EEXIST too */
	if (link(tmp, path))
		return -1;
	unlink(tmp);
	return 0;
}

int nt_outfile_commit(struct nt_outfile *o, struct nt_err *err)
{
	int failed = 0, e = 0;

	if (!o->f)
		return nt_err_set(err, "cannot write '%s': not open", o->path ? o->path : "");
	if (fflush(o->f) || ferror(o->f))
		failed = 1, e = o->error;
	else if (fsync(o->fd) && errno != EINVAL && errno != EROFS)
		failed = 1, e = errno;
	if (fclose(o->f) && !failed)
		failed = 1, e = errno;
	o->f = NULL;
	if (failed) {
		nt_err_set(err, "cannot write '%s': %s", o->path, e ? strerror(e) : "write error");
		release(o, 1);
		return -1;
	}
	if (rename_new(o->tmp, o->path)) {
		e = errno;
		if (e == EEXIST)
			exists_error(o->path, err);
		else
			nt_err_set(err, "cannot create '%s': %s", o->path, strerror(e));
		release(o, 1);
		return -1;
	}
	release(o, 0);
	return 0;
}

void nt_outfile_abort(struct nt_outfile *o)
{
	if (o->path)
		release(o, 1);
}

int nt_outfile_finish(struct nt_outfile *o, int failed, struct nt_err *err)
{
	if (!failed)
		return nt_outfile_commit(o, err);
	/* the writer saw a write fail, or failed on its own */
	if (o->f && (fflush(o->f) || ferror(o->f)) && o->error)
		nt_err_set(err, "cannot write '%s': %s", o->path, strerror(o->error));
	else
		nt_err_set(err, "cannot write '%s'", o->path);
	nt_outfile_abort(o);
	return -1;
}

int nt_outfile_write(const char *path, int (*write)(FILE *f, const void *arg), const void *arg,
		     struct nt_err *err)
{
	struct nt_outfile o;

	if (nt_outfile_open(&o, path, err))
		return -1;
	return nt_outfile_finish(&o, write(o.f, arg) != 0, err);
}

/* One level: 0 when dir is a folder after it. */
static int mkdir_one(const char *dir, mode_t mode, struct nt_err *err)
{
	struct stat st;

	if (mkdir(dir, mode) && errno != EEXIST)
		return nt_err_set(err, "cannot create folder '%s': %s", dir, strerror(errno));
	if (stat(dir, &st))
		return nt_err_set(err, "cannot create folder '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return nt_err_set(err, "'%s' is not a folder", dir);
	return 0;
}

int nt_mkdir_p(const char *dir, mode_t mode, struct nt_err *err)
{
	char *d = strdup(dir);
	int ret = 0;

	if (!d)
		return nt_err_set(err, "out of memory");
	for (char *p = strchr(d + 1, '/'); p && !ret; p = strchr(p + 1, '/')) {
		*p = '\0';
		ret = mkdir_one(d, mode, err);
		*p = '/';
	}
	if (!ret)
		ret = mkdir_one(d, mode, err);
	free(d);
	return ret;
}
