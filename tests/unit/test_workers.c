/* workers.h: every item once, the lowest failure, whatever the threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/workers.h"

#include <string.h>

#define N 200

struct job {
	int calls[N];		/* each item's own: no two calls share one */
	int fail_from;		/* items >= this fail, and every third of them */
};

static int square(int i, void *arg)
{
	struct job *j = arg;

	j->calls[i]++;
	return i >= j->fail_from && i % 3 == 0;
}

static void test_every_item_once(void **state)
{
	(void)state;
	for (int threads = 0; threads <= 5; threads++) {
		struct job j = { .fail_from = N };

		assert_int_equal(nt_workers_run(N, threads, square, &j), -1);
		for (int i = 0; i < N; i++)
			assert_int_equal(j.calls[i], 1);
	}
	assert_int_equal(nt_workers_run(0, 2, square, NULL), -1);
	assert_true(nt_workers_cpus() >= 1);
}

static void test_lowest_failure(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 5; threads++) {
		struct job j = { .fail_from = 100 };

		/* 102 is the first to fail; everything below it ran */
		assert_int_equal(nt_workers_run(N, threads, square, &j), 102);
		for (int i = 0; i <= 102; i++)
			assert_int_equal(j.calls[i], 1);
		for (int i = 103; i < N; i++)
			assert_true(j.calls[i] <= 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_item_once),
		cmocka_unit_test(test_lowest_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
