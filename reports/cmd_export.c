/* nucatrace export: a trace's block records as CSV rows, for pandas,
 * polars, DuckDB and spreadsheets (docs/trace-format.md). */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "trace/trace.h"
#include "usage.h"
#include "util/outfile.h"

static const char usage[] = "nucatrace export --blocks [-o FILE] TRACE";

static const char help[] =
	"Write every block record of a trace as one CSV row: which SM ran the block, and\n"
	"when (the trace keeps them packed and compressed, docs/trace-format.md).  Columns:\n"
	"  launch      the launch's number (launches.launch in the trace)\n"
	"  kernel      its kernel (kernels.kernel)\n"
	"  block       linear block id, x + grid_x * (y + grid_y * z)\n"
	"  sm          the SM (%smid)\n"
	"  t_start_ns, t_end_ns   %globaltimer when its first warp entered, last left\n"
	"  c_start, c_end         %clock64 of its SM then, cycles\n"
	"  warps       warps that entered\n"
	"An entry-only launch (--blocks entry or mixed) has no ends: t_end_ns, c_end and\n"
	"warps are empty in its rows.  In Python: pandas.read_csv(\"blocks.csv\"),\n"
	"polars.read_csv(\"blocks.csv\"), duckdb.read_csv(\"blocks.csv\").\n"
	"\n"
	"  --blocks     the block records (the one table exported)\n"
	"  -o FILE      write to FILE, made whole or not at all and never overwritten\n"
	"               (default: standard output)\n";

#define HEADER "launch,kernel,block,sm,t_start_ns,t_end_ns,c_start,c_end,warps\n"

struct out {
	FILE *f;
	int64_t launch, kernel;
	char line[256];
};

/* Decimal v at p; returns the end.  (printf is most of the time of a
 * big export otherwise.) */
static char *put_i64(char *p, int64_t v)
{
	char tmp[24];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int n = 0;

	do
		tmp[n++] = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = tmp[--n];
	return p;
}

static int on_block(const struct nt_trace_block *b, void *arg)
{
	struct out *o = arg;
	int no_end = b->t_end_ns == NT_TRACE_UNKNOWN && b->c_end == NT_TRACE_UNKNOWN && !b->warps;
	char *p = o->line;

	p = put_i64(p, o->launch);
	*p++ = ',';
	p = put_i64(p, o->kernel);
	*p++ = ',';
	p = put_i64(p, b->block);
	*p++ = ',';
	p = put_i64(p, b->sm);
	*p++ = ',';
	p = put_i64(p, b->t_start_ns);
	*p++ = ',';
	if (!no_end)
		p = put_i64(p, b->t_end_ns);
	*p++ = ',';
	p = put_i64(p, b->c_start);
	*p++ = ',';
	if (!no_end)
		p = put_i64(p, b->c_end);
	*p++ = ',';
	if (!no_end)
		p = put_i64(p, b->warps);
	*p++ = '\n';
	return fwrite(o->line, 1, (size_t)(p - o->line), o->f) == (size_t)(p - o->line) ? 0 : -1;
}

struct walk {
	struct nt_trace *t;
	struct out *o;
	struct nt_err *err;
	int failed;
};

static int on_launch(const struct nt_trace_launch *l, const struct nt_trace_kernel *k, void *arg)
{
	struct walk *w = arg;
	int ret;

	if (!l->traced)
		return 0;
	w->o->launch = l->launch;
	w->o->kernel = l->kernel;
	ret = nt_trace_foreach_block(w->t, l->launch, on_block, w->o, w->err);
	if (ret > 0)	/* a write failed: the caller says so */
		ret = -1, w->failed = 1;
	return ret;
}

/* 0; -1 with err set when the trace could not be read; 1 when a write
 * to f failed. */
static int write_blocks(FILE *f, struct nt_trace *t, struct nt_err *err)
{
	struct out o = { .f = f };
	struct walk w = { t, &o, err, 0 };

	if (fputs(HEADER, f) == EOF)
		return 1;
	if (nt_trace_foreach_launch(t, on_launch, &w, err))
		return w.failed ? 1 : -1;
	return ferror(f) ? 1 : 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "blocks", no_argument, NULL, 'b' }, { "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	struct nt_outfile of = { 0 };
	struct nt_trace *t;
	struct nt_err err;
	int o, blocks = 0, ret;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (o) {
		case 'b': blocks = 1; break;
		case 'o': path = optarg; break;
		case 'h': printf("usage: %s\n\n%s", usage, help); return 0;
		default: usage_bad_option(usage, "export", o, argv);
		}
	}
	if (!blocks)
		usage_error(usage, "export: what to export? (--blocks)");
	if (optind != argc - 1)
		usage_error(usage, "export: one trace file, please");
	if (path && nt_outfile_open(&of, path, &err))
		die("%s", err.msg);
	if (nt_trace_open(argv[optind], &t, &err)) {
		nt_outfile_abort(&of);
		die("%s", err.msg);
	}
	ret = write_blocks(path ? of.f : stdout, t, &err);
	nt_trace_close(t);
	if (ret < 0) {
		nt_outfile_abort(&of);
		return error("%s", err.msg);
	}
	if (path)	/* says why a write failed (a full disk ...) */
		return nt_outfile_finish(&of, ret, &err) ? error("%s", err.msg) : 0;
	return ret ? error("cannot write the block records to standard output") : 0;
}
