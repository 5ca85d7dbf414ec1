/*
 * sitecost.h - the records shared by the sitecost investigation
 * (tests/gpu/sitecost.sh): the timing callbacks (sitecost_patch.cu), the
 * injection library that gives them their buffer and writes it out
 * (sitecost.c), the test program's own body timestamps
 * (progs/sitecost.cu), and the analysis (sitecost.py, which reads both
 * files with the layouts below; keep them in step).
 *
 * Callback records: the callback data of a timed kernel is the device
 * address of a struct sc_cb_buf; the first active lane of each warp that
 * reaches a patched site takes a slot with atomicAdd on count and fills
 * one struct sc_cb_rec.  count stops growing (about) at cap: a warp that
 * finds count >= cap adds to dropped instead (saturating, never past
 * 0xffffffff).
 *
 * Body records: one struct sc_body per warp and launch, written by lane 0
 * of each warp of the program's *_ts kernels at the very start and end
 * of the kernel body.  (gridid, block, warp) names the same warp in both
 * kinds of record: %gridid is unique per launch in a context, and the
 * clock64 values of one warp's records come from the same SM counter.
 */
#ifndef SITECOST_H
#define SITECOST_H

#ifdef __CUDACC__
typedef unsigned long long sc_u64;
typedef unsigned int sc_u32;
typedef unsigned short sc_u16;
typedef unsigned char sc_u8;
#else
#include <stdint.h>
typedef uint64_t sc_u64;
typedef uint32_t sc_u32;
typedef uint16_t sc_u16;
typedef uint8_t sc_u8;
#endif

#define SC_KIND_ENTER 1
#define SC_KIND_EXIT 2

/* 48 bytes; sitecost.py: "<QQQIIIHHB7x" */
struct sc_cb_rec {
	sc_u64 gtime;	/* %globaltimer, ns */
	sc_u64 clock;	/* clock64 of the SM */
	sc_u64 gridid;	/* %gridid */
	sc_u32 block;	/* linear block id */
	sc_u32 mask;	/* __activemask() at the callback */
	sc_u32 pc;	/* low 32 bits of the callback's pc argument */
	sc_u16 warp;	/* linear thread id / 32 */
	sc_u16 smid;
	sc_u8 kind;	/* SC_KIND_ENTER / SC_KIND_EXIT; 0: never written */
	sc_u8 pad[7];
};

struct sc_cb_buf {
	sc_u32 count;
	sc_u32 cap;
	sc_u32 dropped;
	sc_u32 pad;
	struct sc_cb_rec *recs;	/* device address */
};

/* 48 bytes; sitecost.py: "<QQQQQIHH" */
struct sc_body {
	sc_u64 gridid;
	sc_u64 t0, c0;	/* %globaltimer, clock64 at the body's start */
	sc_u64 t1, c1;	/* ... and at its end */
	sc_u32 block;
	sc_u16 warp;
	sc_u16 smid;
};

/* The callback file ($SITECOST_TS_OUT): SC_CB_MAGIC (8 bytes), then
 * count, dropped, cap and sizeof(struct sc_cb_rec) as 4 little-endian
 * u32, then count records. */
#define SC_CB_MAGIC "SCCB0001"

/* The body file (--ts-out): SC_BODY_MAGIC (8 bytes), then one chunk per
 * launch: the kernel's label (32 bytes, NUL-padded), the launch's index
 * (u32, 0 = the warm-up), the threads per block (u32), n (u32), 4 bytes
 * of padding, then n struct sc_body. */
#define SC_BODY_MAGIC "SCBD0001"
#define SC_LABEL_LEN 32

#endif
