/*
 * format.h - the report's output formats, one file each (fmt_*.c) behind
 * one struct; cmd_report.c picks them.  A format only prints a built
 * struct nt_report (core/report/report.h); it computes nothing and never
 * opens a trace: the report holds the maps, fits and per-SM medians, and
 * nt_report_foreach_block() streams the block records.
 */
#ifndef NT_FORMAT_H
#define NT_FORMAT_H

#include <stdio.h>

#include "report/report.h"
#include "util/outfile.h"

struct nt_format_opts {
	int top;		/* kernels shown in text output; 0: all */
	int launches;		/* also list every launch */
};

struct nt_format {
	const char *name;
	/* 0, or -1 when writing failed */
	int (*write)(FILE *f, const struct nt_report *r, const struct nt_format_opts *o);
};

extern const struct nt_format nt_format_text, nt_format_json, nt_format_perfetto;
extern const struct nt_format nt_format_html;

/* CSV is a folder of files, not one stream (fmt_csv.c).  Before the
 * work, nt_report_csv_open() makes the folder when missing and opens its
 * files (-1 when one of them exists); nt_report_csv_write() writes and
 * commits them all, or removes them all and says why;
 * nt_report_csv_abort() removes them (and the folder if it made it). */
#define NT_REPORT_CSV_FILES 4
struct nt_report_csv {
	char *dir;
	int made_dir;
	struct nt_outfile f[NT_REPORT_CSV_FILES];
};
int nt_report_csv_open(struct nt_report_csv *c, const char *dir, struct nt_err *err);
int nt_report_csv_write(struct nt_report_csv *c, const struct nt_report *r, struct nt_err *err);
void nt_report_csv_abort(struct nt_report_csv *c);

#endif
