/* outfile.h: outputs appear whole or not at all, never over a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/outfile.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int setup(void **state)
{
	char tmpl[] = "/tmp/nt-outfile-XXXXXX";

	if (!mkdtemp(tmpl))
		return -1;
	*state = strdup(tmpl);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	free(*state);
	return system(cmd) ? -1 : 0;
}

/* Entries of dir, "." and ".." aside. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_commit(void **state)
{
	struct nt_outfile o;
	struct nt_err err;
	char path[256];

	snprintf(path, sizeof(path), "%s/out.txt", (char *)*state);
	assert_int_equal(nt_outfile_open(&o, path, &err), 0);
	fputs("whole", o.f);
	assert_null(slurp(path));	/* not there until complete */
	assert_int_equal(entries(*state), 1);
	assert_int_equal(nt_outfile_commit(&o, &err), 0);
	assert_string_equal(slurp(path), "whole");
	assert_int_equal(entries(*state), 1);
	/* never over a file */
	assert_int_equal(nt_outfile_open(&o, path, &err), -1);
	assert_non_null(strstr(err.msg, "File exists (nucatrace does not overwrite files)"));
	assert_string_equal(slurp(path), "whole");
}

static void test_abort_and_race(void **state)
{
	struct nt_outfile o;
	struct nt_err err;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/out.txt", (char *)*state);
	assert_int_equal(nt_outfile_open(&o, path, &err), 0);
	fputs("half", o.f);
	nt_outfile_abort(&o);
	nt_outfile_abort(&o);	/* twice is fine */
	assert_int_equal(entries(*state), 0);
	/* a file that appears meanwhile is kept, ours goes */
	assert_int_equal(nt_outfile_open(&o, path, &err), 0);
	fputs("ours", o.f);
	assert_non_null(f = fopen(path, "w"));
	fputs("theirs", f);
	fclose(f);
	assert_int_equal(nt_outfile_commit(&o, &err), -1);
	assert_non_null(strstr(err.msg, "File exists"));
	assert_string_equal(slurp(path), "theirs");
	assert_int_equal(entries(*state), 1);
}

static int fail_writer(FILE *f, const void *arg)
{
	(void)arg;
	fputs("part", f);
	return -1;
}

static void test_write_and_errors(void **state)
{
	struct nt_err err;
	char path[256];

	snprintf(path, sizeof(path), "%s/out.txt", (char *)*state);
	assert_int_equal(nt_outfile_write(path, fail_writer, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "cannot write '"));
	assert_int_equal(entries(*state), 0);
	snprintf(path, sizeof(path), "%s/no/such/dir/out.txt", (char *)*state);
	assert_int_equal(nt_outfile_write(path, fail_writer, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_and_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_and_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
