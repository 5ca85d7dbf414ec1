/* Where libnucatrace.so is (library.h). */
#include "util/library.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nt_library_path(char *buf, size_t len, struct nt_err *err)
{
	static const char *const rel[] = { "libnucatrace.so", "../lib/nucatrace/libnucatrace.so" };
	char exe[PATH_MAX], *slash;
	ssize_t n;
	const char *env = getenv("NUCATRACE_LIBRARY");

	if (env && *env) {
		if (snprintf(buf, len, "%s", env) >= (int)len)
			return nt_err_set(err, "NUCATRACE_LIBRARY: path too long");
		if (access(buf, R_OK))
			return nt_err_set(err, "NUCATRACE_LIBRARY '%s': %s", buf, strerror(errno));
		return 0;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return nt_err_set(err, "cannot find this program's path: %s", strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++)
		if (snprintf(buf, len, "%s/%s", exe, rel[i]) < (int)len && !access(buf, R_OK))
			return 0;
	return nt_err_set(err, "cannot find libnucatrace.so next to %s or in %s/../lib/nucatrace "
			  "(set NUCATRACE_LIBRARY)", exe, exe);
}
