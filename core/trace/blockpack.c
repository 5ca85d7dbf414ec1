/* Block records packed into zstd chunks (blockpack.h). */
#include "trace/blockpack.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Header flags. */
#define F_NOEND 1u	/* no ends: every t_end_ns and c_end -1, warps 0 */
#define F_SM8 2u	/* the SM column is one byte a record */
#define F_ALL (F_NOEND | F_SM8)

/* The %clock64 prediction's lanes: a record's lane is its SM's low bits
 * (any int32 SM packs; two SMs sharing a lane only predict worse). */
#define LANES 256

enum { C_BLOCK, C_SM, C_WARPS, C_T_START, C_T_END, C_C_START, C_C_END, COLUMNS };

/* A varint is at most 10 bytes; the header at most 2 + 2 * 10. */
#define VARINT_MAX 10
#define CONTENT_MAX(n) (22 + COLUMNS * (VARINT_MAX + (size_t)(n) * VARINT_MAX))

/* %clock64 cycles per %globaltimer ns, in 1/2^16: the header's clock
 * ratio (the chunk's own, so any clock speed predicts well), at most
 * RATIO_MAX (16 GHz); predictions scale differences of at most DT_MAX ns
 * (about 18 minutes), larger ones predict no change. */
#define RATIO_SHIFT 16
#define RATIO_MAX (16u << RATIO_SHIFT)
#define DT_MAX ((int64_t)1 << 40)

/* A packer's buffers for packing (col, frame, cc) are made at its first
 * pack: a reader's packer only unpacks (content, dc). */
struct nt_blockpack {
	ZSTD_CCtx *cc;
	ZSTD_DCtx *dc;
	int level;
	uint8_t *content;	/* CONTENT_MAX(NT_BLOCKPACK_MAX) */
	uint8_t *col[COLUMNS];	/* one column's varints while packing */
	uint8_t *frame;
	size_t frame_cap;
};

/* Is column c in a chunk of these flags? */
static int present(unsigned flags, int c)
{
	return !((flags & F_NOEND) && (c == C_WARPS || c == C_T_END || c == C_C_END));
}

struct nt_blockpack *nt_blockpack_new(int level)
{
	struct nt_blockpack *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->level = level;
	if (!(p->content = malloc(CONTENT_MAX(NT_BLOCKPACK_MAX)))) {
		free(p);
		return NULL;
	}
	return p;
}

/* The packing side, on first use. */
static int packing_ready(struct nt_blockpack *p)
{
	int ok;

	if (!p->frame) {
		p->frame_cap = ZSTD_compressBound(CONTENT_MAX(NT_BLOCKPACK_MAX));
		p->frame = malloc(p->frame_cap);
	}
	if (!p->cc)
		p->cc = ZSTD_createCCtx();
	ok = p->frame && p->cc;
	for (int c = 0; c < COLUMNS; c++) {
		if (!p->col[c])
			p->col[c] = malloc((size_t)NT_BLOCKPACK_MAX * VARINT_MAX);
		ok = ok && p->col[c];
	}
	return ok ? 0 : -1;
}

void nt_blockpack_free(struct nt_blockpack *p)
{
	if (!p)
		return;
	ZSTD_freeCCtx(p->cc);
	ZSTD_freeDCtx(p->dc);
	free(p->content);
	free(p->frame);
	for (int c = 0; c < COLUMNS; c++)
		free(p->col[c]);
	free(p);
}

static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

