/* The job view (job.h): which traces are ranks of one job, their sync
 * points, and each step's figures, from the built report. */
#include "report/report_impl.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* collectives */

/* The identifier at s, n bytes long, names an NCCL kernel. */
static int nccl_ident(const char *s, size_t n)
{
	if (n < 4 || strncmp(s, "nccl", 4))
		return 0;
	for (size_t i = 4; i + 6 <= n; i++)
		if (!strncmp(s + i, "Kernel", 6))
			return 1;
	return 0;
}

int nt_report_is_collective(const char *mangled, const char *demangled)
{
	if (demangled) {
		if (!strncmp(demangled, "void ", 5))
			demangled += 5;
		if (nccl_ident(demangled, strcspn(demangled, "(<")))
			return 1;
	}
	if (!mangled)
		return 0;
	if (!strncmp(mangled, "_Z", 2) && isdigit((unsigned char)mangled[2])) {
		char *end;
		unsigned long n = strtoul(mangled + 2, &end, 10);

		return n <= strlen(end) && nccl_ident(end, n);
	}
	return nccl_ident(mangled, strcspn(mangled, "(<"));
}

/* which traces are one job */

static int same_program(const struct nt_report_trace *a, const struct nt_report_trace *b)
{
	return !strcmp(a->exe ? a->exe : "", b->exe ? b->exe : "") &&
	       !strcmp(a->cmdline ? a->cmdline : "", b->cmdline ? b->cmdline : "");
}

/* Host-time spans overlap; an unknown end is open, an unknown start too. */
static int same_time(const struct nt_report_trace *a, const struct nt_report_trace *b)
{
	int64_t a0 = a->start_unix_ns < 0 ? INT64_MIN : a->start_unix_ns;
	int64_t b0 = b->start_unix_ns < 0 ? INT64_MIN : b->start_unix_ns;
	int64_t a1 = a->end_unix_ns < 0 ? INT64_MAX : a->end_unix_ns;
	int64_t b1 = b->end_unix_ns < 0 ? INT64_MAX : b->end_unix_ns;

	return a0 <= b1 && b0 <= a1;
}

/* Union-find whose root is the component's first trace. */
static int root(int *parent, int i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

static void join(int *parent, int i, int j)
{
	int a = root(parent, i), b = root(parent, j);

	if (a < b)
		parent[b] = a;
	else
		parent[a] = b;
}

/* one rank's launches, as the alignment sees them */

struct view {
	const struct nt_report *r;
	const struct nt_report_launch *l;	/* its launches, by launch number */
	size_t first, n;
	size_t *coll;				/* positions of its collectives */
	size_t n_coll;
	unsigned char *common;			/* per launch: traced on every rank */
};

static int is_coll(const struct view *v, size_t i)
{
	return v->r->kernels[v->l[i].kernel].collective;
}

static const char *kname(const struct nt_report *r, int k)
{
	return r->kernels[k].demangled ? r->kernels[k].demangled : r->kernels[k].name;
}

/* The position of launch number x among v's launches, -1 when absent. */
static long find(const struct view *v, int64_t x)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->l[mid].launch < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->n && v->l[lo].launch == x ? (long)lo : -1;
}

static int whole(const struct view *v)
{
	return v->n && v->l[0].launch == 1 && v->l[v->n - 1].launch == (int64_t)v->n;
}

/* The sync points as positions, pos[k * n_ranks + i] for rank i: 0 and
 * *k_out set, or -1 when out of memory.  Without any, job->why says why. */
