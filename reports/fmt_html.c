/*
 * The report as one self-contained HTML page (--html FILE): the traces
 * and program figures, each GPU's SM latency heat map (the map inside a
 * trace), the kernels table, the duration-vs-latency scatter of the top
 * fitted kernels, a per-SM block timeline of the top kernel's longest
 * credible launch, and the launches.  Inline SVG and a small style
 * sheet; no script, nothing fetched.  Like fmt_perfetto.c it reads the
 * block records (and maps) again from the trace files.
 *
 * Every string from a trace (paths, names, UUIDs, error text) goes
 * through esc(); numbers go through printf (LC_NUMERIC stays "C") and
 * only when finite, so the page is the same bytes for the same traces.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "format.h"
#include "heatmap.h"
#include "trace.h"

#define SCATTER_KERNELS 5
#define TIMELINE_BLOCKS 20000	/* rects drawn at most */
#define MAX_GPUS 64
#define NAME_CHARS 120		/* of a kernel name in tables and headings */

struct page {
	FILE *f;
	const struct nt_report *r;
	const int *idx;		/* kernels by rank */
	const int *rank;	/* rank of each kernel */
	int ids;		/* for ids unique in the page */
};

static const char style[] =
	"body{font:14px/1.4 sans-serif;color:#222;max-width:1120px;margin:1em auto;padding:0 1em}\n"
	"h1{font-size:22px}h2{font-size:18px;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
	"h3{font-size:15px;margin-bottom:.3em}\n"
	"table{border-collapse:collapse;margin:.4em 0}\n"
	"th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:right;vertical-align:top}\n"
	"td{white-space:nowrap}td.n{white-space:normal;min-width:240px}\n"
	"th{background:#f2f2f2}.l{text-align:left}.bad{color:#a33}\n"
	"code{font-size:12px;overflow-wrap:anywhere}\n"
	"svg{max-width:100%;height:auto}figure{margin:.6em 0 1.2em}figcaption,.note{color:#666}\n"
	"summary{cursor:pointer;font-weight:bold}\n"
	".plots{display:flex;flex-wrap:wrap;gap:0 24px}.plots>div{flex:0 1 540px;min-width:0}\n";

/* HTML text and attribute values alike; control characters become '?'. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
		}
	}
}

/* At most max bytes of s (cut before a UTF-8 sequence), "..." when cut,
 * all of it in a title attribute: long template names stay readable. */
