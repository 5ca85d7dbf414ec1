/* Each kernel's fit (report.h, attrib.h): a sample of its blocks, read
 * launch by launch, then the fit with what follows from it. */
#include "report/report_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/structure.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Keep at most NT_REPORT_FIT_BLOCKS of a kernel's blocks (k: its index
 * in the trace): a reservoir sample, reproducible (fixed seed). */
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

/* Each SM's place in the launch's first-wave dispatch, 0..1 (report.h,
 * NT_COV_ORDER): the rank of its first block's start among the SMs that
 * ran any, into order[n_sm] (NAN for the others); rank[] is scratch of
 * n_sm. */
static void dispatch_order(const struct nt_report_blocks *bl, int n_sm, float *order, int *rank)
{
	int64_t *first = malloc((size_t)n_sm * sizeof(*first));
	int used = 0;

	for (int s = 0; s < n_sm; s++)
		order[s] = NAN;
	if (!first)
		return;
	for (int s = 0; s < n_sm; s++)
		first[s] = INT64_MAX;
	for (size_t i = 0; i < bl->n; i++)
		if (bl->t0[i] < first[bl->sm[i]])
			first[bl->sm[i]] = bl->t0[i];
	for (int s = 0; s < n_sm; s++)
		if (first[s] != INT64_MAX)
			rank[used++] = s;
	/* insertion sort by (first start, SM): a few hundred SMs */
	for (int i = 1; i < used; i++)
		for (int j = i; j > 0 && (first[rank[j - 1]] > first[rank[j]] ||
					  (first[rank[j - 1]] == first[rank[j]] && rank[j - 1] > rank[j])); j--) {
			int t = rank[j];

			rank[j] = rank[j - 1];
			rank[j - 1] = t;
		}
	for (int i = 0; i < used; i++)
		order[rank[i]] = used > 1 ? (float)i / (float)(used - 1) : 0;
	free(first);
}

/* A launch with a bad block row is left out of the sample (the second
 * pass counts it, report.c). */
static int first_pass_launch(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl)
{
	struct nt_report_kernel *k = &ts->r->kernels[d->kernel];
	struct nt_replay_block *rb = NULL;
	int32_t *wave = NULL, *cores = NULL;
	float *order = NULL;
	int *rank = NULL;
	int slots, observed, ret, n_sm = nt_report_sm_count(ts, d->device);
	int64_t t0, t1;

	if ((ret = nt_report_read_blocks(ts, d, bl, ts->err)))
		return ret < 0 ? -1 : 0;
	if (!bl->n)
		return 0;
	ret = -1;
	rb = nt_report_replay_blocks(bl);
	wave = malloc(bl->n * sizeof(*wave));
	cores = malloc(bl->n * sizeof(*cores));
	order = malloc((size_t)(n_sm > 0 ? n_sm : 1) * sizeof(*order));
	rank = malloc((size_t)(n_sm > 0 ? n_sm : 1) * sizeof(*rank));
	if (!rb || !wave || !cores || !order || !rank) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	t0 = bl->t0[0];
	t1 = bl->t1[0];
	for (size_t i = 1; i < bl->n; i++) {
		t0 = bl->t0[i] < t0 ? bl->t0[i] : t0;
		t1 = bl->t1[i] > t1 ? bl->t1[i] : t1;
	}
	/* a one-wave entry-only launch's blocks all "end" as they start */
	if ((!d->entry_only || bl->inferred.inferred) &&
	    (k->traced_min_ns < 0 || (double)(t1 - t0) < k->traced_min_ns))
		k->traced_min_ns = (double)(t1 - t0);
	dispatch_order(bl, n_sm, order, rank);
	slots = nt_report_launch_slots(d, rb, bl->n, &observed);
	if (nt_attrib_waves(bl->t0, bl->n, (int64_t)slots * (n_sm > 0 ? n_sm : 1), wave, ts->err) ||
	    nt_attrib_coresidency(bl->sm, bl->t0, bl->t1, bl->n, cores, ts->err))
		goto out;
	for (size_t i = 0; i < bl->n; i++) {
		struct nt_attrib_block ab;

		/* an end from the launch's other blocks says nothing of this one */
		if (bl->how[i] != NT_END_MEASURED && bl->how[i] != NT_END_INFERRED) {
			k->fit_censored++;
			continue;
		}
		k->fit_inferred += bl->how[i] == NT_END_INFERRED;
		ab = (struct nt_attrib_block){ bl->sm[i], wave[i], cores[i], d->launch,
					      (double)(bl->t1[i] - bl->t0[i]), bl->cyc[i],
					      (float)((double)i / (double)bl->n), order[bl->sm[i]] };

		if (keep_for_fit(ts, d->kernel - ts->k0, &ab)) {
			nt_err_set(ts->err, "out of memory");
			goto out;
		}
	}
	ret = 0;
out:
	free(rb);
	free(wave);
	free(cores);
	free(order);
	free(rank);
	return ret;
}

