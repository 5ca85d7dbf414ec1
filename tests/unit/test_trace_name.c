/* trace_name.h: default names, ranks, and patterns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trace/trace_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK" };

static int clean_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < 4; i++)
		unsetenv(rank_vars[i]);
	unsetenv("NUCATRACE_OUTPUT_DIR");
	unsetenv("NUCATRACE_OUTPUT_PATTERN");
	return 0;
}

static const char *short_host(void)
{
	static char host[128];

	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	host[strcspn(host, ".")] = '\0';
	return host;
}

static void expect_path(const char *dir, const char *pattern, const char *want)
{
	char buf[1024];
	struct nt_err err = { "" };

	if (nt_trace_path(buf, sizeof(buf), dir, pattern, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(buf, want);
}

static void test_default(void **state)
{
	char want[512];

	(void)state;
	snprintf(want, sizeof(want), "./nucatrace-%s-%ld.sqlite", short_host(), (long)getpid());
	expect_path(NULL, NULL, want);
	setenv("NUCATRACE_OUTPUT_DIR", "", 1);	/* empty is unset */
	setenv("NUCATRACE_OUTPUT_PATTERN", "", 1);
	expect_path(NULL, NULL, want);
	snprintf(want, sizeof(want), "/out/nucatrace-%s-%ld.sqlite", short_host(), (long)getpid());
	expect_path("/out/", NULL, want);	/* one '/' between */
}

static void test_environment(void **state)
{
	char want[512];

	(void)state;
	setenv("NUCATRACE_OUTPUT_DIR", "/scratch/t", 1);
	setenv("NUCATRACE_OUTPUT_PATTERN", "job-%p.db", 1);
	snprintf(want, sizeof(want), "/scratch/t/job-%ld.db", (long)getpid());
	expect_path(NULL, NULL, want);
	snprintf(want, sizeof(want), "d/x-%ld", (long)getpid());
	expect_path("d", "x-%p", want);	/* arguments win */
}

static void test_ranks(void **state)
{
	char want[512];

	(void)state;
	assert_int_equal(nt_trace_rank(), -1);
	expect_path("d", "t%r", "d/t");
	setenv("RANK", "3", 1);
	assert_int_equal(nt_trace_rank(), 3);
	setenv("SLURM_PROCID", "12", 1);
	assert_int_equal(nt_trace_rank(), 12);
	setenv("PMI_RANK", "0", 1);
	assert_int_equal(nt_trace_rank(), 0);
	expect_path("d", "t%r", "d/t-rank0");
	setenv("OMPI_COMM_WORLD_RANK", "7", 1);
	assert_int_equal(nt_trace_rank(), 7);
	snprintf(want, sizeof(want), "./nucatrace-%s-%ld-rank7.sqlite", short_host(), (long)getpid());
	expect_path(NULL, NULL, want);
	/* not a rank: the next variable counts */
	setenv("OMPI_COMM_WORLD_RANK", "x", 1);
	assert_int_equal(nt_trace_rank(), 0);
	setenv("PMI_RANK", "-1", 1);
	assert_int_equal(nt_trace_rank(), 12);
	setenv("SLURM_PROCID", "99999999999999", 1);
	assert_int_equal(nt_trace_rank(), 3);
	setenv("RANK", "4 ", 1);
	assert_int_equal(nt_trace_rank(), -1);
}

static void test_escapes(void **state)
{
	char buf[1024], want[1024];
	struct nt_err err = { "" };
	int y, mo, d, h, mi, s, n = -1;

	(void)state;
	snprintf(want, sizeof(want), "d/%s.%s.%ld%%x", short_host(), short_host(), (long)getpid());
	expect_path("d", "%h.%h.%p%%x", want);
	assert_int_equal(nt_trace_path(buf, sizeof(buf), "d", "t-%t.sqlite", &err), 0);
	assert_int_equal(sscanf(buf, "d/t-%4d%2d%2dT%2d%2d%2d.sqlite%n", &y, &mo, &d, &h, &mi, &s, &n), 6);
	assert_int_equal(n, (int)strlen(buf));
	assert_true(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && h < 24 && mi < 60 && s < 61);
	expect_path("d", "sub/plain", "d/sub/plain");
}

static void test_errors(void **state)
{
	char buf[512], small[12];
	struct nt_err err = { "" };

	(void)state;
	assert_int_equal(nt_trace_path(buf, sizeof(buf), "d", "t-%q.sqlite", &err), -1);
	assert_non_null(strstr(err.msg, "'t-%q.sqlite'"));
	assert_non_null(strstr(err.msg, "%q"));
	assert_int_equal(nt_trace_path(buf, sizeof(buf), "d", "t-%", &err), -1);
	assert_non_null(strstr(err.msg, "'t-%'"));
	setenv("NUCATRACE_OUTPUT_PATTERN", "%Z", 1);
	assert_int_equal(nt_trace_path(buf, sizeof(buf), NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "'%Z'"));
	assert_int_equal(nt_trace_path(small, sizeof(small), "d", "a-long-name-%p", &err), -1);
	assert_non_null(strstr(err.msg, "too long"));
	assert_int_equal(nt_trace_path(small, sizeof(small), "a-long-folder", "x", &err), -1);
	assert_non_null(strstr(err.msg, "too long"));
	assert_int_equal(nt_trace_path(small, sizeof(small), "d", "0123456789", &err), -1);
	assert_int_equal(nt_trace_path(small, sizeof(small), "d", "012345678", &err), 0);
	assert_string_equal(small, "d/012345678");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_default, clean_env),
		cmocka_unit_test_setup(test_environment, clean_env),
		cmocka_unit_test_setup(test_ranks, clean_env),
		cmocka_unit_test_setup(test_escapes, clean_env),
		cmocka_unit_test_setup(test_errors, clean_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
