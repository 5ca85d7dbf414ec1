/*
 * blockpack.h - block records packed into compressed chunks, the trace's
 * storage for them from schema 4 on (trace.h; docs/trace-format.md
 * spells out the bytes for readers in other languages).
 *
 * A chunk holds up to NT_BLOCKPACK_MAX records of one launch, in the
 * order given.  Its bytes are one zstd frame; inside, a header and then
 * the records column by column, each column a run of varints of the
 * zigzag-coded difference from a prediction (the block id from the one
 * before, a start from the block before, an end from its own start, a
 * %clock64 from the last block on the same SM), so that real records
 * (blocks in id order, starting in waves) leave zstd little to keep.
 * Any int64/int32 values pack and unpack bit for bit.
 *
 * A struct nt_blockpack is one thread's packer: zstd's contexts and the
 * scratch space.  Use one per thread; none is shared.
 *
 *	p = nt_blockpack_new(level)	zstd level (NT_BLOCKPACK_LEVEL is
 *					what traces are written with)
 *	nt_blockpack_pack(p, b, n, &bytes, &len, err)
 *	nt_blockpack_unpack(p, bytes, len, out, cap, &n, err)
 *	nt_blockpack_free(p)
 */
#ifndef NT_BLOCKPACK_H
#define NT_BLOCKPACK_H

#include <stddef.h>

#include "trace/trace.h"
#include "util/err.h"

#define NT_BLOCKPACK_MAX 65536		/* records a chunk holds at most */
#define NT_BLOCKPACK_VERSION 1		/* the header's first byte */
#define NT_BLOCKPACK_LEVEL 1		/* the zstd level traces are written with */

struct nt_blockpack;

struct nt_blockpack *nt_blockpack_new(int level);
void nt_blockpack_free(struct nt_blockpack *p);

/* Pack b[0..n), 1 <= n <= NT_BLOCKPACK_MAX (b[i].launch is not read):
 * *out points to the chunk's len bytes, which stay valid until the next
 * call on p.  -1 with err set only when memory or zstd fail. */
int nt_blockpack_pack(struct nt_blockpack *p, const struct nt_trace_block *b, size_t n, const void **out,
		      size_t *len, struct nt_err *err);

/* Unpack a chunk into out[0..*n), *n <= cap (launch fields set to
 * NT_TRACE_UNKNOWN): -1 with err saying what is wrong when the bytes are
 * not a chunk (not zstd, a newer version, cut short, more than cap
 * records, or damaged).  Never reads past in[len) or writes past
 * out[cap). */
int nt_blockpack_unpack(struct nt_blockpack *p, const void *in, size_t len, struct nt_trace_block *out,
			size_t cap, size_t *n, struct nt_err *err);

#endif
