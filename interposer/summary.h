/*
 * summary.h - the lines a traced program prints on stderr at exit: what
 * was recorded, where it went, the top kernels by recorded GPU time
 * (named as the report names them: demangled, control characters
 * filtered), and what is missing (drops, maps).
 */
#ifndef NT_SUMMARY_H
#define NT_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "sink.h"

/* Launches dropped for one reason. */
struct nt_summary_drop {
	const char *reason;
	uint64_t n;
};

struct nt_summary {
	const char *backend, *sampling;
	int entry_only;			/* traced launches with no block ends (entry
					 * site alone): 0 none, 1 all, 2 some */
	const struct nt_run_counts *run;
	uint64_t traced, blocks, dropped, native;
	double pack_s;			/* packing their block records (blockpack.h) */
	double write_s;			/* in SQLite for the traced launches */
	uint64_t block_bytes;		/* the packed records' bytes */
	const struct nt_sink_kernel *const *kernels;
	size_t n_kernels;
	const struct nt_summary_drop *const *drops;	/* by reason, most first */
	size_t n_drops;
	uint64_t dropped_other;		/* ... for reasons not counted apart */
	const char *missing_maps;	/* "" when every GPU had one */
	const char *path;		/* the trace, NULL when none was written */
	int incomplete;			/* ... some writes to it failed */
};

void nt_summary_print(FILE *f, const struct nt_summary *s);

#endif
