/*
 * Fuzz target: a map in JSON (mapio.h), read as `map show` and `map
 * import` read one (fuzz.h, docs/fuzzing.md).  A map the reader accepts
 * must be summarised and printed without trouble, and must read back the
 * same after being written (else abort: a finding).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/summary.h"
#include "fuzz.h"
#include "map/mapio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size), *out = NULL;
	struct nt_map *m = NULL, *back = NULL;
	struct nt_map_report rep;
	struct nt_err err;
	size_t len = 0;
	FILE *f;

	if (nt_map_read_json_text(text, "fuzz", &m, &err))
		goto out;
	nt_map_report_build(m, &rep);
	nt_summary_text(fuzz_null(), m, &rep, NULL, -1, NULL);
	nt_map_report_free(&rep);
	if (!(f = open_memstream(&out, &len)) || nt_map_write_json(f, m, 0) || fclose(f))
		abort();
	if (nt_map_read_json_text(out, "fuzz, written back", &back, &err)) {
		fprintf(stderr, "an accepted map does not read back: %s\n", err.msg);
		abort();
	}
out:
	nt_map_free(m);
	nt_map_free(back);
	free(out);
	free(text);
	return 0;
}
