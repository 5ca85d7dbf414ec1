/*
 * Fuzz target: a trace file name pattern (trace_name.h), as --output and
 * NUCATRACE_OUTPUT_PATTERN give one (fuzz.h, docs/fuzzing.md), expanded
 * into buffers of every size up to the first byte's value: never past
 * the buffer, always a terminated string or an error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/trace_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *pattern = fuzz_string(data + (size > 0), size - (size > 0)), *buf;
	size_t max = size ? data[0] : 0;
	struct nt_err err;

	for (size_t len = 1; len <= max; len++) {
		if (!(buf = malloc(len)))
			abort();
		if (!nt_trace_path(buf, len, "dir", pattern, &err) && strnlen(buf, len) == len)
			abort();	/* "succeeded" without a terminated string */
		free(buf);
	}
	buf = malloc(4096);
	if (!buf)
		abort();
	nt_trace_path(buf, 4096, NULL, pattern, &err);
	free(buf);
	free(pattern);
	return 0;
}
