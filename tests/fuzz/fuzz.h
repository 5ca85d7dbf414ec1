/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share (make fuzz,
 * docs/fuzzing.md): scratch files for readers that take a path, and a
 * sink for outputs.  Each harness is one .c file built alone, so these
 * are static; unused ones are fine.
 *
 * Scratch files go to $TMPDIR, else /dev/shm (a file system in memory:
 * tens of thousands of files a second), else /tmp, named by the pid so
 * that parallel workers (-jobs) do not meet.
 */
#ifndef NT_FUZZ_H
#define NT_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_HELPER static __attribute__((unused))

/* libFuzzer's entry point, one per harness. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* <tmp>/nt-fuzz-<pid>-<name>, the same each call. */
FUZZ_HELPER const char *fuzz_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("TMPDIR");
	struct stat st;

	if (!dir || !*dir)
		dir = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(buf, len, "%s/nt-fuzz-%ld-%s", dir, (long)getpid(), name);
	return buf;
}

/* data into path, replacing it; aborts when it cannot (not the input's
 * fault, and a harness that silently tests nothing is worse). */
FUZZ_HELPER void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		perror(path);
		abort();
	}
}

/* data as a C string (cut at its first NUL), to free(). */
FUZZ_HELPER char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Where outputs go: /dev/null, opened once. */
FUZZ_HELPER FILE *fuzz_null(void)
{
	static FILE *f;

	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	clearerr(f);
	return f;
}

#endif
