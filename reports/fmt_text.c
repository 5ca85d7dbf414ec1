/* The report for people, at most 100 columns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "util/text.h"

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* s made safe (util/text.h), in lines of at most WIDTH columns after an
 * indent of INDENT, broken at spaces (a word longer than a line where it
 * reaches the end, between characters). */
#define WIDTH 100
#define INDENT 11
static void wrapped_at(FILE *f, const char *s, int indent, int hang)
{
	char buf[NT_TEXT_ROOM(WIDTH)];
	const char *p = s;

	for (int first = 1; *p; first = 0) {
		if (!first && hang) {	/* the lines after the first hang under it */
			indent += hang;
			hang = 0;
		}
		size_t n = strlen(p), cut = n;
		char *line;

		if (n > (size_t)(WIDTH - indent)) {
			for (cut = WIDTH - indent; cut > 0 && p[cut] != ' '; cut--)
				;
			for (cut = cut ? cut : (size_t)(WIDTH - indent); cut > 1 && (p[cut] & 0xc0) == 0x80;)
				cut--;
		}
		line = strndup(p, cut);
		fprintf(f, "%*s%s\n", indent, "", nt_text_safe(buf, sizeof(buf), line ? line : "", WIDTH - indent));
		free(line);
		p += cut;
		p += strspn(p, " ");
	}
}

static void wrapped(FILE *f, const char *s)
{
	wrapped_at(f, s, INDENT, 0);
}

/* v as fmt prints it, or "-" when it is not a number (NAN: R^2 of SM
 * medians that do not vary): a result is never printed as nan. */
static const char *num(char *buf, size_t len, const char *fmt, double v)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, len, fmt, v);
	return buf;
}

/* What the trace says was not traced, by reason (most first): each
 * reason after its count, its lines hanging under its first. */
static void drops(FILE *f, const struct nt_report_trace *t)
{
	/* the counts right-aligned under the largest, the first */
	int width = t->n_drops ? snprintf(NULL, 0, "%lld", (long long)t->drops[0].count) : 0;

	if (t->dropped < 0) {
		wrapped(f, "its drops table cannot be read: what was not traced is not known");
		return;
	}
	if (!t->dropped)
		return;
	fprintf(f, "%*s%lld launch%s picked but not traced, by the trace's reasons:\n", INDENT, "",
		(long long)t->dropped, t->dropped == 1 ? "" : "es");
	for (int d = 0; d < t->n_drops; d++) {
		size_t len = strlen(t->drops[d].reason) + 32;
		char *line = malloc(len);
		int n;

		if (!line)
			return;
		n = snprintf(line, len, "%*lld  %s", width, (long long)t->drops[d].count, t->drops[d].reason);
		wrapped_at(f, line, INDENT + 2, n - (int)strlen(t->drops[d].reason));
		free(line);
	}
	if (t->dropped_other)
		fprintf(f, "%*s%lld more, for other reasons\n", INDENT + 2, "", (long long)t->dropped_other);
}

static void header(FILE *f, const struct nt_report *r)
{
	int64_t traced = 0;

	for (int i = 0; i < r->n_traces; i++)
		traced += r->traces[i].traced;
	fprintf(f, "nucatrace report: %d trace%s, %lld traced launches, %lld blocks\n", r->n_traces,
		r->n_traces == 1 ? "" : "s", (long long)traced, (long long)r->blocks);
	for (int i = 0; i < r->n_traces; i++) {
		const struct nt_report_trace *t = &r->traces[i];
		char gpu[NT_TEXT_ROOM(96)], uuid[NT_TEXT_ROOM(NT_UUID_LEN)];
		char mode[NT_TEXT_ROOM(16)];

		fprintf(f, "  trace %d  ", i + 1);
		nt_text_put(f, t->path);
		fputc('\n', f);
		if (t->n_devices)
			fprintf(f, "           %s %s, %d SMs\n", nt_text_safe(gpu, sizeof(gpu), t->gpu, 0),
				nt_text_safe(uuid, sizeof(uuid), t->uuid, 0), t->sm_count);
		else
			fprintf(f, "           no device recorded\n");
		fprintf(f, "           %s mode, %lld of %lld launches traced",
			t->backend[0] ? nt_text_safe(mode, sizeof(mode), t->backend, 0) : "?",
			(long long)t->traced, (long long)t->launches);
		if (t->rank >= 0)
			fprintf(f, ", rank %d", t->rank);
		fprintf(f, "%s\n", t->traced && !t->has_map ? "; no map: no placement analysis" : "");
		if (!t->complete)
			wrapped(f, "incomplete: its process did not finish writing it (it ended by a signal or "
				   "_exit(), or a write failed); what it holds is reported");
		if (t->traced && !t->has_map)
			wrapped(f, t->no_map);
		if (t->skipped) {
			fprintf(f, "%*s%lld traced launch%s left out for bad rows; the first:\n", INDENT, "",
				(long long)t->skipped, t->skipped == 1 ? "" : "es");
			wrapped(f, t->skipped_why);
		}
		drops(f, t);
	}
}

