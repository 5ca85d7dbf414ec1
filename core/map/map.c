#include "map/map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *nan_array(size_t n)
{
	double *a = malloc(n * sizeof(*a));

	if (!a)
		return NULL;
	for (size_t i = 0; i < n; i++)
		a[i] = NAN;
	return a;
}

int nt_map_add_parts(struct nt_map *m, int n_line, unsigned parts)
{
	size_t cells;

	if ((parts & NT_MAP_NOISE) && !m->noise && !(m->noise = nan_array(m->n_sm)))
		return -1;
	if (!(parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH)))
		return 0;
	if (m->n_line && m->n_line != n_line)
		return -1;
	if (n_line <= 0)
		return -1;
	m->n_line = n_line;
	cells = (size_t)m->n_sm * (size_t)n_line;
	if (!m->line_offset && !(m->line_offset = calloc(n_line, sizeof(*m->line_offset))))
		return -1;
	if ((parts & NT_MAP_LINES) && !m->line_lat && !(m->line_lat = nan_array(cells)))
		return -1;
	if (parts & NT_MAP_FIRST_TOUCH) {
		if (!m->ft_first && !(m->ft_first = nan_array(cells)))
			return -1;
		if (!m->ft_repeat && !(m->ft_repeat = nan_array(cells)))
			return -1;
	}
	return 0;
}

struct nt_map *nt_map_new(int n_sm, int n_line, unsigned parts)
{
	struct nt_map *m;

	if (n_sm <= 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->n_sm = n_sm;
	m->sm_clock_mhz = NAN;
	if (!(m->chain = nan_array(n_sm)) || nt_map_add_parts(m, n_line, parts)) {
		nt_map_free(m);
		return NULL;
	}
	return m;
}

void nt_map_free(struct nt_map *m)
{
	if (!m)
		return;
	free(m->chain);
	free(m->noise);
	free(m->line_offset);
	free(m->line_lat);
	free(m->ft_first);
	free(m->ft_repeat);
	free(m->probe);
	free(m->probe_cost);
	free(m);
}

int nt_map_set_probe(struct nt_map *m, int n)
{
	struct nt_map_probe *probe;
	double *cost;

	if (n < 1 || n > NT_MAP_MAX_PROBES)
		return -1;
	probe = calloc(n, sizeof(*probe));
	cost = nan_array((size_t)n * (size_t)m->n_sm);
	if (!probe || !cost) {	/* m keeps the part it had */
		free(probe);
		free(cost);
		return -1;
	}
	free(m->probe);
	free(m->probe_cost);
	m->n_probe = n;
	m->probe = probe;
	m->probe_cost = cost;
	return 0;
}

static int dup_array(void *dst, const void *src, size_t bytes)
{
	void **d = dst;

	*d = NULL;
	if (!src)
		return 0;
	*d = malloc(bytes);
	if (!*d)
		return -1;
	memcpy(*d, src, bytes);
	return 0;
}

struct nt_map *nt_map_dup(const struct nt_map *m)
{
	struct nt_map *c = malloc(sizeof(*c));
	size_t cells = (size_t)m->n_sm * (size_t)m->n_line;

