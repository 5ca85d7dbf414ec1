#include "map/mapfields.h"
#include "util/json.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const struct nt_map_field nt_map_fields[] = {
#define F(group, key, kind, member) \
	{ #key, NT_FG_##group, NT_FK_##kind, offsetof(struct nt_map, member), \
	  sizeof(((struct nt_map *)0)->member) },
#include "map/mapfields.def"
#undef F
};

const int nt_map_n_fields = sizeof(nt_map_fields) / sizeof(nt_map_fields[0]);

_Static_assert(sizeof(nt_map_fields) / sizeof(nt_map_fields[0]) <= NT_MAP_MAX_FIELDS,
	       "raise NT_MAP_MAX_FIELDS");

const struct nt_map_field *nt_map_field_find(int group, const char *key)
{
	for (int i = 0; i < nt_map_n_fields; i++)
		if ((group < 0 || (int)nt_map_fields[i].group == group) &&
		    !strcmp(nt_map_fields[i].key, key))
			return &nt_map_fields[i];
	return NULL;
}

#define MEMBER(m, f) ((const char *)(m) + (f)->off)
#define MEMBER_W(m, f) ((char *)(m) + (f)->off)

const char *nt_map_field_text(const struct nt_map *m, const struct nt_map_field *f)
{
	return MEMBER(m, f);
}

int64_t nt_map_field_int(const struct nt_map *m, const struct nt_map_field *f)
{
	int i;
	int64_t v;

	if (f->kind == NT_FK_INT) {
		memcpy(&i, MEMBER(m, f), sizeof(i));
		return i;
	}
	memcpy(&v, MEMBER(m, f), sizeof(v));
	return v;
}

double nt_map_field_real(const struct nt_map *m, const struct nt_map_field *f)
{
	double v;

	memcpy(&v, MEMBER(m, f), sizeof(v));
	return v;
}

int nt_map_field_set_text(struct nt_map *m, const struct nt_map_field *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), o = 0, k;
	char *d = MEMBER_W(m, f);

	memset(d, 0, f->size);
	for (size_t i = 0; i < n; i += k ? k : 1) {
		k = nt_utf8_len(u + i, n - i);
		if (o + (k ? k : 3) >= f->size)
			return -1;
		memcpy(d + o, k ? s + i : "\xef\xbf\xbd", k ? k : 3);
		o += k ? k : 3;
	}
	return 0;
}

int nt_map_field_set_int(struct nt_map *m, const struct nt_map_field *f, int64_t v)
{
	int i;

	if (f->kind == NT_FK_INT) {
		if (v < INT_MIN || v > INT_MAX)
			return -1;
		i = (int)v;
		memcpy(MEMBER_W(m, f), &i, sizeof(i));
		return 0;
	}
	memcpy(MEMBER_W(m, f), &v, sizeof(v));
	return 0;
}

void nt_map_field_set_real(struct nt_map *m, const struct nt_map_field *f, double v)
{
	memcpy(MEMBER_W(m, f), &v, sizeof(v));
}

void nt_map_field_format(const struct nt_map *m, const struct nt_map_field *f, char *buf, size_t len)
{
	double v;

	switch (f->kind) {
	case NT_FK_TEXT:
		snprintf(buf, len, "%s", nt_map_field_text(m, f));
		break;
	case NT_FK_INT:
	case NT_FK_I64:
		snprintf(buf, len, "%lld", (long long)nt_map_field_int(m, f));
		break;
	case NT_FK_REAL:
		v = nt_map_field_real(m, f);
		if (isnan(v))
			snprintf(buf, len, "%s", "");
		else
			nt_json_format_double(buf, len, v, 0);
		break;
	}
}

int nt_map_field_parse(struct nt_map *m, const struct nt_map_field *f, const char *s)
{
	char *end;
	long long ll;
	double d;

	switch (f->kind) {
	case NT_FK_TEXT:
		return nt_map_field_set_text(m, f, s);
	case NT_FK_INT:
	case NT_FK_I64:
		errno = 0;
		ll = strtoll(s, &end, 10);
		if (!*s || *end || errno)
			return -1;
		return nt_map_field_set_int(m, f, ll);
	case NT_FK_REAL:
		if (!*s) {
			nt_map_field_set_real(m, f, NAN);
			return 0;
		}
		d = strtod(s, &end);
		if (*end)
			return -1;
		nt_map_field_set_real(m, f, d);
		return 0;
	}
	return -1;
}

