#include "gpu/occupancy.h"

#include <limits.h>
#include <string.h>

#define KIB 1024

/* Per compute capability: the programming guide's "Technical
 * Specifications per Compute Capability" table. */
static const struct cc_limits {
	int major, minor;
	struct nt_sm_limits l;
} known[] = {
	{ 7, 5, { 1024, 16, 65536, 65536, 256, 4, 64 * KIB, 64 * KIB, 0, 256 } },
	{ 8, 0, { 2048, 32, 65536, 65536, 256, 4, 164 * KIB, 163 * KIB, KIB, 128 } },
	{ 8, 6, { 1536, 16, 65536, 65536, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 } },
	{ 8, 7, { 2048, 16, 65536, 65536, 256, 4, 164 * KIB, 163 * KIB, KIB, 128 } },
	{ 8, 9, { 1536, 24, 65536, 65536, 256, 4, 100 * KIB, 99 * KIB, KIB, 128 } },
	{ 9, 0, { 2048, 32, 65536, 65536, 256, 4, 228 * KIB, 227 * KIB, KIB, 128 } },
};

int nt_sm_limits_for(int cc_major, int cc_minor, struct nt_sm_limits *l, struct nt_err *err)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].major == cc_major && known[i].minor == cc_minor) {
			*l = known[i].l;
			return 0;
		}
	memset(l, 0, sizeof(*l));
	return nt_err_set(err, "compute capability %d.%d: occupancy limits unknown (known: 7.5, 8.0, 8.6, 8.7, 8.9, 9.0)",
			  cc_major, cc_minor);
}

static int64_t round_up(int64_t x, int64_t unit)
{
	return (x + unit - 1) / unit * unit;
}

static int by_registers(const struct nt_sm_limits *l, const struct nt_launch_res *r, int warps,
			struct nt_occupancy *o)
{
	int64_t per_warp, per_subpart;

	if (!r->registers)
		return INT_MAX;
	per_warp = round_up((int64_t)r->registers * 32, l->reg_alloc_unit);
	o->regs_per_block = (int)(per_warp * warps);
	/* The hardware checks a block as if it took whole sub-partitions. */
	if (r->registers > 255 || per_warp * warps > l->max_regs_per_block ||
	    per_warp * round_up(warps, l->warp_alloc_granularity) > l->max_regs_per_block)
		return 0;
	per_subpart = l->regs_per_sm / l->warp_alloc_granularity / per_warp;
	return (int)(per_subpart * l->warp_alloc_granularity / warps);
}

static int by_smem(const struct nt_sm_limits *l, const struct nt_launch_res *r, struct nt_occupancy *o)
{
	int64_t need = r->static_smem + r->dynamic_smem + l->reserved_smem_per_block;

	o->smem_per_block = round_up(need, l->smem_alloc_unit);
	if (!o->smem_per_block)
		return INT_MAX;
	if (o->smem_per_block > (int64_t)l->smem_per_block_optin + l->reserved_smem_per_block)
		return 0;
	return (int)(l->smem_per_sm / o->smem_per_block);
}

int nt_occupancy(const struct nt_sm_limits *l, const struct nt_launch_res *r,
		 struct nt_occupancy *o, struct nt_err *err)
{
	int warps, m;

	memset(o, 0, sizeof(*o));
	if (r->threads <= 0 || r->registers < 0 || r->static_smem < 0 || r->dynamic_smem < 0)
		return nt_err_set(err, "launch of %d threads, %d registers, %lld + %lld B shared: not a launch",
				  r->threads, r->registers, (long long)r->static_smem, (long long)r->dynamic_smem);
	if (l->max_threads_per_sm < 32 || l->max_blocks_per_sm <= 0 || l->regs_per_sm <= 0 ||
	    l->max_regs_per_block <= 0 || l->reg_alloc_unit <= 0 || l->warp_alloc_granularity <= 0 ||
	    l->smem_per_sm < 0 || l->smem_per_block_optin < 0 || l->reserved_smem_per_block < 0 ||
	    l->smem_alloc_unit <= 0)
		return nt_err_set(err, "SM limits not set (threads %d, blocks %d, registers %d per SM)",
				  l->max_threads_per_sm, l->max_blocks_per_sm, l->regs_per_sm);
	warps = (r->threads + 31) / 32;
	o->by_threads = l->max_threads_per_sm / 32 / warps;
	o->by_blocks = l->max_blocks_per_sm;
	o->by_registers = by_registers(l, r, warps, o);
	o->by_smem = by_smem(l, r, o);
	m = o->by_threads;
	m = o->by_blocks < m ? o->by_blocks : m;
	m = o->by_registers < m ? o->by_registers : m;
	m = o->by_smem < m ? o->by_smem : m;
	o->blocks = m;
	o->bound = (o->by_threads == m ? NT_OCC_THREADS : 0) | (o->by_blocks == m ? NT_OCC_BLOCKS : 0) |
		   (o->by_registers == m ? NT_OCC_REGISTERS : 0) | (o->by_smem == m ? NT_OCC_SMEM : 0);
	return 0;
}

const char *nt_occ_limit_name(unsigned bound)
{
	if (bound & NT_OCC_THREADS)
		return "threads";
	if (bound & NT_OCC_BLOCKS)
		return "blocks";
	if (bound & NT_OCC_REGISTERS)
		return "registers";
	if (bound & NT_OCC_SMEM)
		return "shared memory";
	return "none";
}