/* The launches the replay could not reproduce, each with why: they are
 * left out of every figure below. */
#define LEFT_OUT_SHOWN 10
static void left_out(FILE *f, const struct nt_report *r)
{
	int shown = 0, n = r->replayed - r->credible;

	if (n <= 0)
		return;
	fprintf(f, "                     left out of the figures below:\n");
	for (size_t i = 0; i < r->n_launches && shown < LEFT_OUT_SHOWN; i++) {
		const struct nt_report_launch *l = &r->launches[i];
		char line[NT_TEXT_ROOM(WIDTH)];

		if (!l->ok || fabs(l->r.error_pct) <= NT_REPORT_MAX_REPLAY_ERR)
			continue;
		snprintf(line, sizeof(line), "- trace %d launch %lld: %s", l->trace + 1, (long long)l->launch,
			 l->why);
		wrapped_at(f, line, 21, 2);
		shown++;
	}
	if (n > shown)
		fprintf(f, "%*s... and %d more (--launches lists them all)\n", 21, "", n - shown);
}

/* The probe effect (report.h): what the native times say. */
static void probe(FILE *f, const struct nt_report *r)
{
	int known = r->probe_known, unknown = r->probe_unknown;

	fprintf(f, "  probe effect       ");
	if (!known) {
		fprintf(f, "unknown: no native times for its kernels (figures in traced time)\n");
		return;
	}
	int corrected = 0, shape = 0, calibrated = 0;
	double r_cal = NAN;

	fprintf(f, "native times of %d of %d kernels set the figures below in native time;\n", known,
		known + unknown);
	for (int i = 0; i < r->n_kernels; i++)
		corrected += r->kernels[i].probe_corrected;
	for (int i = 0; i < r->n_traces; i++) {
		shape += r->traces[i].probe_shape_kernels;
		calibrated += r->traces[i].probe_shape_calibrated;
		if (isnan(r_cal))
			r_cal = r->traces[i].probe_shape_r_calib;
	}
	if (corrected && shape)
		fprintf(f, "                     %d kernels' block times had the instrumentation's per-SM cost\n"
			   "                     taken off before their fit (its shape from %d kernels that are\n"
			   "                     mostly instrumentation%s)\n", corrected, shape,
			calibrated ? "; for some traces, calibrate's" : "");
	else if (corrected)
		fprintf(f, "                     %d kernels' block times had the instrumentation's per-SM cost\n"
			   "                     taken off before their fit (its shape from calibrate's probe\n"
			   "                     cost: the traces have too few kernels that are mostly\n"
			   "                     instrumentation)\n", corrected);
	if (!isnan(r_cal))
		fprintf(f, "                     the traces' own probe shape against calibrate's: r = %.2f\n",
			r_cal);
	if (r->probe_left_out)
		fprintf(f, "                     left out: %d launches (%.3f ms traced, %.1f%%) of kernels whose\n"
			   "                     instrumentation took %.0f%%+ of their time: not measurable here\n",
			r->probe_left_out, r->probe_left_out_ns / 1e6, pct(r->probe_left_out_ns, r->time_ns),
			100 * NT_REPORT_PROBE_MAX);
}