static inline uint8_t *put(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* Differences in uint64_t: wrap-around keeps any pair of int64 exact. */
static inline uint8_t *put_diff(uint8_t *o, int64_t v, int64_t pred)
{
	return put(o, zigzag((uint64_t)v - (uint64_t)pred));
}

/* a - b, wrapping rather than overflowing */
static inline int64_t diff(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* base + dt ns in cycles at ratio: the same on both sides, any input */
static inline int64_t scaled(int64_t base, int64_t dt, uint64_t ratio)
{
	if (dt > DT_MAX || dt < -DT_MAX)
		return base;
	return (int64_t)((uint64_t)base + (uint64_t)((dt * (int64_t)ratio) / ((int64_t)1 << RATIO_SHIFT)));
}

/* The chunk's clock ratio: from its blocks' durations, or, without
 * ends, from the starts of blocks on one SM; 0 when neither tells. */
static uint64_t clock_ratio(const struct nt_trace_block *b, size_t n, int noend)
{
	double cycles = 0, ns = 0, r;
	int64_t last_t[LANES], last_c[LANES];
	uint8_t seen[LANES] = { 0 };

	for (size_t i = 0; i < n; i++) {
		int64_t dt, dc;
		unsigned lane = (uint32_t)b[i].sm % LANES;

		if (!noend) {
			dt = diff(b[i].t_end_ns, b[i].t_start_ns);
			dc = diff(b[i].c_end, b[i].c_start);
		} else if (seen[lane]) {
			dt = diff(b[i].t_start_ns, last_t[lane]);
			dc = diff(b[i].c_start, last_c[lane]);
		} else {
			dt = dc = 0;
		}
		last_t[lane] = b[i].t_start_ns;
		last_c[lane] = b[i].c_start;
		seen[lane] = 1;
		if (dt > 0 && dt < DT_MAX && dc > 0 && dc < DT_MAX * 16) {
			ns += (double)dt;
			cycles += (double)dc;
		}
	}
	r = ns > 0 ? cycles / ns * (1u << RATIO_SHIFT) + 0.5 : 0;
	return r < RATIO_MAX ? (uint64_t)r : 0;
}

int nt_blockpack_pack(struct nt_blockpack *p, const struct nt_trace_block *b, size_t n, const void **out,
		      size_t *len, struct nt_err *err)
{
	int64_t last_c[LANES], last_t[LANES];
	uint8_t seen[LANES] = { 0 }, *o[COLUMNS], *w = p->content;
	unsigned flags = F_NOEND | F_SM8;
	int64_t prev_block = -1, prev_t = 0, prev_c = 0;
	int32_t prev_warps = 0;
	uint64_t ratio;
	size_t z;

	if (!n || n > NT_BLOCKPACK_MAX)
		return nt_err_set(err, "block chunk of %zu records (1 to %d)", n, NT_BLOCKPACK_MAX);
	if (packing_ready(p))
		return nt_err_set(err, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (b[i].t_end_ns != -1 || b[i].c_end != -1 || b[i].warps)
			flags &= ~F_NOEND;
		if ((uint32_t)b[i].sm > 255)
			flags &= ~F_SM8;
	}
	ratio = clock_ratio(b, n, flags & F_NOEND);
	for (int c = 0; c < COLUMNS; c++)
		o[c] = p->col[c];
	for (size_t i = 0; i < n; i++) {
		const struct nt_trace_block *r = &b[i];
		unsigned lane = (uint32_t)r->sm % LANES;

		o[C_BLOCK] = put_diff(o[C_BLOCK], r->block, diff(prev_block, -1));
		if (flags & F_SM8)
			*o[C_SM]++ = (uint8_t)r->sm;
		else
			o[C_SM] = put_diff(o[C_SM], r->sm, 0);
		o[C_T_START] = put_diff(o[C_T_START], r->t_start_ns, prev_t);
		o[C_C_START] = put_diff(o[C_C_START], r->c_start,
					seen[lane] ? scaled(last_c[lane], diff(r->t_start_ns, last_t[lane]), ratio) : prev_c);
		if (!(flags & F_NOEND)) {
			o[C_WARPS] = put_diff(o[C_WARPS], r->warps, prev_warps);
			o[C_T_END] = put_diff(o[C_T_END], r->t_end_ns, r->t_start_ns);
			o[C_C_END] = put_diff(o[C_C_END], r->c_end,
					      scaled(r->c_start, diff(r->t_end_ns, r->t_start_ns), ratio));
		}
		prev_block = r->block;
		prev_t = last_t[lane] = r->t_start_ns;
		prev_c = last_c[lane] = r->c_start;
		seen[lane] = 1;
		prev_warps = r->warps;
	}
	*w++ = NT_BLOCKPACK_VERSION;
	*w++ = (uint8_t)flags;
	w = put(w, n);
	w = put(w, ratio);
	for (int c = 0; c < COLUMNS; c++) {
		size_t l = (size_t)(o[c] - p->col[c]);

		if (!present(flags, c))
			continue;
		w = put(w, l);
		memcpy(w, p->col[c], l);
		w += l;
	}
	z = ZSTD_compressCCtx(p->cc, p->frame, p->frame_cap, p->content, (size_t)(w - p->content), p->level);
	if (ZSTD_isError(z))
		return nt_err_set(err, "cannot compress block records: %s", ZSTD_getErrorName(z));
	*out = p->frame;
	*len = z;
	return 0;
}

/* A reader over [p, end): get() fails (returns -1) past the end or on a
 * varint longer than 64 bits. */
struct rd {
	const uint8_t *p, *end;
};

static inline int get(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; r->p < r->end && shift < 64; shift += 7) {
		uint8_t byte = *r->p++;

		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static inline int get_diff(struct rd *r, int64_t pred, int64_t *v)
{
	uint64_t z;

	if (get(r, &z))
		return -1;
	*v = (int64_t)((uint64_t)pred + unzigzag(z));
	return 0;
}

/* Column c's reader, from the content's column table. */
static int column(struct rd *all, struct rd *col)
{
	uint64_t l;

	if (get(all, &l) || l > (uint64_t)(all->end - all->p))
		return -1;
	col->p = all->p;
	col->end = all->p + l;
	all->p += l;
	return 0;
}

static int unpack_content(const uint8_t *content, size_t size, struct nt_trace_block *out, size_t cap,
			  size_t *n, const char **why)
{
	struct rd all = { content, content + size }, col[COLUMNS];
	int64_t last_c[LANES], last_t[LANES], prev_block = -1, prev_t = 0, prev_c = 0;
	uint8_t seen[LANES] = { 0 };
	int64_t prev_warps = 0;
	unsigned flags;
	uint64_t count, ratio;

	if (size < 3 || content[0] != NT_BLOCKPACK_VERSION) {
		*why = size < 3 ? "cut short" : "of another version";
		return -1;
	}
	flags = content[1];
	all.p += 2;
	if ((flags & ~F_ALL) || get(&all, &count) || !count || count > NT_BLOCKPACK_MAX || get(&all, &ratio) ||
	    ratio >= RATIO_MAX) {
		*why = "a bad header";
		return -1;
	}
	if (count > cap) {
		*why = "more records than its row says";
		return -1;
	}
	for (int c = 0; c < COLUMNS; c++) {
		if (!present(flags, c))
			continue;
		if (column(&all, &col[c])) {
			*why = "cut short";
			return -1;
		}
	}
	if (all.p != all.end || ((flags & F_SM8) && (uint64_t)(col[C_SM].end - col[C_SM].p) != count)) {
		*why = "of inconsistent length";
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		struct nt_trace_block *r = &out[i];
		int64_t sm, warps;
		unsigned lane;

		r->launch = NT_TRACE_UNKNOWN;
		if (get_diff(&col[C_BLOCK], diff(prev_block, -1), &r->block))
			goto bad;
		if (flags & F_SM8)
			sm = *col[C_SM].p++;
		else if (get_diff(&col[C_SM], 0, &sm))
			goto bad;
		r->sm = (int32_t)sm;
		lane = (uint32_t)r->sm % LANES;
		if (get_diff(&col[C_T_START], prev_t, &r->t_start_ns) ||
		    get_diff(&col[C_C_START],
			     seen[lane] ? scaled(last_c[lane], diff(r->t_start_ns, last_t[lane]), ratio) : prev_c,
			     &r->c_start))
			goto bad;
		if (flags & F_NOEND) {
			r->t_end_ns = r->c_end = -1;
			r->warps = 0;
		} else {
			if (get_diff(&col[C_WARPS], prev_warps, &warps) ||
			    get_diff(&col[C_T_END], r->t_start_ns, &r->t_end_ns) ||
			    get_diff(&col[C_C_END], scaled(r->c_start, diff(r->t_end_ns, r->t_start_ns), ratio),
				     &r->c_end))
				goto bad;
			r->warps = (int32_t)warps;
		}
		prev_block = r->block;
		prev_t = last_t[lane] = r->t_start_ns;
		prev_c = last_c[lane] = r->c_start;
		seen[lane] = 1;
		prev_warps = r->warps;
	}
	for (int c = 0; c < COLUMNS; c++)
		if (present(flags, c) && col[c].p != col[c].end) {
			*why = "of inconsistent length";
			return -1;
		}
	*n = count;
	return 0;
bad:
	*why = "cut short";
	return -1;
}

int nt_blockpack_unpack(struct nt_blockpack *p, const void *in, size_t len, struct nt_trace_block *out,
			size_t cap, size_t *n, struct nt_err *err)
{
	unsigned long long size = ZSTD_getFrameContentSize(in, len);
	const char *why = NULL;
	size_t z;

	*n = 0;
	if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
		return nt_err_set(err, "block chunk is not a zstd frame with its size");
	if (size > CONTENT_MAX(NT_BLOCKPACK_MAX))
		return nt_err_set(err, "block chunk says it holds %llu bytes (at most %zu)", size,
				  CONTENT_MAX(NT_BLOCKPACK_MAX));
	if (!p->dc && !(p->dc = ZSTD_createDCtx()))
		return nt_err_set(err, "out of memory");
	z = ZSTD_decompressDCtx(p->dc, p->content, CONTENT_MAX(NT_BLOCKPACK_MAX), in, len);
	if (ZSTD_isError(z))
		return nt_err_set(err, "block chunk does not decompress: %s", ZSTD_getErrorName(z));
	if (z != size)
		return nt_err_set(err, "block chunk decompresses to %zu bytes, not the %llu it says", z, size);
	if (unpack_content(p->content, z, out, cap, n, &why))
		return nt_err_set(err, "block chunk is %s", why);
	return 0;
}
