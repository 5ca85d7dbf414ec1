#include "analysis/summary.h"
#include "util/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Exact two-means in one dimension: sort, then try every split point
 * with prefix sums and keep the one with the least within-group sum of
 * squares. */
void nt_split2(const double *v, size_t n, struct nt_split2 *s)
{
	double *t = malloc((n ? n : 1) * sizeof(*t)), *pre = NULL, *pre2 = NULL, best = INFINITY;
	size_t k = 0, cut = 0;

	memset(s, 0, sizeof(*s));
	s->low = s->high = s->low_frac = s->threshold = s->separation = NAN;
	if (!t)
		return;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			t[k++] = v[i];
	s->n = (int)k;
	if (k < 2 || !(pre = calloc(k + 1, sizeof(*pre))) || !(pre2 = calloc(k + 1, sizeof(*pre2))))
		goto out;
	qsort(t, k, sizeof(*t), cmp_double);
	for (size_t i = 0; i < k; i++) {
		pre[i + 1] = pre[i] + t[i];
		pre2[i + 1] = pre2[i] + t[i] * t[i];
	}
	for (size_t c = 1; c < k; c++) {
		double n1 = c, n2 = k - c;
		double ss = pre2[k] - pre[c] * pre[c] / n1 - (pre[k] - pre[c]) * (pre[k] - pre[c]) / n2;

		if (ss < best)
			best = ss, cut = c;
	}
	s->low = pre[cut] / cut;
	s->high = (pre[k] - pre[cut]) / (k - cut);
	s->low_frac = (double)cut / k;
	s->threshold = t[cut - 1];
	s->separation = best > 0 ? (s->high - s->low) / sqrt(best / (k - 2 > 0 ? k - 2 : 1)) : INFINITY;
out:
	free(t);
	free(pre);
	free(pre2);
}

static void matrix_range(const double *mat, size_t cells, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < cells; i++) {
		if (isnan(mat[i]))
			continue;
		if (mat[i] < *lo)
			*lo = mat[i];
		if (mat[i] > *hi)
			*hi = mat[i];
	}
}

/* Share of cells on the same side of their splits in two matrices. */
static double agreement(const double *x, double tx, const double *y, double ty, size_t cells)
{
	size_t same = 0, n = 0;

	for (size_t i = 0; i < cells; i++) {
		if (isnan(x[i]) || isnan(y[i]))
			continue;
		n++;
		same += (x[i] > tx) == (y[i] > ty);
	}
	return n ? (double)same / n : NAN;
}

/* First touch: its two populations (near and far partition), which SMs
 * fall on either side (rank-1 term of the first-touch matrix), what the
 * accesses right after cost in each, and whether either split is the
 * line matrix's. */
static void ft_report(const struct nt_map *m, struct nt_map_report *r)
{
	size_t cells = (size_t)m->n_sm * m->n_line, n_low = 0, n_high = 0;
	struct nt_fit fit;

	r->has_ft = 1;
	nt_split2(m->ft_first, cells, &r->first2);
	nt_split2(m->ft_repeat, cells, &r->repeat2);
	r->ft_step_low = r->ft_step_high = 0;
	for (size_t i = 0; i < cells; i++) {
		double d = m->ft_first[i] - m->ft_repeat[i];

		if (isnan(d))
			continue;
		if (m->ft_first[i] <= r->first2.threshold)
			r->ft_step_low += d, n_low++;
		else
			r->ft_step_high += d, n_high++;
	}
	r->ft_step_low = n_low ? r->ft_step_low / n_low : NAN;
	r->ft_step_high = n_high ? r->ft_step_high / n_high : NAN;
	r->ft_lines_agree = r->repeat_lines_agree = NAN;
	if (m->line_lat) {
		r->ft_lines_agree = agreement(m->ft_first, r->first2.threshold, m->line_lat,
					      r->lines2.threshold, cells);
		r->repeat_lines_agree = agreement(m->ft_repeat, r->repeat2.threshold, m->line_lat,
						  r->lines2.threshold, cells);
	}
	r->ft_fit_ok = !nt_fit_matrix(m->ft_first, m->n_sm, m->n_line, 1, "first-touch matrix", &fit,
				      &r->ft_fit_err);
	for (int s = 0; r->ft_fit_ok && s < m->n_sm && fit.k > 0; s++)
		if (!isnan(fit.u[0][s]))
			r->ft_part_size[fit.u[0][s] > 0 ? 0 : 1]++;
	nt_fit_free(&fit);
}

