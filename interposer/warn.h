/*
 * warn.h - the interposer's only way to speak while the program runs: a
 * warning on stderr, once per distinct message site and never more than
 * a handful in all, none under NUCATRACE_QUIET.
 */
#ifndef NT_WARN_H
#define NT_WARN_H

#include <signal.h>

void nt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Around anything we write on a thread of the program's (to its stderr,
 * or the trace file at exit): a write into a pipe whose reader is gone
 * raises no SIGPIPE, nor one past the file size limit SIGXFSZ (the
 * program would die of either, with another exit status), and stderr's
 * error flag stays as it was (a program may check it at exit).  The
 * collector's own thread blocks every signal. */
struct nt_stderr_guard {
	sigset_t mask;
	int pending_pipe, pending_fsz, error;
};
void nt_stderr_guard_begin(struct nt_stderr_guard *g);
/* A SIGPIPE is taken only when a write to stderr failed meanwhile, a
 * SIGXFSZ only when files_failed (one of our file writes did): one sent
 * by another process is left for the program. */
void nt_stderr_guard_end(struct nt_stderr_guard *g, int files_failed);

#endif