static int align(struct nt_report_job *job, struct view *v, size_t **pos, int *k_out)
{
	const struct nt_report *r = v[0].r;
	int nr = job->n_ranks, all_whole = 1;
	size_t k_max = v[0].n_coll, k = 0;
	int64_t *common = NULL;
	size_t n_common = 0;

	*k_out = 0;
	for (int i = 0; i < nr; i++) {
		all_whole &= whole(&v[i]);
		k_max = v[i].n_coll < k_max ? v[i].n_coll : k_max;
	}
	if (!(*pos = malloc((k_max ? k_max : 1) * nr * sizeof(**pos))))
		return -1;
	if (all_whole) {
		job->align = NT_JOB_BY_ORDER;
		for (k = 0; k < k_max; k++) {
			for (int i = 0; i < nr; i++) {
				const char *a = kname(r, v[0].l[v[0].coll[k]].kernel);
				const char *b = kname(r, v[i].l[v[i].coll[k]].kernel);

				if (strcmp(a, b)) {
					snprintf(job->note, sizeof(job->note), "collective %zu is %.60s on rank %d but %.60s "
						 "on rank %d: steps stop before it", k + 1, a,
						 job->ranks[0].rank, b, job->ranks[i].rank);
					goto order_done;
				}
				(*pos)[k * nr + i] = v[i].coll[k];
			}
		}
order_done:
		*k_out = (int)k;
		if (k < 2)
			snprintf(job->why, sizeof(job->why), "fewer than two collectives on every rank (%zu)", k);
		return 0;
	}
	job->align = NT_JOB_BY_LAUNCH;
	/* the launch numbers traced on every rank, each the same kernel on each */
	if (!(common = malloc((v[0].n ? v[0].n : 1) * sizeof(*common))))
		return -1;
	for (size_t j = 0; j < v[0].n; j++) {
		int64_t x = v[0].l[j].launch;
		int everywhere = 1;

		for (int i = 1; i < nr && everywhere; i++) {
			long at = find(&v[i], x);
			const char *a = kname(r, v[0].l[j].kernel), *b;

			if (at < 0) {
				everywhere = 0;
				continue;
			}
			b = kname(r, v[i].l[at].kernel);
			if (strcmp(a, b)) {
				snprintf(job->why, sizeof(job->why), "launch %lld is %.50s on rank %d but %.50s on "
					 "rank %d: the ranks did not make the same launches, and not every trace "
					 "holds all its process's launches", (long long)x, a, job->ranks[0].rank, b,
					 job->ranks[i].rank);
				free(common);
				job->align = NT_JOB_UNALIGNED;
				return 0;
			}
		}
		if (everywhere)
			common[n_common++] = x;
	}
	for (int i = 0; i < nr; i++)
		for (size_t j = 0; j < n_common; j++) {
			long at = find(&v[i], common[j]);

			v[i].common[at] = 1;
			if (i == 0 && is_coll(&v[0], (size_t)at)) {
				for (int q = 0; q < nr; q++)
					(*pos)[k * nr + q] = (size_t)find(&v[q], common[j]);
				k++;
			}
		}
	free(common);
	*k_out = (int)k;
	if (!n_common)
		snprintf(job->why, sizeof(job->why), "no launch number is traced on every rank");
	else if (k < 2)
		snprintf(job->why, sizeof(job->why), "fewer than two collectives traced on every rank at "
			 "the same launch number (%zu)", k);
	return 0;
}

/* steps */

/* A launch's GPU time, native where known (report.h). */
static double launch_ns(const struct nt_report_launch *l)
{
	double ns = l->t_start_ns >= 0 && l->t_end_ns >= l->t_start_ns ? (double)(l->t_end_ns - l->t_start_ns) :
		    l->ok ? l->r.measured_ns : 0;

	return l->scale * ns;
}

/* Rank i's part of the step between sync positions a and b. */
static int cell(const struct view *v, int by_order, size_t a, size_t b, struct nt_job_cell *c)
{
	const struct nt_report *r = v->r;
	const struct nt_report_launch *coll = &v->l[b];
	int64_t made = coll->launch - v->l[a].launch - 1, t0 = INT64_MAX;
	int complete = (int64_t)(b - a - 1) == made;

	memset(c, 0, sizeof(*c));
	c->collective = v->first + b;
	for (size_t j = a + 1; j < b; j++) {
		const struct nt_report_launch *l = &v->l[j];

		if (!by_order && !v->common[j])
			complete = 0;
		if (is_coll(v, j))
			continue;
		c->launches++;
		if (l->t_start_ns >= 0 && l->t_start_ns < t0)
			t0 = l->t_start_ns;
		if (!by_order && !v->common[j])
			continue;
		c->measured++;
		c->compute_ns += launch_ns(l);
		if (nt_report_launch_credible(l) && r->kernels[l->kernel].verdict != NT_VERDICT_NOT_MEASURABLE)
			c->lost_ns += l->scale * l->r.lost_ns;
	}
	c->span_ns = complete && t0 != INT64_MAX && coll->t_start_ns >= t0 ? (double)(coll->t_start_ns - t0) : NAN;
	c->wait_ns = coll->t_start_ns >= 0 && coll->t_end_ns >= coll->t_start_ns ?
			     (double)(coll->t_end_ns - coll->t_start_ns) : NAN;
	return complete;
}