/* Rows of an n_sm x n_line matrix with at least one value. */
static int measured_rows(const double *mat, int n_sm, int n_line)
{
	int rows = 0;

	for (int i = 0; i < n_sm; i++) {
		int j = 0;

		while (j < n_line && isnan(mat[(size_t)i * n_line + j]))
			j++;
		rows += j < n_line;
	}
	return rows;
}

void nt_map_report_build(const struct nt_map *m, struct nt_map_report *r)
{
	size_t cells = (size_t)m->n_sm * m->n_line;

	memset(r, 0, sizeof(*r));
	nt_map_summarize(m, &r->chain);
	nt_tpc_pairs(m->chain, m->n_sm, nt_tpc_default_tol(m->noise, m->n_sm), &r->tpc);
	if (nt_halves_best(m->chain, m->n_sm, &r->halves))
		r->halves.split = -1;
	if (m->line_lat) {
		r->has_lines = 1;
		r->line_rows = measured_rows(m->line_lat, m->n_sm, m->n_line);
		r->fit_ok = !nt_fit_matrix(m->line_lat, m->n_sm, m->n_line, NT_FIT_KMAX, "line matrix",
					   &r->fit, &r->fit_err);
		matrix_range(m->line_lat, cells, &r->line_min, &r->line_max);
		for (int s = 0; r->fit_ok && s < m->n_sm && r->fit.k > 0; s++)
			if (!isnan(r->fit.u[0][s]))
				r->part_size[r->fit.u[0][s] > 0 ? 0 : 1]++;
		nt_split2(m->line_lat, cells, &r->lines2);
	}
	if (m->ft_first)
		ft_report(m, r);
}

void nt_map_report_free(struct nt_map_report *r)
{
	nt_fit_free(&r->fit);
}

/* One probe-cost configuration over the SMs: median, range, spread
 * ((max - min) / mean) and r of the per-SM costs with the chain map. */
struct probe_row {
	double median, min, max, spread, r;
	int sms;
};

static void probe_row(const struct nt_map *m, int p, struct probe_row *row)
{
	const double *c = &m->probe_cost[(size_t)p * m->n_sm];
	double sum = 0;

	row->min = INFINITY, row->max = -INFINITY, row->sms = 0;
	for (int s = 0; s < m->n_sm; s++)
		if (!isnan(c[s])) {
			row->min = fmin(row->min, c[s]), row->max = fmax(row->max, c[s]);
			sum += c[s], row->sms++;
		}
	row->median = nt_median(c, m->n_sm);
	row->spread = row->sms && sum > 0 ? (row->max - row->min) / (sum / row->sms) : NAN;
	row->r = nt_pearson(c, m->chain, m->n_sm);
}

static void text_probe(FILE *f, const struct nt_map *m)
{
	for (int p = 0; p < m->n_probe; p++) {
		const struct nt_map_probe *q = &m->probe[p];
		struct probe_row row;

		probe_row(m, p, &row);
		fprintf(f, "  %-16s %4d threads, %4d iterations: %.0f cycles per block", p ? "" : "probe cost",
			q->threads, q->iters, row.median);
		if (!isnan(m->sm_clock_mhz))
			fprintf(f, " (%.1f us)", row.median / m->sm_clock_mhz);
		fprintf(f, ", spread %.0f%% over %d SMs, r with the map %+.2f; body %.0f untraced, %.0f "
			"traced\n", 100 * row.spread, row.sms, row.r, q->body_native, q->body_traced);
	}
}

