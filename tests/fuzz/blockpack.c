/*
 * Fuzz target: a block chunk as the trace stores it (blockpack.h), the
 * bytes a damaged or hostile trace hands the reader (fuzz.h,
 * docs/fuzzing.md).  Unpacking never reads or writes out of bounds; what
 * unpacks packs again and unpacks to the same records.  The same bytes
 * taken as raw records pack and unpack bit for bit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/blockpack.h"

static struct nt_trace_block out[NT_BLOCKPACK_MAX], again[NT_BLOCKPACK_MAX];

static void same(const struct nt_trace_block *a, const struct nt_trace_block *b, size_t n, const char *what)
{
	if (memcmp(a, b, n * sizeof(*a))) {
		fprintf(stderr, "%s: records differ after a round trip\n", what);
		abort();
	}
}

static void round_trip(struct nt_blockpack *p, struct nt_trace_block *b, size_t n, const char *what)
{
	struct nt_err err;
	const void *data;
	void *copy;
	size_t len, got;

	for (size_t i = 0; i < n; i++)
		b[i].launch = NT_TRACE_UNKNOWN;
	if (nt_blockpack_pack(p, b, n, &data, &len, &err) || !(copy = malloc(len)))
		abort();
	memcpy(copy, data, len);
	if (nt_blockpack_unpack(p, copy, len, again, n, &got, &err) || got != n) {
		fprintf(stderr, "%s: packed records do not unpack: %s\n", what, err.msg);
		abort();
	}
	same(b, again, n, what);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nt_blockpack *p;
	struct nt_err err;
	size_t n = size / sizeof(struct nt_trace_block);

	if (!p && !(p = nt_blockpack_new(NT_BLOCKPACK_LEVEL)))
		abort();
	if (!nt_blockpack_unpack(p, data, size, out, NT_BLOCKPACK_MAX, &n, &err))
		round_trip(p, out, n, "unpacked");
	n = size / sizeof(struct nt_trace_block);
	if (n && n <= NT_BLOCKPACK_MAX) {
		memcpy(out, data, n * sizeof(*out));
		round_trip(p, out, n, "raw");
	}
	return 0;
}
