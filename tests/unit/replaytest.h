/*
 * replaytest.h - what the replay's tests share (test_replay.c,
 * test_dispatch.c): a fixed generator, a replay that must succeed or
 * fail, and a comparison of times.  Include after <cmocka.h>.
 */
#ifndef NT_REPLAYTEST_H
#define NT_REPLAYTEST_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "report/replay.h"

static uint64_t rng_state = 42;

/* Uniform in [0, 1): a fixed generator so the tests never vary. */
static __attribute__((unused)) double urand01(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / (double)(1ULL << 53);
}

static __attribute__((unused)) void run_ok(const struct nt_replay_input *in, struct nt_replay_result *r)
{
	struct nt_err err = { "" };

	if (nt_replay_run(in, r, &err))
		fail_msg("nt_replay_run: %s", err.msg);
}

/* A replay that must fail, with needle in its message. */
static __attribute__((unused)) void expect_error(const struct nt_replay_input *in, const char *needle)
{
	struct nt_replay_result r;
	struct nt_err err = { "" };

	assert_int_equal(nt_replay_run(in, &r, &err), -1);
	if (!strstr(err.msg, needle))
		fail_msg("error '%s' lacks '%s'", err.msg, needle);
}

#define assert_ns(a, b) assert_true(fabs((a) - (b)) < 1e-9)

#endif
