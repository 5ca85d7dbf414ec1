/*
 * trace_name.h - where a process's trace goes by default.
 *
 * One trace per process, so the name has to tell processes apart: the
 * host, the pid and, in an MPI/Slurm/torchrun job, the rank.  The path is
 * <dir>/<pattern expanded>, where
 *
 *   dir      the argument, else $NUCATRACE_OUTPUT_DIR, else "."
 *   pattern  the argument, else $NUCATRACE_OUTPUT_PATTERN, else
 *            NT_TRACE_PATTERN ("nucatrace-%h-%p%r.sqlite")
 *
 * (empty variables count as unset) and the pattern's escapes are
 *
 *   %h  the short host name (up to the first '.')
 *   %p  the pid
 *   %r  "-rank<N>" when nt_trace_rank() finds a rank, else ""
 *   %t  the UTC time now, YYYYmmddTHHMMSS
 *   %%  a '%'
 *
 * Any other escape, or a '%' at the end, is an error naming the pattern.
 * A pattern may hold '/' (subfolders of dir); they are not created.
 */
#ifndef NT_TRACE_NAME_H
#define NT_TRACE_NAME_H

#include "util/err.h"

#include <stddef.h>

#define NT_TRACE_PATTERN "nucatrace-%h-%p%r.sqlite"

/* The path into buf (len bytes); -1 on a bad pattern or when it does not
 * fit. */
int nt_trace_path(char *buf, size_t len, const char *dir, const char *pattern, struct nt_err *err);

/* The process's rank in its job: the first of OMPI_COMM_WORLD_RANK,
 * PMI_RANK, SLURM_PROCID, RANK (torchrun) that holds a non-negative
 * decimal integer; -1 when none does. */
int nt_trace_rank(void);

#endif
