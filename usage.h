/*
 * usage.h - how the nucatrace command line reports errors and progress
 * (git's usage.c).  Front ends only: the core is also linked into the
 * interposer, which must never print on its own or exit the host
 * program, so nothing under core/ may use these.
 *
 * git's trio: die() prints "nucatrace: fatal: ..." and exits with
 * NT_EXIT_FATAL; error() prints "nucatrace: error: ..." and returns -1 so
 * that `return error("cannot open '%s'", path);` reads as one line;
 * warning() prints and returns.  usage_error() prints the message and the
 * command's usage line and exits with NT_EXIT_USAGE.
 *
 * Progress lines (nt_progress) go to stderr only when stderr is a
 * terminal or NUCATRACE_PROGRESS=1, and never when --quiet was given.
 */
#ifndef NT_USAGE_H
#define NT_USAGE_H

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

/* After getopt_long() (with opterr = 0 and an optstring that starts with
 * ':') returned o, '?' or ':', for argv: one line naming the bad option
 * ("map show: unknown option '--jsn'", "calibrate: option '--device'
 * needs a value"), then the usage, and exit NT_EXIT_USAGE. */
_Noreturn void usage_bad_option(const char *usage, const char *cmd, int o, char **argv);

extern int nt_quiet;
void nt_progress(const char *fmt, ...) NT_ATTR_PRINTF(1, 2);
/* End a progress line (newline if one is open). */
void nt_progress_done(void);

#endif
