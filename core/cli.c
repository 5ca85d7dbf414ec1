#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef NT_VERSION
#define NT_VERSION "0.0.0"
#endif
const char nt_version[] = NT_VERSION;

int nt_quiet;
static int progress_open;

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	nt_progress_done();
	fprintf(stderr, "nucatrace: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(NT_EXIT_FATAL);
}

void die_code(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(code);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "usage: %s\n", usage);
	exit(NT_EXIT_USAGE);
}

static int progress_wanted(void)
{
	static int wanted = -1;
	const char *e;

	if (wanted < 0) {
		e = getenv("NUCATRACE_PROGRESS");
		wanted = e ? strcmp(e, "0") != 0 : isatty(STDERR_FILENO);
	}
	return wanted && !nt_quiet;
}

void nt_progress(const char *fmt, ...)
{
	va_list ap;

	if (!progress_wanted())
		return;
	fputs(isatty(STDERR_FILENO) ? "\r\033[K" : "", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (!isatty(STDERR_FILENO))
		fputc('\n', stderr);
	else
		progress_open = 1;
	fflush(stderr);
}

void nt_progress_done(void)
{
	if (progress_open) {
		fputc('\n', stderr);
		progress_open = 0;
	}
}

int nt_parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int nt_parse_size(const char *s, long long *out)
{
	static const struct { const char *suffix; long long mult; } units[] = {
		{ "", 1 }, { "k", 1LL << 10 }, { "kib", 1LL << 10 }, { "m", 1LL << 20 },
		{ "mib", 1LL << 20 }, { "g", 1LL << 30 }, { "gib", 1LL << 30 },
	};
	char *end;
	long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix))
			continue;
		if (v > LLONG_MAX / units[i].mult)
			return -1;
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}