static void program(FILE *f, const struct nt_report *r)
{
	double t = r->time_ns_credible;

	fprintf(f, "\nprogram, over its traced launches: GPU time %.3f ms in %d launches\n",
		r->time_ns / 1e6, r->replayed);
	if (r->entry_launches)
		fprintf(f, "  block times        inferred from starts (entry-only tracing) in %d launches; of them\n"
			   "                     %d ran in one wave: their block times cannot be known, not replayed\n",
			r->entry_launches, r->ends_unknown);
	if (r->entry_launches && r->entry_launches < (int)r->n_launches)
		fprintf(f, "                     measured in the other %d (traced in full: --blocks mixed)\n",
			(int)r->n_launches - r->entry_launches);
	fprintf(f, "  replay check       the dispatch replay reproduces the measured makespan within\n"
		   "                     %.0f%% on %d of %d launches, %.1f%% of the GPU time (largest error %.2f%%)\n",
		NT_REPORT_MAX_REPLAY_ERR, r->credible, r->replayed,
		pct(r->traced_credible_ns + r->probe_left_out_ns + r->collective_left_out_ns, r->time_ns),
		r->replay_err_max_pct);
	left_out(f, r);
	probe(f, r);
	if (r->collective_left_out)
		fprintf(f, "  collectives        left out: %d launches (%.3f ms traced, %.1f%%) of collectives, which\n"
			   "                     wait for the other ranks (the job view below lines ranks up at them)\n",
			r->collective_left_out, r->collective_left_out_ns / 1e6,
			pct(r->collective_left_out_ns, r->time_ns));
	fprintf(f, "  over the %d launches summed (%.3f ms native where known, %.3f ms traced):\n",
		r->credible - r->probe_left_out - r->collective_left_out, t / 1e6, r->traced_credible_ns / 1e6);
	fprintf(f, "  lost to slow SMs   %10.3f ms %6.1f%%  every SM as fast as the average SM\n",
		r->lost_ns / 1e6, pct(r->lost_ns, t));
	fprintf(f, "  recoverable        %10.3f ms %6.1f%%  placement-aware schedule (longest blocks\n"
		   "                                          first, each to the SM that ends it first)\n",
		r->recoverable_ns / 1e6, pct(r->recoverable_ns, t));
	fprintf(f, "    by the map       %10.3f ms %6.1f%%  longest first either way, placed by SM speed\n",
		r->placement_ns / 1e6, pct(r->placement_ns, t));
	fprintf(f, "    by reordering    %10.3f ms %6.1f%%  longest first, the map ignored\n",
		(r->recoverable_ns - r->placement_ns) / 1e6, pct(r->recoverable_ns - r->placement_ns, t));
	fprintf(f, "  tail (last wave)   %10.3f ms %6.1f%%  not placement\n", r->tail_ns / 1e6,
		pct(r->tail_ns, t));
	fprintf(f, "  as persistent      %10.3f ms %6.1f%%  the same work split over every SM's slots,\n"
		   "                                          each SM's share in proportion to its speed\n",
		r->persist_ns / 1e6, pct(r->persist_ns, t));
	fprintf(f, "    by the map       %10.3f ms %6.1f%%  shares by SM speed, not equal shares\n",
		r->rebalance_ns / 1e6, pct(r->rebalance_ns, t));
	fprintf(f, "    by the shape     %10.3f ms %6.1f%%  one even persistent wave, not this grid\n",
		r->quantisation_ns / 1e6, pct(r->quantisation_ns, t));
}

/* The graph execs (report_graphs.c), when the traces have node launches. */
static void graphs(FILE *f, const struct nt_report *r)
{
	if (!r->n_graphs)
		return;
	fprintf(f, "\nCUDA graphs: their traced kernel node launches, by graph exec (lost and\n"
		   "recoverable as for the program, over the credible ones)\n");
	fprintf(f, "  trace  graph  launches  node launches  a launch, ms   GPU ms   lost%%  recov%%\n");
	for (int i = 0; i < r->n_graphs; i++) {
		const struct nt_report_graph *g = &r->graphs[i];

		fprintf(f, "  %5d  %5lld  %8d  %13d  %12.3f  %7.3f  %6.1f  %6.1f\n", g->trace + 1,
			(long long)g->graph, g->launches, g->nodes, g->span_ns / 1e6, g->time_ns / 1e6,
			pct(g->lost_ns, g->time_ns_credible), pct(g->recoverable_ns, g->time_ns_credible));
	}
	fprintf(f, "  (a launch: its first node's start to its last node's end, the median over its "
		   "traced launches)\n");
}

static void shuffle_check(FILE *f, const struct nt_report *r)
{
	const struct nt_report_check *c = &r->check;

	fprintf(f, "  verdict            %d kernel%s L2-sensitive at a false discovery rate of %g%%\n", r->sensitive,
		r->sensitive == 1 ? "" : "s", 100 * NT_REPORT_FDR);
	if (!c->done)
		return;
	fprintf(f, "  shuffle check      against %d maps with their TPCs shuffled at random (no physics), the\n"
		   "                     verdicts of %d kernels: %d of %d called L2-sensitive (%.2f%%), on %d\n"
		   "                     map%s (at most %d on one); %d passed the shuffle test alone\n",
		c->maps, c->kernels, c->sensitive, c->judged, 100 * c->rate, c->maps_any, c->maps_any == 1 ? "" : "s",
		c->max_per_map, c->significant);
}

