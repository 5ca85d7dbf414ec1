/* interposer/blocks/inflight.c: a close never overlaps a launch in flight that
 * saw no close under way, and no thread ever waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "interposer/blocks/inflight.h"

static struct nt_inflight f;
static volatile int in_close, stop, bad, closes, skipped;

/* A launching thread: enter; unless a close is under way, it "traces":
 * no close may run until it leaves. */
static void *launcher(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int i = 0; !stop; i++) {
		if (!nt_inflight_enter(&f)) {
			for (int k = 0; k < 20; k++)
				if (__atomic_load_n(&in_close, __ATOMIC_SEQ_CST))
					bad = 1;
		} else {
			__atomic_add_fetch(&skipped, 1, __ATOMIC_RELAXED);
		}
		if (id == 0 && i % 50 == 0)
			nt_inflight_want_close(&f);
		if (nt_inflight_try_close(&f, 1)) {	/* from inside a launch */
			__atomic_store_n(&in_close, 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&closes, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&in_close, 0, __ATOMIC_SEQ_CST);
			nt_inflight_closed(&f);
		}
		nt_inflight_leave(&f);
		if (nt_inflight_try_close(&f, 0)) {	/* after one */
			__atomic_store_n(&in_close, 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&closes, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&in_close, 0, __ATOMIC_SEQ_CST);
			nt_inflight_closed(&f);
		}
	}
	return NULL;
}

static void test_no_overlap(void **state)
{
	pthread_t t[4];
	struct timespec pause = { 0, 300000000 };

	(void)state;
	for (intptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, launcher, (void *)i);
	nanosleep(&pause, NULL);
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(bad, 0);
	assert_true(closes > 0);
	assert_int_equal(f.n, 0);
	assert_int_equal(f.closing, 0);
}

/* Alone: a wanted close happens at once, from inside a launch or not. */
static void test_alone(void **state)
{
	struct nt_inflight g = { 0 };

	(void)state;
	assert_int_equal(nt_inflight_try_close(&g, 0), 0);	/* none wanted */
	nt_inflight_want_close(&g);
	assert_int_equal(nt_inflight_enter(&g), 0);
	assert_int_equal(nt_inflight_enter(&g), 0);	/* another thread's */
	assert_int_equal(nt_inflight_try_close(&g, 1), 0);	/* it is in flight */
	nt_inflight_leave(&g);
	assert_int_equal(nt_inflight_try_close(&g, 1), 1);
	assert_int_equal(nt_inflight_enter(&g), 1);	/* a launch during the close */
	nt_inflight_leave(&g);
	nt_inflight_closed(&g);
	nt_inflight_leave(&g);
	assert_int_equal(nt_inflight_try_close(&g, 0), 0);	/* done */
	/* a patch: a switch with no close wanted, only while alone */
	assert_int_equal(nt_inflight_enter(&g), 0);
	assert_int_equal(nt_inflight_enter(&g), 0);
	assert_int_equal(nt_inflight_try_switch(&g, 1), 0);
	nt_inflight_leave(&g);
	assert_int_equal(nt_inflight_try_switch(&g, 1), 1);
	assert_int_equal(nt_inflight_try_switch(&g, 1), 0);	/* one at a time */
	nt_inflight_closed(&g);
	nt_inflight_leave(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_overlap),
		cmocka_unit_test(test_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
