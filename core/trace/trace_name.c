/* Default trace file names (trace_name.h). */
#include "trace/trace_name.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK" };

int nt_trace_rank(void)
{
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *v = getenv(rank_vars[i]);
		char *end;
		long r;

		if (!v || *v < '0' || *v > '9')
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (!*end && !errno && r <= INT_MAX)
			return (int)r;
	}
	return -1;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* Append to buf at *at; 0, or -1 when it does not fit. */
static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - *at)
		return -1;
	*at += n;
	return 0;
}

static int expand(char *buf, size_t len, size_t *at, char c)
{
	char host[256] = "", stamp[32];
	time_t now;
	struct tm tm;
	int rank;

	switch (c) {
	case 'h':
		if (gethostname(host, sizeof(host) - 1))
			snprintf(host, sizeof(host), "unknown");
		host[strcspn(host, ".")] = '\0';
		return put(buf, len, at, "%s", host);
	case 'p':
		return put(buf, len, at, "%ld", (long)getpid());
	case 'r':
		rank = nt_trace_rank();
		return rank < 0 ? 0 : put(buf, len, at, "-rank%d", rank);
	case 't':
		now = time(NULL);
		if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm))
			return -1;
		return put(buf, len, at, "%s", stamp);
	case '%':
		return put(buf, len, at, "%%");
	}
	return -2;
}

int nt_trace_path(char *buf, size_t len, const char *dir, const char *pattern, struct nt_err *err)
{
	size_t at = 0;

	if (!dir || !*dir)
		dir = env_or("NUCATRACE_OUTPUT_DIR", ".");
	if (!pattern || !*pattern)
		pattern = env_or("NUCATRACE_OUTPUT_PATTERN", NT_TRACE_PATTERN);
	if (!len)
		return nt_err_set(err, "trace path: no room");
	buf[0] = '\0';
	if (put(buf, len, &at, "%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/"))
		return nt_err_set(err, "trace path: folder '%s' is too long", dir);
	for (const char *p = pattern; *p; p++) {
		int rc;

		if (*p != '%') {
			rc = put(buf, len, &at, "%c", *p);
		} else if (!p[1]) {
			return nt_err_set(err, "trace file pattern '%s' ends in a lone '%%'", pattern);
		} else if ((rc = expand(buf, len, &at, *++p)) == -2) {
			return nt_err_set(err, "trace file pattern '%s': unknown escape '%%%c' "
					  "(known: %%h %%p %%r %%t %%%%)", pattern, *p);
		}
		if (rc)
			return nt_err_set(err, "trace path for '%s' in '%s' is too long", pattern, dir);
	}
	return 0;
}
