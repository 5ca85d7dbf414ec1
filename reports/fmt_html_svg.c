/*
 * The HTML report's plots (fmt_html.h): linear axes with round ticks, the
 * duration-vs-latency scatter of a kernel (per-SM median block time
 * against the SM's L2 latency, with the fit's line and CI band) and the
 * per-SM block timeline of one launch, each a section of the page with
 * its heading and caption.  The scatter draws the report's per-SM
 * medians and map; the timeline's blocks are streamed from the report
 * (nt_report_foreach_block).  Numbers are printed only when finite,
 * strings only through nt_xml_escape(), as in the rest of the page.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/attrib.h"
#include "fmt_html.h"
#include "map/heatmap.h"

#define SCATTER_KERNELS 5
#define TIMELINE_BLOCKS 20000	/* rects drawn at most */

/* plotting: linear axes with round ticks */

struct axis {
	double lo, hi, step;
	int dec;		/* decimals of the tick labels */
};

static void axis_make(struct axis *a, double lo, double hi, int pad)
{
	double span, raw, mag, norm;

	if (!(hi > lo)) {
		double d = fabs(lo) * 0.05 + 1;

		lo -= d, hi += d;
	}
	span = hi - lo;
	if (pad)
		lo -= span * 0.05, hi += span * 0.05;
	raw = (hi - lo) / 5;
	mag = pow(10, floor(log10(raw)));
	norm = raw / mag;
	a->step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
	a->lo = lo, a->hi = hi;
	a->dec = a->step >= 1 ? 0 : (int)ceil(-log10(a->step) - 1e-9);
	if (a->dec > 6)
		a->dec = 6;
}

/* A plot area: x from left to left + w, y from top + h (lo) up to top. */
struct plot {
	double left, top, w, h;
	struct axis x, y;
};

static double px(const struct plot *p, double x)
{
	return p->left + (x - p->x.lo) / (p->x.hi - p->x.lo) * p->w;
}

static double py(const struct plot *p, double y)
{
	return p->top + p->h - (y - p->y.lo) / (p->y.hi - p->y.lo) * p->h;
}

static void ticks(FILE *f, const struct plot *p, int vertical)
{
	const struct axis *a = vertical ? &p->y : &p->x;
	double k0 = ceil(a->lo / a->step - 1e-9), k1 = floor(a->hi / a->step + 1e-9);

	for (double k = k0; k <= k1 && k - k0 < 40; k++) {
		double v = fabs(k) < 0.5 ? 0 : k * a->step;

		if (vertical)
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\">%.*f</text>\n",
				p->left, p->left + p->w, py(p, v), py(p, v), p->left - 6, py(p, v) + 4,
				a->dec, v);
		else
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" stroke=\"none\">%.*f</text>\n",
				px(p, v), px(p, v), p->top, p->top + p->h, px(p, v), p->top + p->h + 16,
				a->dec, v);
	}
}

/* Grid, tick labels, frame and axis titles (static text). */
static void axes(FILE *f, const struct plot *p, const char *xtitle, const char *ytitle, int yticks)
{
	fputs("<g stroke=\"#e2e2e2\" fill=\"#333\">\n", f);
	ticks(f, p, 0);
	if (yticks)
		ticks(f, p, 1);
	fputs("</g>\n", f);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#888\"/>\n", p->left, p->top, p->w, p->h);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		p->left + p->w / 2, p->top + p->h + 36, xtitle);
	if (ytitle)
		fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">"
			"%s</text>\n", p->top + p->h / 2, ytitle);
}

