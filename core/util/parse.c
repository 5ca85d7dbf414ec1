/* Strict parsing of option values (parse.h). */
#include "util/parse.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <strings.h>

int nt_parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int nt_parse_size(const char *s, long long *out)
{
	static const struct { const char *suffix; long long mult; } units[] = {
		{ "", 1 }, { "k", 1LL << 10 }, { "kib", 1LL << 10 }, { "m", 1LL << 20 },
		{ "mib", 1LL << 20 }, { "g", 1LL << 30 }, { "gib", 1LL << 30 },
	};
	char *end;
	long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix))
			continue;
		if (v > LLONG_MAX / units[i].mult)
			return -1;
		*out = v * units[i].mult;
		return 0;
	}
	return -1;
}