/* Who finished last, by how much, and what slow SMs explain of it. */
static void judge(struct nt_report_job *job, struct nt_job_step *s)
{
	double max_c = -INFINITY, max_fast = -INFINITY;

	s->last = 0;
	for (int i = 1; i < job->n_ranks; i++)
		if (s->cells[i].compute_ns > s->cells[s->last].compute_ns)
			s->last = i;
	s->next = s->last ? 0 : 1;
	for (int i = 0; i < job->n_ranks; i++) {
		const struct nt_job_cell *c = &s->cells[i];

		if (i != s->last && c->compute_ns > s->cells[s->next].compute_ns)
			s->next = i;
		max_c = fmax(max_c, c->compute_ns);
		max_fast = fmax(max_fast, c->compute_ns - c->lost_ns);
	}
	s->lead_ns = s->cells[s->last].compute_ns - s->cells[s->next].compute_ns;
	s->lost_ns = s->cells[s->last].lost_ns;
	s->explained = s->lead_ns > 0 ? fmin(fmax(s->lost_ns, 0), s->lead_ns) / s->lead_ns : NAN;
	s->job_lost_ns = max_c - max_fast;
	job->judged++;
	job->critical_ns += s->cells[s->last].compute_ns;
	job->lead_ns += s->lead_ns;
	job->explained_ns += s->lead_ns > 0 ? s->explained * s->lead_ns : 0;
	job->job_lost_ns += s->job_lost_ns;
	job->ranks[s->last].last++;
	job->ranks[s->last].lead_ns += s->lead_ns;
	for (int i = 0; i < job->n_ranks; i++) {
		job->ranks[i].compute_ns += s->cells[i].compute_ns;
		job->ranks[i].lost_ns += s->cells[i].lost_ns;
	}
}

static int steps(struct nt_report_job *job, struct view *v, const size_t *pos, int k_n)
{
	int nr = job->n_ranks;

	if (k_n < 2)
		return 0;
	if (!(job->steps = calloc(k_n - 1, sizeof(*job->steps))))
		return -1;
	for (int k = 1; k < k_n; k++) {
		struct nt_job_step *s = &job->steps[job->n_steps++];
		const struct nt_report_launch *c0 = &v[0].l[pos[k * nr]];

		s->launch = c0->launch;
		s->kernel = c0->kernel;
		s->step_launches = c0->launch - v[0].l[pos[(k - 1) * nr]].launch - 1;
		s->last = s->next = -1;
		s->explained = NAN;
		if (!(s->cells = calloc(nr, sizeof(*s->cells))))
			return -1;
		s->complete = s->judged = 1;
		for (int i = 0; i < nr; i++) {
			s->complete &= cell(&v[i], job->align == NT_JOB_BY_ORDER, pos[(k - 1) * nr + i],
					    pos[k * nr + i], &s->cells[i]);
			s->judged &= s->cells[i].measured > 0;
		}
		job->complete += s->complete;
		if (s->judged)
			judge(job, s);
	}
	return 0;
}

/* jobs */

/* The device of a trace's traced launches (the first's), -1: none. */
static int rank_device(const struct nt_report *r, const struct nt_report_trace *tr, int trace)
{
	int ordinal;

	if (!tr->n_launches)
		return -1;
	ordinal = r->kernels[r->launches[tr->first_launch].kernel].device;
	for (int d = 0; d < r->n_devices; d++)
		if (r->devices[d].trace == trace && r->devices[d].device == ordinal)
			return d;
	return -1;
}

static void rank_summary(const struct nt_report *r, struct nt_job_rank *jr)
{
	const struct nt_report_trace *tr = &r->traces[jr->trace];
	const struct nt_map *m;

	jr->device = rank_device(r, tr, jr->trace);
	jr->map_mean = jr->map_min = jr->map_max = jr->map_spread_pct = NAN;
	m = jr->device >= 0 ? r->devices[jr->device].map : NULL;
	if (m) {
		struct nt_map_summary s;

		nt_map_summarize(m, &s);
		if (s.measured) {
			jr->map_mean = s.mean;
			jr->map_min = s.min;
			jr->map_max = s.max;
			jr->map_spread_pct = s.spread_pct;
		}
	}
	for (size_t i = 0; i < tr->n_launches; i++)
		jr->collectives += r->kernels[r->launches[tr->first_launch + i].kernel].collective;
}

/* The job of traces idx[0..n-1] (in trace order): its ranks, then its
 * steps.  0 (also when it proves no job: job->n_ranks < 2), or -1 when
 * out of memory. */
