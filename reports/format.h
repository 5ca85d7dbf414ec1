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

/* CSV is a folder of files, not one stream (fmt_csv.c). */
int nt_report_write_csv(const char *dir, const struct nt_report *r, struct nt_err *err);
/* Before the work: -1 when one of the files already exists in dir. */
int nt_report_csv_check(const char *dir, struct nt_err *err);

#endif
