/* The schedule and the analysis of `calibrate --stability` (stability.h). */
#include "analysis/stability.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"

static const char *const phase_names[NT_STAB_N_PHASES] = { "idle-before", "load", "idle-after" };

const char *nt_stab_phase_name(int phase)
{
	return phase >= 0 && phase < NT_STAB_N_PHASES ? phase_names[phase] : "?";
}

const char *nt_stab_verdict_name(int verdict)
{
	static const char *const names[] = { "stable", "uniform", "moved", "too_few" };

	return verdict >= 0 && verdict <= NT_STAB_TOO_FEW ? names[verdict] : "?";
}

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void add_slot(struct nt_stab_plan *p, int phase, double at)
{
	p->slot[p->n].phase = phase;
	p->slot[p->n].at = at;
	p->n++;
	p->per_phase[phase]++;
}

int nt_stab_plan(double seconds, struct nt_stab_plan *p, struct nt_err *err)
{
	int nb, nl, na;
	double end;

	memset(p, 0, sizeof(*p));
	if (!(seconds >= NT_STAB_MIN_SECONDS && seconds <= NT_STAB_MAX_SECONDS))
		return nt_err_set(err, "a stability run of %g s: need %.0f s .. %.0f s (0.5 .. 1440 "
				  "minutes)", seconds, NT_STAB_MIN_SECONDS, NT_STAB_MAX_SECONDS);
	p->seconds = seconds;
	p->before_s = clamp(0.15 * seconds, 10, 120);
	p->after_s = clamp(0.20 * seconds, 15, 300);
	p->load_s = seconds - p->before_s - p->after_s;
	p->load_every_s = clamp(p->load_s / 8, 10, 60);
	nl = (int)clamp(round(p->load_s / p->load_every_s), 2, NT_STAB_MAX_LOAD_MAPS);
	p->load_every_s = p->load_s / nl;
	nb = 2 + (p->before_s >= 20) + (p->before_s >= 60);
	na = 3 + (p->after_s >= 30) + (p->after_s >= 120) + (p->after_s >= 300);
	for (int k = 0; k < nb; k++)
		add_slot(p, NT_STAB_IDLE_BEFORE, p->before_s * k / (nb - 1));
	for (int k = 1; k <= nl; k++)
		add_slot(p, NT_STAB_LOAD, p->before_s + p->load_s * k / nl);
	end = p->before_s + p->load_s;
	for (int k = 0; k < na; k++)
		add_slot(p, NT_STAB_IDLE_AFTER, end + ldexp(p->after_s, k - (na - 1)));
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Theil-Sen: y ~ *a + *b * x over the i with both values, slopes only
 * between points at least NT_STAB_TS_MIN_DX apart in x (scale 1 when
 * there are none); tmp holds n * (n - 1) / 2 doubles (at least n). */
static void theil_sen(const double *x, const double *y, int n, double *tmp, double *a, double *b)
{
	size_t k = 0;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			double dx = x[j] - x[i];

			if (isnan(dx) || isnan(y[i]) || isnan(y[j]) || fabs(dx) < NT_STAB_TS_MIN_DX)
				continue;
			tmp[k++] = (y[j] - y[i]) / dx;
		}
	if (k) {
		qsort(tmp, k, sizeof(*tmp), cmp_double);
		*b = k % 2 ? tmp[k / 2] : 0.5 * (tmp[k / 2 - 1] + tmp[k / 2]);
	} else {
		*b = 1;
	}
	for (int i = 0; i < n; i++)
		tmp[i] = y[i] - *b * x[i];
	*a = nt_median(tmp, n);
}


static void map_stats(const struct nt_map *m, struct nt_stab_row *w)
{
	double sum = 0, mx = NAN;
	int k = 0;

	for (int s = 0; s < m->n_sm; s++)
		if (!isnan(m->chain[s]))
			sum += m->chain[s], k++;
	w->mean = k ? sum / k : NAN;
	w->noise_median = m->noise ? nt_median(m->noise, m->n_sm) : NAN;
	for (int s = 0; m->noise && s < m->n_sm; s++)
		if (!isnan(m->noise[s]) && !(m->noise[s] <= mx))
			mx = m->noise[s];
	w->noise_max = mx;
	w->busy = w->noise_median > NT_STAB_BUSY_NOISE;
}

/* Per SM, how often and how far it is beyond its floor by one of the two
 * residuals (affine or not) over the compared maps; tally[sm]. */
static void tally_sms(const struct nt_stab_input *in, const struct nt_stab_result *r, int affine,
		      struct nt_stab_sm *tally)
{
	const struct nt_map *ref = r->refm;

