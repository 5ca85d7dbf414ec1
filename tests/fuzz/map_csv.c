/*
 * Fuzz target: a map in CSV (mapio.h), read from a file as `map show`
 * and `map import` read one (fuzz.h, docs/fuzzing.md).  A map the reader
 * accepts must be summarised and printed without trouble, and must read
 * back after being written (else abort: a finding).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/summary.h"
#include "fuzz.h"
#include "map/mapio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nt_map *m = NULL, *back = NULL;
	struct nt_map_report rep;
	struct nt_err err;
	char path[256];
	FILE *f;

	fuzz_write(fuzz_path(path, sizeof(path), "map.csv"), data, size);
	if (nt_map_read_csv(path, &m, &err))
		goto out;
	nt_map_report_build(m, &rep);
	nt_summary_text(fuzz_null(), m, &rep, NULL, -1, NULL);
	nt_map_report_free(&rep);
	if (!(f = fopen(path, "w")) || nt_map_write_csv(f, m) || fclose(f))
		abort();
	if (nt_map_read_csv(path, &back, &err)) {
		fprintf(stderr, "an accepted map does not read back: %s\n", err.msg);
		abort();
	}
out:
	unlink(path);
	nt_map_free(m);
	nt_map_free(back);
	return 0;
}
