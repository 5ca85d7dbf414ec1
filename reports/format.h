/*
 * format.h - the report's output formats, one file each (fmt_*.c) behind
 * one struct; cmd_report.c picks them.  A format only prints a built
 * struct nt_report (core/report.h); it computes nothing.
 */
#ifndef NT_FORMAT_H
#define NT_FORMAT_H

#include <stdio.h>

#include "report.h"

struct nt_format_opts {
	int top;		/* kernels shown in text output; 0: all */
	int launches;		/* also list every launch */
};

struct nt_format {
	const char *name;
	/* 0, or -1 when writing failed */
	int (*write)(FILE *f, const struct nt_report *r, const struct nt_format_opts *o);
};

extern const struct nt_format nt_format_text, nt_format_json;

#endif