	if (!c)
		return NULL;
	*c = *m;
	if (dup_array(&c->chain, m->chain, m->n_sm * sizeof(double)) |
	    dup_array(&c->noise, m->noise, m->n_sm * sizeof(double)) |
	    dup_array(&c->line_offset, m->line_offset, m->n_line * sizeof(int64_t)) |
	    dup_array(&c->line_lat, m->line_lat, cells * sizeof(double)) |
	    dup_array(&c->ft_first, m->ft_first, cells * sizeof(double)) |
	    dup_array(&c->ft_repeat, m->ft_repeat, cells * sizeof(double)) |
	    dup_array(&c->probe, m->probe, m->n_probe * sizeof(struct nt_map_probe)) |
	    dup_array(&c->probe_cost, m->probe_cost, (size_t)m->n_probe * m->n_sm * sizeof(double))) {
		nt_map_free(c);
		return NULL;
	}
	return c;
}

int nt_map_latency_ok(double v)
{
	return isnan(v) || (v >= 0 && v <= NT_MAP_MAX_CYCLES);
}

int nt_map_time_ok(int64_t t)
{
	return t >= 0 && t <= NT_MAP_MAX_TIME;
}

int nt_map_uuid_ok(const char *uuid)
{
	size_t n = strlen(uuid);

	if ((strncmp(uuid, "GPU-", 4) && strncmp(uuid, "MIG-", 4)) || n <= 4 || n >= NT_UUID_LEN)
		return 0;
	return strspn(uuid, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The values of v[0..n) that are not NAN, sorted ascending, in a new
 * array (*out, to free); their count, or -1 when out of memory. */
static int sorted_values(const double *v, int n, double **out)
{
	double *t = malloc((n > 0 ? n : 1) * sizeof(*t));
	int k = 0;

	*out = t;
	if (!t)
		return -1;
	for (int i = 0; i < n; i++)
		if (!isnan(v[i]))
			t[k++] = v[i];
	qsort(t, k, sizeof(*t), cmp_double);
	return k;
}

double nt_map_noise_floor(const struct nt_map *a, const struct nt_map *b, int s)
{
	double f = -1;

	if (a->noise && !isnan(a->noise[s]))
		f = a->noise[s];
	if (b->noise && !isnan(b->noise[s]) && b->noise[s] > f)
		f = b->noise[s];
	if (f < 0)
		return NT_MAP_DEFAULT_FLOOR;
	return f < NT_MAP_MIN_FLOOR ? NT_MAP_MIN_FLOOR : f;
}

double nt_median(const double *v, int n)
{
	double *t, med = NAN;
	int k = sorted_values(v, n, &t);

	if (k > 0)
		med = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
	free(t);
	return med;
}

/* Mean of |v[i] - v[j]| over all pairs i < j of the n values that are
 * not NAN: sorted ascending, value k (from 0) is the larger one in k
 * pairs and the smaller in n - 1 - k, so the sum is O(n log n). */
static double mean_pairwise_gap(const double *v, int n)
{
	double *t, sum = 0;
	int k = sorted_values(v, n, &t);

	if (k < 0)
		return NAN;
	for (int i = 0; i < k; i++)
		sum += t[i] * (2.0 * i - (k - 1));
	free(t);
	return k < 2 ? NAN : sum / ((double)k * (k - 1) / 2);
}

void nt_map_summarize(const struct nt_map *m, struct nt_map_summary *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	s->min = s->max = s->mean = s->median = s->spread_pct = s->mean_gap = NAN;
	s->noise_median = s->noise_max = NAN;
	s->argmin = s->argmax = -1;
	for (int i = 0; i < m->n_sm; i++) {
		double v = m->chain[i];

		if (isnan(v))
			continue;
		if (!s->measured || v < s->min)
			s->min = v, s->argmin = i;
		if (!s->measured || v > s->max)
			s->max = v, s->argmax = i;
		sum += v;
		s->measured++;
	}
	if (s->measured) {
		s->mean = sum / s->measured;
		s->median = nt_median(m->chain, m->n_sm);
		s->spread_pct = (s->max - s->min) / s->min * 100.0;
	}
	s->mean_gap = mean_pairwise_gap(m->chain, m->n_sm);
	if (m->noise) {
		s->noise_median = nt_median(m->noise, m->n_sm);
		for (int i = 0; i < m->n_sm; i++)
			if (!isnan(m->noise[i]) && !(m->noise[i] <= s->noise_max))
				s->noise_max = m->noise[i];
	}
}

/* Configuration p's mean cost over the SMs that have one; NAN when none. */
static double probe_mean(const struct nt_map *m, int p)
{
	const double *cost = &m->probe_cost[(size_t)p * m->n_sm];
	double sum = 0;
	int n = 0;

	for (int s = 0; s < m->n_sm; s++) {
		if (!isnan(cost[s])) {
			sum += cost[s];
			n++;
		}
	}
	return n ? sum / n : NAN;
}

int nt_map_probe_shape(const struct nt_map *m, int max_iters, double *shape)
{
	double mean[NT_MAP_MAX_PROBES];
	int used = 0;

	if (m->n_probe > NT_MAP_MAX_PROBES || !m->probe || !m->probe_cost)
		return 0;	/* no part, or not one of map.h's */
	for (int p = 0; p < m->n_probe; p++) {
		mean[p] = m->probe[p].iters <= max_iters ? probe_mean(m, p) : NAN;
		used += mean[p] > 0;	/* not NAN: some block of it ran */
	}
	if (!used)
		return 0;
	for (int s = 0; s < m->n_sm; s++) {
		double sum = 0;
		int n = 0;

		for (int p = 0; p < m->n_probe; p++) {
			double c = m->probe_cost[(size_t)p * m->n_sm + s];

			if (mean[p] > 0 && !isnan(c)) {
				sum += c / mean[p];
				n++;
			}
		}
		shape[s] = n ? sum / n : 1;
	}
	return used;
}
