/* Inputs that are regular files (infile.h). */
#include "util/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
	return S_ISDIR(m) ? "it is a directory" : S_ISFIFO(m) ? "it is a FIFO" :
	       S_ISCHR(m) || S_ISBLK(m) ? "it is a device" : S_ISSOCK(m) ? "it is a socket" :
	       "it is not a regular file";
}

static int refuse(const char *path, const char *what, const char *why, struct nt_err *err)
{
	return nt_err_set(err, "cannot open %s%s'%s': %s", what ? what : "", what ? " " : "", path, why);
}

int nt_infile_check(const char *path, const char *what, struct nt_err *err)
{
	struct stat st;

	if (stat(path, &st))
		return refuse(path, what, strerror(errno), err);
	return S_ISREG(st.st_mode) ? 0 : refuse(path, what, kind(st.st_mode), err);
}

FILE *nt_infile_open(const char *path, const char *what, struct nt_err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		refuse(path, what, strerror(errno), err);
		return NULL;
	}
	errno = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		refuse(path, what, errno ? strerror(errno) : kind(st.st_mode), err);
		close(fd);
		return NULL;
	}
	/* blocking again: the check was all O_NONBLOCK was for */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || !(f = fdopen(fd, "r"))) {
		refuse(path, what, strerror(errno), err);
		close(fd);
		return NULL;
	}
	return f;
}
