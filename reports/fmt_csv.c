/*
 * The report as CSV files in a folder, for pandas and spreadsheets:
 * kernels.csv (one row per kernel, the fit and the sums), launches.csv
 * (one row per traced launch, the replay), blocks.csv (every block
 * record of the analysed launches, as nt_report_foreach_block streams
 * them) and steps.csv (the job view: a row per step and rank; only the
 * header when the traces are no job).
 * The folder is made if missing; existing files are never overwritten,
 * and the files appear together or not at all (util/outfile.h).
 *
 * Cells are what a spreadsheet can take: a name is quoted, made safe as
 * text is for a terminal (util/text.h: control characters '?', bytes
 * that are not UTF-8 U+FFFD), and one that a spreadsheet would evaluate
 * as a formula (it starts with = + - @) gets a leading ' (docs/report.md);
 * a number that is not one (NAN) is an empty cell, never "nan".
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "util/text.h"

/* A text cell (above): quoted, quotes doubled (kernel names hold
 * commas); NULL is an empty cell. */
static void field(FILE *f, const char *s)
{
	size_t room = NT_TEXT_ROOM(s ? strlen(s) : 0);
	char *safe = s ? malloc(room) : NULL;

	fputc('"', f);
	if (safe) {
		nt_text_safe(safe, room, s, 0);
		if (strchr("=+-@", safe[0]) && safe[0])
			fputc('\'', f);
		for (const char *p = safe; *p; p++) {
			if (*p == '"')
				fputc('"', f);
			fputc(*p, f);
		}
	}
	fputc('"', f);
	free(safe);
}

/* ",v" in fmt, or "," when v is not a number. */
static void num(FILE *f, const char *fmt, double v)
{
	fputc(',', f);
	if (isfinite(v))
		fprintf(f, fmt, v);
}

static void kernels(FILE *f, const struct nt_report *r)
{
	fprintf(f, "kernel,trace,device,name,demangled,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
		   "launches,blocks,time_ns,credible,credible_time_ns,lost_ns,recoverable_ns,"
		   "recoverable_by_map_ns,tail_ns,replay_error_max_pct,verdict,sensitive,p_value,q_value,"
		   "slope_ns_per_cycle,slope_ci_low,slope_ci_high,r2,effect_pct,persistent_ns,"
		   "persistent_by_map_ns,persistent_by_shape_ns,native_ns,probe_share,probe_corrected,follows,"
		   "follows_r\n");
	for (int i = 0; i < r->n_kernels; i++) {
		const struct nt_report_kernel *k = &r->kernels[i];
		int fit = k->fitted && k->fit.fitted;

		fprintf(f, "%d,%d,%d,", i, k->trace, k->device);
		field(f, k->name);
		fputc(',', f);
		field(f, k->demangled);
		fprintf(f, ",%d,%d,%d,%d,%d,%d,%d,%lld", k->grid[0], k->grid[1], k->grid[2], k->block[0],
			k->block[1], k->block[2], k->launches, (long long)k->blocks);
		num(f, "%.0f", k->time_ns);
		fprintf(f, ",%d", k->credible);
		num(f, "%.0f", k->time_ns_credible);
		num(f, "%.1f", k->lost_ns);
		num(f, "%.1f", k->recoverable_ns);
		num(f, "%.1f", k->placement_ns);
		num(f, "%.1f", k->tail_ns);
		num(f, "%.4f", k->replay_err_max_pct);
		fputc(',', f);
		field(f, nt_report_verdict_name(k->verdict));
		if (fit) {
			fprintf(f, ",%d", k->sensitive);
			num(f, "%.6g", k->fit.p_value);
			num(f, "%.6g", k->q_value);
			num(f, "%.4f", k->fit.slope_ns);
			num(f, "%.4f", k->fit.slope_lo);
			num(f, "%.4f", k->fit.slope_hi);
			num(f, "%.4f", k->fit.r2);
			num(f, "%.4f", k->fit.effect_pct);
		} else {
			fprintf(f, ",,,,,,,");
		}
		num(f, "%.1f", k->persist_ns);
		num(f, "%.1f", k->rebalance_ns);
		num(f, "%.1f", k->quantisation_ns);
		num(f, "%.0f", k->native_ns > 0 ? k->native_ns : NAN);
		num(f, "%.4f", k->probe_share);
		fprintf(f, ",%d", k->probe_corrected);
		fputc(',', f);
		if (k->follows >= 0)
			field(f, nt_report_cov_name(k->follows));
		num(f, "%.4f", k->follows >= 0 ? k->follows_r : NAN);
		fputc('\n', f);
	}
}

/* launches.csv's columns from the replay, after slots: one list for
 * the header and the rows. */
#define REPLAY(name, fmt, member) { name, fmt, offsetof(struct nt_replay_result, member) }
static const struct {
	const char *name, *fmt;
	size_t off;
} replay_cols[] = {
	REPLAY("makespan_ns", "%.0f", measured_ns), REPLAY("replay_ns", "%.1f", replay_ns),
	REPLAY("replay_error_pct", "%.4f", error_pct), REPLAY("hardware_ns", "%.1f", hardware_ns),
	REPLAY("uniform_ns", "%.1f", uniform_ns), REPLAY("aware_ns", "%.1f", aware_ns),
	REPLAY("lost_ns", "%.1f", lost_ns), REPLAY("recoverable_ns", "%.1f", recoverable_ns),
	REPLAY("placement_ns", "%.1f", placement_ns), REPLAY("waves", "%.4f", waves),
	REPLAY("tail_ns", "%.1f", tail_ns), REPLAY("even_ns", "%.1f", even_ns),
	REPLAY("split_ns", "%.1f", split_ns),
};
#define N_REPLAY_COLS (sizeof(replay_cols) / sizeof(replay_cols[0]))