static void svg_open(FILE *f, double w, double h, const char *title1, const char *title2)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">"
		"<title>%s", w, h, w, h, title1);
	nt_xml_escape(f, title2);
	fprintf(f, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

/* duration vs latency */

/* The scatter of per-SM medians (µs) against latency (cycles), the
 * Theil-Sen line and the band of the slope's CI pivoting on the line at
 * the median latency. */
static void scatter_svg(struct html_page *p, const struct nt_report_kernel *k)
{
	FILE *f = p->f;
	const struct nt_kernel_fit *fit = &k->fit;
	const double *lat = k->map->chain, *med = k->sm_median_ns, x0 = k->lat_median;
	const int *count = k->sm_blocks, n_sm = k->map->n_sm;
	struct plot pl = { .left = 70, .top = 16, .w = 520, .h = 300 };
	double a = fit->intercept_ns / 1e3, s = fit->slope_ns / 1e3;
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	double y0 = a + s * x0, slo = fit->slope_lo / 1e3, shi = fit->slope_hi / 1e3;
	int id = ++p->ids;

	for (int i = 0; i < n_sm; i++) {
		if (count[i] < NT_ATTRIB_MIN_BLOCKS || !isfinite(lat[i]) || !isfinite(med[i]))
			continue;
		xlo = fmin(xlo, lat[i]), xhi = fmax(xhi, lat[i]);
		ylo = fmin(ylo, med[i] / 1e3), yhi = fmax(yhi, med[i] / 1e3);
	}
	axis_make(&pl.x, xlo, xhi, 1);
	ylo = fmin(ylo, fmin(a + s * pl.x.lo, a + s * pl.x.hi));
	yhi = fmax(yhi, fmax(a + s * pl.x.lo, a + s * pl.x.hi));
	axis_make(&pl.y, ylo, yhi, 1);
	svg_open(f, pl.left + pl.w + 20, pl.top + pl.h + 50, "block time vs SM latency: ", html_kname(k));
	fprintf(f, "<defs><clipPath id=\"clip%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		"height=\"%.1f\"/></clipPath></defs>\n", id, pl.left, pl.top, pl.w, pl.h);
	axes(f, &pl, "SM L2 latency (cycles)", "median block time (&#181;s)", 1);
	fprintf(f, "<g clip-path=\"url(#clip%d)\">\n", id);
	if (isfinite(slo) && isfinite(shi))
		fprintf(f, "<polygon fill=\"#1f77b4\" fill-opacity=\"0.18\" points=\"%.1f,%.1f %.1f,%.1f "
			"%.1f,%.1f %.1f,%.1f\"/>\n",
			px(&pl, pl.x.lo), py(&pl, y0 + slo * (pl.x.lo - x0)),
			px(&pl, pl.x.hi), py(&pl, y0 + slo * (pl.x.hi - x0)),
			px(&pl, pl.x.hi), py(&pl, y0 + shi * (pl.x.hi - x0)),
			px(&pl, pl.x.lo), py(&pl, y0 + shi * (pl.x.lo - x0)));
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\" "
		"stroke-width=\"2\"/>\n</g>\n<g fill=\"#d62728\" fill-opacity=\"0.75\">\n",
		px(&pl, pl.x.lo), py(&pl, a + s * pl.x.lo), px(&pl, pl.x.hi), py(&pl, a + s * pl.x.hi));
	for (int i = 0; i < n_sm; i++) {
		if (count[i] < NT_ATTRIB_MIN_BLOCKS || !isfinite(lat[i]) || !isfinite(med[i]))
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>SM %d: %.1f cycles, "
			"%.3f &#181;s, %d blocks</title></circle>\n", px(&pl, lat[i]), py(&pl, med[i] / 1e3),
			i, lat[i], med[i] / 1e3, count[i]);
	}
	fputs("</g>\n</svg>\n", f);
}

static void scatter(struct html_page *p, int rank, const struct nt_report_kernel *k)
{
	fprintf(p->f, "<div><h3>#%d ", rank + 1);
	html_esc_short(p->f, html_kname(k), HTML_NAME_CHARS);
	fputs("</h3>\n<figure>\n", p->f);
	scatter_svg(p, k);
	fprintf(p->f, "<figcaption>One dot per SM: the median time of its blocks%s%s. Line: Theil&#8211;Sen, "
		"%.1f ns per cycle of latency; band: its 95%% CI [%.1f, %.1f] about the median latency "
		"(%.1f cycles). %d SMs, R&#178; ", k->fit.n_blocks < k->blocks ? " (the fit's sample of them)" : "",
		k->probe_corrected ? ", the instrumentation's per-SM cost taken off" : "",
		k->fit.slope_ns, k->fit.slope_lo, k->fit.slope_hi, k->lat_median, k->fit.n_sm_used);
	html_num(p->f, "%.2f", k->fit.r2);
	fprintf(p->f, ", effect %.2f%% of a block; %s.</figcaption></figure>\n</div>\n", k->fit.effect_pct,
		nt_report_verdict_name(k->verdict));
}