static void json_probe(struct nt_json *j, const struct nt_map *m)
{
	nt_json_key(j, "probe_cost");
	nt_json_begin_array(j);
	for (int p = 0; p < m->n_probe; p++) {
		struct probe_row row;

		probe_row(m, p, &row);
		nt_json_begin_object(j);
		nt_json_kv_int(j, "threads", m->probe[p].threads);
		nt_json_kv_int(j, "iters", m->probe[p].iters);
		nt_json_kv_int(j, "blocks", m->probe[p].blocks);
		nt_json_kv_double(j, "median", row.median);
		nt_json_kv_double(j, "min", row.min);
		nt_json_kv_double(j, "max", row.max);
		nt_json_kv_double(j, "spread", row.spread);
		nt_json_kv_double(j, "r_map", row.r);
		nt_json_kv_double(j, "body_native", m->probe[p].body_native);
		nt_json_kv_double(j, "body_traced", m->probe[p].body_traced);
		nt_json_end_object(j);
	}
	nt_json_end_array(j);
}

static void text_split(FILE *f, const char *label, const struct nt_split2 *s)
{
	fprintf(f, "  %-16s %.1f cycles (%.0f%%) and %.1f cycles (%.0f%%), separation %.1f sd\n", label,
		s->low, 100 * s->low_frac, s->high, 100 * (1 - s->low_frac), s->separation);
}

void nt_summary_text(FILE *f, const struct nt_map *m, const struct nt_map_report *r,
		     const struct nt_calib_stats *st, int64_t store_id, const char *store_path)
{
	const struct nt_map_summary *c = &r->chain;
	char name[NT_TEXT_ROOM(96)], uuid[NT_TEXT_ROOM(NT_UUID_LEN)], driver[NT_TEXT_ROOM(32)];
	char stat[NT_TEXT_ROOM(8)], clock[32] = "?";

	/* names from a map file: no control character reaches a terminal */
	if (!isnan(m->sm_clock_mhz))
		snprintf(clock, sizeof(clock), "%.0f", m->sm_clock_mhz);
	fprintf(f, "%s  %s\n", nt_text_safe(name, sizeof(name), m->gpu.name, 0),
		nt_text_safe(uuid, sizeof(uuid), m->gpu.uuid, 0));
	fprintf(f, "  %d SMs, cc %d.%d, L2 %.1f MiB, driver %s, CUDA %d.%d, SM clock %s MHz\n",
		m->n_sm, m->gpu.cc_major, m->gpu.cc_minor, m->gpu.l2_bytes / 1048576.0,
		m->gpu.driver[0] ? nt_text_safe(driver, sizeof(driver), m->gpu.driver, 0) : "?",
		m->gpu.cuda_version / 1000, m->gpu.cuda_version % 1000 / 10, clock);
	fprintf(f, "  %-16s %.1f .. %.1f cycles (mean %.2f, spread %.1f%%; fastest SM %d, slowest "
		"SM %d)", "chain map", c->min, c->max, c->mean, c->spread_pct, c->argmin, c->argmax);
	fprintf(f, st ? "  %.2f s\n" : "\n", st ? st->wall_chain : 0.0);
	fprintf(f, "  %-16s %d SMs of %d, %s of %d x %d-load walks over %lld KiB\n", "", c->measured,
		m->n_sm, nt_text_safe(stat, sizeof(stat), m->params.statistic, 0), m->params.chain_reps,
		m->params.chain_loads,
		(long long)(m->params.chain_bytes >> 10));
	if (!isnan(c->mean_gap))
		fprintf(f, "  %-16s mean pairwise gap %.2f cycles (mean |difference| over all pairs of "
			"SMs)\n", "", c->mean_gap);
	if (m->noise && !isnan(c->noise_median))
		fprintf(f, "  %-16s median |delta| %.3f cycles, max %.3f\n", "noise floor",
			c->noise_median, c->noise_max);
	else if (m->noise)
		fprintf(f, "  %-16s no SM has a value\n", "noise floor");
	fprintf(f, "  %-16s %d of %d pairs (2k, 2k+1) equal within %.2f cycles\n", "TPC pairs",
		r->tpc.equal, r->tpc.pairs, r->tpc.tol);
	if (r->halves.split >= 0)
		fprintf(f, "  %-16s split at SM %d, %s halves of %d, r = %.3f\n", "symmetry",
			r->halves.split, r->halves.mirrored ? "mirrored" : "shifted", r->halves.len,
			r->halves.r);
	if (r->has_lines) {
		fprintf(f, "  %-16s %d SMs x %d lines, %.1f .. %.1f cycles", "line matrix",
			r->line_rows, m->n_line, r->line_min, r->line_max);
		fprintf(f, st ? "  %.2f s\n" : "\n", st ? st->wall_lines : 0.0);
		if (r->fit_ok)
			fprintf(f, "  %-16s R^2 additive %.3f, +1 interaction %.3f, +2 %.3f, +3 %.3f\n",
				"model", r->fit.r2[0], r->fit.r2[1], r->fit.r2[2], r->fit.r2[3]);
		else
			fprintf(f, "  %-16s fit n/a: %s\n", "model", r->fit_err.msg);
		if (r->fit_ok && r->fit.k > 0)
			fprintf(f, "  %-16s %d and %d SMs on either side of the first interaction "
				"term\n", "partitions", r->part_size[0], r->part_size[1]);
		text_split(f, "line latencies", &r->lines2);
	}
	if (r->has_ft) {
		text_split(f, "first touch", &r->first2);
		text_split(f, "right after", &r->repeat2);
		if (r->ft_fit_ok)
			fprintf(f, "  %-16s %d and %d SMs on either side; right after, first-touch low "
				"%+.1f, high %+.1f\n", "", r->ft_part_size[0], r->ft_part_size[1],
				-r->ft_step_low, -r->ft_step_high);
		else
			fprintf(f, "  %-16s fit n/a: %s\n  %-16s right after, first-touch low %+.1f, "
				"high %+.1f\n", "", r->ft_fit_err.msg, "", -r->ft_step_low, -r->ft_step_high);
		if (!isnan(r->ft_lines_agree))
			fprintf(f, "  %-16s same side as the line matrix: first touch %.0f%%, right after "
				"%.0f%% of cells\n", "", 100 * r->ft_lines_agree, 100 * r->repeat_lines_agree);
		if (st && !isnan(st->dram_median))
			fprintf(f, "  %-16s never-touched line (DRAM) %.0f cycles", "", st->dram_median);
		if (st)
			fprintf(f, "%s  %.2f s\n", isnan(st->dram_median) ? "  first touch" : "", st->wall_first);
	}
	text_probe(f, m);
	if (store_path && store_id >= 0)
		fprintf(f, "  stored as calibration %lld in %s\n", (long long)store_id, store_path);
}