static void launches(FILE *f, const struct nt_report *r)
{
	fprintf(f, "trace,launch,kernel,replayed,slots");
	for (size_t c = 0; c < N_REPLAY_COLS; c++)
		fprintf(f, ",%s", replay_cols[c].name);
	fputc('\n', f);
	for (size_t i = 0; i < r->n_launches; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		fprintf(f, "%d,%lld,%d,%d,", l->trace, (long long)l->launch, l->kernel, l->ok);
		if (l->ok)
			fprintf(f, "%d", l->slots);
		for (size_t c = 0; c < N_REPLAY_COLS; c++) {
			double v;

			memcpy(&v, (const char *)&l->r + replay_cols[c].off, sizeof(v));
			if (l->ok)
				num(f, replay_cols[c].fmt, v);
			else
				fputc(',', f);
		}
		fputc('\n', f);
	}
}

struct bctx {
	FILE *f;
	const struct nt_report *r;
};

static int on_block(const struct nt_report_block *b, void *arg)
{
	const struct bctx *c = arg;
	const struct nt_report_launch *l = &c->r->launches[b->launch];

	fprintf(c->f, "%d,%lld,%lld,%d,%lld,%lld,%lld,%lld,%d,%s\n", l->trace, (long long)l->launch,
		(long long)b->block, b->sm, (long long)b->t_start_ns, (long long)b->t_end_ns,
		(long long)(b->t_end_ns - b->t_start_ns), (long long)b->cycles, b->warps,
		nt_report_end_name(b->end));
	return 0;
}

static int blocks(FILE *f, const struct nt_report *r, struct nt_err *err)
{
	struct bctx c = { f, r };

	fprintf(f, "trace,launch,block,sm,t_start_ns,t_end_ns,ns,cycles,warps,end\n");
	return nt_report_foreach_block(r, 0, r->n_launches, on_block, &c, err);
}

/* The job view (core/report/job.h): each step's verdict on every row of
 * it, then the rank's part. */
static void steps(FILE *f, const struct nt_report *r)
{
	fprintf(f, "job,step,launch,complete,judged,last_rank,lead_ns,explained,job_lost_ns,rank,trace,"
		   "collective_launch,launches,measured,compute_ns,lost_ns,span_ns,wait_ns\n");
	for (int j = 0; j < r->n_jobs; j++) {
		const struct nt_report_job *jb = &r->jobs[j];

		for (int i = 0; i < jb->n_steps; i++) {
			const struct nt_job_step *s = &jb->steps[i];

			for (int q = 0; q < jb->n_ranks; q++) {
				const struct nt_job_cell *c = &s->cells[q];

				fprintf(f, "%d,%d,%lld,%d,%d,", j, i + 1, (long long)s->launch, s->complete, s->judged);
				if (s->judged)
					fprintf(f, "%d", jb->ranks[s->last].rank);
				num(f, "%.1f", s->judged ? s->lead_ns : NAN);
				num(f, "%.4f", s->judged ? s->explained : NAN);
				num(f, "%.1f", s->judged ? s->job_lost_ns : NAN);
				fprintf(f, ",%d,%d,%lld,%d,%d", jb->ranks[q].rank, jb->ranks[q].trace,
					(long long)r->launches[c->collective].launch, c->launches, c->measured);
				num(f, "%.1f", c->compute_ns);
				num(f, "%.1f", c->lost_ns);
				num(f, "%.0f", c->span_ns);
				num(f, "%.0f", c->wait_ns);
				fputc('\n', f);
			}
		}
	}
}

static const char *const files[NT_REPORT_CSV_FILES] = { "kernels.csv", "launches.csv", "blocks.csv", "steps.csv" };

void nt_report_csv_abort(struct nt_report_csv *c)
{
	for (int i = 0; i < NT_REPORT_CSV_FILES; i++)
		nt_outfile_abort(&c->f[i]);
	if (c->made_dir)
		rmdir(c->dir);
	free(c->dir);
	memset(c, 0, sizeof(*c));
}

int nt_report_csv_open(struct nt_report_csv *c, const char *dir, struct nt_err *err)
{
	char path[4096];

	memset(c, 0, sizeof(*c));
	if (!(c->dir = strdup(dir)))
		return nt_err_set(err, "out of memory");
	if (!mkdir(dir, 0777))
		c->made_dir = 1;
	else if (errno != EEXIST) {
		nt_err_set(err, "cannot create folder '%s': %s", dir, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < NT_REPORT_CSV_FILES; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, files[i]) >= (int)sizeof(path)) {
			nt_err_set(err, "--csv: path too long");
			goto fail;
		}
		if (nt_outfile_open(&c->f[i], path, err))
			goto fail;
	}
	return 0;
fail:
	nt_report_csv_abort(c);
	return -1;
}

int nt_report_csv_write(struct nt_report_csv *c, const struct nt_report *r, struct nt_err *err)
{
	char path[4096];
	int done = 0;

	kernels(c->f[0].f, r);
	launches(c->f[1].f, r);
	steps(c->f[3].f, r);
	if (blocks(c->f[2].f, r, err))
		goto fail;
	for (; done < NT_REPORT_CSV_FILES; done++)
		if (nt_outfile_commit(&c->f[done], err))
			goto fail;
	free(c->dir);
	memset(c, 0, sizeof(*c));
	return 0;
fail:
	/* none or all: the files already in place go too */
	for (int i = 0; i < done; i++) {
		snprintf(path, sizeof(path), "%s/%s", c->dir, files[i]);
		unlink(path);
	}
	nt_report_csv_abort(c);
	return -1;
}
