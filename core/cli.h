/*
 * cli.h - error reporting and option helpers shared by the front ends.
 *
 * git's trio: die() prints "nucatrace: fatal: ..." and exits with
 * NT_EXIT_FATAL; error() prints "nucatrace: error: ..." and returns -1 so
 * that `return error("cannot open '%s'", path);` reads as one line;
 * warning() prints and returns.  usage_error() prints the message and the
 * command's usage line and exits with NT_EXIT_USAGE.
 *
 * Progress lines (nt_progress) go to stderr only when stderr is a
 * terminal or NUCATRACE_PROGRESS=1, and never when --quiet was given.
 *
 * Not for the interposer: it must never exit the host program.
 */
#ifndef NT_CLI_H
#define NT_CLI_H

#include <stdio.h>

#define NT_EXIT_FATAL 128
#define NT_EXIT_USAGE 129
/* No usable GPU or driver: distinct so scripts can tell it apart. */
#define NT_EXIT_NOGPU 2

#define NT_ATTR_PRINTF(a, b) __attribute__((format(printf, a, b)))

_Noreturn void die(const char *fmt, ...) NT_ATTR_PRINTF(1, 2);
_Noreturn void die_code(int code, const char *fmt, ...) NT_ATTR_PRINTF(2, 3);
int error(const char *fmt, ...) NT_ATTR_PRINTF(1, 2);
void warning(const char *fmt, ...) NT_ATTR_PRINTF(1, 2);
_Noreturn void usage_error(const char *usage, const char *fmt, ...) NT_ATTR_PRINTF(2, 3);

extern int nt_quiet;
void nt_progress(const char *fmt, ...) NT_ATTR_PRINTF(1, 2);
/* End a progress line (newline if one is open). */
void nt_progress_done(void);

/* Strict number parsing: whole string, range checked.  0 or -1. */
int nt_parse_int(const char *s, long lo, long hi, long *out);
int nt_parse_size(const char *s, long long *out);	/* "2M", "64KiB", "4096" */

/* Version of the tool, from the Makefile. */
extern const char nt_version[];

#endif
