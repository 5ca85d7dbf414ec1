/*
 * fmt_html.h - inside the HTML report, the two files of one page.
 * fmt_html.c assembles it (header, traces and program figures, heat maps,
 * the kernels and launches tables) and owns the escaping; fmt_html_svg.c
 * writes the sections with plots drawn on their own axes (the
 * duration-vs-latency scatters, the block timeline).  Both write in turn
 * into one struct html_page; nothing here is for other formats.
 */
#ifndef NT_FMT_HTML_H
#define NT_FMT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "map/heatmap.h"	/* nt_xml_escape: every string from a trace */
#include "report/report.h"

#define HTML_NAME_CHARS 120	/* of a kernel name in tables and headings */

struct html_page {
	FILE *f;
	const struct nt_report *r;
	const int *idx;		/* kernels by rank */
	const int *rank;	/* rank of each kernel */
	int ids;		/* for ids unique in the page */
};

/* fmt_html.c */

/* At most max bytes of s (cut before a UTF-8 sequence), "..." when cut,
 * all of it in a title attribute: long template names stay readable. */
void html_esc_short(FILE *f, const char *s, size_t max);
/* A number, or a dash when it is not finite. */
void html_num(FILE *f, const char *fmt, double v);
/* The demangled name when there is one. */
const char *html_kname(const struct nt_report_kernel *k);

/* fmt_html_svg.c: whole sections, heading included, and only when the
 * report has launches (p->idx set). */

/* A scatter for each of the first few (SCATTER_KERNELS) fitted kernels
 * among the `shown` top ones. */
void html_scatters(struct html_page *p, int shown);
/* The per-SM block timeline of the top kernel's longest credible launch:
 * 0, or -1 when its blocks could not be read or memory ran out. */
int html_timeline(struct html_page *p);

#endif
