/*
 * sampling.h - which kernel launches the interposer traces block by block.
 *
 * Tracing a launch's blocks costs device memory, a patched kernel and a
 * drain; a long training run makes millions of launches of a few dozen
 * kernels.  A policy says which to trace.  It is a string of terms
 * separated by commas (no spaces inside a term; spaces around one are
 * ignored):
 *
 *   all        every launch
 *   none       no launch (alone: no other term may come with it)
 *   first=N    the first N launches of each distinct kernel
 *   every=K    every K-th launch of each kernel, counting from its first
 *              (its launches 0, K, 2K, ...)
 *   match=GLOB only kernels whose mangled or demangled name matches the
 *              fnmatch(3) glob; may repeat (any one matching will do);
 *              a glob cannot hold a ','
 *   max=N      at most N traced launches in all
 *
 * N and K are positive decimal integers; each of all, first, every, max
 * may appear once.  A launch is traced when its kernel passes the match
 * filter (when there is one), and `all` is given or `first` or `every`
 * selects it, and fewer than `max` launches were traced before.  With
 * none of all/first/every, `all` is meant ("match=*gemm*" traces every
 * launch of the GEMMs; "max=100" the first 100 launches).  Launches of
 * one kernel are counted whether traced or not; kernels are told apart by
 * mangled name.
 *
 * NT_SAMPLING_DEFAULT, "first=8,every=1000": every distinct kernel is seen
 * (its first 8 launches: warm-up and the start of steady state), and a
 * long run keeps a thin sample over its whole length (1 launch in 1000
 * of each kernel), so the cost is a few launches per kernel plus 0.1% of
 * the rest however long the program runs.
 *
 * Lifecycle: nt_sampling_parse() -> nt_sampling_decide() per launch ->
 * nt_sampling_free().  NOT thread-safe: decide() counts, so the caller
 * holds a lock around it.
 */
#ifndef NT_SAMPLING_H
#define NT_SAMPLING_H

#include "util/err.h"

#define NT_SAMPLING_DEFAULT "first=8,every=1000"

struct nt_sampling;

/* Parse policy (NULL: NT_SAMPLING_DEFAULT); -1 with a message naming the
 * bad term. */
int nt_sampling_parse(const char *policy, struct nt_sampling **out, struct nt_err *err);

/* Whether to trace this launch (1) or not (0); counts it.  demangled may
 * be NULL.  When memory runs out it says 0. */
int nt_sampling_decide(struct nt_sampling *s, const char *mangled, const char *demangled);

/* 1 when decide() would like the demangled name of this kernel: the
 * policy has match= terms and the kernel is new (its match is decided
 * once, at first sight).  Lets the caller demangle only then. */
int nt_sampling_needs_demangled(struct nt_sampling *s, const char *mangled);

/* The canonical form: terms in the order all|none, first, every, match
 * (as given), max; the same policy always gives the same string. */
const char *nt_sampling_string(const struct nt_sampling *s);

void nt_sampling_free(struct nt_sampling *s);

#endif
