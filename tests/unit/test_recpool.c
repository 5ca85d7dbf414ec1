/* interposer/blocks/recpool.c: runs next-fit in slabs, growth up to the cap,
 * empty slabs given back at the cap, runs never overlapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "interposer/blocks/recpool.h"

struct mem_log {
	int allocs, releases, fail_next;
};

static int fake_alloc(void *arg, uint32_t slots, struct nt_recslab_mem *m)
{
	struct mem_log *log = arg;

	assert_int_equal(slots % NT_RECPOOL_UNIT, 0);
	if (log->fail_next) {
		log->fail_next = 0;
		return -1;
	}
	m->scratch = calloc(slots, sizeof(*m->scratch));
	m->rec = calloc(slots, sizeof(*m->rec));
	m->drec = calloc(slots, sizeof(*m->drec));
	m->desc = calloc(slots / NT_RECPOOL_UNIT, sizeof(*m->desc));
	log->allocs++;
	return 0;
}

static void fake_release(void *arg, struct nt_recslab_mem *m)
{
	struct mem_log *log = arg;

	log->releases++;
	free(m->scratch);
	free(m->rec);
	free(m->drec);
	free(m->desc);
}

static struct mem_log *the_log;

static struct nt_recpool *pool(struct mem_log *log, uint32_t first, uint32_t max)
{
	struct nt_recpool *p;

	memset(log, 0, sizeof(*log));
	the_log = log;
	p = nt_recpool_new(first, max);
	assert_non_null(p);
	return p;
}

/* take() as the backend does it: grow with no lock held, add, again. */
static enum nt_recpool_status take(struct nt_recpool *p, uint32_t blocks, struct nt_recrun *run)
{
	struct nt_recpool_grow g;
	enum nt_recpool_status st;

	while ((st = nt_recpool_take(p, blocks, run, &g)) == NT_RECPOOL_GROW) {
		struct nt_recslab_mem mem;

		for (int i = 0; i < g.n_freed; i++)
			fake_release(the_log, &g.freed[i]);
		if (!g.slots)
			continue;
		if (fake_alloc(the_log, g.slots, &mem))
			return NT_RECPOOL_NO_MEMORY;
		if (nt_recpool_add(p, g.slots, &mem))
			fake_release(the_log, &mem);
	}
	return st;
}

static void pool_free(struct nt_recpool *p)
{
	nt_recpool_free(p, fake_release, the_log);
}

/* Every record of a run is its own: write a pattern through one run and
 * check no other live run sees it. */
static void stamp(const struct nt_recrun *r, unsigned v)
{
	for (uint32_t i = 0; i < r->blocks; i++) {
		assert_int_equal(r->rec[i].tag, 0);
		r->rec[i].tag = v;
		r->drec[i].tag = v;
		r->scratch[i].runs = v;
	}
	r->desc->tag = v;
}

static void unstamp(const struct nt_recrun *r, unsigned v)
{
	for (uint32_t i = 0; i < r->blocks; i++) {
		assert_int_equal(r->rec[i].tag, v);
		assert_int_equal(r->scratch[i].runs, v);
		assert_int_equal(r->drec[i].tag, v);
		r->rec[i].tag = 0;
		r->scratch[i].runs = 0;
	}
	assert_int_equal(r->desc->tag, v);
}

static void test_basic(void **state)
{
	struct nt_recpool_stats st;
	struct nt_recrun a, b, c;
	struct mem_log log;
	struct nt_recpool *p = pool(&log, 64, 1024);

	(void)state;
	nt_recpool_stats(p, &st);
	assert_int_equal(st.slabs, 0);	/* nothing made before the first take */
	assert_int_equal(take(p, 1, &a), NT_RECPOOL_OK);
	assert_int_equal(a.units, 1);
	assert_int_equal(take(p, 9, &b), NT_RECPOOL_OK);
	assert_int_equal(b.units, 2);
	assert_int_equal(b.unit, 1);
	stamp(&a, 1);
	stamp(&b, 2);
	nt_recpool_stats(p, &st);
	assert_int_equal(st.slabs, 1);
	assert_int_equal(st.slots, 64);
	assert_int_equal(st.used, 24);
	unstamp(&a, 1);
	nt_recpool_give(p, &a);
	/* next-fit: the freed unit 0 is not reused before the rover wraps */
	assert_int_equal(take(p, 8, &c), NT_RECPOOL_OK);
	assert_int_equal(c.unit, 3);
	unstamp(&b, 2);
	nt_recpool_give(p, &b);
	nt_recpool_give(p, &c);
	nt_recpool_stats(p, &st);
	assert_int_equal(st.used, 0);
	pool_free(p);
	assert_int_equal(log.allocs, log.releases);
}

/* A full slab makes a new one (doubling), up to the cap; at the cap the
 * caller is told FULL, and a grid larger than the cap TOO_BIG. */
