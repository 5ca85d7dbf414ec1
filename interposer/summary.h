/*
 * summary.h - the lines a traced program prints on stderr at exit: what
 * was recorded, where it went, the top kernels by recorded GPU time
 * (named as the report names them: demangled, control characters
 * filtered), and what is missing (drops, maps).
 */
#ifndef NT_SUMMARY_H
#define NT_SUMMARY_H

#include <stdio.h>

#include "sink.h"

struct nt_summary {
	const char *backend, *sampling;
	const struct nt_run_counts *run;
	uint64_t traced, blocks, dropped, native;
	double write_s;			/* in SQLite for the traced launches */
	const struct nt_sink_kernel *const *kernels;
	size_t n_kernels;
	const char *missing_maps;	/* "" when every GPU had one */
	const char *path;		/* the trace, NULL when none was written */
	int incomplete;			/* ... some writes to it failed */
};

void nt_summary_print(FILE *f, const struct nt_summary *s);

#endif