void html_scatters(struct html_page *p, int shown)
{
	int drawn = 0;

	fputs("<h2>Block time vs SM latency</h2>\n<div class=\"plots\">\n", p->f);
	for (int i = 0; i < shown && drawn < SCATTER_KERNELS; i++) {
		const struct nt_report_kernel *k = &p->r->kernels[p->idx[i]];

		if (!k->fitted || !k->fit.fitted)
			continue;
		scatter(p, i, k);
		drawn++;
	}
	fputs("</div>\n", p->f);
	if (!drawn)
		fputs("<p class=\"note\">No kernel has a fit (no map, or too few SMs).</p>\n", p->f);
}

/* per-SM block timeline */

struct tblock {
	int32_t sm, lane;
	int64_t t0, t1;
};

struct tl {
	int64_t first, last, dmin, dmax;
	size_t n;
	int max_sm;
	struct tblock *b;	/* pass 2: the first TIMELINE_BLOCKS */
	size_t nb;
};

static int on_tl_scan(const struct nt_report_block *b, void *arg)
{
	struct tl *tl = arg;
	int64_t d = b->t_end_ns - b->t_start_ns;

	if (b->sm < 0 || b->sm >= NT_MAP_MAX_SM || d < 0)
		return 0;
	if (!tl->n++) {
		tl->first = b->t_start_ns, tl->last = b->t_end_ns, tl->dmin = tl->dmax = d;
	} else {
		if (b->t_start_ns < tl->first)
			tl->first = b->t_start_ns;
		if (b->t_end_ns > tl->last)
			tl->last = b->t_end_ns;
		if (d < tl->dmin)
			tl->dmin = d;
		if (d > tl->dmax)
			tl->dmax = d;
	}
	if (b->sm > tl->max_sm)
		tl->max_sm = b->sm;
	return 0;
}

static int on_tl_keep(const struct nt_report_block *b, void *arg)
{
	struct tl *tl = arg;

	if (b->sm < 0 || b->sm >= NT_MAP_MAX_SM || b->t_end_ns < b->t_start_ns || tl->nb == TIMELINE_BLOCKS)
		return 0;
	tl->b[tl->nb++] = (struct tblock){ b->sm, 0, b->t_start_ns, b->t_end_ns };
	return 0;
}

