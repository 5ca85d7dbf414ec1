/* The interposer's settings from the environment (config.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/sampling.h"

/* NT_CONFIG_PACK_THREADS, at most half the CPUs: the program's own
 * threads keep the rest. */
static uint32_t pack_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus / 2 < NT_CONFIG_PACK_THREADS ? (uint32_t)(cpus > 1 ? cpus / 2 : 0) : NT_CONFIG_PACK_THREADS;
}

static const char *value(const char *(*get)(const char *), const char *name)
{
	const char *v = get(name);

	return v && *v ? v : NULL;
}

/* An integer in [lo, hi]: *out, or a warning and the default kept. */
static void integer(const char *(*get)(const char *), void (*warn)(const char *), const char *name,
		    long long lo, long long hi, uint32_t *out)
{
	const char *v = value(get, name);
	char msg[256], *end;
	long long n;

	if (!v)
		return;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi) {
		snprintf(msg, sizeof(msg), "%s='%.64s' is not a whole number from %lld to %lld; using %u",
			 name, v, lo, hi, *out);
		warn(msg);
		return;
	}
	*out = (uint32_t)n;
}

static void seconds(const char *(*get)(const char *), void (*warn)(const char *), const char *name,
		    double hi, double *out)
{
	const char *v = value(get, name);
	char msg[256], *end;
	double s;

	if (!v)
		return;
	errno = 0;
	s = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(s) || s < 0 || s > hi) {
		snprintf(msg, sizeof(msg), "%s='%.64s' is not a number of seconds from 0 to %g; using %g",
			 name, v, hi, *out);
		warn(msg);
		return;
	}
	*out = s;
}

const char *nt_blocks_mode_name(int mode)
{
	return mode == NT_BLOCKS_ENTRY ? "entry" : mode == NT_BLOCKS_FULL ? "full" : "mixed";
}

void nt_config_read(struct nt_config *c, const char *(*get)(const char *name),
		    void (*warn)(const char *msg))
{
	const char *v;

	memset(c, 0, sizeof(*c));
	v = value(get, "NUCATRACE_MODE");
	snprintf(c->mode, sizeof(c->mode), "%s", v ? v : "auto");
	v = value(get, "NUCATRACE_SAMPLE");
	snprintf(c->sampling, sizeof(c->sampling), "%s", v ? v : NT_SAMPLING_DEFAULT);
	c->blocks = NT_BLOCKS_MIXED;
	if ((v = value(get, "NUCATRACE_BLOCKS")) && !strcmp(v, "entry")) {
		c->blocks = NT_BLOCKS_ENTRY;
	} else if (v && !strcmp(v, "full")) {
		c->blocks = NT_BLOCKS_FULL;
	} else if (v && strcmp(v, "mixed")) {
		char msg[256];

		snprintf(msg, sizeof(msg), "NUCATRACE_BLOCKS='%.64s' is not mixed, full or entry; using mixed", v);
		warn(msg);
	}
	c->graph_shadow = 1;
	if ((v = value(get, "NUCATRACE_GRAPH_ROUTE")) && !strcmp(v, "update")) {
		c->graph_shadow = 0;
	} else if (v && strcmp(v, "shadow")) {
		char msg[256];

		snprintf(msg, sizeof(msg), "NUCATRACE_GRAPH_ROUTE='%.64s' is not shadow or update; using shadow", v);
		warn(msg);
	}
	c->output_dir = value(get, "NUCATRACE_OUTPUT_DIR");
	c->output_pattern = value(get, "NUCATRACE_OUTPUT_PATTERN");
	c->store = value(get, "NUCATRACE_STORE");
	c->buffer_blocks = NT_CONFIG_BUFFER_BLOCKS;
	c->buffer_max = NT_CONFIG_BUFFER_MAX;
	c->wait_s = NT_CONFIG_WAIT_S;
	c->exit_wait_s = NT_CONFIG_EXIT_WAIT_S;
	c->graph_tables_mib = NT_CONFIG_GRAPH_TABLES_MIB;
	c->pack_threads = pack_threads();
	integer(get, warn, "NUCATRACE_BUFFER_BLOCKS", 1024, 1 << 26, &c->buffer_blocks);
	integer(get, warn, "NUCATRACE_BUFFER_MAX", 1024, 1u << 30, &c->buffer_max);
	if (c->buffer_max < c->buffer_blocks)
		c->buffer_max = c->buffer_blocks;
	integer(get, warn, "NUCATRACE_GRAPH_TABLES", 1, 1 << 20, &c->graph_tables_mib);
	integer(get, warn, "NUCATRACE_PACK_THREADS", 0, 64, &c->pack_threads);
	seconds(get, warn, "NUCATRACE_WAIT", 3600, &c->wait_s);
	seconds(get, warn, "NUCATRACE_EXIT_WAIT", 3600, &c->exit_wait_s);
	c->quiet = get("NUCATRACE_QUIET") != NULL;
	c->count_all = get("NUCATRACE_COUNT_ALL") != NULL;
	c->load_before_patch = (v = value(get, "NUCATRACE_LOAD_BEFORE_PATCH")) && !strcmp(v, "1");
	c->patch_null = (v = value(get, "NUCATRACE_PATCH_NULL")) && !strcmp(v, "1");
	c->lazy_settle = (v = value(get, "NUCATRACE_LAZY_SETTLE")) && !strcmp(v, "1");
}
