/*
 * library.h - where libnucatrace.so is, for the commands that preload it
 * into a program (run) or into a child of their own (calibrate's probe
 * cost stage): $NUCATRACE_LIBRARY when set, else beside this program's
 * binary (the build tree) or in ../lib/nucatrace from it (installed).
 */
#ifndef NT_LIBRARY_H
#define NT_LIBRARY_H

#include <stddef.h>

#include "util/err.h"

/* Its path into buf: 0, or -1 with err saying where it was looked for. */
int nt_library_path(char *buf, size_t len, struct nt_err *err);

#endif