static void json_split(struct nt_json *j, const char *key, const struct nt_split2 *s)
{
	nt_json_key(j, key);
	nt_json_begin_object(j);
	nt_json_key(j, "low");
	nt_json_double(j, s->low);
	nt_json_key(j, "high");
	nt_json_double(j, s->high);
	nt_json_key(j, "low_fraction");
	nt_json_double(j, s->low_frac);
	nt_json_key(j, "threshold");
	nt_json_double(j, s->threshold);
	nt_json_key(j, "separation_sd");
	nt_json_double(j, s->separation);
	nt_json_end_object(j);
}

/* "partition_sizes": [a, b], or null when the fit is n/a. */
static void json_sizes(struct nt_json *j, int ok, const int size[2])
{
	nt_json_key(j, "partition_sizes");
	if (!ok) {
		nt_json_null(j);
		return;
	}
	nt_json_begin_array(j);
	nt_json_int(j, size[0]);
	nt_json_int(j, size[1]);
	nt_json_end_array(j);
}

/* "fit_error": null, or why the fit is n/a. */
static void json_error(struct nt_json *j, int ok, const struct nt_err *err)
{
	nt_json_key(j, "fit_error");
	if (ok)
		nt_json_null(j);
	else
		nt_json_str(j, err->msg);
}