	for (int s = 0; s < r->n_sm; s++)
		tally[s] = (struct nt_stab_sm){ .sm = s, .worst_map = -1 };
	for (int i = 0; i < r->n; i++) {
		const struct nt_stab_row *w = &r->row[i];
		const struct nt_map *m = in[i].m;

		if (!w->compared)
			continue;
		for (int s = 0; s < r->n_sm; s++) {
			double v = affine ? m->chain[s] - w->intercept - w->scale * ref->chain[s]
					  : w->resid[s];

			if (isnan(v) || !(fabs(v) > NT_STAB_FACTOR * nt_map_noise_floor(ref, m, s)))
				continue;
			tally[s].maps++;
			tally[s].phases |= 1u << in[i].phase;
			if (tally[s].worst_map < 0 || fabs(v) > fabs(tally[s].worst))
				tally[s].worst = v, tally[s].worst_map = i;
		}
	}
}

static int cmp_worst(const void *a, const void *b)
{
	const struct nt_stab_sm *x = a, *y = b;
	double u = fabs(x->worst), v = fabs(y->worst);

	return u < v ? 1 : u > v ? -1 : x->sm - y->sm;
}

/* The SMs of tally beyond in at least `repeats` maps into *moved, those
 * beyond in fewer (but some) into *glitch; sorted. */
static int split_sms(const struct nt_stab_sm *tally, int n_sm, int repeats, struct nt_stab_sm **moved,
		     int *n_moved, struct nt_stab_sm **glitch, int *n_glitch)
{
	*moved = malloc((n_sm ? n_sm : 1) * sizeof(**moved));
	*glitch = malloc((n_sm ? n_sm : 1) * sizeof(**glitch));
	*n_moved = *n_glitch = 0;
	if (!*moved || !*glitch)
		return -1;
	for (int s = 0; s < n_sm; s++) {
		if (tally[s].maps >= repeats)
			(*moved)[(*n_moved)++] = tally[s];
		else if (tally[s].maps)
			(*glitch)[(*n_glitch)++] = tally[s];
	}
	qsort(*moved, *n_moved, sizeof(**moved), cmp_worst);
	qsort(*glitch, *n_glitch, sizeof(**glitch), cmp_worst);
	return 0;
}

static void keep_min(double v, double *lo)
{
	if (!isnan(v) && (isnan(*lo) || v < *lo))
		*lo = v;
}

static void keep_max(double v, double *hi)
{
	if (!isnan(v) && (isnan(*hi) || v > *hi))
		*hi = v;
}

static void lo_hi(double v, double *lo, double *hi)
{
	keep_min(v, lo);
	keep_max(v, hi);
}

static void sum_phases(const struct nt_stab_input *in, struct nt_stab_result *r)
{
	double sum[NT_STAB_N_PHASES] = { 0 };
	int k[NT_STAB_N_PHASES] = { 0 };

	r->offset_min = r->offset_max = r->scale_min = r->scale_max = NAN;
	r->clock_min = r->clock_max = NAN;
	for (int p = 0; p < NT_STAB_N_PHASES; p++) {
		struct nt_stab_phase_sum *ph = &r->phase[p];

		memset(ph, 0, sizeof(*ph));
		ph->mean = ph->clock_min = ph->clock_max = ph->load_clock_min = ph->load_clock_max = NAN;
		ph->temp_min = ph->temp_max = ph->power_max = NAN;
		ph->offset_min = ph->offset_max = ph->scale_min = ph->scale_max = NAN;
		ph->r_min = ph->max_abs = NAN;
		ph->max_sm = -1;
	}
	for (int i = 0; i < r->n; i++) {
		const struct nt_stab_row *w = &r->row[i];
		struct nt_stab_phase_sum *ph = &r->phase[in[i].phase];

		ph->maps++;
		if (w->busy) {
			ph->busy++;
			continue;
		}
		if (!isnan(w->mean))
			sum[in[i].phase] += w->mean, k[in[i].phase]++;
		lo_hi(in[i].m->sm_clock_mhz, &ph->clock_min, &ph->clock_max);
		lo_hi(in[i].m->sm_clock_mhz, &r->clock_min, &r->clock_max);
		lo_hi(in[i].load_mhz, &ph->load_clock_min, &ph->load_clock_max);
		lo_hi(in[i].temp_c, &ph->temp_min, &ph->temp_max);
		keep_max(in[i].power_w, &ph->power_max);
		if (!w->compared)
			continue;
		ph->compared++;
		lo_hi(w->offset, &ph->offset_min, &ph->offset_max);
		lo_hi(w->scale, &ph->scale_min, &ph->scale_max);
		lo_hi(w->offset, &r->offset_min, &r->offset_max);
		lo_hi(w->scale, &r->scale_min, &r->scale_max);
		keep_min(w->r, &ph->r_min);
		if (ph->max_sm < 0 || w->max_abs > ph->max_abs)
			ph->max_abs = w->max_abs, ph->max_sm = w->max_sm;
		if (w->beyond > ph->beyond_max)
			ph->beyond_max = w->beyond;
	}
	for (int p = 0; p < NT_STAB_N_PHASES; p++)
		r->phase[p].mean = k[p] ? sum[p] / k[p] : NAN;
}

