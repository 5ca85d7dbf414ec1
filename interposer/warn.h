/*
 * warn.h - the interposer's only way to speak while the program runs: a
 * warning on stderr, once per distinct message site and never more than
 * a handful in all, none under NUCATRACE_QUIET.
 */
#ifndef NT_WARN_H
#define NT_WARN_H

#include <signal.h>

void nt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Around anything we write to the program's stderr: a write into a pipe
 * whose reader is gone raises no SIGPIPE (the program would die of it,
 * with another exit status) and leaves stderr's error flag as it was (a
 * program may check it at exit). */
struct nt_stderr_guard {
	sigset_t mask;
	int pending, error;
};
void nt_stderr_guard_begin(struct nt_stderr_guard *g);
void nt_stderr_guard_end(struct nt_stderr_guard *g);

#endif
