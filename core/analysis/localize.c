/* Self-localisation on the CPU: the table, the classifier, the
 * evaluation on map rows (localize.h). */
#include "analysis/localize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"

void nt_loc_defaults(struct nt_loc_opts *o)
{
	o->n_lines = 8;
	o->reps = 1;
	o->warm = 4;
	o->sigma = 0.15;
	o->tau = 0.3;
	o->group_r = 0.9;
}

static int check_opts(const struct nt_loc_opts *o, struct nt_err *err)
{
	if (o->n_lines < 1 || o->n_lines > NT_LOC_MAX_LINES)
		return nt_err_set(err, "localize: %d lines: need 1..%d", o->n_lines, NT_LOC_MAX_LINES);
	if (o->reps < 1 || o->reps > 64 || o->warm < 0 || o->warm > 1024)
		return nt_err_set(err, "localize: repetitions 1..64 and warm loads 0..1024");
	if (!(o->sigma > 0) || !(o->tau >= 0) || !isfinite(o->sigma) || !isfinite(o->tau))
		return nt_err_set(err, "localize: sigma must be positive, tau not negative");
	return 0;
}

/* The pair's D^2 over the lines chosen so far, from its sums. */
static double sep2(double s1, double s2, int n, double sigma, double tau)
{
	double m2 = s1 * s1 / n, within = s2 - m2;

	return (within > 0 ? within : 0) / (sigma * sigma) + m2 / (sigma * sigma + n * tau * tau);
}

struct pairs {
	int n;
	int *a, *b;		/* SMs of different TPCs, both with rows */
	double *s1, *s2;	/* sums of the template difference over chosen lines */
};

static void pairs_free(struct pairs *p)
{
	free(p->a);
	free(p->b);
	free(p->s1);
	free(p->s2);
}

static int pairs_make(struct pairs *p, const int *group, int n_sm)
{
	size_t cap = (size_t)n_sm * (size_t)n_sm / 2 + 1;

	memset(p, 0, sizeof(*p));
	p->a = malloc(cap * sizeof(*p->a));
	p->b = malloc(cap * sizeof(*p->b));
	p->s1 = calloc(cap, sizeof(*p->s1));
	p->s2 = calloc(cap, sizeof(*p->s2));
	if (!p->a || !p->b || !p->s1 || !p->s2)
		return -1;
	for (int i = 0; i < n_sm; i++)
		for (int j = i + 1; j < n_sm; j++)
			if (group[i] >= 0 && group[j] >= 0 && i / 2 != j / 2) {
				p->a[p->n] = i;
				p->b[p->n] = j;
				p->n++;
			}
	return 0;
}

/* Greedy line choice (localize.h).  chosen[] gets n line indices. */
static int choose_lines(const struct nt_map *m, const int *group, const struct nt_loc_opts *o,
			int *chosen, struct nt_loc_plan *plan, struct nt_err *err)
{
	const double *L = m->line_lat;
	char *usable = calloc((size_t)m->n_line, 1);
	struct pairs p;
	int ret = -1;

	if (pairs_make(&p, group, m->n_sm) || !usable) {
		nt_err_set(err, "localize: out of memory");
		goto out;
	}
	plan->candidates = 0;
	for (int l = 0; l < m->n_line; l++) {
		int ok = 1;

		for (int s = 0; s < m->n_sm && ok; s++)
			ok = group[s] < 0 || isfinite(L[(size_t)s * m->n_line + l]);
		usable[l] = (char)ok;
		plan->candidates += ok;
	}
	if (plan->candidates < o->n_lines) {
		nt_err_set(err, "localize: the line matrix has %d lines measured on every SM; the "
			   "probe needs %d", plan->candidates, o->n_lines);
		goto out;
	}
	if (!p.n) {
		nt_err_set(err, "localize: the map has no two TPCs to tell apart");
		goto out;
	}
	for (int k = 0; k < o->n_lines; k++) {
		double best = INFINITY;
		int pick = -1;

		for (int l = 0; l < m->n_line; l++) {
			double bound = 0;

			if (!usable[l])
				continue;
			for (int q = 0; q < p.n && bound < best; q++) {
				double dl = L[(size_t)p.a[q] * m->n_line + l] - L[(size_t)p.b[q] * m->n_line + l];

				bound += exp(-sep2(p.s1[q] + dl, p.s2[q] + dl * dl, k + 1, o->sigma,
						   o->tau) / 8);
			}
			if (bound < best) {
				best = bound;
				pick = l;
			}
		}
		chosen[k] = pick;
		usable[pick] = 0;
		for (int q = 0; q < p.n; q++) {
			double dl = L[(size_t)p.a[q] * m->n_line + pick] -
				    L[(size_t)p.b[q] * m->n_line + pick];

			p.s1[q] += dl;
			p.s2[q] += dl * dl;
		}
		plan->bound = best;
	}
	plan->min_sep2 = INFINITY;
	for (int q = 0; q < p.n; q++) {
		double d2 = sep2(p.s1[q], p.s2[q], o->n_lines, o->sigma, o->tau);

		if (d2 < plan->min_sep2) {
			plan->min_sep2 = d2;
			plan->worst_a = p.a[q];
			plan->worst_b = p.b[q];
		}
	}
	ret = 0;
out:
	pairs_free(&p);
	free(usable);
	return ret;
}

