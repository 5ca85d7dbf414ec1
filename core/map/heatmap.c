#include "map/heatmap.h"

#include <math.h>
#include <string.h>

/* Viridis sampled at 9 points: perceptually even, readable in grey and
 * by most colour-blind readers; linear between anchors is close enough. */
static const unsigned char ramp[9][3] = {
	{ 68, 1, 84 }, { 72, 40, 120 }, { 62, 73, 137 }, { 49, 104, 142 },
	{ 38, 130, 142 }, { 31, 158, 137 }, { 53, 183, 121 }, { 110, 206, 88 },
	{ 253, 231, 37 },
};

static const char shades[] = ".:-=+*#%@";

void nt_heatmap_rgb(double t, unsigned char rgb[3])
{
	double x;
	int i;

	if (!(t > 0))
		t = 0;	/* NAN too */
	if (t > 1)
		t = 1;
	x = t * 8;
	i = x >= 8 ? 7 : (int)x;
	x -= i;
	for (int c = 0; c < 3; c++)
		rgb[c] = (unsigned char)lround(ramp[i][c] + x * (ramp[i + 1][c] - ramp[i][c]));
}

int nt_heatmap_range(const double *v, int n, double *lo, double *hi, int *arg_lo,
		     int *arg_hi)
{
	int k = 0;

	*lo = *hi = NAN;
	*arg_lo = *arg_hi = -1;
	for (int i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (!k || v[i] < *lo) {
			*lo = v[i];
			*arg_lo = i;
		}
		if (!k || v[i] > *hi) {
			*hi = v[i];
			*arg_hi = i;
		}
		k++;
	}
	return k;
}

/* Where x falls between lo and hi, 0..1; 0 when there is no spread. */
static double scale(double x, double lo, double hi)
{
	return hi > lo ? (x - lo) / (hi - lo) : 0;
}

/* Decimals that keep every value within 5 characters (1 if possible). */
static int pick_decimals(const double *v, int n)
{
	char buf[64];

	for (int i = 0; i < n; i++)
		if (isfinite(v[i]) && snprintf(buf, sizeof(buf), "%.1f", v[i]) > 5)
			return 0;
	return 1;
}

/* The widest cell: a value longer than this (1e200 in a damaged map)
 * prints in %g form with as many digits as fit, so a row never outgrows
 * its line buffer. */
#define CELL_MAX 10

/* v as a cell prints it: dec decimals, or fewer digits when too long.
 * buf holds at least 64 bytes; returns the length, at most CELL_MAX. */
static int format_value(char *buf, size_t len, double v, int dec)
{
	int n = snprintf(buf, len, "%.*f", dec, v);

	/* "%.1g" is at most 7 characters ("-1e-308") */
	for (int digits = 4; n > CELL_MAX && digits > 0; digits--)
		n = snprintf(buf, len, "%.*g", digits, v);
	return n;
}

static int cell_width(const double *v, int n, int dec)
{
	char buf[64];
	int w = 4;	/* room for "--" and the "+15" header */

	for (int i = 0; i < n; i++) {
		int len = !isfinite(v[i]) ? 0 : format_value(buf, sizeof(buf), v[i], dec);

		if (len > w)
			w = len;
	}
	return w;
}

/* Nearest step of the xterm 6x6x6 colour cube (0, 95, 135, ... 255). */
static int cube_step(int c)
{
	return c < 48 ? 0 : c < 115 ? 1 : (c - 35) / 40;
}

static void put_cell_color(FILE *f, double t, int w, const char *text)
{
	unsigned char rgb[3];
	int bg, fg;

	nt_heatmap_rgb(t, rgb);
	bg = 16 + 36 * cube_step(rgb[0]) + 6 * cube_step(rgb[1]) + cube_step(rgb[2]);
	/* dark text on the light (yellow-green) end, light text elsewhere */
	fg = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140 ? 16 : 231;
	fprintf(f, " \033[48;5;%d;38;5;%dm%*s\033[0m", bg, fg, w, text);
}

/* Print a line without its trailing blanks. */
static void put_line(FILE *f, char *line)
{
	size_t len = strlen(line);

	while (len && line[len - 1] == ' ')
		line[--len] = '\0';
	fprintf(f, "%s\n", line);
}

/* One row of SMs: values, and in plain mode the shading under them. */
static void put_row(FILE *f, const double *v, int first, int count, int w, int dec,
		    int color, double lo, double hi)
{
	char vals[NT_HEATMAP_COLUMNS + 64], shade[NT_HEATMAP_COLUMNS + 64], txt[64];
	int pv = snprintf(vals, sizeof(vals), "%4d", first);
	int ps = snprintf(shade, sizeof(shade), "%4s", "");

	if (color)
		fprintf(f, "%s", vals);
	for (int i = first; i < first + count; i++) {
		double t = !isfinite(v[i]) ? 0 : scale(v[i], lo, hi);
		int level = t * 9 >= 8 ? 8 : (int)(t * 9);

		if (!isfinite(v[i]))
			snprintf(txt, sizeof(txt), "--");
		else
			format_value(txt, sizeof(txt), v[i], dec);
		if (color && isfinite(v[i])) {
			put_cell_color(f, t, w, txt);
			continue;
		}
		if (color) {
			fprintf(f, " %*s", w, txt);
			continue;
		}
		pv += snprintf(vals + pv, sizeof(vals) - pv, " %*s", w, txt);
		shade[ps++] = ' ';
		for (int c = 0; c < w; c++)
			shade[ps++] = !isfinite(v[i]) ? ' ' : shades[level];
		shade[ps] = '\0';
	}
	if (color) {
		fputc('\n', f);
		return;
	}
	put_line(f, vals);
	put_line(f, shade);
}

int nt_heatmap_term(FILE *f, const double *v, int n, int per_row, int color,
		    const char *unit)
{
	double lo, hi;
	int arg_lo, arg_hi, dec, w, fit;
	char head[NT_HEATMAP_COLUMNS + 64], lo_txt[64], hi_txt[64];
	int ph;

	if (!f || !v || n <= 0)
		return -1;
	dec = pick_decimals(v, n);
	w = cell_width(v, n, dec);
	fit = (NT_HEATMAP_COLUMNS - 4) / (w + 1);
	if (per_row <= 0)
		per_row = NT_HEATMAP_PER_ROW;
	if (per_row > fit)
		per_row = fit > 0 ? fit : 1;
	if (per_row > n)
		per_row = n;
	ph = snprintf(head, sizeof(head), "%4s", "sm");
	for (int c = 0; c < per_row; c++) {
		char off[16];

		snprintf(off, sizeof(off), "+%d", c);
		ph += snprintf(head + ph, sizeof(head) - ph, " %*s", w, off);
	}
	put_line(f, head);
	nt_heatmap_range(v, n, &lo, &hi, &arg_lo, &arg_hi);
	for (int first = 0; first < n; first += per_row)
		put_row(f, v, first, n - first < per_row ? n - first : per_row, w, dec, color,
			lo, hi);
	if (arg_lo < 0) {
		fprintf(f, "no SM measured\n");
	} else {
		format_value(lo_txt, sizeof(lo_txt), lo, dec);
		format_value(hi_txt, sizeof(hi_txt), hi, dec);
		fprintf(f, "min %s (sm %d)  max %s (sm %d)  %.16s%s%s\n", lo_txt, arg_lo, hi_txt,
			arg_hi, unit ? unit : "", unit && *unit ? "  " : "",
			color ? "colour: dark = low, yellow = high" : "shade: . low .. @ high");
	}
	return ferror(f) ? -1 : 0;
}
