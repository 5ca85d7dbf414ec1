/*
 * backend.h - a way of collecting launches: one per process, chosen at
 * start (CUPTI and the Compute Sanitizer refuse to share a process).
 *
 *   blocks   backend_sanitizer.c: every block's SM and times (default)
 *   kernels  backend_cupti.c: per-kernel records, lowest overhead
 *
 * start() loads what the backend needs and subscribes to its callbacks;
 * on failure it returns -1 with the reason, having changed nothing the
 * host program can see.
 */
#ifndef NT_BACKEND_H
#define NT_BACKEND_H

#include "config.h"
#include "util/err.h"

struct nt_backend {
	const char *name;
	int (*start)(const struct nt_config *cfg, struct nt_err *err);
	void (*stop)(void);	/* at exit, before the collector stops; may be NULL */
};

/* In a start error: the Compute Sanitizer has another subscriber. */
#define NT_ANOTHER_TOOL "another tool is attached"

extern const struct nt_backend nt_backend_blocks;
extern const struct nt_backend nt_backend_kernels;

#endif