/* The job view (core/report/job.h). */
#define STEPS_SHOWN 20
static const char *const align_how[] = {
	[NT_JOB_UNALIGNED] = "",
	[NT_JOB_BY_ORDER] = "at the ranks' collectives in order (every launch traced)",
	[NT_JOB_BY_LAUNCH] = ("at collectives of the same launch number (sampled: a launch counts when "
			      "traced on every rank)"),
};

static void job_ranks(FILE *f, const struct nt_report *r, const struct nt_report_job *j)
{
	fprintf(f, "  %4s %5s  %-12s %8s %7s %10s %9s %9s  %s\n", "rank", "trace", "GPU", "map mean",
		"spread", "time ms", "lost ms", "recov ms", "last in");
	for (int i = 0; i < j->n_ranks; i++) {
		const struct nt_job_rank *k = &j->ranks[i];
		const struct nt_report_trace *t = &r->traces[k->trace];
		char uuid[NT_TEXT_ROOM(NT_UUID_LEN)], mean[32], spread[32];

		/* "GPU-" and 8 hex digits tell H200s apart; the header has all of it */
		fprintf(f, "  %4d %5d  %-12.12s %8s %6s%% %10.3f %9.3f %9.3f  %d of %d steps\n", k->rank, k->trace + 1,
			nt_text_safe(uuid, sizeof(uuid), k->device >= 0 ? r->devices[k->device].uuid : t->uuid, 0),
			num(mean, sizeof(mean), "%.2f", k->map_mean), num(spread, sizeof(spread), "%.1f", k->map_spread_pct),
			t->time_ns_credible / 1e6, t->lost_ns / 1e6, t->recoverable_ns / 1e6, k->last, j->judged);
	}
}

static void job_steps(FILE *f, const struct nt_report_job *j, int all)
{
	int shown = all || j->n_steps <= STEPS_SHOWN ? j->n_steps : STEPS_SHOWN;

	fprintf(f, "  %4s %7s %5s %11s %9s %6s %9s %10s %12s  %s\n", "step", "launch", "last", "compute ms",
		"lead ms", "lead%", "lost ms", "explained", "job gain ms", "measured");
	for (int i = 0; i < shown; i++) {
		const struct nt_job_step *s = &j->steps[i];
		char e[32];

		fprintf(f, "  %4d %7lld ", i + 1, (long long)s->launch);
		if (!s->judged) {
			fprintf(f, "  not judged: no launch of it traced on every rank\n");
			continue;
		}
		fprintf(f, "%5d %11.3f %9.3f %5.1f%% %9.3f %10s %12.3f  %d of %lld\n", j->ranks[s->last].rank,
			s->cells[s->last].compute_ns / 1e6, s->lead_ns / 1e6,
			pct(s->lead_ns, s->cells[s->last].compute_ns), s->lost_ns / 1e6,
			isfinite(s->explained) ? (snprintf(e, sizeof(e), "%.1f%%", 100 * s->explained), e) : "-",
			s->job_lost_ns / 1e6, s->cells[s->last].measured, (long long)s->step_launches);
	}
	if (shown < j->n_steps)
		fprintf(f, "  ... and %d more steps (--launches or --json lists them all)\n", j->n_steps - shown);
}

static void job(FILE *f, const struct nt_report *r, const struct nt_report_job *j, const struct nt_format_opts *o)
{
	char line[1024];

	fprintf(f, "\njob: %d ranks of one program (traces", j->n_ranks);
	for (int i = 0; i < j->n_ranks; i++)
		fprintf(f, "%s %d", i ? "," : "", j->ranks[i].trace + 1);
	fprintf(f, ")\n");
	/* a command of thousands of arguments would bury the view */
	wrapped_at(f, nt_text_safe(line, sizeof(line), r->traces[j->ranks[0].trace].cmdline, 300), 2, 2);
	job_ranks(f, r, j);
	if (j->note[0]) {
		snprintf(line, sizeof(line), "note: %s", j->note);
		wrapped_at(f, line, 2, 2);
	}
	if (!j->n_steps) {
		snprintf(line, sizeof(line), "no steps: %s", j->why);
		wrapped_at(f, line, 2, 2);
		return;
	}
	snprintf(line, sizeof(line), "%d steps lined up %s: %d judged, %d complete on every rank; a step is "
		 "each rank's compute up to a collective, the last rank the one with the most", j->n_steps,
		 align_how[j->align], j->judged, j->complete);
	wrapped_at(f, line, 2, 2);
	job_steps(f, j, o->launches);
	if (!j->judged)
		return;
	snprintf(line, sizeof(line), "over the %d judged steps the last rank led by %.3f ms in all (%.1f%% of the "
		 "%.3f ms it computed); slow SMs under its blocks explain %.3f ms of that (%.1f%%). Had no rank "
		 "lost time to slow SMs, each step's last rank would have been done %.3f ms (%.1f%%) sooner. "
		 "Lost time is against each GPU's own average SM: a GPU slower as a whole (map mean) is not "
		 "in it.", j->judged, j->lead_ns / 1e6, pct(j->lead_ns, j->critical_ns), j->critical_ns / 1e6,
		 j->explained_ns / 1e6, pct(j->explained_ns, j->lead_ns), j->job_lost_ns / 1e6,
		 pct(j->job_lost_ns, j->critical_ns));
	wrapped_at(f, line, 2, 2);
}