static void esc_short(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	char *cut;

	if (n <= max) {
		fputs("<code>", f);
		esc(f, s);
		fputs("</code>", f);
		return;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	if (!(cut = strndup(s, max)))
		return;
	fputs("<code title=\"", f);
	esc(f, s);
	fputs("\">", f);
	esc(f, cut);
	fputs("...</code>", f);
	free(cut);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* A number, or a dash when it is not finite. */
static void num(FILE *f, const char *fmt, double v)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("&#8211;", f);
}

static const char *kname(const struct nt_report_kernel *k)
{
	return k->demangled ? k->demangled : k->name;
}

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
	esc(f, title2);
	fprintf(f, "</title>\n<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

/* the traces' devices and maps */

struct gpu {
	char uuid[NT_UUID_LEN];
	char name[96];
	struct nt_map *map;	/* from the first trace that carries one */
};

struct gpus {
	struct gpu g[MAX_GPUS];
	int n;
	struct nt_trace *t;
};

static int on_device(const struct nt_trace_device *d, void *arg)
{
	struct gpus *gs = arg;
	int i;

	for (i = 0; i < gs->n && strcmp(gs->g[i].uuid, d->uuid); i++)
		;
	if (i == gs->n && gs->n < MAX_GPUS) {
		snprintf(gs->g[i].uuid, sizeof(gs->g[i].uuid), "%s", d->uuid);
		snprintf(gs->g[i].name, sizeof(gs->g[i].name), "%s", d->name);
		gs->n++;
	}
	if (i < gs->n && !gs->g[i].map)
		nt_trace_get_map(gs->t, d->uuid, &gs->g[i].map, NULL);
	return 0;
}

/* The uuid of device ordinal `device` of a trace. */
struct find_dev {
	int device;
	char uuid[NT_UUID_LEN];
};

static int on_find_dev(const struct nt_trace_device *d, void *arg)
{
	struct find_dev *fd = arg;

	if (d->device == fd->device)
		snprintf(fd->uuid, sizeof(fd->uuid), "%s", d->uuid);
	return 0;
}

static struct nt_map *device_map(struct nt_trace *t, int device)
{
	struct find_dev fd = { .device = device };
	struct nt_map *m = NULL;

	if (nt_trace_foreach_device(t, on_find_dev, &fd, NULL) || !fd.uuid[0] ||
	    nt_trace_get_map(t, fd.uuid, &m, NULL))
		return NULL;
	return m;
}

/* nt_heatmap_svg's document, without its XML declaration and with its
 * gradient's id made unique in the page. */
static int put_heatmap(struct page *p, const struct gpu *g)
{
	char *buf = NULL, *s, *q, title[192];
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	int ret, id = ++p->ids;

	if (!mf)
		return -1;
	snprintf(title, sizeof(title), "SM L2 latency, %s %s", g->name, g->uuid);
	ret = nt_heatmap_svg(mf, g->map->chain, g->map->n_sm, 0, title, "cycles");
	if ((fclose(mf) | ret) || !buf) {
		free(buf);
		return -1;
	}
	s = buf;
	if (!strncmp(s, "<?xml", 5) && (q = strchr(s, '\n')))
		s = q + 1;
	while (*s) {
		char *a = strstr(s, "id=\"ramp\""), *b = strstr(s, "url(#ramp)");

		q = !a ? b : !b ? a : a < b ? a : b;
		if (!q) {
			fputs(s, p->f);
			break;
		}
		fwrite(s, 1, (size_t)(q - s), p->f);
		fprintf(p->f, q == a ? "id=\"ramp%d\"" : "url(#ramp%d)", id);
		s = q + (q == a ? strlen("id=\"ramp\"") : strlen("url(#ramp)"));
	}
	free(buf);
	return 0;
}

static int heatmaps(struct page *p)
{
	struct gpus *gs = calloc(1, sizeof(*gs));
	int ret = -1;

	if (!gs)
		return -1;
	for (int i = 0; i < p->r->n_traces; i++) {
		if (nt_trace_open(p->r->traces[i].path, &gs->t, NULL))
			goto out;
		ret = nt_trace_foreach_device(gs->t, on_device, gs, NULL);
		nt_trace_close(gs->t);
		if (ret)
			goto out;
		ret = -1;
	}
	fputs("<h2>SM L2 latency</h2>\n", p->f);
	if (!gs->n)
		fputs("<p class=\"note\">The traces name no GPU.</p>\n", p->f);
	for (int i = 0; i < gs->n; i++) {
		fputs("<h3>", p->f);
		esc(p->f, gs->g[i].name);
		fputs(" <code>", p->f);
		esc(p->f, gs->g[i].uuid);
		fputs("</code></h3>\n", p->f);
		if (!gs->g[i].map) {
			fputs("<p class=\"note\">no map in the trace</p>\n", p->f);
			continue;
		}
		fputs("<figure>\n", p->f);
		if (put_heatmap(p, &gs->g[i]))
			goto out;
		fputs("<figcaption>Chain-map L2 hit latency per SM (smid order, 16 a row), "
		      "from the calibration map inside the trace.</figcaption></figure>\n", p->f);
	}
	ret = 0;
out:
	for (int i = 0; i < gs->n; i++)
		nt_map_free(gs->g[i].map);
	free(gs);
	return ret;
}

/* header, program, kernels, launches */

static void traces(FILE *f, const struct nt_report *r)
{
	int64_t traced = 0;

	for (int i = 0; i < r->n_traces; i++)
		traced += r->traces[i].traced;
	fprintf(f, "<h1>nucatrace report</h1>\n<p>%d trace%s, %lld traced launches, %lld blocks</p>\n",
		r->n_traces, r->n_traces == 1 ? "" : "s", (long long)traced, (long long)r->blocks);
	fputs("<table>\n<tr><th>#</th><th class=\"l\">trace</th><th class=\"l\">GPU</th>"
	      "<th class=\"l\">UUID</th><th>SMs</th><th class=\"l\">mode</th><th>traced</th>"
	      "<th>launches</th><th>rank</th><th class=\"l\">map</th></tr>\n", f);
	for (int i = 0; i < r->n_traces; i++) {
		const struct nt_report_trace *t = &r->traces[i];

		fprintf(f, "<tr><td>%d</td><td class=\"l n\"><code>", i + 1);
		esc(f, t->path);
		fputs("</code></td><td class=\"l\">", f);
		esc(f, t->gpu);
		fputs("</td><td class=\"l\"><code>", f);
		esc(f, t->uuid);
		fprintf(f, "</code></td><td>%d</td><td class=\"l\">", t->sm_count);
		esc(f, t->backend[0] ? t->backend : "?");
		fprintf(f, "</td><td>%lld</td><td>%lld</td><td>", (long long)t->traced, (long long)t->launches);
		if (t->rank >= 0)
			fprintf(f, "%d", t->rank);
		else
			fputs("&#8211;", f);
		fprintf(f, "</td><td class=\"l\">%s</td></tr>\n",
			!t->traced ? "&#8211;" : t->has_map ? "yes" : "none: no placement analysis");
	}
	fputs("</table>\n", f);
}

static void figure_row(FILE *f, const char *what, double ns, double whole, const char *note)
{
	fprintf(f, "<tr><td class=\"l\">%s</td><td>%.3f</td><td>%.1f</td><td class=\"l\">%s</td></tr>\n",
		what, ns / 1e6, pct(ns, whole), note);
}

static void program(FILE *f, const struct nt_report *r)
{
	double t = r->time_ns_credible;

	fprintf(f, "<h2>Program</h2>\n<p>GPU time %.3f ms in %d replayed launches. Replay check: the "
		"dispatch replay reproduces the measured makespan within %.0f%% on <b>%d of %d</b> "
		"launches (largest error %.2f%%)%s.</p>\n", r->time_ns / 1e6, r->replayed,
		NT_REPORT_MAX_REPLAY_ERR, r->credible, r->replayed, r->replay_err_max_pct,
		r->credible < r->replayed ? "; the others are left out of the figures below" : "");
	fprintf(f, "<table>\n<tr><th class=\"l\">over those %d launches (%.3f ms)</th><th>ms</th>"
		"<th>%%</th><th class=\"l\"></th></tr>\n", r->credible, t / 1e6);
	figure_row(f, "lost to slow SMs", r->lost_ns, t, "every SM as fast as the average SM");
	figure_row(f, "recoverable", r->recoverable_ns, t,
		   "placement-aware schedule (longest blocks first, each to the SM that ends it first)");
	figure_row(f, "&#160;&#160;by the map", r->placement_ns, t,
		   "longest first either way, placed by SM speed");
	figure_row(f, "&#160;&#160;by reordering", r->recoverable_ns - r->placement_ns, t,
		   "longest first, the map ignored");
	figure_row(f, "tail (last wave)", r->tail_ns, t, "not placement");
	fputs("</table>\n", f);
}

static void kernels(FILE *f, const struct nt_report *r, const int *idx, int shown)
{
	fprintf(f, "<h2>Kernels by recoverable time%s</h2>\n<table>\n<tr><th>#</th>"
		"<th class=\"l\">kernel</th><th>launches</th><th>blocks</th><th>time ms</th>"
		"<th>L2-sensitive</th><th>ns per cycle [95%% CI]</th><th>effect %%</th>"
		"<th class=\"l\">confidence</th><th>R&#178;</th><th>lost %%</th><th>recov %%</th>"
		"<th>tail %%</th><th>replay error %%</th><th>credible</th></tr>\n",
		shown < r->n_kernels ? " (top ones)" : "");
	for (int i = 0; i < shown; i++) {
		const struct nt_report_kernel *k = &r->kernels[idx[i]];
		int fit = k->fitted && k->fit.fitted;

		fprintf(f, "<tr><td>%d</td><td class=\"l n\">", i + 1);
		esc_short(f, kname(k), NAME_CHARS);
		fprintf(f, "<br>grid %dx%dx%d, block %dx%dx%d</td><td>%d</td><td>%lld</td><td>%.3f</td>",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->launches, (long long)k->blocks, k->time_ns / 1e6);
		if (fit) {
			fprintf(f, "<td>%s</td><td>", k->fit.sensitive ? "<b>yes</b>" : "no");
			num(f, "%.1f", k->fit.slope_ns);
			fputs(" [", f);
			num(f, "%.1f", k->fit.slope_lo);
			fputs(", ", f);
			num(f, "%.1f", k->fit.slope_hi);
			fputs("]</td><td>", f);
			num(f, "%.2f", k->fit.effect_pct);
			fprintf(f, "</td><td class=\"l\">%s</td><td>", k->fit.confidence);
			num(f, "%.2f", k->fit.r2);
			fputs("</td>", f);
		} else {
			fprintf(f, "<td>&#8211;</td><td class=\"l\" colspan=\"4\">%s</td>",
				k->fitted ? "too few SMs" : "no map");
		}
		fprintf(f, "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td%s>%d of %d</td></tr>\n",
			pct(k->lost_ns, k->time_ns_credible), pct(k->recoverable_ns, k->time_ns_credible),
			pct(k->tail_ns, k->time_ns_credible), k->replay_err_max_pct,
			k->credible < k->replayed ? " class=\"bad\"" : "", k->credible, k->replayed);
	}
	fputs("</table>\n", f);
}

static void launches(FILE *f, const struct nt_report *r, const int *rank)
{
	fprintf(f, "<h2>Launches</h2>\n<details><summary>%zu launches</summary>\n<table>\n"
		"<tr><th>trace</th><th>launch</th><th>kernel</th><th>makespan ns</th><th>replay %%</th>"
		"<th>lost %%</th><th>recov %%</th><th>waves</th><th>slots</th>"
		"<th class=\"l\">credible</th></tr>\n", r->n_launches);
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		fprintf(f, "<tr><td>%d</td><td>%lld</td><td>%d</td>", l->trace + 1, (long long)l->launch,
			rank[l->kernel] + 1);
		if (!l->ok) {
			fputs("<td class=\"l n\" colspan=\"7\">not replayed: ", f);
			esc(f, l->why);
			fputs("</td></tr>\n", f);
			continue;
		}
		fprintf(f, "<td>%.0f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%d%s</td>"
			"<td class=\"l\">%s</td></tr>\n", l->r.measured_ns, l->r.error_pct, l->r.lost_pct,
			l->r.recoverable_pct, l->r.waves, l->slots, l->slots_observed ? "*" : "",
			fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR ? "yes" : "<span class=\"bad\">no</span>");
	}
	fputs("</table>\n<p class=\"note\">* slots as observed in the records, below the occupancy "
	      "limit</p></details>\n", f);
}

/* duration vs latency */

struct blockbuf {
	struct nt_attrib_block *b;
	size_t n, cap, max;
};

static int on_fit_block(const struct nt_trace_block *tb, void *arg)
{
	struct blockbuf *bb = arg;

	if (bb->n == bb->max)
		return 0;
	if (bb->n == bb->cap) {
		size_t cap = bb->cap ? 2 * bb->cap : 1024;
		void *q = realloc(bb->b, cap * sizeof(*bb->b));

		if (!q)
			return -1;
		bb->b = q;
		bb->cap = cap;
	}
	bb->b[bb->n++] = (struct nt_attrib_block){ tb->sm, 0, 0, tb->launch,
						   (double)(tb->t_end_ns - tb->t_start_ns),
						   (double)(tb->c_end - tb->c_start) };
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The scatter of per-SM medians (µs) against latency (cycles), the
 * Theil-Sen line and the band of the slope's CI pivoting on the line at
 * the median latency. */
static void scatter_svg(struct page *p, const struct nt_report_kernel *k, const double *lat,
			const double *med, const int *count, int n_sm, double x0)
{
	FILE *f = p->f;
	const struct nt_kernel_fit *fit = &k->fit;
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
	svg_open(f, pl.left + pl.w + 20, pl.top + pl.h + 50, "block time vs SM latency: ", kname(k));
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

static int scatter(struct page *p, int rank, int ki)
{
	const struct nt_report *r = p->r;
	const struct nt_report_kernel *k = &r->kernels[ki];
	struct blockbuf bb = { .max = NT_REPORT_FIT_BLOCKS };
	struct nt_trace *t = NULL;
	struct nt_map *m = NULL;
	double *med = NULL, *xs = NULL, x0;
	int *count = NULL, n = 0, ret = -1;

	fprintf(p->f, "<div><h3>#%d ", rank + 1);
	esc_short(p->f, kname(k), NAME_CHARS);
	fputs("</h3>\n", p->f);
	if (nt_trace_open(r->traces[k->trace].path, &t, NULL))
		return -1;
	if (!(m = device_map(t, k->device))) {
		fputs("<p class=\"note\">The map is not in the trace (it came from --map or the store): "
		      "no scatter.</p>\n", p->f);
		ret = 0;
		goto out;
	}
	for (size_t i = 0; i < r->n_launches; i++)
		if (r->launches[i].kernel == ki &&
		    nt_trace_foreach_block(t, r->launches[i].launch, on_fit_block, &bb, NULL))
			goto out;
	med = malloc(m->n_sm * sizeof(*med));
	xs = malloc(m->n_sm * sizeof(*xs));
	count = malloc(m->n_sm * sizeof(*count));
	if (!med || !xs || !count || nt_attrib_sm_medians(bb.b, bb.n, m->n_sm, count, med, NULL, NULL))
		goto out;
	for (int i = 0; i < m->n_sm; i++)
		if (count[i] >= NT_ATTRIB_MIN_BLOCKS && isfinite(m->chain[i]))
			xs[n++] = m->chain[i];
	if (!n) {
		fputs("<p class=\"note\">No SM has enough blocks.</p>\n", p->f);
		ret = 0;
		goto out;
	}
	qsort(xs, n, sizeof(*xs), cmp_double);
	x0 = n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
	fputs("<figure>\n", p->f);
	scatter_svg(p, k, m->chain, med, count, m->n_sm, x0);
	fprintf(p->f, "<figcaption>One dot per SM: the median time of its blocks%s. Line: Theil&#8211;Sen, "
		"%.1f ns per cycle of latency; band: its 95%% CI [%.1f, %.1f] about the median latency "
		"(%.1f cycles). %d SMs, R&#178; ", bb.n == bb.max ? " (the first blocks only)" : "",
		k->fit.slope_ns, k->fit.slope_lo, k->fit.slope_hi, x0, n);
	num(p->f, "%.2f", k->fit.r2);
	fprintf(p->f, ", effect %.2f%% of a block (%s).</figcaption></figure>\n", k->fit.effect_pct,
		k->fit.confidence);
	ret = 0;
out:
	if (!ret)
		fputs("</div>\n", p->f);
	free(bb.b);
	free(med);
	free(xs);
	free(count);
	nt_map_free(m);
	nt_trace_close(t);
	return ret;
}

static int scatters(struct page *p, int shown)
{
	int drawn = 0;

	fputs("<h2>Block time vs SM latency</h2>\n<div class=\"plots\">\n", p->f);
	for (int i = 0; i < shown && drawn < SCATTER_KERNELS; i++) {
		const struct nt_report_kernel *k = &p->r->kernels[p->idx[i]];

		if (!k->fitted || !k->fit.fitted)
			continue;
		if (scatter(p, i, p->idx[i]))
			return -1;
		drawn++;
	}
	fputs("</div>\n", p->f);
	if (!drawn)
		fputs("<p class=\"note\">No kernel has a fit (no map, or too few SMs).</p>\n", p->f);
	return 0;
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

static int on_tl_scan(const struct nt_trace_block *b, void *arg)
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

static int on_tl_keep(const struct nt_trace_block *b, void *arg)
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

static int timeline(struct page *p)
{
	const struct nt_report *r = p->r;
	int ki = p->idx[0], rows, lanes, ret = -1;
	const struct nt_report_kernel *k = &r->kernels[ki];
	const struct nt_report_launch *best = NULL;
	struct tl tl = { .max_sm = -1 };
	struct nt_trace *t = NULL;

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
	if (nt_trace_open(r->traces[best->trace].path, &t, NULL) ||
	    nt_trace_foreach_block(t, best->launch, on_tl_scan, &tl, NULL))
		goto out;
	if (!tl.n) {
		fputs("<p class=\"note\">Its blocks name no SM in range.</p>\n", p->f);
		ret = 0;
		goto out;
	}
	if (!(tl.b = malloc((tl.n < TIMELINE_BLOCKS ? tl.n : TIMELINE_BLOCKS) * sizeof(*tl.b))) ||
	    nt_trace_foreach_block(t, best->launch, on_tl_keep, &tl, NULL))
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
	timeline_svg(p->f, &tl, rows, lanes, kname(k));
	fprintf(p->f, "<figcaption>A bar per block, coloured by its duration from %.3f &#181;s (dark "
		"blue) to %.3f &#181;s (yellow); blocks that ran at once on an SM are stacked in its row "
		"(up to %d).</figcaption></figure>\n", tl.dmin / 1e3, tl.dmax / 1e3, lanes);
	ret = 0;
out:
	free(tl.b);
	nt_trace_close(t);
	return ret;
}

static int write_html(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	struct page p = { .f = f, .r = r };
	int *idx = NULL, *rank = NULL, shown, ret = -1;

	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<title>nucatrace report</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
	traces(f, r);
	if (r->n_launches) {
		idx = nt_report_rank_kernels(r);
		rank = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*rank));
		if (!idx || !rank)
			goto out;
		for (int i = 0; i < r->n_kernels; i++)
			rank[idx[i]] = i;
		p.idx = idx, p.rank = rank;
		program(f, r);
	} else {
		fputs("<p>No traced launches: nothing to attribute (kernels-mode traces have no block "
		      "records).</p>\n", f);
	}
	if (heatmaps(&p))
		goto out;
	if (r->n_launches) {
		shown = o->top > 0 && o->top < r->n_kernels ? o->top : r->n_kernels;
		kernels(f, r, idx, shown);
		if (scatters(&p, shown) || timeline(&p))
			goto out;
		launches(f, r, rank);
	}
	fputs("</body>\n</html>\n", f);
	ret = ferror(f) ? -1 : 0;
out:
	free(idx);
	free(rank);
	return ret;
}

const struct nt_format nt_format_html = { "html", write_html };
