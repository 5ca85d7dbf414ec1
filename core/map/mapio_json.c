/* Writing a map as JSON (mapio.h has the layout; mapio_json_read.c reads it). */
#include "util/json.h"
#include "map/mapfields.h"
#include "map/mapio.h"

#include <string.h>
#include <time.h>

/* The JSON key of a field, where it differs from the store's column. */
static const char *json_name(const struct nt_map_field *f)
{
	return f->off == offsetof(struct nt_map, created_at) ? "created_at_unix" : f->key;
}

static int is_cc(const struct nt_map_field *f)
{
	return f->off == offsetof(struct nt_map, gpu.cc_major) ||
	       f->off == offsetof(struct nt_map, gpu.cc_minor);
}

static void write_fields(struct nt_json *j, const struct nt_map *m, enum nt_field_group g)
{
	for (int i = 0; i < nt_map_n_fields; i++) {
		const struct nt_map_field *f = &nt_map_fields[i];
		char buf[32];

		if (f->group != g || f->off == offsetof(struct nt_map, gpu.cc_minor))
			continue;
		if (is_cc(f)) {
			snprintf(buf, sizeof(buf), "%d.%d", m->gpu.cc_major, m->gpu.cc_minor);
			nt_json_key(j, "cc");
			nt_json_str(j, buf);
			continue;
		}
		if (f->off == offsetof(struct nt_map, created_at)) {
			time_t t = (time_t)m->created_at;
			struct tm tm;

			if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
				buf[0] = '\0';
			nt_json_key(j, "created_at");
			nt_json_str(j, buf);
		}
		nt_json_key(j, json_name(f));
		if (f->kind == NT_FK_TEXT)
			nt_json_str(j, nt_map_field_text(m, f));
		else if (f->kind == NT_FK_REAL)
			nt_json_double(j, nt_map_field_real(m, f));
		else
			nt_json_int(j, nt_map_field_int(m, f));
	}
}

static void write_matrix(struct nt_json *j, const struct nt_map *m, const char *key, const double *mat)
{
	nt_json_key(j, key);
	nt_json_begin_array(j);
	for (int i = 0; i < m->n_sm; i++)
		nt_json_double_array(j, mat + (size_t)i * m->n_line, m->n_line);
	nt_json_end_array(j);
}

static void write_probe(struct nt_json *j, const struct nt_map *m)
{
	nt_json_key(j, "probe");
	nt_json_begin_array(j);
	for (int p = 0; p < m->n_probe; p++) {
		const struct nt_map_probe *c = &m->probe[p];

		nt_json_begin_object(j);
		nt_json_kv_int(j, "threads", c->threads);
		nt_json_kv_int(j, "iters", c->iters);
		nt_json_kv_int(j, "blocks", c->blocks);
		nt_json_kv_double(j, "body_native", c->body_native);
		nt_json_kv_double(j, "body_traced", c->body_traced);
		nt_json_key(j, "cost");
		nt_json_double_array(j, m->probe_cost + (size_t)p * m->n_sm, m->n_sm);
		nt_json_end_object(j);
	}
	nt_json_end_array(j);
}

int nt_map_write_json(FILE *f, const struct nt_map *m, int pretty)
{
	struct nt_json j;

	if (nt_map_check(m, "map", NULL))
		return -1;
	nt_json_init(&j, f, pretty);
	j.exact = 1;
	nt_json_begin_object(&j);
	nt_json_key(&j, "format");
	nt_json_str(&j, NT_MAP_FORMAT);
	nt_json_key(&j, "version");
	nt_json_int(&j, NT_MAP_FORMAT_VERSION);
	nt_json_key(&j, "gpu");
	nt_json_begin_object(&j);
	write_fields(&j, m, NT_FG_GPU);
	nt_json_end_object(&j);
	nt_json_key(&j, "params");
	nt_json_begin_object(&j);
	write_fields(&j, m, NT_FG_PARAMS);
	nt_json_end_object(&j);
	write_fields(&j, m, NT_FG_RUN);
	nt_json_key(&j, "chain");
	nt_json_double_array(&j, m->chain, m->n_sm);
	if (m->noise) {
		nt_json_key(&j, "noise");
		nt_json_double_array(&j, m->noise, m->n_sm);
	}
	if (nt_map_lines_of(m)) {
		nt_json_key(&j, "lines");
		nt_json_begin_object(&j);
		nt_json_key(&j, "offset");
		nt_json_int_array(&j, m->line_offset, m->n_line);
		if (m->line_lat)
			write_matrix(&j, m, "latency", m->line_lat);
		nt_json_end_object(&j);
	}
	if (m->ft_first) {
		nt_json_key(&j, "first_touch");
		nt_json_begin_object(&j);
		write_matrix(&j, m, "first", m->ft_first);
		write_matrix(&j, m, "repeat", m->ft_repeat);
		nt_json_end_object(&j);
	}
	if (m->n_probe)
		write_probe(&j, m);
	nt_json_end_object(&j);
	return nt_json_finish(&j);
}