int nt_loc_build(const struct nt_map *m, const struct nt_loc_opts *o, struct nt_loc_table *t,
		 struct nt_loc_plan *plan, struct nt_err *err)
{
	struct nt_loc_plan scratch;
	struct nt_groups g = { 0 };
	int chosen[NT_LOC_MAX_LINES];

	if (!plan)
		plan = &scratch;
	memset(t, 0, sizeof(*t));
	memset(plan, 0, sizeof(*plan));
	if (check_opts(o, err))
		return -1;
	if (!m->line_lat)
		return nt_err_set(err, "localize: map of %s has no line matrix (calibrated with --quick "
				  "or --no-lines?)", m->gpu.uuid);
	if (m->n_sm > NT_LOC_MAX_SM)
		return nt_err_set(err, "localize: %d SMs; the probe's table holds %d", m->n_sm,
				  NT_LOC_MAX_SM);
	if (m->params.line_loads < 1)
		return nt_err_set(err, "localize: map of %s does not say how its lines were timed "
				  "(line_loads %d)", m->gpu.uuid, m->params.line_loads);
	if (nt_groups_cluster(m->line_lat, m->n_sm, m->n_line, o->group_r, &g, err))
		return -1;
	for (int s = 0; s < m->n_sm; s++)
		t->group[s] = g.group[s] >= 0 ? g.group[s] : NT_LOC_NO_GROUP;
	for (int s = m->n_sm; s < NT_LOC_MAX_SM; s++)
		t->group[s] = NT_LOC_NO_GROUP;
	t->n_groups = g.n_groups;
	nt_groups_free(&g);
	for (int s = 0; s < m->n_sm; s++)
		plan->rows += t->group[s] >= 0;
	if (choose_lines(m, t->group, o, chosen, plan, err))
		return -1;
	t->magic = NT_LOC_MAGIC;
	t->version = NT_LOC_VERSION;
	t->n_sm = m->n_sm;
	t->n_line = o->n_lines;
	t->loads = m->params.line_loads;
	t->reps = o->reps;
	t->warm = o->warm;
	t->sigma = (float)o->sigma;
	t->tau = (float)o->tau;
	for (int k = 0; k < o->n_lines; k++) {
		t->line[k] = chosen[k];
		t->offset[k] = (unsigned long long)m->line_offset[chosen[k]];
		for (int s = 0; s < m->n_sm; s++)
			t->tmpl[s][k] = t->group[s] >= 0 ? (float)m->line_lat[(size_t)s * m->n_line + chosen[k]]
							 : 0.0f;
	}
	return 0;
}

int nt_loc_check(const struct nt_loc_table *t, struct nt_err *err)
{
	if (t->magic != NT_LOC_MAGIC || t->version != NT_LOC_VERSION)
		return nt_err_set(err, "localize: not a localisation table (magic %#x, version %u)",
				  t->magic, t->version);
	if (t->n_sm < 1 || t->n_sm > NT_LOC_MAX_SM || t->n_line < 1 || t->n_line > NT_LOC_MAX_LINES ||
	    t->loads < 1 || t->reps < 1 || t->warm < 0 || !(t->sigma > 0) || !(t->tau >= 0))
		return nt_err_set(err, "localize: table out of range (%d SMs, %d lines, %d loads, %d reps)",
				  t->n_sm, t->n_line, t->loads, t->reps);
	return 0;
}

