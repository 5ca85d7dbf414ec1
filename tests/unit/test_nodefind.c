/* kernels/blockrec.h: nt_node_find, the lookup the block callbacks make
 * first.  A descriptor the host made (marked), alone or in a node table,
 * is found for its own grid only; anything else a patched kernel may be
 * handed (no data, another launch's, a pointer into someone else's data,
 * a misaligned one) finds nothing, and a misaligned pointer is never read
 * through (it points into a page that cannot be read: a read would end
 * the test with SIGSEGV). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels/blockrec.h"

static struct nt_launch_desc desc(unsigned long long grid)
{
	struct nt_launch_desc d = { .magic = NT_DESC_MAGIC, .grid = grid, .blocks = 4, .threads = 128 };

	return d;
}

static void test_plain(void **state)
{
	struct nt_launch_desc d = desc(77);

	(void)state;
	assert_ptr_equal(nt_node_find(&d, 77), &d);
	assert_null(nt_node_find(&d, 78));	/* another grid's launch */
	assert_null(nt_node_find(NULL, 77));
	d.magic = 0;				/* not marked: not ours */
	assert_null(nt_node_find(&d, 77));
}

/* A table of 8 entries as san_nodes.c lays one out: its descriptor, then
 * the entries, found from slot nt_node_slot(gridid + 1). */
static void file(struct nt_node_entry *e, unsigned bits, unsigned long long gridid, struct nt_launch_desc d)
{
	unsigned i = nt_node_slot(gridid + 1, 64 - bits);

	while (e[i].key)
		i = (i + 1) & ((1u << bits) - 1);
	e[i].key = gridid + 1;
	e[i].desc = d;
}

static void test_table(void **state)
{
	struct {
		struct nt_launch_desc d;
		struct nt_node_entry e[8];
	} t;
	struct nt_launch_desc none = { .grid = ~0ull };

	(void)state;
	memset(&t, 0, sizeof(t));
	t.d.magic = NT_DESC_MAGIC;
	t.d.node_shift = 64 - 3;
	t.d.nodes = t.e;
	file(t.e, 3, 5, desc(5));
	file(t.e, 3, 9, desc(9));
	file(t.e, 3, 12, none);		/* cleared: the host's "none" */
	assert_non_null(nt_node_find(&t.d, 5));
	assert_int_equal(nt_node_find(&t.d, 5)->grid, 5);
	assert_int_equal(nt_node_find(&t.d, 9)->grid, 9);
	assert_null(nt_node_find(&t.d, 12));
	assert_null(nt_node_find(&t.d, 6));	/* never filed */
	t.d.magic = 0;
	assert_null(nt_node_find(&t.d, 5));
	t.d.magic = NT_DESC_MAGIC;
	for (int i = 0; i < 8; i++) {		/* entries not marked */
		if (t.e[i].key == 5 + 1)
			t.e[i].desc.magic = 0;
		if (t.e[i].key == 9 + 1)
			t.e[i].desc.magic = NT_DESC_MAGIC ^ 1;
	}
	assert_null(nt_node_find(&t.d, 5));
	assert_null(nt_node_find(&t.d, 9));
}

/* Data that is not ours: bytes of another program's buffer, the same
 * with a descriptor's grid in the right place, and pointers one to seven
 * bytes past an aligned one, into a page that cannot be read. */
static void test_foreign(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long long junk[16] = { 0 };

	(void)state;
	assert_true(m != MAP_FAILED);
	srand(3);
	for (int i = 0; i < 16; i++)
		junk[i] = ((unsigned long long)rand() << 33) ^ (unsigned long long)rand();
	assert_null(nt_node_find((const struct nt_launch_desc *)junk, 77));
	junk[offsetof(struct nt_launch_desc, grid) / 8] = 77;
	assert_null(nt_node_find((const struct nt_launch_desc *)junk, 77));
	assert_int_equal(mprotect(m + page, (size_t)page, PROT_NONE), 0);
	for (int k = 1; k < 8; k++)
		assert_null(nt_node_find((const struct nt_launch_desc *)(m + page + k), 77));
	munmap(m, 2 * (size_t)page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_foreign),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
