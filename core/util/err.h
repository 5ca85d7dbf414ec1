/*
 * err.h - how core functions report failure without printing.
 *
 * The core is linked into the CLI and into the interposer, which must
 * never print on its own or exit; so core functions return 0 on success
 * and -1 on failure, leaving a one-line message in the caller's struct
 * nt_err: `return nt_err_set(err, "cannot open '%s': %s", path, msg);`.
 * Messages name the file or value at fault.  The caller decides whether
 * to print it (die("%s", err.msg)) or to warn once and step aside.
 * A NULL err is allowed: the message is dropped.
 */
#ifndef NT_ERR_H
#define NT_ERR_H

#include <stddef.h>

struct nt_err {
	char msg[512];
};

int nt_err_set(struct nt_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
