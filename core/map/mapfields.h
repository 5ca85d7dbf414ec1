/*
 * mapfields.h - the scalar fields of a struct nt_map, as a table.
 *
 * The store, the JSON and the CSV formats all write the same scalar
 * fields (GPU identity, measurement parameters, provenance).  They are
 * listed once, in mapfields.def, and each serializer walks
 * nt_map_fields[] instead of naming the fields itself, so that a field
 * added to struct nt_map is added to one list.
 *
 * Also here: the checks and facts every serializer needs about the
 * arrays of a map (which parts are present, whether the invariants of
 * map.h hold).
 */
#ifndef NT_MAPFIELDS_H
#define NT_MAPFIELDS_H

#include "util/err.h"
#include "map/map.h"

#include <stddef.h>
#include <stdint.h>

enum nt_field_group { NT_FG_GPU, NT_FG_PARAMS, NT_FG_RUN };
enum nt_field_kind { NT_FK_TEXT, NT_FK_INT, NT_FK_I64, NT_FK_REAL };

struct nt_map_field {
	const char *key;
	enum nt_field_group group;
	enum nt_field_kind kind;
	size_t off;		/* offsetof(struct nt_map, member) */
	size_t size;		/* sizeof the member (TEXT: with its NUL) */
};

#define NT_MAP_MAX_FIELDS 96	/* room in per-field bitmaps */

extern const struct nt_map_field nt_map_fields[];
extern const int nt_map_n_fields;

/* The field called key, in group (or any group when group < 0). */
const struct nt_map_field *nt_map_field_find(int group, const char *key);

/* Typed access.  get_int serves INT and I64; set_int fails (-1) when the
 * value does not fit an INT field; set_text keeps bytes that are not
 * UTF-8 as U+FFFD (so a map holds what its JSON form can say, and reads
 * back the same) and fails when the text does not fit (with its NUL) in
 * the member. */
const char *nt_map_field_text(const struct nt_map *m, const struct nt_map_field *f);
int64_t nt_map_field_int(const struct nt_map *m, const struct nt_map_field *f);
double nt_map_field_real(const struct nt_map *m, const struct nt_map_field *f);
int nt_map_field_set_text(struct nt_map *m, const struct nt_map_field *f, const char *s);
int nt_map_field_set_int(struct nt_map *m, const struct nt_map_field *f, int64_t v);
void nt_map_field_set_real(struct nt_map *m, const struct nt_map_field *f, double v);

/* Field as text: strings as they are, integers in decimal, doubles with
 * the fewest digits that read back exactly, NAN as "".  And back:
 * whole-string, range-checked parsing; "" is NAN for REAL fields. */
void nt_map_field_format(const struct nt_map *m, const struct nt_map_field *f, char *buf, size_t len);
int nt_map_field_parse(struct nt_map *m, const struct nt_map_field *f, const char *s);

/* The nt_map_parts present in m. */
unsigned nt_map_parts_of(const struct nt_map *m);

/* Lines per SM in the line parts, 0 when m has none. */
int nt_map_lines_of(const struct nt_map *m);

/* 0 when m satisfies map.h's invariants, else -1 and a message that
 * starts with `what` (a file name, say). */
int nt_map_check(const struct nt_map *m, const char *what, struct nt_err *err);

/* What every reader (JSON, CSV, the store) checks of the values it read,
 * beyond its own per-key checks (map.h's limits): the UUID, the SM
 * clock, a measured SM.  0, or -1 and "'<what>': <fault>" (what NULL:
 * "<fault>"). */
int nt_map_check_values(const struct nt_map *m, const char *what, struct nt_err *err);

#endif
