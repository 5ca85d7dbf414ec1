/* Record buffers in slabs, runs found next-fit (recpool.h). */
#include "recpool.h"

#include <stdlib.h>
#include <string.h>

struct slab {
	struct nt_recslab_mem mem;
	uint32_t units;			/* 0: an empty place */
	uint32_t used;			/* units in runs */
	uint32_t rover;			/* where the next search starts */
	unsigned char *taken;		/* [units] */
};

struct nt_recpool {
	uint32_t first_units, max_units;
	uint64_t units;			/* in all slabs */
	uint64_t grown;
	struct slab *slabs;
	int n_slabs, last;
};

static uint32_t units_of(uint64_t slots)
{
	uint64_t u = (slots + NT_RECPOOL_UNIT - 1) / NT_RECPOOL_UNIT;

	return u > UINT32_MAX / NT_RECPOOL_UNIT ? UINT32_MAX / NT_RECPOOL_UNIT : (uint32_t)u;
}

struct nt_recpool *nt_recpool_new(uint32_t first_slots, uint32_t max_slots)
{
	struct nt_recpool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->first_units = units_of(first_slots ? first_slots : 1);
	p->max_units = units_of(max_slots);
	if (p->max_units < p->first_units)
		p->max_units = p->first_units;
	return p;
}

/* A run of n free units in s, next-fit from its rover: the first unit, or -1. */
static int64_t find_run(const struct slab *s, uint32_t n)
{
	uint32_t run;

	if (s->units - s->used < n)
		return -1;
	for (uint32_t pass = 0; pass < 2; pass++) {
		uint32_t from = pass ? 0 : s->rover, to = pass ? s->rover + n - 1 : s->units;

		if (to > s->units)
			to = s->units;
		run = 0;
		for (uint32_t i = from; i < to; i++) {
			run = s->taken[i] ? 0 : run + 1;
			if (run == n)
				return (int64_t)i + 1 - n;
		}
	}
	return -1;
}

static void fill(struct nt_recpool *p, int k, uint32_t unit, uint32_t units, uint32_t blocks,
		 struct nt_recrun *run)
{
	struct slab *s = &p->slabs[k];
	size_t first = (size_t)unit * NT_RECPOOL_UNIT;

	memset(s->taken + unit, 1, units);
	s->used += units;
	s->rover = unit + units < s->units ? unit + units : 0;
	p->last = k;
	run->slab = k;
	run->unit = unit;
	run->units = units;
	run->blocks = blocks;
	run->scratch = s->mem.scratch + first;
	run->rec = s->mem.rec + first;
	run->drec = s->mem.drec + first;
	run->desc = s->mem.desc + unit;
}

/* Take empty slabs (but the first) out, into g for the caller to free,
 * until `need` more units fit under the cap; 1 when they do.  A slab
 * taken out keeps its place, empty (runs in use name slabs by index). */
static int make_room(struct nt_recpool *p, uint32_t need, struct nt_recpool_grow *g)
{
	for (int k = p->n_slabs - 1; k > 0 && p->units + need > p->max_units; k--) {
		struct slab *s = &p->slabs[k];

		if (s->used || !s->units || g->n_freed == NT_RECPOOL_MAX_FREED)
			continue;
		g->freed[g->n_freed++] = s->mem;
		free(s->taken);
		p->units -= s->units;
		memset(s, 0, sizeof(*s));
	}
	return p->units + need <= p->max_units;
}

enum nt_recpool_status nt_recpool_take(struct nt_recpool *p, uint32_t blocks, struct nt_recrun *run,
				       struct nt_recpool_grow *g)
{
	uint32_t need = units_of(blocks ? blocks : 1);
	uint64_t want = p->first_units;
	int64_t unit;

	g->n_freed = 0;
	g->slots = 0;
	if (need > p->max_units)
		return NT_RECPOOL_TOO_BIG;
	/* the slab that served last first, then the others */
	for (int i = 0; i < p->n_slabs; i++) {
		int k = (p->last + i) % p->n_slabs;

		if ((unit = find_run(&p->slabs[k], need)) >= 0) {
			fill(p, k, (uint32_t)unit, need, blocks, run);
			return NT_RECPOOL_OK;
		}
	}
	if (p->max_units - p->units < need && !make_room(p, need, g))
		return g->n_freed ? NT_RECPOOL_GROW : NT_RECPOOL_FULL;
	if (p->units > want)
		want = p->units;	/* doubling */
	if (want < need)
		want = need;
	if (want > p->max_units - p->units)
		want = p->max_units - p->units;
	g->slots = (uint32_t)want * NT_RECPOOL_UNIT;
	return NT_RECPOOL_GROW;
}

int nt_recpool_room(const struct nt_recpool *p, uint32_t blocks)
{
	uint32_t need = units_of(blocks ? blocks : 1);
	uint64_t emptied = 0;

	if (need > p->max_units || p->max_units - p->units >= need)
		return 1;
	for (int k = 0; k < p->n_slabs; k++)
		if (find_run(&p->slabs[k], need) >= 0)
			return 1;
	/* what make_room() would take out, over as many takes as it needs */
	for (int k = p->n_slabs - 1; k > 0; k--)
		if (!p->slabs[k].used)
			emptied += p->slabs[k].units;
	return p->units - emptied + need <= p->max_units;
}

int nt_recpool_add(struct nt_recpool *p, uint32_t slots, const struct nt_recslab_mem *mem)
{
	uint32_t units = slots / NT_RECPOOL_UNIT;
	struct slab *s;
	int k;

	if (!units || units > p->max_units - p->units)
		return -1;
	for (k = 0; k < p->n_slabs && p->slabs[k].units; k++)
		;	/* a place make_room() emptied, else a new one */
	if (k == p->n_slabs) {
		struct slab *more = realloc(p->slabs, (size_t)(p->n_slabs + 1) * sizeof(*more));

		if (!more)
			return -1;
		p->slabs = more;
		memset(&p->slabs[k], 0, sizeof(*s));
	}
	s = &p->slabs[k];
	if (!(s->taken = calloc(units, 1)))
		return -1;
	s->units = units;
	s->mem = *mem;
	if (k == p->n_slabs)
		p->n_slabs++;
	p->units += units;
	p->grown++;
	p->last = k;
	return 0;
}

void nt_recpool_give(struct nt_recpool *p, const struct nt_recrun *run)
{
	struct slab *s;

	if (run->slab < 0 || run->slab >= p->n_slabs)
		return;
	s = &p->slabs[run->slab];
	memset(s->taken + run->unit, 0, run->units);
	s->used -= run->units;
}

void nt_recpool_stats(const struct nt_recpool *p, struct nt_recpool_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->grown = p->grown;
	for (int k = 0; k < p->n_slabs; k++) {
		out->slabs += !!p->slabs[k].units;
		out->slots += (uint64_t)p->slabs[k].units * NT_RECPOOL_UNIT;
		out->used += (uint64_t)p->slabs[k].used * NT_RECPOOL_UNIT;
	}
}

void nt_recpool_free(struct nt_recpool *p, void (*release)(void *arg, struct nt_recslab_mem *mem), void *arg)
{
	if (!p)
		return;
	for (int k = 0; k < p->n_slabs; k++) {
		if (p->slabs[k].units)
			release(arg, &p->slabs[k].mem);
		free(p->slabs[k].taken);
	}
	free(p->slabs);
	free(p);
}