/* The verdict in a table cell: yes, no, other, n/m (not measurable). */
static const char *verdict_cell(const struct nt_report_kernel *k)
{
	switch (k->verdict) {
	case NT_VERDICT_SENSITIVE:
		return "yes";
	case NT_VERDICT_OTHER:
		return "other";
	case NT_VERDICT_NOT_MEASURABLE:
		return "n/m";
	case NT_VERDICT_COLLECTIVE:
		return "coll";
	default:
		return "no";
	}
}

static void fit_cell(char *buf, size_t len, const struct nt_report_kernel *k)
{
	if (nt_report_no_fit(k))
		snprintf(buf, len, "%-6s %-28s", k->verdict == NT_VERDICT_NOT_MEASURABLE ? "n/m" : "-",
			 nt_report_no_fit(k));
	else
		snprintf(buf, len, "%-6s %8.1f [%7.1f, %7.1f]   ", verdict_cell(k), k->fit.slope_ns,
			 k->fit.slope_lo, k->fit.slope_hi);
}

static void kernels(FILE *f, const struct nt_report *r, const int *idx, const struct nt_format_opts *o)
{
	int shown;

	shown = o->top > 0 && o->top < r->n_kernels ? o->top : r->n_kernels;
	fprintf(f, "\nkernels by recoverable time%s\n", shown < r->n_kernels ? " (top ones)" : "");
	fprintf(f, "  %3s %8s %9s %10s  %-6s %-28s %6s %6s %6s %6s\n", "#", "launches", "blocks",
		"time ms", "L2-sen", "ns per cycle [95% CI]", "lost%", "recov%", "tail%", "pers%");
	for (int i = 0; i < shown; i++) {
		const struct nt_report_kernel *k = &r->kernels[idx[i]];
		char cell[64], name[NT_TEXT_ROOM(90)], r2[32];

		fit_cell(cell, sizeof(cell), k);
		fprintf(f, "  %3d %8d %9lld %10.3f  %s %6.1f %6.1f %6.1f %6.1f\n", i + 1, k->launches,
			(long long)k->blocks, k->time_ns / 1e6, cell, pct(k->lost_ns, k->time_ns_credible),
			pct(k->recoverable_ns, k->time_ns_credible), pct(k->tail_ns, k->time_ns_credible),
			pct(k->persist_ns, k->time_ns_credible));
		fprintf(f, "      %s\n", nt_text_safe(name, sizeof(name), k->demangled ? k->demangled : k->name, 90));
		fprintf(f, "      grid %dx%dx%d, block %dx%dx%d; replay error up to %.2f%%", k->grid[0],
			k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->replay_err_max_pct);
		if (k->credible < k->replayed)
			fprintf(f, ", %d of %d launches credible", k->credible, k->replayed);
		fputc('\n', f);
		if (k->entry_launches == k->launches && k->ends_unknown >= k->entry_launches)
			fprintf(f, "      block times unknown (entry-only tracing, every launch one wave: no SM "
				"started a block after its first ones)\n");
		else if (k->entry_launches && (k->fit_inferred || k->entry_launches == k->launches))
			fprintf(f, "      block times %s (entry-only tracing: a block ends where its SM starts a "
				"later one): %lld blocks fitted, %lld censored (each SM's last) left out; %d of %d "
				"launches in one wave, unknown\n", nt_report_block_times(k), (long long)k->fit_inferred,
				(long long)k->fit_censored, k->ends_unknown, k->entry_launches);
		else if (k->entry_launches)	/* --blocks mixed: fitted on the full launches */
			fprintf(f, "      block times measured (%d launch%s traced in full); %d entry-only launch%s "
				"gave none (%d in one wave)\n", k->launches - k->entry_launches,
				k->launches - k->entry_launches == 1 ? "" : "es", k->entry_launches,
				k->entry_launches == 1 ? "" : "es", k->ends_unknown);
		if (k->entry_launches && k->fit_inferred && k->entry_launches < k->launches)
			fprintf(f, "      %d launch%s traced in full replayed, not fitted (the exit site's cost is in "
				"their measured block times)\n", k->launches - k->entry_launches,
				k->launches - k->entry_launches == 1 ? "" : "es");
		if (k->fitted && k->fit.fitted) {
			char why[512];

			fprintf(f, "      slope x latency range %.2f%% of a block, R^2 %s, p %.2g (%d shuffled maps), "
				"q %.2g\n", k->fit.effect_pct, num(r2, sizeof(r2), "%.2f", k->fit.r2), k->fit.p_value,
				k->fit.shuffles, k->q_value);
			nt_report_verdict_text(k, why, sizeof(why));
			wrapped_at(f, why, 6, 2);
		} else if (k->fitted) {
			fprintf(f, "      no fit: %s\n", k->fit.reason);
		}
		if (k->verdict == NT_VERDICT_NOT_MEASURABLE && !(k->fitted && k->fit.fitted)) {
			char why[512];

			nt_report_verdict_text(k, why, sizeof(why));
			wrapped_at(f, why, 6, 2);
		}
		if (isfinite(k->probe_share) && k->verdict != NT_VERDICT_NOT_MEASURABLE)
			fprintf(f, "      native %.1f us against %.1f us traced: instrumentation %.0f%%%s\n",
				k->native_ns / 1e3, k->traced_min_ns / 1e3, 100 * k->probe_share,
				k->probe_corrected ? ", its per-SM cost taken off" : "");
		fprintf(f, "      as persistent: %.1f%% by the map, %.1f%% by the shape of the grid\n",
			pct(k->rebalance_ns, k->time_ns_credible), pct(k->quantisation_ns, k->time_ns_credible));
	}
}