/* The reference map into r->refm: with one idle-before map, a copy of
 * it; with several, per SM the median of their values (each less its
 * median offset from the first) and the median of their in-map noise,
 * so that one odd idle map does not become the reference (the first map
 * of a run can sit 0.5 cycle off the next ones on a few SMs,
 * docs/stability.md).  Their widest spread about the median goes to
 * r->idle_spread. */
static int make_reference(const struct nt_stab_input *in, int n, struct nt_stab_result *r)
{
	int n_sm = r->n_sm, k = 0, *idx = malloc(n * sizeof(*idx));
	double *off = malloc(n * sizeof(*off)), *v = malloc((n > n_sm ? n : n_sm) * sizeof(*v));
	const struct nt_map *first = in[r->ref].m;
	struct nt_map *refm = NULL;

	if (!idx || !off || !v || !(refm = nt_map_dup(first)))
		goto fail;
	if (!refm->noise && !(refm->noise = malloc(n_sm * sizeof(*refm->noise))))
		goto fail;
	for (int i = 0; i < n; i++) {
		if (r->row[i].busy || in[i].phase != NT_STAB_IDLE_BEFORE)
			continue;
		for (int s = 0; s < n_sm; s++)
			v[s] = in[i].m->chain[s] - first->chain[s];
		off[k] = nt_median(v, n_sm);
		idx[k++] = i;
	}
	r->ref_maps = k;
	for (int s = 0; s < n_sm; s++) {
		double spread = 0;

		for (int j = 0; j < k; j++)
			v[j] = in[idx[j]].m->chain[s] - off[j];
		refm->chain[s] = k > 1 ? nt_median(v, k) : first->chain[s];
		for (int j = 0; j < k; j++)
			if (fabs(v[j] - refm->chain[s]) > spread)
				spread = fabs(v[j] - refm->chain[s]);
		for (int j = 0; j < k; j++) {
			const double *no = in[idx[j]].m->noise;

			v[j] = no ? no[s] : NAN;
		}
		refm->noise[s] = k ? nt_median(v, k) : NAN;
		if (spread > r->idle_spread) {
			r->idle_spread = spread;
			r->idle_spread_sm = s;
		}
	}
	free(idx);
	free(off);
	free(v);
	r->refm = refm;
	return 0;
fail:
	free(idx);
	free(off);
	free(v);
	nt_map_free(refm);
	return -1;
}

/* Map i against the reference, into r->row[i]; tmp as for theil_sen(). */
static int compare(const struct nt_stab_input *in, struct nt_stab_result *r, int i, double *tmp)
{
	const struct nt_map *ref = r->refm, *m = in[i].m;
	struct nt_stab_row *w = &r->row[i];
	int n = r->n_sm;

	if (!(w->resid = malloc(n * sizeof(*w->resid))))
		return -1;
	for (int s = 0; s < n; s++)
		w->resid[s] = m->chain[s] - ref->chain[s];
	w->offset = nt_median(w->resid, n);
	w->r = nt_pearson(ref->chain, m->chain, n);
	theil_sen(ref->chain, m->chain, n, tmp, &w->intercept, &w->scale);
	for (int s = 0; s < n; s++) {
		double f, a;

		w->resid[s] -= w->offset;
		if (isnan(w->resid[s]))
			continue;
		f = NT_STAB_FACTOR * nt_map_noise_floor(ref, m, s);
		a = m->chain[s] - w->intercept - w->scale * ref->chain[s];
		if (w->max_sm < 0 || fabs(w->resid[s]) > w->max_abs)
			w->max_abs = fabs(w->resid[s]), w->max_sm = s;
		if (w->max_affine_sm < 0 || fabs(a) > w->max_affine)
			w->max_affine = fabs(a), w->max_affine_sm = s;
		w->beyond += fabs(w->resid[s]) > f;
		w->beyond_affine += fabs(a) > f;
	}
	return 0;
}

int nt_stab_analyze(const struct nt_stab_input *in, int n, struct nt_stab_result *r,
		    struct nt_err *err)
{
	struct nt_stab_sm *tally = NULL, *gl = NULL;
	double *tmp = NULL;
	int ret = -1, n_sm, moved_offset, n_gl;

