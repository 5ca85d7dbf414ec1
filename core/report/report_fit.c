/* Each kernel's fit (report.h, attrib.h): a sample of its blocks, read
 * launch by launch, then the fit with what follows from it. */
#include "report/report_impl.h"

#include <math.h>
#include <stdlib.h>

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Keep at most NT_REPORT_FIT_BLOCKS of a kernel's blocks: a reservoir
 * sample, reproducible (fixed seed). */
static int keep_for_fit(struct tstate *ts, int k, const struct nt_attrib_block *b)
{
	size_t *n = &ts->n_fb[k], seen = ++ts->seen_fb[k];

	if (*n < NT_REPORT_FIT_BLOCKS) {
		size_t cap = *n;	/* grows in powers of two from 1024 */
		struct nt_attrib_block *a = ts->fb[k];

		if (!*n || (*n >= 1024 && !(*n & (*n - 1)))) {
			cap = *n ? 2 * *n : 1024;
			a = realloc(a, cap * sizeof(*a));
			if (!a)
				return -1;
			ts->fb[k] = a;
		}
		a[(*n)++] = *b;
		return 0;
	}
	{
		uint64_t j = rnd(&ts->rng) % seen;

		if (j < NT_REPORT_FIT_BLOCKS)
			ts->fb[k][j] = *b;
	}
	return 0;
}

/* A launch with a bad block row is left out of the sample (the second
 * pass counts it, report.c). */
static int first_pass_launch(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl)
{
	struct nt_replay_block *rb = NULL;
	int32_t *wave = NULL, *cores = NULL;
	int slots, observed, ret, n_sm = nt_report_sm_count(ts, d->device);

	if ((ret = nt_report_read_blocks(ts, d, bl, ts->err)))
		return ret < 0 ? -1 : 0;
	if (!bl->n)
		return 0;
	ret = -1;
	rb = nt_report_replay_blocks(bl);
	wave = malloc(bl->n * sizeof(*wave));
	cores = malloc(bl->n * sizeof(*cores));
	if (!rb || !wave || !cores) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	slots = nt_report_launch_slots(d, rb, bl->n, &observed);
	if (nt_attrib_waves(bl->t0, bl->n, (int64_t)slots * (n_sm > 0 ? n_sm : 1), wave, ts->err) ||
	    nt_attrib_coresidency(bl->sm, bl->t0, bl->t1, bl->n, cores, ts->err))
		goto out;
	for (size_t i = 0; i < bl->n; i++) {
		struct nt_attrib_block ab = { bl->sm[i], wave[i], cores[i], d->launch,
					      (double)(bl->t1[i] - bl->t0[i]), bl->cyc[i] };

		if (keep_for_fit(ts, d->kernel, &ab)) {
			nt_err_set(ts->err, "out of memory");
			goto out;
		}
	}
	ret = 0;
out:
	free(rb);
	free(wave);
	free(cores);
	return ret;
}

/* The fit's sample of each kernel: every launch while the kernel has at
 * most NT_REPORT_FIT_BLOCKS blocks in all, else every stride-th launch
 * (stride = blocks / NT_REPORT_FIT_BLOCKS, rounded up), spread over the
 * run; reading and preparing the others would cost most of the report's
 * time for nothing (the reservoir in keep_for_fit bounds the rest).
 * Counts come from the launch rows, so every launch is counted. */