static int make_job(const struct nt_report *r, const int *idx, int n, struct nt_report_job *job)
{
	struct view *v = NULL;
	size_t *pos = NULL;
	int k_n, ret = -1, dups = 0;

	memset(job, 0, sizeof(*job));
	if (!(job->ranks = calloc(n, sizeof(*job->ranks))))
		return -1;
	/* by rank, the first trace of each (insertion sort: a few hundred at most) */
	for (int j = 0; j < n; j++) {
		const struct nt_report_trace *tr = &r->traces[idx[j]];
		int at = job->n_ranks;

		while (at > 0 && job->ranks[at - 1].rank > tr->rank)
			at--;
		if (at > 0 && job->ranks[at - 1].rank == tr->rank) {
			if (!dups++)
				snprintf(job->note, sizeof(job->note), "trace %d is rank %d again (after trace %d): "
					 "left out", idx[j] + 1, tr->rank, job->ranks[at - 1].trace + 1);
			continue;
		}
		memmove(job->ranks + at + 1, job->ranks + at, (job->n_ranks - at) * sizeof(*job->ranks));
		job->ranks[at] = (struct nt_job_rank){ .trace = idx[j], .rank = tr->rank };
		job->n_ranks++;
	}
	if (dups > 1)
		snprintf(job->note + strlen(job->note), sizeof(job->note) - strlen(job->note),
			 ", and %d more traces of ranks seen before", dups - 1);
	if (job->n_ranks < 2)
		return 0;
	if (!(v = calloc(job->n_ranks, sizeof(*v))))
		goto out;
	for (int i = 0; i < job->n_ranks; i++) {
		const struct nt_report_trace *tr = &r->traces[job->ranks[i].trace];

		rank_summary(r, &job->ranks[i]);
		v[i] = (struct view){ .r = r, .l = r->launches + tr->first_launch, .first = tr->first_launch,
				      .n = tr->n_launches };
		if (!(v[i].coll = malloc((v[i].n ? v[i].n : 1) * sizeof(*v[i].coll))) ||
		    !(v[i].common = calloc(v[i].n ? v[i].n : 1, 1)))
			goto out;
		for (size_t j = 0; j < v[i].n; j++)
			if (is_coll(&v[i], j))
				v[i].coll[v[i].n_coll++] = j;
	}
	if (align(job, v, &pos, &k_n) || steps(job, v, pos, k_n))
		goto out;
	ret = 0;
out:
	for (int i = 0; v && i < job->n_ranks; i++) {
		free(v[i].coll);
		free(v[i].common);
	}
	free(v);
	free(pos);
	return ret;
}

static void job_free(struct nt_report_job *job)
{
	for (int s = 0; s < job->n_steps; s++)
		free(job->steps[s].cells);
	free(job->steps);
	free(job->ranks);
}

int nt_report_jobs(struct nt_report *r, struct nt_err *err)
{
	int n = r->n_traces, *parent = malloc((n ? n : 1) * sizeof(*parent));
	int *idx = malloc((n ? n : 1) * sizeof(*idx)), ret = -1;

	if (!parent || !idx)
		goto out;
	for (int i = 0; i < n; i++)
		parent[i] = i;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (r->traces[i].rank >= 0 && r->traces[j].rank >= 0 &&
			    same_program(&r->traces[i], &r->traces[j]) && same_time(&r->traces[i], &r->traces[j]))
				join(parent, i, j);
	for (int i = 0; i < n; i++) {
		struct nt_report_job job;
		int m = 0;

		if (r->traces[i].rank < 0 || root(parent, i) != i)
			continue;	/* not a rank, or not its job's first trace */
		for (int j = i; j < n; j++)
			if (r->traces[j].rank >= 0 && root(parent, j) == i)
				idx[m++] = j;
		if (make_job(r, idx, m, &job)) {
			job_free(&job);
			goto out;
		}
		if (job.n_ranks < 2) {
			job_free(&job);
			continue;
		}
		if (nt_report_resize(&r->jobs, r->n_jobs + 1, sizeof(*r->jobs))) {
			job_free(&job);
			goto out;
		}
		r->jobs[r->n_jobs++] = job;
	}
	ret = 0;
out:
	free(parent);
	free(idx);
	return ret ? nt_err_set(err, "out of memory") : 0;
}

void nt_report_jobs_free(struct nt_report *r)
{
	for (int j = 0; j < r->n_jobs; j++)
		job_free(&r->jobs[j]);
	free(r->jobs);
	r->jobs = NULL;
	r->n_jobs = 0;
}