	memset(r, 0, sizeof(*r));
	r->ref = -1;
	r->idle_spread_sm = -1;
	if (n < 1 || !in)
		return nt_err_set(err, "no maps to analyze");
	n_sm = in[0].m->n_sm;
	for (int i = 1; i < n; i++)
		if (in[i].m->n_sm != n_sm)
			return nt_err_set(err, "map %d has %d SMs, map 1 has %d", i + 1, in[i].m->n_sm, n_sm);
	r->n = n;
	r->n_sm = n_sm;
	r->row = calloc(n, sizeof(*r->row));
	tally = malloc(n_sm * sizeof(*tally));
	tmp = malloc(((size_t)n_sm * (n_sm - 1) / 2 + n_sm) * sizeof(*tmp));
	if (!r->row || !tally || !tmp) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct nt_stab_row *w = &r->row[i];

		map_stats(in[i].m, w);
		w->offset = w->r = w->scale = w->intercept = w->max_abs = w->max_affine = NAN;
		w->max_sm = w->max_affine_sm = -1;
		r->busy += w->busy;
		if (r->ref < 0 && !w->busy && in[i].phase == NT_STAB_IDLE_BEFORE)
			r->ref = i;
	}
	if (r->ref < 0) {
		nt_err_set(err, "no idle-before map to compare with: every one had a median noise "
			   "above %.1f cycles (other work on the GPU?)", NT_STAB_BUSY_NOISE);
		goto out;
	}
	if (make_reference(in, n, r)) {
		nt_err_set(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		/* The reference map itself too, when others were in the median:
		 * it may sit off them. */
		if (r->row[i].busy || (i == r->ref && r->ref_maps < 2))
			continue;
		r->row[i].compared = 1;
		r->compared++;
		if (compare(in, r, i, tmp)) {
			nt_err_set(err, "out of memory");
			goto out;
		}
	}
	sum_phases(in, r);
	r->repeats = r->compared < NT_STAB_MIN_REPEATS ? r->compared : NT_STAB_MIN_REPEATS;
	if (!r->compared) {
		r->verdict = NT_STAB_TOO_FEW;
		ret = 0;
		goto out;
	}
	/* The offset residual first: no SM moved by it is "stable". */
	tally_sms(in, r, 0, tally);
	if (split_sms(tally, n_sm, r->repeats, &r->moved, &r->n_moved, &r->glitch, &r->n_glitch))
		goto oom;
	moved_offset = r->n_moved;
	r->n_moved_offset = moved_offset;
	r->verdict = NT_STAB_STABLE;
	if (moved_offset) {
		/* Then with the scale removed too: who moved relative to the others. */
		free(r->moved);
		free(r->glitch);
		r->moved = r->glitch = NULL;
		tally_sms(in, r, 1, tally);
		if (split_sms(tally, n_sm, r->repeats, &r->moved, &r->n_moved, &gl, &n_gl))
			goto oom;
		r->glitch = gl;
		r->n_glitch = n_gl;
		gl = NULL;
		r->verdict = r->n_moved ? NT_STAB_MOVED : NT_STAB_UNIFORM;
	}
	ret = 0;
	goto out;
oom:
	nt_err_set(err, "out of memory");
out:
	free(gl);
	free(tally);
	free(tmp);
	return ret;
}

void nt_stab_free(struct nt_stab_result *r)
{
	for (int i = 0; r->row && i < r->n; i++)
		free(r->row[i].resid);
	free(r->row);
	free(r->moved);
	free(r->glitch);
	nt_map_free(r->refm);
	memset(r, 0, sizeof(*r));
}

/* v, but 0 where "%+.3f" would print "-0.000". */
static double tidy(double v)
{
	return fabs(v) < 5e-4 ? 0.0 : v;
}

void nt_stab_verdict_text(const struct nt_stab_result *r, char *buf, size_t len)
{
	char in[48];

	if (r->compared == 1)
		snprintf(in, sizeof(in), "in the one map compared");
	else
		snprintf(in, sizeof(in), "in %d or more of %d maps", r->repeats, r->compared);
	switch (r->verdict) {
	case NT_STAB_STABLE:
		snprintf(buf, len, "stable within noise: no SM beyond %.0fx its noise floor %s "
			 "(offset %+.3f .. %+.3f cycles)", NT_STAB_FACTOR, in, tidy(r->offset_min),
			 tidy(r->offset_max));
		break;
	case NT_STAB_UNIFORM:
		snprintf(buf, len, "per-SM pattern stable, the whole map scaled by %.4f .. %.4f (SM "
			 "clock %.0f .. %.0f MHz): %d SMs beyond noise %s only before the scale is "
			 "removed", r->scale_min, r->scale_max, r->clock_min, r->clock_max,
			 r->n_moved_offset, in);
		break;
	case NT_STAB_MOVED:
		snprintf(buf, len, "%d SM%s moved: beyond %.0fx noise %s after removing offset and "
			 "scale, up to %+.3f cycles (SM %d)", r->n_moved, r->n_moved > 1 ? "s" : "",
			 NT_STAB_FACTOR, in, r->moved[0].worst, r->moved[0].sm);
		break;
	default:
		snprintf(buf, len, "too few maps: none to compare with the reference");
	}
}