unsigned nt_map_parts_of(const struct nt_map *m)
{
	return (m->noise ? NT_MAP_NOISE : 0) | (m->line_lat ? NT_MAP_LINES : 0) |
	       (m->ft_first ? NT_MAP_FIRST_TOUCH : 0) | (m->n_probe > 0 ? NT_MAP_PROBE : 0);
}

int nt_map_lines_of(const struct nt_map *m)
{
	return nt_map_parts_of(m) & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH) ? m->n_line : 0;
}

/* The probe part's values (map.h's limits); the message as
 * nt_map_check_values() writes it, q what sep its start. */
static int check_probe(const struct nt_map *m, const char *q, const char *what, const char *sep,
		       struct nt_err *err)
{
	for (int p = 0; p < m->n_probe; p++) {
		const struct nt_map_probe *c = &m->probe[p];
		const struct { const char *key; int v, min, max; } count[3] = {
			{ "threads", c->threads, 1, 1024 },
			{ "iters", c->iters, 0, NT_MAP_MAX_PROBE_COUNT },
			{ "blocks", c->blocks, 0, NT_MAP_MAX_PROBE_COUNT },
		};
		const struct { const char *key; double v; } body[2] = {
			{ "body_native", c->body_native }, { "body_traced", c->body_traced },
		};

		for (int k = 0; k < 3; k++)
			if (count[k].v < count[k].min || count[k].v > count[k].max)
				return nt_err_set(err, "%s%s%sprobe[%d].%s %d is not within %d..%d", q, what,
						  sep, p, count[k].key, count[k].v, count[k].min, count[k].max);
		for (int k = 0; k < 2; k++)
			if (!nt_map_latency_ok(body[k].v))
				return nt_err_set(err, "%s%s%sprobe[%d].%s %g is not a latency of 0..%.0f "
						  "cycles", q, what, sep, p, body[k].key, body[k].v,
						  NT_MAP_MAX_CYCLES);
		for (int s = 0; s < m->n_sm; s++) {
			double v = m->probe_cost[(size_t)p * m->n_sm + s];

			if (!nt_map_latency_ok(v))
				return nt_err_set(err, "%s%s%sprobe[%d].cost[%d] %g is not a latency of "
						  "0..%.0f cycles", q, what, sep, p, s, v, NT_MAP_MAX_CYCLES);
		}
	}
	return 0;
}

int nt_map_check_values(const struct nt_map *m, const char *what, struct nt_err *err)
{
	const char *q = what ? "'" : "", *sep = what ? "': " : "";
	int measured = 0;

	what = what ? what : "";
	if (!nt_map_uuid_ok(m->gpu.uuid))
		return nt_err_set(err, "%s%s%sGPU UUID \"%s\" is not one (\"GPU-\" and letters, digits, "
				  "'-')", q, what, sep, m->gpu.uuid);
	if (!isnan(m->sm_clock_mhz) && !(m->sm_clock_mhz > 0 && m->sm_clock_mhz <= NT_MAP_MAX_MHZ))
		return nt_err_set(err, "%s%s%ssm_clock_mhz %g is not a clock of 0..%.0f MHz", q, what, sep,
				  m->sm_clock_mhz, NT_MAP_MAX_MHZ);
	for (int s = 0; s < m->n_sm; s++)
		measured += !isnan(m->chain[s]);
	if (!measured)
		return nt_err_set(err, "%s%s%sno SM has a chain latency (all are null)", q, what, sep);
	return check_probe(m, q, what, sep, err);
}

int nt_map_check(const struct nt_map *m, const char *what, struct nt_err *err)
{
	unsigned parts = nt_map_parts_of(m);

	if (m->n_sm <= 0 || !m->chain)
		return nt_err_set(err, "%s: map has no chain part (n_sm %d)", what, m->n_sm);
	if (!m->ft_first != !m->ft_repeat)
		return nt_err_set(err, "%s: map has only one of ft_first and ft_repeat", what);
	if ((parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH)) && (m->n_line <= 0 || !m->line_offset))
		return nt_err_set(err, "%s: map has line parts but no line offsets (n_line %d)",
				  what, m->n_line);
	if (m->n_probe < 0 || m->n_probe > NT_MAP_MAX_PROBES)
		return nt_err_set(err, "%s: map has %d probe configurations (0..%d)", what, m->n_probe,
				  NT_MAP_MAX_PROBES);
	if (!m->probe != !m->n_probe || !m->probe_cost != !m->n_probe)
		return nt_err_set(err, "%s: map has n_probe %d but probe %s and probe_cost %s", what,
				  m->n_probe, m->probe ? "set" : "NULL", m->probe_cost ? "set" : "NULL");
	return 0;
}