/* Launches, with their kernel's number in the table above (rank[]). */
static void launches(FILE *f, const struct nt_report *r, const int *rank)
{
	fprintf(f, "\nlaunches\n  %5s %8s %7s %12s %8s %8s %8s %6s %5s\n", "trace", "launch", "kernel",
		"makespan ns", "replay%", "lost%", "recov%", "waves", "slots");
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];
		char why[NT_TEXT_ROOM(192)];

		if (!l->ok) {
			fprintf(f, "  %5d %8lld %7d  not replayed: %s\n", l->trace + 1, (long long)l->launch,
				rank[l->kernel] + 1, nt_text_safe(why, sizeof(why), l->why, 0));
			continue;
		}
		fprintf(f, "  %5d %8lld %7d %12.0f %8.2f %8.2f %8.2f %6.2f %4d%s\n", l->trace + 1,
			(long long)l->launch, rank[l->kernel] + 1, l->r.measured_ns, l->r.error_pct, l->r.lost_pct,
			l->r.recoverable_pct, l->r.waves, l->slots, l->slots_observed ? "*" : "");
	}
	fprintf(f, "  (* slots as observed in the records, below the occupancy limit)\n");
}

static int write_text(FILE *f, const struct nt_report *r, const struct nt_format_opts *o)
{
	int *idx, *rank;

	header(f, r);
	if (!r->n_launches) {
		fprintf(f, "\nno traced launches: nothing to attribute (kernels-mode traces have no "
			   "block records)\n");
		return ferror(f) ? -1 : 0;
	}
	idx = nt_report_rank_kernels(r);
	rank = malloc((r->n_kernels ? r->n_kernels : 1) * sizeof(*rank));
	if (!idx || !rank) {
		free(idx);
		free(rank);
		return -1;
	}
	for (int i = 0; i < r->n_kernels; i++)
		rank[idx[i]] = i;
	program(f, r);
	shuffle_check(f, r);
	graphs(f, r);
	for (int i = 0; i < r->n_jobs; i++)
		job(f, r, &r->jobs[i], o);
	kernels(f, r, idx, o);
	if (o->launches)
		launches(f, r, rank);
	free(idx);
	free(rank);
	return ferror(f) ? -1 : 0;
}

const struct nt_format nt_format_text = { "text", write_text };