/* The device's order of work (localize.cuh), one SM at a time. */
void nt_loc_classify(const struct nt_loc_table *t, const float *x, struct nt_loc_result *r)
{
	float d[NT_LOC_MAX_SM], dmin = INFINITY, total = 0, best_w = -1, mass = 0, s1 = 0;
	int n = t->n_line, best_tpc = -1;

	memset(r, 0, sizeof(*r));
	r->sm = r->tpc = r->group = -1;
	if (nt_loc_check(t, NULL))
		return;
	memcpy(r->x, x, (size_t)n * sizeof(*x));
	for (int s = 0; s < t->n_sm; s++) {
		float a = 0, b = 0;

		d[s] = INFINITY;
		if (t->group[s] < 0)
			continue;
		for (int k = 0; k < n; k++)
			nt_loc_accumulate(&a, &b, x[k] - t->tmpl[s][k]);
		d[s] = nt_loc_distance(a, b, n, t->sigma, t->tau);
		if (d[s] < dmin)
			dmin = d[s];
	}
	if (!isfinite(dmin))
		return;
	for (int s = 0; s < t->n_sm; s += 2) {
		float w0 = isfinite(d[s]) ? expf(-(d[s] - dmin) / 2) : 0;
		float w1 = s + 1 < t->n_sm && isfinite(d[s + 1]) ? expf(-(d[s + 1] - dmin) / 2) : 0;
		/* The better SM of the pair by d, not by weight: exact on both sides. */
		int odd = s + 1 < t->n_sm && d[s + 1] < d[s];

		total += w0 + w1;
		if (w0 + w1 > best_w) {
			best_w = w0 + w1;
			best_tpc = s / 2;
			r->sm = odd ? s + 1 : s;
			r->p_sm = odd ? w1 : w0;
		}
	}
	r->tpc = best_tpc;
	r->group = t->group[r->sm];
	for (int s = 0; s < t->n_sm; s++)
		if (t->group[s] == r->group && isfinite(d[s]))
			mass += expf(-(d[s] - dmin) / 2);
	for (int k = 0; k < n; k++)
		s1 += x[k] - t->tmpl[r->sm][k];
	r->p_sm /= total;
	r->p_tpc = best_w / total;
	r->p_group = mass / total;
	r->fit = dmin / n;
	r->offset = s1 / n;
}

void nt_loc_score_add(struct nt_loc_score *s, const struct nt_loc_table *t, int truth,
		      const struct nt_loc_result *r)
{
	int right = r->tpc >= 0 && r->tpc == truth / 2;

	s->n++;
	s->sm += r->sm >= 0 && r->sm == truth;
	s->tpc += right;
	s->group += r->group >= 0 && truth >= 0 && truth < t->n_sm && r->group == t->group[truth];
	if (right)
		s->conf_right += r->p_tpc;
	else
		s->conf_wrong += r->p_tpc;
	if (r->tpc >= 0 && r->fit > s->fit_max)
		s->fit_max = r->fit;
}

int nt_loc_eval_rows(const struct nt_loc_table *t, const struct nt_map *m_table,
		     const struct nt_map *rows, double offset, struct nt_loc_score *s,
		     struct nt_loc_result *per_sm, struct nt_err *err)
{
	memset(s, 0, sizeof(*s));
	if (nt_loc_check(t, err))
		return -1;
	if (!rows->line_lat)
		return nt_err_set(err, "localize: map of %s has no line matrix", rows->gpu.uuid);
	if (rows->n_sm != t->n_sm || rows->n_sm != m_table->n_sm)
		return nt_err_set(err, "localize: the table has %d SMs, the map of %s %d", t->n_sm,
				  rows->gpu.uuid, rows->n_sm);
	for (int k = 0; k < t->n_line; k++) {
		int l = t->line[k];

		if (l < 0 || l >= rows->n_line || l >= m_table->n_line ||
		    rows->line_offset[l] != m_table->line_offset[l])
			return nt_err_set(err, "localize: the maps' lines differ (line %d): they were "
					  "calibrated with other --lines or footprints", l);
	}
	for (int sm = 0; sm < rows->n_sm; sm++) {
		struct nt_loc_result r;
		float x[NT_LOC_MAX_LINES];
		int have = 1;

		for (int k = 0; k < t->n_line; k++) {
			double v = rows->line_lat[(size_t)sm * rows->n_line + t->line[k]];

			have &= isfinite(v);
			x[k] = (float)(v + offset);
		}
		if (per_sm)
			memset(&per_sm[sm], 0, sizeof(per_sm[sm]));
		if (!have) {
			if (per_sm)
				per_sm[sm].sm = per_sm[sm].tpc = per_sm[sm].group = -1;
			continue;
		}
		nt_loc_classify(t, x, &r);
		nt_loc_score_add(s, t, sm, &r);
		if (per_sm)
			per_sm[sm] = r;
	}
	return 0;
}
