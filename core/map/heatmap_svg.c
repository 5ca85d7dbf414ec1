/* SVG renderers declared in heatmap.h (the terminal one is heatmap.c). */
#include "map/heatmap.h"

#include <math.h>
#include <string.h>

#include "util/text.h"

#define CELL_W 60
#define CELL_H 40
#define MARGIN 20
#define TOP 44		/* room for the title */
#define BAR_H 14

/* XML and HTML text/attribute escaping (heatmap.h). */
void nt_xml_escape(FILE *f, const char *s)
{
	size_t n = s ? strlen(s) : 0, len;

	for (size_t i = 0; i < n; i += len ? len : 1) {
		unsigned char c = (unsigned char)s[i];

		len = nt_utf8_len((const unsigned char *)s + i, n - i);
		switch (c) {
		case '&': fputs("&amp;", f); continue;
		case '<': fputs("&lt;", f); continue;
		case '>': fputs("&gt;", f); continue;
		case '"': fputs("&quot;", f); continue;
		case '\'': fputs("&#39;", f); continue;
		case '\t': case '\n': fputc(c, f); continue;
		}
		if (!len)
			fputs("\xef\xbf\xbd", f);	/* not UTF-8: U+FFFD, as JSON */
		else if (c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)s[i + 1] < 0xa0))
			fputc('?', f);	/* C0, DEL, C1 */
		else
			fwrite(s + i, 1, len, f);
	}
}

static void put_fill(FILE *f, double x, double lo, double hi)
{
	unsigned char rgb[3];

	if (!isfinite(x)) {
		fputs("#cccccc", f);
		return;
	}
	nt_heatmap_rgb(hi > lo ? (x - lo) / (hi - lo) : 0, rgb);
	fprintf(f, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* Light cells (the yellow end, or grey) get dark text. */
static const char *text_fill(double x, double lo, double hi)
{
	unsigned char rgb[3];

	if (!isfinite(x))
		return "#333333";
	nt_heatmap_rgb(hi > lo ? (x - lo) / (hi - lo) : 0, rgb);
	return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 140 ? "#000000" : "#ffffff";
}

static void put_head(FILE *f, int w, int h, const char *title)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>", w, h, w, h);
	nt_xml_escape(f, title);
	fprintf(f, "</title>\n<defs><linearGradient id=\"ramp\">");
	for (int i = 0; i <= 8; i++) {
		unsigned char rgb[3];

		nt_heatmap_rgb(i / 8.0, rgb);
		fprintf(f, "<stop offset=\"%d%%\" stop-color=\"#%02x%02x%02x\"/>", i * 100 / 8,
			rgb[0], rgb[1], rgb[2]);
	}
	fprintf(f, "</linearGradient></defs>\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
		"<text x=\"%d\" y=\"28\" font-size=\"16\">", w, h, MARGIN);
	nt_xml_escape(f, title);
	fputs("</text>\n", f);
}

/* Colour bar of width w at y, labelled with the range and unit. */
static void put_bar(FILE *f, int y, int w, const double *v, int n, const char *unit)
{
	double lo, hi;
	int alo, ahi;

	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#ramp)\"/>\n",
		MARGIN, y, w, BAR_H);
	if (!nt_heatmap_range(v, n, &lo, &hi, &alo, &ahi)) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">no SM measured</text>\n",
			MARGIN, y + BAR_H + 16);
		return;
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%.1f</text>\n",
		MARGIN, y + BAR_H + 16, lo);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">%.1f ",
		MARGIN + w, y + BAR_H + 16, hi);
	nt_xml_escape(f, unit);
	fputs("</text>\n", f);
}

static void put_sm_cell(FILE *f, int sm, double x, int px, int py, double lo, double hi)
{
	const char *ink = text_fill(x, lo, hi);

	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"", px, py,
		CELL_W - 2, CELL_H - 2);
	put_fill(f, x, lo, hi);
	fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" font-size=\"9\" fill=\"%s\">%d</text>",
		px + 3, py + 11, ink, sm);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
		"fill=\"%s\">", px + (CELL_W - 2) / 2, py + 29, ink);
	if (!isfinite(x))
		fputs("--", f);
	else
		fprintf(f, "%.1f", x);
	fputs("</text>\n", f);
}

int nt_heatmap_svg(FILE *f, const double *v, int n, int per_row, const char *title,
		   const char *unit)
{
	double lo, hi;
	int alo, ahi, rows, w, h;

	if (!f || !v || n <= 0)
		return -1;
	if (per_row <= 0)
		per_row = NT_HEATMAP_PER_ROW;
	if (per_row > n)
		per_row = n;
	rows = (n + per_row - 1) / per_row;
	w = 2 * MARGIN + per_row * CELL_W;
	h = TOP + rows * CELL_H + 24 + BAR_H + 24;
	nt_heatmap_range(v, n, &lo, &hi, &alo, &ahi);
	put_head(f, w, h, title);
	for (int i = 0; i < n; i++)
		put_sm_cell(f, i, v[i], MARGIN + i % per_row * CELL_W, TOP + i / per_row * CELL_H,
			    lo, hi);
	put_bar(f, TOP + rows * CELL_H + 16, per_row * CELL_W - 2, v, n, unit);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}

/* Matrix: small cells sized so the picture stays about 900 x 600. */
int nt_heatmap_svg_matrix(FILE *f, const double *mat, int rows, int cols,
			  const char *title, const char *unit)
{
	double lo, hi;
	int alo, ahi, cw, ch, w, h, left = MARGIN + 30;
	long n;

	if (!f || !mat || rows <= 0 || cols <= 0)
		return -1;
	n = (long)rows * cols;
	cw = 900 / cols < 1 ? 1 : 900 / cols > 12 ? 12 : 900 / cols;
	ch = 600 / rows < 2 ? 2 : 600 / rows > 12 ? 12 : 600 / rows;
	w = left + cols * cw + MARGIN;
	if (w < 320)
		w = 320;	/* room for the title and the bar labels */
	h = TOP + rows * ch + 40 + BAR_H + 24;
	nt_heatmap_range(mat, (int)n, &lo, &hi, &alo, &ahi);
	put_head(f, w, h, title);
	for (int r = 0; r < rows; r++) {
		if (r % 16 == 0)
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">"
				"%d</text>\n", left - 4, TOP + r * ch + 8, r);
		for (int c = 0; c < cols; c++) {
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"",
				left + c * cw, TOP + r * ch, cw, ch);
			put_fill(f, mat[(long)r * cols + c], lo, hi);
			fputs("\"/>\n", f);
		}
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">sm (rows) x line (columns), "
		"%d x %d</text>\n", left, TOP + rows * ch + 16, rows, cols);
	put_bar(f, TOP + rows * ch + 28, w - MARGIN - MARGIN, mat, (int)n, unit);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
