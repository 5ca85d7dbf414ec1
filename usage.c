/* Errors and progress of the command line (usage.h). */
#include "usage.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/text.h"

int nt_quiet;
static int progress_open;

/* Messages quote names and values from the files read: no control
 * character of theirs reaches the terminal (util/text.h). */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL;

	nt_progress_done();
	fprintf(stderr, "nucatrace: %s", prefix);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	nt_text_put(stderr, msg ? msg : fmt);
	free(msg);
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

void usage_bad_option(const char *usage, const char *cmd, int o, char **argv)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "=");

	if (o == ':')
		usage_error(usage, "%s: option '%s' needs a value", cmd, arg);
	if (arg[0] == '-' && arg[1] == '-' && optopt && arg[len])
		usage_error(usage, "%s: option '%.*s' takes no value", cmd, len, arg);
	if (arg[0] == '-' && arg[1] == '-')
		usage_error(usage, "%s: unknown option '%.*s'", cmd, len, arg);
	usage_error(usage, "%s: unknown option '-%c'", cmd, optopt ? optopt : '?');
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
