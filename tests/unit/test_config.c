/* interposer/config.c: every variable read, bad values named in a
 * warning and replaced by their defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "interposer/config.h"
#include "trace/sampling.h"

static const char *const *vars;	/* NAME=VALUE, NULL-terminated */
static char warned[8][256];
static int n_warned;

static const char *get(const char *name)
{
	size_t n = strlen(name);

	for (const char *const *v = vars; *v; v++)
		if (!strncmp(*v, name, n) && (*v)[n] == '=')
			return *v + n + 1;
	return NULL;
}

static void warn(const char *msg)
{
	if (n_warned < 8)
		snprintf(warned[n_warned++], sizeof(warned[0]), "%s", msg);
}

static void read_with(const char *const *v, struct nt_config *c)
{
	vars = v;
	n_warned = 0;
	nt_config_read(c, get, warn);
}

static void test_defaults(void **state)
{
	static const char *const none[] = { NULL };
	struct nt_config c;

	(void)state;
	read_with(none, &c);
	assert_int_equal(n_warned, 0);
	assert_string_equal(c.mode, "auto");
	assert_string_equal(c.sampling, NT_SAMPLING_DEFAULT);
	assert_int_equal(c.blocks, NT_BLOCKS_MIXED);
	assert_string_equal(nt_blocks_mode_name(c.blocks), "mixed");
	assert_null(c.output_dir);
	assert_null(c.store);
	assert_int_equal(c.buffer_blocks, NT_CONFIG_BUFFER_BLOCKS);
	assert_int_equal(c.buffer_max, NT_CONFIG_BUFFER_MAX);
	assert_true(c.wait_s == NT_CONFIG_WAIT_S);
	assert_true(c.exit_wait_s == NT_CONFIG_EXIT_WAIT_S);
	assert_int_equal(c.graph_tables_mib, NT_CONFIG_GRAPH_TABLES_MIB);
	assert_int_equal(c.quiet, 0);
	assert_int_equal(c.count_all, 0);
	assert_int_equal(c.graph_shadow, 1);
	assert_int_equal(c.load_before_patch, 0);
	assert_int_equal(c.patch_null, 0);
	assert_int_equal(c.lazy_settle, 0);
}

static void test_values(void **state)
{
	static const char *const set[] = {
		"NUCATRACE_MODE=blocks", "NUCATRACE_SAMPLE=all", "NUCATRACE_OUTPUT_DIR=/tmp/x",
		"NUCATRACE_STORE=/s.db", "NUCATRACE_BUFFER_BLOCKS=4096", "NUCATRACE_BUFFER_MAX=2048",
		"NUCATRACE_WAIT=0.5", "NUCATRACE_EXIT_WAIT=0", "NUCATRACE_GRAPH_TABLES=3", "NUCATRACE_QUIET=",
		"NUCATRACE_COUNT_ALL=1", "NUCATRACE_BLOCKS=entry", "NUCATRACE_GRAPH_ROUTE=update",
		"NUCATRACE_LOAD_BEFORE_PATCH=1", "NUCATRACE_PATCH_NULL=1",
		"NUCATRACE_LAZY_SETTLE=1", NULL
	};
	struct nt_config c;

	(void)state;
	read_with(set, &c);
	assert_int_equal(n_warned, 0);
	assert_string_equal(c.mode, "blocks");
	assert_string_equal(c.sampling, "all");
	assert_int_equal(c.blocks, NT_BLOCKS_ENTRY);
	assert_string_equal(c.output_dir, "/tmp/x");
	assert_string_equal(c.store, "/s.db");
	assert_int_equal(c.buffer_blocks, 4096);
	assert_int_equal(c.buffer_max, 4096);	/* never below the first buffer */
	assert_true(c.wait_s == 0.5);
	assert_true(c.exit_wait_s == 0);
	assert_int_equal(c.graph_tables_mib, 3);
	assert_int_equal(c.quiet, 1);	/* set, even empty */
	assert_int_equal(c.count_all, 1);
	assert_int_equal(c.graph_shadow, 0);
	assert_int_equal(c.load_before_patch, 1);
	assert_int_equal(c.patch_null, 1);
	assert_int_equal(c.lazy_settle, 1);
}

static void test_bad_values(void **state)
{
	static const char *const bad[] = {
		"NUCATRACE_BUFFER_BLOCKS=12x", "NUCATRACE_BUFFER_MAX=-5", "NUCATRACE_WAIT=nan",
		"NUCATRACE_EXIT_WAIT=1e9", "NUCATRACE_GRAPH_TABLES=0", "NUCATRACE_BLOCKS=half",
		"NUCATRACE_GRAPH_ROUTE=twin", NULL
	};
	struct nt_config c;

	(void)state;
	read_with(bad, &c);
	assert_int_equal(n_warned, 7);
	assert_non_null(strstr(warned[0], "NUCATRACE_BLOCKS='half' is not mixed, full or entry"));
	assert_non_null(strstr(warned[1], "NUCATRACE_GRAPH_ROUTE='twin' is not shadow or update; using shadow"));
	assert_non_null(strstr(warned[2], "NUCATRACE_BUFFER_BLOCKS='12x'"));
	assert_non_null(strstr(warned[3], "NUCATRACE_BUFFER_MAX='-5'"));
	assert_non_null(strstr(warned[4], "NUCATRACE_GRAPH_TABLES='0'"));
	assert_non_null(strstr(warned[5], "NUCATRACE_WAIT='nan'"));
	assert_non_null(strstr(warned[6], "NUCATRACE_EXIT_WAIT='1e9'"));
	assert_int_equal(c.graph_shadow, 1);
	assert_int_equal(c.blocks, NT_BLOCKS_MIXED);
	assert_int_equal(c.graph_tables_mib, NT_CONFIG_GRAPH_TABLES_MIB);
	assert_int_equal(c.buffer_blocks, NT_CONFIG_BUFFER_BLOCKS);
	assert_int_equal(c.buffer_max, NT_CONFIG_BUFFER_MAX);
	assert_true(c.wait_s == NT_CONFIG_WAIT_S);
	assert_true(c.exit_wait_s == NT_CONFIG_EXIT_WAIT_S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