static void test_growth(void **state)
{
	struct nt_recpool_stats st;
	struct nt_recrun r[64];
	struct mem_log log;
	struct nt_recpool *p = pool(&log, 64, 256);
	int n = 0;

	(void)state;
	while (n < 64 && take(p, 16, &r[n]) == NT_RECPOOL_OK) {
		stamp(&r[n], (unsigned)n + 1);
		n++;
	}
	assert_int_equal(n, 16);	/* 256 slots in 16-block runs */
	nt_recpool_stats(p, &st);
	assert_int_equal(st.slabs, 3);	/* 64, then 64 (doubling 64), then 128 */
	assert_int_equal(st.slots, 256);
	assert_false(nt_recpool_room(p, 16));
	assert_int_equal(take(p, 16, &r[n]), NT_RECPOOL_FULL);
	assert_true(nt_recpool_room(p, 257));	/* never fits: no wait for room */
	assert_int_equal(take(p, 257, &r[n]), NT_RECPOOL_TOO_BIG);
	unstamp(&r[5], 6);
	nt_recpool_give(p, &r[5]);
	assert_true(nt_recpool_room(p, 16));
	assert_false(nt_recpool_room(p, 17));
	assert_int_equal(take(p, 16, &r[5]), NT_RECPOOL_OK);
	stamp(&r[5], 6);
	for (int i = 0; i < n; i++) {
		unstamp(&r[i], (unsigned)i + 1);
		nt_recpool_give(p, &r[i]);
	}
	pool_free(p);
	assert_int_equal(log.allocs, 3);
	assert_int_equal(log.releases, 3);
}

/* A grid larger than a slab gets a slab of its own; at the cap, empty
 * slabs are given back to make room for it, runs in use stay put. */
static void test_big_grid(void **state)
{
	struct nt_recrun small, big, again;
	struct nt_recpool_stats st;
	struct mem_log log;
	struct nt_recpool *p = pool(&log, 64, 512);

	(void)state;
	assert_int_equal(take(p, 8, &small), NT_RECPOOL_OK);
	stamp(&small, 7);
	assert_int_equal(take(p, 300, &big), NT_RECPOOL_OK);
	assert_int_equal(big.slab, 1);
	stamp(&big, 8);
	unstamp(&big, 8);
	nt_recpool_give(p, &big);
	/* 64 + 304 made; 400 more fit only once the empty big slab goes */
	assert_int_equal(take(p, 400, &again), NT_RECPOOL_OK);
	assert_int_equal(again.slab, 1);	/* the same place, made anew */
	stamp(&again, 9);
	nt_recpool_stats(p, &st);
	assert_int_equal(st.slabs, 2);
	assert_true(st.slots <= 512);
	assert_int_equal(log.releases, 1);
	unstamp(&small, 7);
	unstamp(&again, 9);
	nt_recpool_give(p, &small);
	nt_recpool_give(p, &again);
	pool_free(p);
	assert_int_equal(log.allocs, log.releases);
}

/* The ops failing is NO_MEMORY, and the pool stays usable. */
static void test_alloc_fails(void **state)
{
	struct nt_recrun r;
	struct mem_log log;
	struct nt_recpool *p = pool(&log, 64, 512);

	(void)state;
	log.fail_next = 1;
	assert_int_equal(take(p, 8, &r), NT_RECPOOL_NO_MEMORY);
	assert_int_equal(take(p, 8, &r), NT_RECPOOL_OK);
	nt_recpool_give(p, &r);
	pool_free(p);
}

/* Random takes and gives in the order launches on several streams would
 * finish: never an overlap, everything back at the end. */
static void test_random(void **state)
{
	struct nt_recrun live[32];
	unsigned tags[32];
	int n = 0;
	struct mem_log log;
	struct nt_recpool *p = pool(&log, 256, 4096);
	unsigned seed = 12345, tag = 0;
	int fulls = 0;

	(void)state;
	for (int step = 0; step < 20000; step++) {
		seed = seed * 1103515245u + 12345u;
		if (n < 32 && (seed >> 16) % 3) {
			uint32_t blocks = 1 + (seed >> 8) % ((seed >> 20) % 7 ? 40 : 700);
			int room = nt_recpool_room(p, blocks);
			enum nt_recpool_status st = take(p, blocks, &live[n]);

			assert_true(st == NT_RECPOOL_OK || st == NT_RECPOOL_FULL);
			assert_int_equal(room, st != NT_RECPOOL_FULL);	/* room() foretold it */
			fulls += st == NT_RECPOOL_FULL;
			if (st == NT_RECPOOL_OK) {
				tags[n] = ++tag;
				stamp(&live[n], tags[n]);
				n++;
			}
		} else if (n) {
			int i = (int)((seed >> 4) % (unsigned)n);

			unstamp(&live[i], tags[i]);
			nt_recpool_give(p, &live[i]);
			live[i] = live[n - 1];
			tags[i] = tags[n - 1];
			n--;
		}
	}
	while (n--) {
		unstamp(&live[n], tags[n]);
		nt_recpool_give(p, &live[n]);
	}
	{
		struct nt_recpool_stats st;

		nt_recpool_stats(p, &st);
		assert_int_equal(st.used, 0);
		assert_true(st.slots <= 4096);
	}
	assert_true(fulls > 100);	/* the pool was full often enough to test room() */
	pool_free(p);
	assert_int_equal(log.allocs, log.releases);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_big_grid),
		cmocka_unit_test(test_alloc_fails),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