static int cmp_tblock(const void *a, const void *b)
{
	const struct tblock *x = a, *y = b;

	if (x->sm != y->sm)
		return (x->sm > y->sm) - (x->sm < y->sm);
	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Blocks running at once on an SM go to lanes (the first free), at most 8. */
static int assign_lanes(struct tblock *b, size_t n)
{
	int64_t end[8];
	int lanes = 1;

	qsort(b, n, sizeof(*b), cmp_tblock);
	for (size_t i = 0; i < n; i++) {
		int l, best = 0;

		if (!i || b[i].sm != b[i - 1].sm)
			for (l = 0; l < 8; l++)
				end[l] = INT64_MIN;
		for (l = 0; l < 8 && end[l] > b[i].t0; l++)
			if (end[l] < end[best])
				best = l;
		b[i].lane = l < 8 ? l : best;
		end[b[i].lane] = b[i].t1;
		if (b[i].lane + 1 > lanes)
			lanes = b[i].lane + 1;
	}
	return lanes;
}

static void timeline_svg(FILE *f, const struct tl *tl, int rows, int lanes, const char *name)
{
	struct plot pl = { .left = 60, .top = 12, .w = 980 };
	double rh = 800 / rows < 3 ? 3 : 800 / rows > 14 ? 14 : 800 / rows, span = (double)(tl->last - tl->first);
	int step = 1;

	while (step * rh < 14)
		step *= 2;
	pl.h = rows * rh;
	axis_make(&pl.x, 0, span / 1e3, 0);
	pl.y.lo = 0, pl.y.hi = 1;
	svg_open(f, pl.left + pl.w + 20, pl.top + pl.h + 50, "block timeline: ", name);
	axes(f, &pl, "time from the launch's first block (&#181;s)", "SM", 0);
	fputs("<g fill=\"#333\" text-anchor=\"end\">\n", f);
	for (int s = 0; s < rows; s += step)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%d</text>\n", pl.left - 6, pl.top + s * rh + rh / 2 + 4, s);
	fputs("</g>\n<g>\n", f);
	for (size_t i = 0; i < tl->nb; i++) {
		const struct tblock *b = &tl->b[i];
		double x = px(&pl, (double)(b->t0 - tl->first) / 1e3);
		double w = (double)(b->t1 - b->t0) / 1e3 / (pl.x.hi - pl.x.lo) * pl.w;
		unsigned char rgb[3];

		nt_heatmap_rgb(tl->dmax > tl->dmin ? (double)(b->t1 - b->t0 - tl->dmin) / (double)(tl->dmax - tl->dmin) : 0,
			       rgb);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"#%02x%02x%02x\"/>\n",
			x, pl.top + b->sm * rh + b->lane * rh / lanes, w < 0.5 ? 0.5 : w, rh / lanes * 0.9, rgb[0],
			rgb[1], rgb[2]);
	}
	fputs("</g>\n</svg>\n", f);
}

int html_timeline(struct html_page *p)
{
	const struct nt_report *r = p->r;
	int ki = p->idx[0], rows, lanes, ret = -1;
	const struct nt_report_kernel *k = &r->kernels[ki];
	const struct nt_report_launch *best = NULL;
	struct tl tl = { .max_sm = -1 };

	fputs("<h2>Block timeline</h2>\n", p->f);
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		if (l->kernel == ki && l->ok && fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR &&
		    (!best || l->r.measured_ns > best->r.measured_ns))
			best = l;
	}
	if (!best) {
		fputs("<p class=\"note\">The top kernel has no credible launch.</p>\n", p->f);
		return 0;
	}
	if (nt_report_foreach_block(r, (size_t)(best - r->launches), 1, on_tl_scan, &tl, NULL))
		goto out;
	if (!tl.n) {
		fputs("<p class=\"note\">Its blocks name no SM in range.</p>\n", p->f);
		ret = 0;
		goto out;
	}
	if (!(tl.b = malloc((tl.n < TIMELINE_BLOCKS ? tl.n : TIMELINE_BLOCKS) * sizeof(*tl.b))) ||
	    nt_report_foreach_block(r, (size_t)(best - r->launches), 1, on_tl_keep, &tl, NULL))
		goto out;
	rows = tl.max_sm + 1 > r->traces[best->trace].sm_count ? tl.max_sm + 1 : r->traces[best->trace].sm_count;
	lanes = assign_lanes(tl.b, tl.nb);
	fprintf(p->f, "<p>Kernel #1, launch %lld of trace %d: the longest credible launch of the top "
		"kernel, %.3f &#181;s, %zu blocks, one row per SM.</p>\n", (long long)best->launch,
		best->trace + 1, best->r.measured_ns / 1e3, tl.n);
	if (tl.nb < tl.n)
		fprintf(p->f, "<p class=\"note\">Capped: %zu of %zu blocks drawn (the first in block-id "
			"order).</p>\n", tl.nb, tl.n);
	fputs("<figure>\n", p->f);
	timeline_svg(p->f, &tl, rows, lanes, html_kname(k));
	fprintf(p->f, "<figcaption>A bar per block, coloured by its duration from %.3f &#181;s (dark "
		"blue) to %.3f &#181;s (yellow); blocks that ran at once on an SM are stacked in its row "
		"(up to %d).</figcaption></figure>\n", tl.dmin / 1e3, tl.dmax / 1e3, lanes);
	ret = 0;
out:
	free(tl.b);
	return ret;
}
