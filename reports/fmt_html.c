/*
 * The report as one self-contained HTML page (--html FILE): the traces
 * and program figures, each GPU's SM latency heat map (the map the report
 * used: the trace's, else --map's or the store's), the kernels table, the
 * duration-vs-latency scatter of the top fitted kernels, a per-SM block
 * timeline of the top kernel's longest credible launch, and the
 * launches.  Inline SVG and a small style sheet; no script, nothing
 * fetched.  This file assembles the page; the scatters and the timeline
 * are fmt_html_svg.c's.
 *
 * Every string from a trace (paths, names, UUIDs, error text) goes
 * through nt_xml_escape(); numbers go through printf (LC_NUMERIC stays "C")
 * and only when finite, so the page is the same bytes for the same traces.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"
#include "fmt_html.h"
#include "format.h"
#include "map/heatmap.h"

static const char style[] =
	"body{font:14px/1.4 sans-serif;color:#222;max-width:1120px;margin:1em auto;padding:0 1em}\n"
	"h1{font-size:22px}h2{font-size:18px;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
	"h3{font-size:15px;margin-bottom:.3em}\n"
	"table{border-collapse:collapse;margin:.4em 0}\n"
	"th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:right;vertical-align:top}\n"
	"td{white-space:nowrap}td.n{white-space:normal;min-width:240px}td.w{white-space:normal;min-width:120px}\n"
	"th{background:#f2f2f2}.l{text-align:left}.bad{color:#a33}\n"
	"code{font-size:12px;overflow-wrap:anywhere}\n"
	"svg{max-width:100%;height:auto}figure{margin:.6em 0 1.2em}figcaption,.note{color:#666}\n"
	"summary{cursor:pointer;font-weight:bold}\n"
	".plots{display:flex;flex-wrap:wrap;gap:0 24px}.plots>div{flex:0 1 540px;min-width:0}\n";

void html_esc_short(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	char *cut;

	if (n <= max) {
		fputs("<code>", f);
		nt_xml_escape(f, s);
		fputs("</code>", f);
		return;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	if (!(cut = strndup(s, max)))
		return;
	fputs("<code title=\"", f);
	nt_xml_escape(f, s);
	fputs("\">", f);
	nt_xml_escape(f, cut);
	fputs("...</code>", f);
	free(cut);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

void html_num(FILE *f, const char *fmt, double v)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("&#8211;", f);
}

const char *html_kname(const struct nt_report_kernel *k)
{
	return k->demangled ? k->demangled : k->name;
}

/* the traces' GPUs and their maps */

/* The device to show GPU d of the report as: NULL when an earlier device
 * is of the same GPU (it is shown once), else the first of that GPU with
 * a map, one from a trace first, else d itself. */
static const struct nt_report_device *gpu_shown(const struct nt_report *r, int d)
{
	const struct nt_report_device *best = &r->devices[d];

	for (int i = 0; i < r->n_devices; i++) {
		const struct nt_report_device *e = &r->devices[i];

		if (strcmp(e->uuid, r->devices[d].uuid))
			continue;
		if (i < d)
			return NULL;
		if (e->map && (!best->map || (e->map_in_trace && !best->map_in_trace)))
			best = e;
	}
	return best;
}

/* nt_heatmap_svg's document of v[n], without its XML declaration and
 * with its gradient's id made unique in the page. */
