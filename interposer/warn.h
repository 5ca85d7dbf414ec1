/*
 * warn.h - the interposer's only way to speak while the program runs: a
 * warning on stderr, once per distinct message site and never more than
 * a handful in all, none under NUCATRACE_QUIET.
 */
#ifndef NT_WARN_H
#define NT_WARN_H

void nt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
