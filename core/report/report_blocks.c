/* Block records read back from the traces: one launch's for the report's
 * passes (report_impl.h), and a built report's streamed to the formats
 * (nt_report_foreach_block, report.h), which the report keeps none of, as
 * a trace may hold ten million.  Both check every row
 * (nt_report_block_ok). */
#include "report/report_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keep_block(const struct nt_trace_block *b, void *arg)
{
	struct nt_report_blocks *bl = arg;

	if (nt_report_block_ok(b, bl->n_sm, bl->entry_only, bl->why, sizeof(bl->why)))
		return 1;
	if (bl->n == bl->cap) {
		size_t cap = bl->cap ? 2 * bl->cap : 1024;

		if (nt_report_resize(&bl->sm, cap, sizeof(*bl->sm)) ||
		    nt_report_resize(&bl->warps, cap, sizeof(*bl->warps)) ||
		    nt_report_resize(&bl->id, cap, sizeof(*bl->id)) ||
		    nt_report_resize(&bl->t0, cap, sizeof(*bl->t0)) ||
		    nt_report_resize(&bl->t1, cap, sizeof(*bl->t1)) ||
		    nt_report_resize(&bl->c0, cap, sizeof(*bl->c0)) ||
		    nt_report_resize(&bl->c1, cap, sizeof(*bl->c1)) ||
		    nt_report_resize(&bl->cyc, cap, sizeof(*bl->cyc)) ||
		    nt_report_resize(&bl->how, cap, sizeof(*bl->how))) {
			bl->oom = 1;
			return -1;
		}
		bl->cap = cap;
	}
	bl->sm[bl->n] = b->sm;
	bl->warps[bl->n] = b->warps;
	bl->id[bl->n] = b->block;
	bl->t0[bl->n] = b->t_start_ns;
	bl->t1[bl->n] = b->t_end_ns;
	bl->c0[bl->n] = b->c_start;
	bl->c1[bl->n] = b->c_end;
	bl->how[bl->n] = NT_END_MEASURED;
	bl->n++;
	return 0;
}

int nt_report_read_launch_blocks(struct nt_trace *t, int64_t launch, int n_sm, int32_t max_bps, int entry_only,
				 struct nt_report_blocks *bl, struct nt_err *err)
{
	int ret;

	bl->n = 0;
	bl->oom = 0;
	bl->why[0] = '\0';
	bl->n_sm = n_sm;
	bl->entry_only = entry_only;
	memset(&bl->inferred, 0, sizeof(bl->inferred));
	ret = nt_trace_foreach_block(t, launch, keep_block, bl, err);
	if (bl->oom)
		return nt_err_set(err, "launch %lld of '%s': out of memory after %zu blocks", (long long)launch,
				  nt_trace_path_of(t), bl->n);
	if (ret || !bl->n)
		return ret;
	bl->slots = max_bps;
	/* no occupancy (a graph node's dynamic shared memory is not seen) */
	if (entry_only && max_bps <= 0 &&
	    (bl->slots = nt_infer_slots(bl->n, bl->sm, bl->c0, n_sm, NT_INFER_MAX_SLOTS, err)) < 0)
		return -1;
	if (entry_only && nt_infer_ends(bl->n, bl->sm, bl->t0, bl->c0, n_sm, bl->slots, bl->t1, bl->c1, bl->how,
					&bl->inferred, err))
		return -1;
	for (size_t i = 0; i < bl->n; i++)
		bl->cyc[i] = (double)(bl->c1[i] - bl->c0[i]);
	return 0;
}

int nt_report_read_blocks(struct tstate *ts, const struct ldesc *d, struct nt_report_blocks *bl,
			  struct nt_err *err)
{
	return nt_report_read_launch_blocks(ts->t, d->launch, nt_report_sm_count(ts, d->device), d->max_bps,
					    d->entry_only, bl, err);
}

struct nt_replay_block *nt_report_replay_blocks(const struct nt_report_blocks *bl)
{
	struct nt_replay_block *rb = malloc((bl->n ? bl->n : 1) * sizeof(*rb));

	for (size_t i = 0; rb && i < bl->n; i++)
		rb[i] = (struct nt_replay_block){ bl->t0[i], bl->t1[i], bl->sm[i] };
	return rb;
}

void nt_report_blocks_free(struct nt_report_blocks *bl)
{
	free(bl->sm);
	free(bl->warps);
	free(bl->id);
	free(bl->t0);
	free(bl->t1);
	free(bl->c0);
	free(bl->c1);
	free(bl->cyc);
	free(bl->how);
	memset(bl, 0, sizeof(*bl));
}

/* The SM count of launch l's device (0 when the trace does not list it). */
static int sm_count_of(const struct nt_report *r, const struct nt_report_launch *l)
{
	const struct nt_report_kernel *k = &r->kernels[l->kernel];

	for (int d = 0; d < r->n_devices; d++)
		if (r->devices[d].trace == l->trace && r->devices[d].device == k->device)
			return r->devices[d].sm_count;
	return 0;
}

/* Each launch's blocks as the report read them: ends inferred where only
 * starts were recorded, a launch with a bad row left out as there. */
int nt_report_foreach_block(const struct nt_report *r, size_t first, size_t n,
			    int (*cb)(const struct nt_report_block *b, void *arg), void *arg,
			    struct nt_err *err)
{
	struct nt_report_blocks bl = { 0 };
	struct nt_report_block b = { 0 };
	struct nt_trace *t = NULL;
	int trace = -1, ret = 0;

	if (first > r->n_launches || n > r->n_launches - first)
		return nt_err_set(err, "launches %zu..%zu: the report has %zu", first, first + n, r->n_launches);
	for (size_t i = first; i < first + n; i++) {
		const struct nt_report_launch *l = &r->launches[i];

		if (l->trace != trace) {
			nt_trace_close(t);
			t = NULL;
			trace = l->trace;
			if ((ret = nt_trace_open(r->traces[trace].path, &t, err)))
				goto out;
		}
		ret = nt_report_read_launch_blocks(t, l->launch, sm_count_of(r, l), l->max_bps, l->entry_only, &bl,
						   err);
		if (ret > 0)
			continue;	/* left out, as by the report */
		if (ret)
			goto out;
		b.launch = i;
		for (size_t j = 0; j < bl.n; j++) {
			b.block = bl.id[j];
			b.sm = bl.sm[j];
			b.warps = bl.warps[j];
			b.t_start_ns = bl.t0[j];
			b.t_end_ns = bl.t1[j];
			b.cycles = bl.c1[j] - bl.c0[j];
			b.end = bl.how[j];
			if ((ret = cb(&b, arg)))
				goto out;
		}
	}
out:
	nt_report_blocks_free(&bl);
	nt_trace_close(t);
	return ret;
}