static int put_heatmap(struct html_page *p, const double *v, int n, const char *title, const char *unit)
{
	char *buf = NULL, *s, *q;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	int ret, id = ++p->ids;

	if (!mf)
		return -1;
	ret = nt_heatmap_svg(mf, v, n, 0, title, unit);
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

/* The ranks of the report's jobs on GPU uuid, as " (rank 0, 2)"; "" when
 * none. */
static void gpu_ranks(FILE *f, const struct nt_report *r, const char *uuid)
{
	int n = 0;

	for (int j = 0; j < r->n_jobs; j++)
		for (int i = 0; i < r->jobs[j].n_ranks; i++) {
			const struct nt_job_rank *k = &r->jobs[j].ranks[i];

			if (k->device >= 0 && !strcmp(r->devices[k->device].uuid, uuid))
				fprintf(f, "%s%d", n++ ? ", " : " (rank ", k->rank);
		}
	if (n)
		fputc(')', f);
}

/* Each GPU's map, side by side (a job's GPUs compare at a glance), each
 * on its own colour scale. */
static int heatmaps(struct html_page *p)
{
	const struct nt_report *r = p->r;
	char title[192];
	int shown = 0;

	fputs("<h2>SM L2 latency</h2>\n<div class=\"plots\">\n", p->f);
	for (int i = 0; i < r->n_devices; i++) {
		const struct nt_report_device *g = gpu_shown(r, i);

		if (!g)
			continue;
		shown++;
		fputs("<div><h3>", p->f);
		nt_xml_escape(p->f, g->name);
		fputs(" <code>", p->f);
		nt_xml_escape(p->f, g->uuid);
		fputs("</code>", p->f);
		gpu_ranks(p->f, r, g->uuid);
		fputs("</h3>\n", p->f);
		if (!g->map) {
			fputs("<p class=\"note\">no map in the trace, nor one taken from --map or the store</p></div>\n",
			      p->f);
			continue;
		}
		fputs("<figure>\n", p->f);
		snprintf(title, sizeof(title), "SM L2 latency, %s %s", g->name, g->uuid);
		if (put_heatmap(p, g->map->chain, g->map->n_sm, title, "cycles"))
			return -1;
		fprintf(p->f, "<figcaption>Chain-map L2 hit latency per SM (smid order, 16 a row), from "
			"%s; its own colour scale.</figcaption></figure></div>\n", g->map_in_trace ?
			"the calibration map inside the trace" :
			"the map given with --map or the store's (the trace carries none)");
	}
	fputs("</div>\n", p->f);
	if (!shown)
		fputs("<p class=\"note\">The traces name no GPU.</p>\n", p->f);
	return 0;
}

/* Each trace's probe shape (core/report/report.h): what the
 * instrumentation costs a block on each SM, relative to the average SM,
 * from the trace's kernels that are mostly instrumentation. */
static int probe_shapes(struct html_page *p)
{
	const struct nt_report *r = p->r;
	char title[192];
	int any = 0;

	for (int t = 0; t < r->n_traces; t++) {
		const struct nt_report_trace *tr = &r->traces[t];
		const struct nt_map *m = NULL;
		int corrected = 0;

		if (!tr->probe_shape)
			continue;
		if (!any++)
			fputs("<h2>Instrumentation cost per SM</h2>\n<div class=\"plots\">\n", p->f);
		for (int d = 0; d < r->n_devices; d++)
			if (r->devices[d].trace == t && r->devices[d].device == tr->probe_shape_device)
				m = r->devices[d].map;
		for (int k = 0; k < r->n_kernels; k++)
			corrected += r->kernels[k].trace == t && r->kernels[k].probe_corrected;
		snprintf(title, sizeof(title), "Probe shape, trace %d, GPU %d", t + 1, tr->probe_shape_device);
		fputs("<div><figure>\n", p->f);
		if (put_heatmap(p, tr->probe_shape, tr->probe_shape_sm, title, "x average SM"))
			return -1;
		if (tr->probe_shape_calibrated)
			fprintf(p->f, "<figcaption>Per SM, what block tracing added to the blocks of calibrate's "
				"probe-cost kernels, over its mean (trace %d has too few kernels that are mostly "
				"instrumentation to give its own): where the instrumentation costs a block more. ",
				t + 1);
		else
			fprintf(p->f, "<figcaption>Per SM, the mean block time of the %d kernels of trace %d that "
				"are mostly instrumentation, over their mean: where the instrumentation costs a "
				"block more. ", tr->probe_shape_kernels, t + 1);
		if (!isnan(tr->probe_shape_r_calib))
			fprintf(p->f, "r with calibrate's probe cost %.2f. ", tr->probe_shape_r_calib);
		if (m && m->n_sm == tr->probe_shape_sm)
			fprintf(p->f, "r with the L2 map %.2f. ", nt_pearson(tr->probe_shape, m->chain, m->n_sm));
		fprintf(p->f, "Taken off the blocks of %d kernels before their fit.</figcaption></figure></div>\n",
			corrected);
	}
	if (any)
		fputs("</div>\n", p->f);
	return 0;
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
		nt_xml_escape(f, t->path);
		fputs("</code></td><td class=\"l\">", f);
		nt_xml_escape(f, t->gpu);
		fputs("</td><td class=\"l\"><code>", f);
		nt_xml_escape(f, t->uuid);
		fprintf(f, "</code></td><td>%d</td><td class=\"l\">", t->sm_count);
		nt_xml_escape(f, t->backend[0] ? t->backend : "?");
		fprintf(f, "</td><td>%lld</td><td>%lld</td><td>", (long long)t->traced, (long long)t->launches);
		if (t->rank >= 0)
			fprintf(f, "%d", t->rank);
		else
			fputs("&#8211;", f);
		fprintf(f, "</td><td class=\"l\">%s", !t->traced ? "&#8211;" : t->has_map ? "yes" :
			"none: no placement analysis (");
		if (t->traced && !t->has_map) {
			nt_xml_escape(f, t->no_map);
			fputc(')', f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	for (int i = 0; i < r->n_traces; i++)
		if (!r->traces[i].complete)
			fprintf(f, "<p class=\"note\">Trace %d is incomplete: its process did not finish writing "
				   "it (it ended by a signal or _exit(), or a write failed); what it holds is "
				   "reported.</p>\n", i + 1);
	for (int i = 0; i < r->n_traces; i++) {
		const struct nt_report_trace *t = &r->traces[i];

		if (!t->skipped)
			continue;
		fprintf(f, "<p class=\"note\">Trace %d: %lld traced launch%s left out for bad rows; the "
			   "first: ", i + 1, (long long)t->skipped, t->skipped == 1 ? "" : "es");
		nt_xml_escape(f, t->skipped_why);
		fputs("</p>\n", f);
	}
	for (int i = 0; i < r->n_traces; i++) {
		const struct nt_report_trace *t = &r->traces[i];

		if (t->dropped < 0)
			fprintf(f, "<p class=\"note\">Trace %d: its drops table cannot be read: what was not "
				   "traced is not known.</p>\n", i + 1);
		if (t->dropped <= 0)
			continue;
		fprintf(f, "<p class=\"note\">Trace %d: %lld launch%s picked but not traced, by the trace's "
			   "reasons:</p>\n<ul class=\"note\">\n", i + 1, (long long)t->dropped,
			t->dropped == 1 ? "" : "es");
		for (int d = 0; d < t->n_drops; d++) {
			fprintf(f, "<li>%lld: ", (long long)t->drops[d].count);
			nt_xml_escape(f, t->drops[d].reason);
			fputs("</li>\n", f);
		}
		if (t->dropped_other)
			fprintf(f, "<li>%lld more, for other reasons</li>\n", (long long)t->dropped_other);
		fputs("</ul>\n", f);
	}
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
	if (r->probe_left_out || r->collective_left_out)
		fprintf(f, "<p>Left out too: %d launches of kernels the instrumentation dominates (not "
			"measurable here) and %d of collectives, which wait for the other ranks.</p>\n",
			r->probe_left_out, r->collective_left_out);
	fprintf(f, "<table>\n<tr><th class=\"l\">over the %d launches summed (%.3f ms)</th><th>ms</th>"
		"<th>%%</th><th class=\"l\"></th></tr>\n", r->credible - r->probe_left_out - r->collective_left_out,
		t / 1e6);
	figure_row(f, "lost to slow SMs", r->lost_ns, t, "every SM as fast as the average SM");
	figure_row(f, "recoverable", r->recoverable_ns, t,
		   "placement-aware schedule (longest blocks first, each to the SM that ends it first)");
	figure_row(f, "&#160;&#160;by the map", r->placement_ns, t,
		   "longest first either way, placed by SM speed");
	figure_row(f, "&#160;&#160;by reordering", r->recoverable_ns - r->placement_ns, t,
		   "longest first, the map ignored");
	figure_row(f, "tail (last wave)", r->tail_ns, t, "not placement");
	figure_row(f, "as persistent", r->persist_ns, t,
		   "the same work split over every SM's slots, each SM's share in proportion to its speed");
	figure_row(f, "&#160;&#160;by the map", r->rebalance_ns, t, "shares by SM speed, not equal shares");
	figure_row(f, "&#160;&#160;by the shape", r->quantisation_ns, t,
		   "one even persistent wave, not this grid");
	fputs("</table>\n", f);
}

/* The graph execs (core/report/report_graphs.c). */
static void graphs(FILE *f, const struct nt_report *r)
{
	if (!r->n_graphs)
		return;
	fputs("<h2>CUDA graphs</h2>\n<p>Their traced kernel node launches, by graph exec; a launch: "
	      "its first node's start to its last node's end, the median over its traced launches; "
	      "lost and recoverable as for the program, over the credible node launches.</p>\n"
	      "<table>\n<tr><th>trace</th><th>graph</th><th>launches</th><th>node launches</th>"
	      "<th>a launch, ms</th><th>GPU ms</th><th>lost %</th><th>recoverable %</th></tr>\n", f);
	for (int i = 0; i < r->n_graphs; i++) {
		const struct nt_report_graph *g = &r->graphs[i];

		fprintf(f, "<tr><td>%d</td><td>%lld</td><td>%d</td><td>%d</td><td>", g->trace + 1,
			(long long)g->graph, g->launches, g->nodes);
		html_num(f, "%.3f", g->span_ns / 1e6);
		fprintf(f, "</td><td>%.3f</td><td>%.1f</td><td>%.1f</td></tr>\n", g->time_ns / 1e6,
			pct(g->lost_ns, g->time_ns_credible), pct(g->recoverable_ns, g->time_ns_credible));
	}
	fputs("</table>\n", f);
}

/* The job view (core/report/job.h): its ranks, then its steps. */
#define JOB_RANK_COLUMNS 8	/* ranks whose compute gets a column of its own */

static void job_ranks(FILE *f, const struct nt_report *r, const struct nt_report_job *j)
{
	fputs("<table>\n<tr><th>rank</th><th>trace</th><th class=\"l\">GPU</th><th>map mean (cycles)</th>"
	      "<th>spread %</th><th>time ms</th><th>lost ms</th><th>recoverable ms</th><th>collectives</th>"
	      "<th>last in steps</th></tr>\n", f);
	for (int i = 0; i < j->n_ranks; i++) {
		const struct nt_job_rank *k = &j->ranks[i];
		const struct nt_report_trace *t = &r->traces[k->trace];

		fprintf(f, "<tr><td>%d</td><td>%d</td><td class=\"l\"><code>", k->rank, k->trace + 1);
		nt_xml_escape(f, k->device >= 0 ? r->devices[k->device].uuid : t->uuid);
		fputs("</code></td><td>", f);
		html_num(f, "%.2f", k->map_mean);
		fputs("</td><td>", f);
		html_num(f, "%.1f", k->map_spread_pct);
		fprintf(f, "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%d</td><td>%d of %d</td></tr>\n",
			t->time_ns_credible / 1e6, t->lost_ns / 1e6, t->recoverable_ns / 1e6, k->collectives, k->last,
			j->judged);
	}
	fputs("</table>\n", f);
}

static void job_steps(FILE *f, const struct nt_report_job *j)
{
	int cols = j->n_ranks <= JOB_RANK_COLUMNS;

	fputs("<table>\n<tr><th>step</th><th>launch</th><th>last rank</th>", f);
	for (int i = 0; cols && i < j->n_ranks; i++)
		fprintf(f, "<th>rank %d compute ms</th>", j->ranks[i].rank);
	fputs("<th>lead ms</th><th>lead %</th><th>lost ms (last rank)</th><th>explained %</th>"
	      "<th>job gain ms</th><th>measured</th></tr>\n", f);
	for (int i = 0; i < j->n_steps; i++) {
		const struct nt_job_step *s = &j->steps[i];
		const struct nt_job_cell *c = s->judged ? &s->cells[s->last] : NULL;

		fprintf(f, "<tr><td>%d</td><td>%lld</td>", i + 1, (long long)s->launch);
		if (!c) {
			fprintf(f, "<td class=\"l\" colspan=\"%d\">not judged: no launch of it traced on every "
				"rank</td></tr>\n", 7 + (cols ? j->n_ranks : 0));
			continue;
		}
		fprintf(f, "<td><b>%d</b></td>", j->ranks[s->last].rank);
		for (int q = 0; cols && q < j->n_ranks; q++)
			fprintf(f, "<td>%.3f</td>", s->cells[q].compute_ns / 1e6);
		fprintf(f, "<td>%.3f</td><td>%.1f</td><td>%.3f</td><td>", s->lead_ns / 1e6,
			pct(s->lead_ns, c->compute_ns), s->lost_ns / 1e6);
		html_num(f, "%.1f", 100 * s->explained);
		fprintf(f, "</td><td>%.3f</td><td>%d of %lld</td></tr>\n", s->job_lost_ns / 1e6, c->measured,
			(long long)s->step_launches);
	}
	fputs("</table>\n", f);
}

/* s escaped between two pieces of markup. */
static void escaped(FILE *f, const char *before, const char *s, const char *after)
{
	fputs(before, f);
	nt_xml_escape(f, s);
	fputs(after, f);
}

static void job(FILE *f, const struct nt_report *r, const struct nt_report_job *j)
{
	fprintf(f, "<h2>Job: %d ranks</h2>\n", j->n_ranks);
	escaped(f, "<p><code>", r->traces[j->ranks[0].trace].cmdline, "</code></p>\n");
	job_ranks(f, r, j);
	if (j->note[0])
		escaped(f, "<p class=\"note\">", j->note, "</p>\n");
	if (!j->n_steps) {
		escaped(f, "<p>No steps: ", j->why, ".</p>\n");
		return;
	}
	fprintf(f, "<p>%d steps lined up at the ranks' collectives %s: %d judged, %d complete on every rank. A "
		"step is each rank's compute up to a collective; the last rank is the one with the most.</p>\n",
		j->n_steps, j->align == NT_JOB_BY_ORDER ? "in order (every launch traced)" :
		"of the same launch number (sampled: a launch counts when traced on every rank)", j->judged,
		j->complete);
	if (j->n_steps > 20)
		fprintf(f, "<details><summary>%d steps</summary>\n", j->n_steps);
	job_steps(f, j);
	if (j->n_steps > 20)
		fputs("</details>\n", f);
	if (j->judged)
		fprintf(f, "<p>Over the %d judged steps the last rank led by <b>%.3f ms</b> in all (%.1f%% of the "
			"%.3f ms it computed); slow SMs under its blocks explain <b>%.3f ms</b> of that (%.1f%%). Had "
			"no rank lost time to slow SMs, each step's last rank would have been done %.3f ms (%.1f%%) "
			"sooner. Lost time is against each GPU's own average SM: a GPU slower as a whole (map "
			"mean) is not in it.</p>\n", j->judged, j->lead_ns / 1e6, pct(j->lead_ns, j->critical_ns),
			j->critical_ns / 1e6, j->explained_ns / 1e6, pct(j->explained_ns, j->lead_ns),
			j->job_lost_ns / 1e6, pct(j->job_lost_ns, j->critical_ns));
}

static void kernels(FILE *f, const struct nt_report *r, const int *idx, int shown)
{
	/* ten columns, secondary figures under the main ones, so that the
	 * table fits the page's width (1,120 pixels) */
	fprintf(f, "<h2>Kernels by recoverable time%s</h2>\n<table>\n<tr><th>#</th>"
		"<th class=\"l\">kernel</th><th>launches<br>blocks</th><th>time ms</th>"
		"<th class=\"l\">verdict</th><th>ns per cycle [95%% CI]<br>effect %%, p, q, R&#178;</th>"
		"<th>lost %%</th><th>recov %%</th><th>tail %%<br>persistent %%</th>"
		"<th>replay error %%<br>credible</th></tr>\n",
		shown < r->n_kernels ? " (top ones)" : "");
	for (int i = 0; i < shown; i++) {
		const struct nt_report_kernel *k = &r->kernels[idx[i]];
		int fit = k->fitted && k->fit.fitted;

		fprintf(f, "<tr><td>%d</td><td class=\"l n\">", i + 1);
		html_esc_short(f, html_kname(k), HTML_NAME_CHARS);
		fprintf(f, "<br>grid %dx%dx%d, block %dx%dx%d</td><td>%d<br>%lld</td><td>%.3f</td>",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->launches, (long long)k->blocks, k->time_ns / 1e6);
		if (fit) {
			char why[512];

			nt_report_verdict_text(k, why, sizeof(why));
			fputs("<td class=\"l w\"><span title=\"", f);
			nt_xml_escape(f, why);
			fprintf(f, "\">%s%s%s</span></td><td>", k->sensitive ? "<b>" : "",
				nt_report_verdict_name(k->verdict), k->sensitive ? "</b>" : "");
			html_num(f, "%.1f", k->fit.slope_ns);
			fputs(" [", f);
			html_num(f, "%.1f", k->fit.slope_lo);
			fputs(", ", f);
			html_num(f, "%.1f", k->fit.slope_hi);
			fputs("]<br>", f);
			html_num(f, "%.2f", k->fit.effect_pct);
			fputs(", ", f);
			html_num(f, "%.2g", k->fit.p_value);
			fputs(", ", f);
			html_num(f, "%.2g", k->q_value);
			fputs(", ", f);
			html_num(f, "%.2f", k->fit.r2);
			fputs("</td>", f);
		} else {
			fprintf(f, "<td class=\"l w\">%s</td><td class=\"l w\">%s</td>",
				k->verdict == NT_VERDICT_NOT_MEASURABLE ? nt_report_verdict_name(k->verdict) : "&#8211;",
				nt_report_no_fit(k));
		}
		fprintf(f, "<td>%.1f</td><td>%.1f</td><td>%.1f<br>%.1f</td><td>%.2f<br><span%s>%d of %d</span></td></tr>\n",
			pct(k->lost_ns, k->time_ns_credible), pct(k->recoverable_ns, k->time_ns_credible),
			pct(k->tail_ns, k->time_ns_credible), pct(k->persist_ns, k->time_ns_credible),
			k->replay_err_max_pct,
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
			nt_xml_escape(f, l->why);
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

static int write_html(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	struct html_page p = { .f = f, .r = r };
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
		graphs(f, r);
		for (int i = 0; i < r->n_jobs; i++)
			job(f, r, &r->jobs[i]);
	} else {
		fputs("<p>No traced launches: nothing to attribute (kernels-mode traces have no block "
		      "records).</p>\n", f);
	}
	if (heatmaps(&p) || probe_shapes(&p))
		goto out;
	if (r->n_launches) {
		shown = o->top > 0 && o->top < r->n_kernels ? o->top : r->n_kernels;
		kernels(f, r, idx, shown);
		html_scatters(&p, shown);
		if (html_timeline(&p))
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