static int fit_samples(struct tstate *ts, struct nt_report_blocks *bl)
{
	struct nt_report *r = ts->r;
	int64_t *total = calloc(r->n_kernels ? r->n_kernels : 1, sizeof(*total));
	int *seen = calloc(r->n_kernels ? r->n_kernels : 1, sizeof(*seen));
	int ret = -1;

	if (!total || !seen) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ts->n_ld; i++) {
		struct nt_report_kernel *k = &r->kernels[ts->ld[i].kernel];

		total[ts->ld[i].kernel] += ts->ld[i].blocks;
		k->launches++;
		k->blocks += ts->ld[i].blocks;
	}
	for (size_t i = 0; i < ts->n_ld; i++) {
		int ki = ts->ld[i].kernel;
		int64_t stride = (total[ki] + NT_REPORT_FIT_BLOCKS - 1) / NT_REPORT_FIT_BLOCKS;

		if (seen[ki]++ % (stride > 0 ? stride : 1))
			continue;
		if (first_pass_launch(ts, &ts->ld[i], bl))
			goto out;
	}
	ret = 0;
out:
	free(total);
	free(seen);
	return ret;
}

/* The fit's per-SM medians and the median latency of the SMs it used
 * (report.h), from the blocks it was given. */
static int kernel_medians(struct nt_report_kernel *k, const struct nt_attrib_block *b, size_t n,
			  struct nt_err *err)
{
	const struct nt_map *m = k->map;
	double *lat = malloc(m->n_sm * sizeof(*lat));

	k->sm_blocks = malloc(m->n_sm * sizeof(*k->sm_blocks));
	k->sm_median_ns = malloc(m->n_sm * sizeof(*k->sm_median_ns));
	if (!lat || !k->sm_blocks || !k->sm_median_ns) {
		free(lat);
		return nt_err_set(err, "out of memory");
	}
	if (nt_attrib_sm_medians(b, n, m->n_sm, k->sm_blocks, k->sm_median_ns, NULL, err)) {
		free(lat);
		return -1;
	}
	for (int s = 0; s < m->n_sm; s++)
		lat[s] = k->sm_blocks[s] >= NT_ATTRIB_MIN_BLOCKS ? m->chain[s] : NAN;
	k->lat_median = nt_median(lat, m->n_sm);
	free(lat);
	return 0;
}

/* A persistent kernel's work share per SM by the kernel's fit (replay.h:
 * in proportion to 1 / rho).  Left NULL when the fit gives some SM no
 * positive time, or out of memory: the report then has no shares. */
static void kernel_shares(struct nt_report_kernel *k, const struct nt_map *m, int n_sm)
{
	double *lat = nt_report_replay_lat(m, n_sm), *rho = malloc(n_sm * sizeof(*rho)), sum = 0;

	if (lat && rho && !nt_replay_rho(lat, n_sm, k->fit.intercept_ns, k->fit.slope_ns, rho, NULL)) {
		for (int s = 0; s < n_sm; s++)
			sum += 1 / rho[s];
		for (int s = 0; s < n_sm; s++)
			rho[s] = 1 / rho[s] / (sum / n_sm);
		k->shares = rho;
		k->n_shares = n_sm;
		rho = NULL;
	}
	free(lat);
	free(rho);
}

/* Per kernel of this trace, the fit and what follows from it. */
static int fit_kernel(struct tstate *ts, int k)
{
	struct nt_report_kernel *e = &ts->r->kernels[k];
	struct nt_map *m = nt_report_map(ts, e->device);
	struct nt_err ferr;

	e->map = m;
	if (!m || !ts->n_fb[k])
		return 0;
	e->fitted = !nt_attrib_fit(ts->fb[k], ts->n_fb[k], m->chain, m->n_sm, &e->fit, &ferr);
	if (!e->fitted || !e->fit.fitted)
		return 0;
	kernel_shares(e, m, nt_report_sm_count(ts, e->device));
	return kernel_medians(e, ts->fb[k], ts->n_fb[k], ts->err);
}

int nt_report_fit_kernels(struct tstate *ts, int k0)
{
	struct nt_report_blocks bl = { 0 };
	int ret = -1;

	if (fit_samples(ts, &bl))
		goto out;
	for (int k = k0; k < ts->r->n_kernels; k++)
		if (fit_kernel(ts, k))
			goto out;
	ret = 0;
out:
	nt_report_blocks_free(&bl);
	return ret;
}
