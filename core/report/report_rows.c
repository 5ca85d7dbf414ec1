/* The rows of a trace the report can use (report.h, docs/report.md): a
 * trace may be damaged, or written by another tool, and its numbers must
 * neither overflow the arithmetic nor size an allocation. */
#include "report/report_impl.h"

#include <stdio.h>

#include "map/map.h"

/* why after its "<table> row (<key>): " prefix, n bytes in; the room left. */
static size_t rest(char *why, size_t len, int n, char **at)
{
	size_t used = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;

	*at = why + used;
	return len - used;
}

int nt_report_device_ok(const struct nt_trace_device *d, char *why, size_t len)
{
	char *f;
	size_t fl = rest(why, len, snprintf(why, len, "devices row (device %d): ", d->device), &f);

	if (d->device < 0 || d->device >= MAX_DEVICES)
		snprintf(f, fl, "not a CUDA ordinal (0..%d)", MAX_DEVICES - 1);
	else if (d->sm_count < 1 || d->sm_count > NT_MAP_MAX_SM)
		snprintf(f, fl, "sm_count %d is not a number of SMs (1..%d)", d->sm_count, NT_MAP_MAX_SM);
	else
		return 0;
	return -1;
}

/* A time of the trace: NT_TRACE_UNKNOWN or a GPU time, not negative. */
static int time_ok(int64_t t)
{
	return t >= 0 || t == NT_TRACE_UNKNOWN;
}

int nt_report_launch_ok(const struct nt_trace_launch *l, int listed, char *why, size_t len)
{
	char *f;
	size_t fl = rest(why, len, snprintf(why, len, "launches row (launch %lld): ", (long long)l->launch), &f);

	if (!listed)
		snprintf(f, fl, "device %d is not in the devices table", l->device);
	else if (l->blocks > (int64_t)NT_REPLAY_MAX_BLOCKS)
		snprintf(f, fl, "blocks %lld is more than %zu", (long long)l->blocks, NT_REPLAY_MAX_BLOCKS);
	else if (l->grid_x < 1 || l->grid_y < 1 || l->grid_z < 1 || l->block_x < 1 || l->block_y < 1 ||
		 l->block_z < 1)
		snprintf(f, fl, "grid %dx%dx%d, block %dx%dx%d is not a launch configuration", l->grid_x,
			 l->grid_y, l->grid_z, l->block_x, l->block_y, l->block_z);
	else if (!time_ok(l->t_start_ns) || !time_ok(l->t_end_ns) ||
		 (l->t_start_ns >= 0 && l->t_end_ns >= 0 && l->t_end_ns < l->t_start_ns))
		snprintf(f, fl, "t_start_ns %lld, t_end_ns %lld is not a time span", (long long)l->t_start_ns,
			 (long long)l->t_end_ns);
	else
		return 0;
	return -1;
}

/* A block row's fault, BLOCK_OK when it is good: the check runs on every
 * record of a trace, so nothing is formatted until a row is bad. */
enum block_fault { BLOCK_OK, BAD_SM, BAD_START, BAD_TIME, BAD_CYCLES, BAD_WARPS };

static enum block_fault block_fault(const struct nt_trace_block *b, int n_sm, int entry_only)
{
	if (b->sm < 0 || b->sm >= n_sm)
		return BAD_SM;
	if (entry_only)		/* its end is not known */
		return b->t_start_ns < 0 || b->c_start < 0 ? BAD_START : BLOCK_OK;
	if (b->t_start_ns < 0 || b->t_end_ns < b->t_start_ns)
		return BAD_TIME;
	if (b->c_start < 0 || b->c_end < b->c_start)
		return BAD_CYCLES;
	return b->warps < 0 ? BAD_WARPS : BLOCK_OK;
}

int nt_report_block_ok(const struct nt_trace_block *b, int n_sm, int entry_only, char *why, size_t len)
{
	enum block_fault fault = block_fault(b, n_sm, entry_only);
	char *f;
	size_t fl;

	if (fault == BLOCK_OK)
		return 0;
	fl = rest(why, len, snprintf(why, len, "blocks row (launch %lld, block %lld): ", (long long)b->launch,
				     (long long)b->block), &f);
	if (fault == BAD_SM)
		snprintf(f, fl, "sm %d is not an SM of the device (0..%d)", b->sm, n_sm - 1);
	else if (fault == BAD_START)
		snprintf(f, fl, "t_start_ns %lld, c_start %lld is not a start", (long long)b->t_start_ns,
			 (long long)b->c_start);
	else if (fault == BAD_TIME)
		snprintf(f, fl, "t_start_ns %lld, t_end_ns %lld is not a time span", (long long)b->t_start_ns,
			 (long long)b->t_end_ns);
	else if (fault == BAD_CYCLES)
		snprintf(f, fl, "c_start %lld, c_end %lld is not a cycle span", (long long)b->c_start,
			 (long long)b->c_end);
	else
		snprintf(f, fl, "warps %d is negative", b->warps);
	return -1;
}
