/*
 * heatmap.h - pictures of a per-SM vector (or the SM x line matrix).
 *
 * The map is easiest to read as a grid of SMs in smid order, per_row to
 * a row (16 by default: an H200's 132 SMs make 9 rows), each cell shaded
 * on a scale from the smallest to the largest measured value.  NAN means
 * "not measured" and is drawn as "--" (grey in SVG), never as a number;
 * infinities are treated the same way.
 *
 * Terminal (nt_heatmap_term): a header of column offsets, then for each
 * row of SMs a line "<first smid> <value> <value> ..." and, in plain
 * mode, a line of shading characters under each value (".:-=+*#%@",
 * low to high; blank for NAN), then a legend line with min, max (and
 * their smids) and the unit.  In colour mode the values sit on an ANSI
 * 256-colour background and there is no shading line.  Values print with
 * one decimal when every value fits in 5 characters, else none; a value
 * that would still take more than 10 characters (1e200 in a damaged map)
 * prints in %g form with fewer digits, so cells never grow wider; per_row
 * is reduced when a row would not fit in 100 columns.  Plain output is
 * deterministic (byte for byte) for the same input; no trailing blanks.
 *
 * SVG (nt_heatmap_svg, nt_heatmap_svg_matrix): a self-contained document
 * (no scripts, no external references): a white background rect, one
 * rect per SM (or per matrix cell), a colour bar (one rect filled by a
 * gradient) with min/max labels, and the title and unit escaped for XML.
 * Colours follow a viridis-like ramp (dark blue = low, yellow = high).
 *
 * Numbers print with printf: under a locale with a decimal comma the
 * output would change, so callers keep LC_NUMERIC at "C".
 *
 * All functions return 0, or -1 on bad arguments (NULL f or v, n <= 0)
 * or when writing to f failed.
 */
#ifndef NT_HEATMAP_H
#define NT_HEATMAP_H

#include <stdio.h>

#define NT_HEATMAP_PER_ROW 16	/* default when per_row <= 0 */
#define NT_HEATMAP_COLUMNS 100	/* terminal output never goes wider */

int nt_heatmap_term(FILE *f, const double *v, int n, int per_row, int color,
		    const char *unit);
int nt_heatmap_svg(FILE *f, const double *v, int n, int per_row, const char *title,
		   const char *unit);
int nt_heatmap_svg_matrix(FILE *f, const double *mat, int rows, int cols,
			  const char *title, const char *unit);

/* Shared by the renderers (and by reports that want the same colours). */

/* Colour of t in [0, 1] (clamped) on the viridis-like ramp. */
void nt_heatmap_rgb(double t, unsigned char rgb[3]);

/* Range of the measured values: count them, min/max and the first index
 * of each (-1 and NAN when none is measured). */
int nt_heatmap_range(const double *v, int n, double *lo, double *hi, int *arg_lo,
		     int *arg_hi);

/* Write s escaped for XML or HTML text and attributes (& < > " ' as
 * entities); control characters other than tab and newline (C0, DEL,
 * C1), which XML 1.0 forbids or a terminal would run, become '?', and
 * bytes that are not UTF-8 U+FFFD (util/text.h).  Strings from traces
 * are untrusted: every writer of SVG or HTML passes them through here. */
void nt_xml_escape(FILE *f, const char *s);

#endif