void nt_summary_json(struct nt_json *j, const struct nt_map *m, const struct nt_map_report *r,
		     const struct nt_calib_stats *st, int64_t store_id)
{
	const struct nt_map_summary *c = &r->chain;

	nt_json_begin_object(j);
	nt_json_key(j, "uuid");
	nt_json_str(j, m->gpu.uuid);
	nt_json_key(j, "name");
	nt_json_str(j, m->gpu.name);
	nt_json_kv_int(j, "sm_count", m->n_sm);
	nt_json_kv_double(j, "sm_clock_mhz", m->sm_clock_mhz);
	nt_json_key(j, "store_id");
	if (store_id >= 0)
		nt_json_int(j, store_id);
	else
		nt_json_null(j);
	nt_json_key(j, "chain");
	nt_json_begin_object(j);
	nt_json_kv_double(j, "min", c->min);
	nt_json_kv_double(j, "max", c->max);
	nt_json_kv_double(j, "mean", c->mean);
	nt_json_kv_double(j, "median", c->median);
	nt_json_kv_double(j, "spread_pct", c->spread_pct);
	nt_json_kv_double(j, "mean_gap", c->mean_gap);
	nt_json_kv_int(j, "fastest_sm", c->argmin);
	nt_json_kv_int(j, "slowest_sm", c->argmax);
	nt_json_kv_double(j, "noise_median", c->noise_median);
	nt_json_kv_double(j, "noise_max", c->noise_max);
	nt_json_end_object(j);
	nt_json_key(j, "tpc_pairs");
	nt_json_begin_object(j);
	nt_json_kv_int(j, "pairs", r->tpc.pairs);
	nt_json_kv_int(j, "equal", r->tpc.equal);
	nt_json_kv_double(j, "tolerance", r->tpc.tol);
	nt_json_end_object(j);
	nt_json_key(j, "halves");
	nt_json_begin_object(j);
	nt_json_kv_int(j, "split", r->halves.split);
	nt_json_kv_int(j, "length", r->halves.len);
	nt_json_key(j, "mirrored");
	nt_json_bool(j, r->halves.mirrored);
	nt_json_kv_double(j, "r", r->halves.r);
	nt_json_end_object(j);
	if (r->has_lines) {
		nt_json_key(j, "lines");
		nt_json_begin_object(j);
		nt_json_kv_int(j, "n_line", m->n_line);
		nt_json_kv_double(j, "min", r->line_min);
		nt_json_kv_double(j, "max", r->line_max);
		nt_json_key(j, "r2");
		if (r->fit_ok)
			nt_json_double_array(j, r->fit.r2, NT_FIT_KMAX + 1);
		else
			nt_json_null(j);
		json_sizes(j, r->fit_ok, r->part_size);
		json_error(j, r->fit_ok, &r->fit_err);
		json_split(j, "populations", &r->lines2);
		nt_json_end_object(j);
	}
	if (r->has_ft) {
		nt_json_key(j, "first_touch");
		nt_json_begin_object(j);
		json_split(j, "first", &r->first2);
		json_split(j, "repeat", &r->repeat2);
		json_sizes(j, r->ft_fit_ok, r->ft_part_size);
		json_error(j, r->ft_fit_ok, &r->ft_fit_err);
		nt_json_kv_double(j, "step_low", r->ft_step_low);
		nt_json_kv_double(j, "step_high", r->ft_step_high);
		nt_json_kv_double(j, "first_vs_lines_agreement", r->ft_lines_agree);
		nt_json_kv_double(j, "repeat_vs_lines_agreement", r->repeat_lines_agree);
		if (st)
			nt_json_kv_double(j, "dram_median", st->dram_median);
		nt_json_end_object(j);
	}
	if (m->n_probe)
		json_probe(j, m);
	if (st) {
		nt_json_key(j, "seconds");
		nt_json_begin_object(j);
		nt_json_kv_double(j, "warmup", st->wall_warmup);
		nt_json_kv_double(j, "chain", st->wall_chain);
		nt_json_kv_double(j, "noise", st->wall_noise);
		nt_json_kv_double(j, "lines", st->wall_lines);
		nt_json_kv_double(j, "first_touch", st->wall_first);
		nt_json_kv_double(j, "warm_clock_mhz", st->warm_clock_mhz);
		nt_json_kv_int(j, "launches", st->launches);
		nt_json_end_object(j);
	}
	nt_json_end_object(j);
}