/* The fit's sample of each kernel: every launch while the kernel has at
 * most NT_REPORT_FIT_BLOCKS blocks in all, else every stride-th launch
 * (stride = blocks / NT_REPORT_FIT_BLOCKS, rounded up), spread over the
 * run; reading and preparing the others would cost most of the report's
 * time for nothing (the reservoir in keep_for_fit bounds the rest).
 * Counts come from the launch rows, so every launch is counted.
 *
 * A kernel traced both ways (--blocks mixed: entry-only launches and
 * full ones) is fitted on the inferred block times of its entry-only
 * launches when they have any (several waves), else on the measured
 * ones: inferred times are about native, measured ones carry the exit
 * site's cost (report.h, the probe effect), and the two do not mix in
 * one fit.  So its entry-only launches are read first (pass 0), its full
 * ones (pass 1) only when those gave no inferred block. */
static int fit_samples(struct tstate *ts, struct nt_report_blocks *bl)
{
	struct nt_report *r = ts->r;
	size_t nk = ts->n_k ? (size_t)ts->n_k : 1;
	int64_t *total = calloc(2 * nk, sizeof(*total));
	int *seen = calloc(2 * nk, sizeof(*seen));
	int ret = -1;

	if (!total || !seen) {
		nt_err_set(ts->err, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ts->n_ld; i++) {
		struct nt_report_kernel *k = &r->kernels[ts->ld[i].kernel];

		total[(ts->ld[i].entry_only ? 0 : nk) + (size_t)(ts->ld[i].kernel - ts->k0)] += ts->ld[i].blocks;
		k->launches++;
		k->blocks += ts->ld[i].blocks;
		k->entry_launches += ts->ld[i].entry_only;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < ts->n_ld; i++) {
			size_t ki = (pass ? nk : 0) + (size_t)(ts->ld[i].kernel - ts->k0);
			int64_t stride = (total[ki] + NT_REPORT_FIT_BLOCKS - 1) / NT_REPORT_FIT_BLOCKS;
			int entry = ts->ld[i].entry_only != 0;

			if (pass == 0 ? !entry : entry || r->kernels[ts->ld[i].kernel].fit_inferred)
				continue;
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

void nt_report_kernel_shares(struct nt_report_kernel *k, int n_sm)
{
	double *lat = nt_report_replay_lat(k->map, n_sm), *rho = malloc(n_sm * sizeof(*rho)), sum = 0;
	double slope = k->sensitive ? k->fit.slope_ns : 0;

	free(k->shares);
	k->shares = NULL;
	if (lat && rho && !nt_replay_rho(lat, n_sm, k->fit.intercept_ns, slope, rho, NULL)) {
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

/* The r of the kernel's per-SM medians (the fit's points) with what
 * else varies by SM over the same blocks (report.h: co-residency,
 * position in the grid, dispatch order); the common pattern is
 * report_verdict.c's. */
static int kernel_covariates(struct nt_report_kernel *e, const struct nt_attrib_block *b, size_t n,
			     struct nt_err *err)
{
	const struct nt_map *m = e->map;
	double *y = malloc(m->n_sm * sizeof(*y)), *sum = calloc(3 * (size_t)m->n_sm, sizeof(*sum));
	int *cnt = calloc(m->n_sm, sizeof(*cnt));

	if (!y || !sum || !cnt) {
		free(y);
		free(sum);
		free(cnt);
		return nt_err_set(err, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		int s = b[i].sm;

		if (s < 0 || s >= m->n_sm)
			continue;
		sum[s] += b[i].coresident;
		sum[m->n_sm + s] += b[i].pos;
		sum[2 * m->n_sm + s] += b[i].order;
		cnt[s]++;
	}
	for (int s = 0; s < m->n_sm; s++) {
		y[s] = e->sm_blocks[s] >= NT_ATTRIB_MIN_BLOCKS && !isnan(m->chain[s]) ? e->sm_median_ns[s] : NAN;
		for (int v = 0; v < 3; v++)
			sum[v * m->n_sm + s] = cnt[s] ? sum[v * m->n_sm + s] / cnt[s] : NAN;
	}
	for (int v = 0; v < 3; v++) {
		double *c = sum + v * m->n_sm;

		/* the map's r over the fit's SMs only */
		for (int s = 0; s < m->n_sm; s++)
			c[s] = isnan(y[s]) ? NAN : c[s];
		e->cov_r[NT_COV_CORES + v] = nt_pearson(y, c, m->n_sm);
		e->cov_map_r[NT_COV_CORES + v] = nt_pearson(c, m->chain, m->n_sm);
	}
	free(y);
	free(sum);
	free(cnt);
	return 0;
}

/* Kernel k's blocks' mean per SM into mean[n_sm] (NAN where fewer than
 * min_blocks), and their overall mean; 0 when every SM has min_blocks. */
static int sm_means(const struct nt_attrib_block *b, size_t n, int n_sm, int min_blocks, double *mean,
		    int *cnt, double *all)
{
	double sum = 0;
	int short_of = 0;

	for (int s = 0; s < n_sm; s++)
		mean[s] = 0, cnt[s] = 0;
	for (size_t i = 0; i < n; i++)
		if (b[i].sm >= 0 && b[i].sm < n_sm) {
			mean[b[i].sm] += b[i].ns;
			cnt[b[i].sm]++;
			sum += b[i].ns;
		}
	for (int s = 0; s < n_sm; s++) {
		short_of |= cnt[s] < min_blocks;
		mean[s] = cnt[s] ? mean[s] / cnt[s] : NAN;
	}
	*all = n ? sum / (double)n : NAN;
	return short_of;
}

/* The probe shape of device dev's kernels (report.h) into shape[n_sm]:
 * the number of kernels it came from (0: none), or -1 out of memory.
 * Each kernel's per-SM means are taken over their mean over SMs. */
static int probe_shape(struct tstate *ts, int dev, int n_sm, double *shape, double *mean, int *cnt)
{
	double *w = calloc((size_t)n_sm, sizeof(*w));
	int used = 0;

	if (!w)
		return -1;
	for (int s = 0; s < n_sm; s++)
		shape[s] = 0;
	for (int k = 0; k < ts->n_k; k++) {
		const struct nt_report_kernel *e = &ts->r->kernels[ts->k0 + k];
		double all, norm = 0;
		int with = 0;

		if (e->device != dev || e->collective || !(e->probe_share >= NT_REPORT_PROBE_SHAPE_MIN) ||
		    sm_means(ts->fb[k], ts->n_fb[k], n_sm, 3, mean, cnt, &all))
			continue;
		for (int s = 0; s < n_sm; s++)
			norm += mean[s], with++;
		norm /= with;
		if (!(norm > 0))	/* blocks of no time */
			continue;
		for (int s = 0; s < n_sm; s++) {
			shape[s] += cnt[s] * mean[s] / norm;
			w[s] += cnt[s];
		}
		used++;
	}
	if (used < NT_REPORT_PROBE_SHAPE_KERNELS)
		used = 0;
	for (int s = 0; s < n_sm && used; s++)
		shape[s] = w[s] > 0 ? shape[s] / w[s] : 1;
	free(w);
	return used;
}

/* The map's probe shape of device dev into cal[n_sm] (calibrate's, map.h):
 * 1 when it has one. */
static int calibrated_shape(struct tstate *ts, int dev, int n_sm, double *cal)
{
	struct nt_map *m = nt_report_map(ts, dev);

	return m && m->n_sm == n_sm && nt_map_probe_shape(m, 0, cal) > 0;
}

/* The probe shape's cost taken off the fit's blocks of every measurable
 * kernel with a probe share (report.h). */
static int probe_correct(struct tstate *ts)
{
	struct nt_report_trace *tr = &ts->r->traces[ts->trace];

	if (ts->r->flags & NT_REPORT_NO_PROBE_CORRECTION)
		return 0;
	for (int dev = 0; dev < MAX_DEVICES; dev++) {
		int n_sm = nt_report_sm_count(ts, dev), n, have = 0, cal_ok;
		double *shape, *mean, *cal, *use;
		int *cnt;

		for (int k = 0; k < ts->n_k; k++)
			have |= ts->r->kernels[ts->k0 + k].device == dev;
		if (!have || n_sm <= 0)
			continue;
		shape = malloc((size_t)n_sm * sizeof(*shape));
		mean = malloc((size_t)n_sm * sizeof(*mean));
		cal = malloc((size_t)n_sm * sizeof(*cal));
		cnt = malloc((size_t)n_sm * sizeof(*cnt));
		if (!shape || !mean || !cal || !cnt || (n = probe_shape(ts, dev, n_sm, shape, mean, cnt)) < 0) {
			free(shape), free(mean), free(cal), free(cnt);
			return nt_err_set(ts->err, "out of memory");
		}
		cal_ok = calibrated_shape(ts, dev, n_sm, cal);
		tr->probe_shape_kernels += n;
		if (n && cal_ok && isnan(tr->probe_shape_r_calib))
			tr->probe_shape_r_calib = nt_pearson(shape, cal, n_sm);
		use = n ? shape : cal_ok ? cal : NULL;	/* the trace's own, else calibrate's */
		if (use && !tr->probe_shape && (tr->probe_shape = malloc((size_t)n_sm * sizeof(*use)))) {
			memcpy(tr->probe_shape, use, (size_t)n_sm * sizeof(*use));
			tr->probe_shape_sm = n_sm;
			tr->probe_shape_device = dev;
			tr->probe_shape_calibrated = !n;
		}
		for (int k = 0; k < ts->n_k && use; k++) {
			struct nt_report_kernel *e = &ts->r->kernels[ts->k0 + k];
			struct nt_attrib_block *b = ts->fb[k];
			double all, p = e->probe_share;
			int ok = 1;

			if (e->device != dev || e->collective || !(p > 0) || p >= NT_REPORT_PROBE_MAX || !ts->n_fb[k])
				continue;
			sm_means(b, ts->n_fb[k], n_sm, 0, mean, cnt, &all);
			for (size_t i = 0; i < ts->n_fb[k] && ok; i++)
				ok = b[i].sm >= 0 && b[i].sm < n_sm && b[i].ns - p * all * use[b[i].sm] > 0;
			if (!ok)
				continue;
			for (size_t i = 0; i < ts->n_fb[k]; i++) {
				double ns = b[i].ns - p * all * use[b[i].sm];

				b[i].cycles *= ns / b[i].ns;	/* the cycle fit's too, in proportion */
				b[i].ns = ns;
			}
			e->probe_corrected = 1;
		}
		free(shape), free(mean), free(cal), free(cnt);
	}
	return 0;
}

/* Kernel k of this trace (r->kernels[k0 + k]): the fit and what follows
 * from it. */
int nt_report_fit_kernel(struct tstate *ts, int k, struct nt_err *err)
{
	struct nt_report_kernel *e = &ts->r->kernels[ts->k0 + k];
	struct nt_map *m = nt_report_map(ts, e->device);
	struct nt_err ferr;

	e->map = m;
	if (!m || !ts->n_fb[k] || e->collective)
		return 0;
	e->fitted = !nt_attrib_fit(ts->fb[k], ts->n_fb[k], m->chain, m->n_sm, &e->fit, &ferr);
	if (!e->fitted || !e->fit.fitted)
		return 0;
	if (kernel_medians(e, ts->fb[k], ts->n_fb[k], err))
		return -1;
	return kernel_covariates(e, ts->fb[k], ts->n_fb[k], err);
}

int nt_report_fit_samples(struct tstate *ts)
{
	struct nt_report_blocks bl = { 0 };
	int ret = -1;

	/* the native times first: the probe's share corrects the blocks */
	if (fit_samples(ts, &bl) || nt_report_read_native(ts) || probe_correct(ts))
		goto out;
	ret = 0;
out:
	nt_report_blocks_free(&bl);
	return ret;
}
