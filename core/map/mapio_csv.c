/* A map as CSV (mapio.h has the layout): easy to load into a spreadsheet
 * or a data frame, and read back exactly. */
#include "util/infile.h"
#include "util/json.h"
#include "map/mapfields.h"
#include "map/mapio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CSV_FORMAT "nucatrace-map-csv"
#define CSV_MAX_LINE 65536	/* bytes; a header line of the longest field is ~1 KiB */

enum part { P_CHAIN, P_NOISE, P_OFFSET, P_LINE, P_FIRST, P_REPEAT, N_PARTS };

static const char *const part_name[N_PARTS] = {
	"chain", "noise", "offset", "line", "first", "repeat",
};

/* Names of enum nt_map_parts in the `# parts=` header.  Not the probe
 * part: CSV leaves it out (mapio.h). */
static const struct { unsigned bit; const char *name; } part_flags[] = {
	{ NT_MAP_NOISE, "noise" }, { NT_MAP_LINES, "lines" }, { NT_MAP_FIRST_TOUCH, "first_touch" },
};
#define N_FLAGS (sizeof(part_flags) / sizeof(part_flags[0]))

static double *part_array(const struct nt_map *m, enum part p)
{
	double *a[N_PARTS] = { m->chain, m->noise, NULL, m->line_lat, m->ft_first, m->ft_repeat };

	return a[p];
}

static size_t part_cells(const struct nt_map *m, enum part p)
{
	if (p == P_OFFSET)
		return m->line_offset ? (size_t)m->n_line : 0;
	if (!part_array(m, p))
		return 0;
	return p <= P_NOISE ? (size_t)m->n_sm : (size_t)m->n_sm * m->n_line;
}

static void write_value(FILE *f, double v)
{
	char buf[32];

	if (!isnan(v)) {
		nt_json_format_double(buf, sizeof(buf), v, 0);
		fputs(buf, f);
	}
	fputc('\n', f);
}

static void write_header_value(FILE *f, const char *key, const char *v)
{
	fprintf(f, "# %s=", key);
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else if (*v == '\r')
			fputs("\\r", f);
		else
			fputc(*v, f);
	}
	fputc('\n', f);
}

int nt_map_write_csv(FILE *f, const struct nt_map *m)
{
	unsigned parts = nt_map_parts_of(m);
	int n_line = nt_map_lines_of(m);
	char buf[512];

	if (nt_map_check(m, "map", NULL))
		return -1;
	fprintf(f, "# format=%s\n# version=%d\n", CSV_FORMAT, NT_MAP_FORMAT_VERSION);
	for (int i = 0; i < nt_map_n_fields; i++) {
		nt_map_field_format(m, &nt_map_fields[i], buf, sizeof(buf));
		write_header_value(f, nt_map_fields[i].key, buf);
	}
	fprintf(f, "# n_sm=%d\n# n_line=%d\n# parts=", m->n_sm, n_line);
	for (size_t i = 0, n = 0; i < N_FLAGS; i++)
		if (parts & part_flags[i].bit)
			fprintf(f, "%s%s", n++ ? "," : "", part_flags[i].name);
	fputs("\npart,sm,line,value\n", f);
	for (enum part p = P_CHAIN; p <= P_NOISE; p++) {
		for (int i = 0; part_array(m, p) && i < m->n_sm; i++) {
			fprintf(f, "%s,%d,,", part_name[p], i);
			write_value(f, part_array(m, p)[i]);
		}
	}
	for (int l = 0; l < n_line; l++)
		fprintf(f, "offset,,%d,%lld\n", l, (long long)m->line_offset[l]);
	for (enum part p = P_LINE; p < N_PARTS; p++) {
		for (size_t c = 0; part_array(m, p) && c < (size_t)m->n_sm * n_line; c++) {
			fprintf(f, "%s,%zu,%zu,", part_name[p], c / n_line, c % n_line);
			write_value(f, part_array(m, p)[c]);
		}
	}
	return fflush(f) || ferror(f) ? -1 : 0;
}


/* Header keys of our own, numbered after the fields. */
enum { H_FORMAT = NT_MAP_MAX_FIELDS, H_VERSION, H_N_SM, H_N_LINE, H_PARTS, H_END };
static const char *const header_key[] = { "format", "version", "n_sm", "n_line", "parts" };

struct csv {
	const char *path;
	int lineno;
	struct nt_err *err;
	struct nt_map hdr;	/* the header's fields, until the map exists */
	int n_sm, n_line;
	unsigned parts;
	unsigned char have[H_END];	/* header keys seen: fields, then ours */
	struct nt_map *m;
	unsigned char *seen[N_PARTS];
	size_t count[N_PARTS];
};

static int bad(struct csv *c, const char *what, const char *subject)
{
	return nt_err_set(c->err, "'%s' line %d: %s%s%s%s", c->path, c->lineno, what,
			  subject ? " '" : "", subject ? subject : "", subject ? "'" : "");
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return !*s || *end || errno || *v < lo || *v > hi ? -1 : 0;
}

static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s == '\\' && (s[1] == '\\' || s[1] == 'n' || s[1] == 'r')) {
			s++;
			*d++ = *s == 'n' ? '\n' : *s == 'r' ? '\r' : '\\';
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static int parse_parts(struct csv *c, char *v)
{
	char *save = NULL;

	for (char *name = strtok_r(v, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < N_FLAGS && strcmp(name, part_flags[i].name); i++)
			;
		if (i == N_FLAGS)
			return bad(c, "unknown part", name);
		c->parts |= part_flags[i].bit;
	}
	return 0;
}

static int header_line(struct csv *c, char *line)
{
	char *key = line + 1, *v = strchr(line, '=');
	const struct nt_map_field *f;
	long n;
	int h;

	if (!v)
		return 0;	/* a comment */
	*v++ = '\0';
	key += strspn(key, " ");
	unescape(v);
	if ((f = nt_map_field_find(-1, key))) {
		if (nt_map_field_parse(&c->hdr, f, v))
			return bad(c, "bad value for", key);
		if (f->off == offsetof(struct nt_map, created_at) && !nt_map_time_ok(c->hdr.created_at))
			return bad(c, "created_at is not a time in the years 1970..9999:", v);
		c->have[f - nt_map_fields] = 1;
		return 0;
	}
	for (h = H_FORMAT; h < H_END && strcmp(key, header_key[h - H_FORMAT]); h++)
		;
	if (h == H_END)
		return 0;	/* a key from a newer nucatrace */
	c->have[h] = 1;
	if (h == H_FORMAT && strcmp(v, CSV_FORMAT))
		return bad(c, "not a nucatrace map: format is not", CSV_FORMAT);
	if (h == H_VERSION && (parse_long(v, 0, 1000, &n) || n != NT_MAP_FORMAT_VERSION))
		return bad(c, "unsupported version", v);
	if ((h == H_N_SM || h == H_N_LINE) && parse_long(v, h == H_N_SM, 1 << 24, &n))
		return bad(c, "bad value for", key);
	if (h == H_N_SM && n > NT_MAP_MAX_SM)
		return nt_err_set(c->err, "'%s' line %d: n_sm=%ld: nucatrace reads maps of at most %d SMs",
				  c->path, c->lineno, n, NT_MAP_MAX_SM);
	if (h == H_N_LINE && n > NT_MAP_MAX_LINES)
		return nt_err_set(c->err, "'%s' line %d: n_line=%ld: nucatrace reads maps of at most %d "
				  "lines", c->path, c->lineno, n, NT_MAP_MAX_LINES);
	if (h == H_N_SM)
		c->n_sm = (int)n;
	if (h == H_N_LINE)
		c->n_line = (int)n;
	return h == H_PARTS ? parse_parts(c, v) : 0;
}

/* At the column header: all header keys known, make the map. */
static int start_rows(struct csv *c)
{
	for (int i = 0; i < nt_map_n_fields; i++)
		if (!c->have[i])
			return bad(c, "missing header key", nt_map_fields[i].key);
	for (int h = H_FORMAT; h < H_END; h++)
		if (!c->have[h])
			return bad(c, "missing header key", header_key[h - H_FORMAT]);
	if (c->hdr.gpu.sm_count != c->n_sm)
		return bad(c, "sm_count differs from", "n_sm");
	if ((c->parts & (NT_MAP_LINES | NT_MAP_FIRST_TOUCH)) && c->n_line <= 0)
		return bad(c, "line parts need a positive", "n_line");
	if (!(c->m = nt_map_new(c->n_sm, c->n_line, c->parts)))
		return bad(c, "out of memory", NULL);
	for (int i = 0; i < nt_map_n_fields; i++)
		memcpy((char *)c->m + nt_map_fields[i].off, (char *)&c->hdr + nt_map_fields[i].off,
		       nt_map_fields[i].size);
	for (enum part p = P_CHAIN; p < N_PARTS; p++)
		if (part_cells(c->m, p) && !(c->seen[p] = calloc(part_cells(c->m, p), 1)))
			return bad(c, "out of memory", NULL);
	return 0;
}

static int row(struct csv *c, char *line)
{
	char *col[4], *end;
	long sm = 0, l = 0;
	size_t i, cell;
	enum part p;
	double v;

	for (i = 0; i < 4 && line; i++) {
		col[i] = line;
		if ((line = strchr(line, ',')))
			*line++ = '\0';
	}
	if (i < 4 || line)
		return bad(c, "expected 4 columns: part,sm,line,value", NULL);
	for (p = P_CHAIN; p < N_PARTS && strcmp(col[0], part_name[p]); p++)
		;
	if (p == N_PARTS || !c->seen[p])
		return bad(c, "unknown or undeclared part", col[0]);
	if (p == P_OFFSET ? *col[1] != '\0' : parse_long(col[1], 0, c->n_sm - 1, &sm))
		return bad(c, "bad sm", col[1]);
	if (p <= P_NOISE ? *col[2] != '\0' : parse_long(col[2], 0, c->m->n_line - 1, &l))
		return bad(c, "bad line", col[2]);
	cell = p <= P_NOISE ? (size_t)sm : p == P_OFFSET ? (size_t)l : (size_t)sm * c->m->n_line + l;
	if (c->seen[p][cell]++)
		return bad(c, "duplicate row", NULL);
	c->count[p]++;
	if (p == P_OFFSET) {
		c->m->line_offset[l] = strtoll(col[3], &end, 10);
		if (!*col[3] || *end)
			return bad(c, "not an integer:", col[3]);
		return 0;
	}
	v = *col[3] ? strtod(col[3], &end) : NAN;
	if (*col[3] && *end)
		return bad(c, "not a number:", col[3]);
	if (!nt_map_latency_ok(v))
		return nt_err_set(c->err, "'%s' line %d: %s '%s' is not a latency of 0..%.0f cycles",
				  c->path, c->lineno, part_name[p], col[3], NT_MAP_MAX_CYCLES);
	part_array(c->m, p)[cell] = v;
	return 0;
}

static int finish(struct csv *c, int in_rows)
{
	if (!in_rows)
		return bad(c, "no 'part,sm,line,value' header (truncated?)", NULL);
	for (enum part p = P_CHAIN; p < N_PARTS; p++) {
		size_t want = part_cells(c->m, p);

		if (c->seen[p] && c->count[p] != want)
			return nt_err_set(c->err, "'%s': part '%s' has %zu of %zu rows (truncated?)",
					  c->path, part_name[p], c->count[p], want);
	}
	return 0;
}

/* The next line of f into buf (cap bytes), its length with the '\n':
 * -1 at the end, -2 when it does not fit.  A file with no newline in
 * gigabytes must not take gigabytes. */
static ssize_t read_line(FILE *f, char *buf, size_t cap)
{
	size_t n = 0;
	int ch;

	while ((ch = getc_unlocked(f)) != EOF) {
		if (n + 1 >= cap)
			return -2;
		buf[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	buf[n] = '\0';
	return n ? (ssize_t)n : -1;
}

int nt_map_read_csv(const char *path, struct nt_map **out, struct nt_err *err)
{
	struct csv c = { .path = path, .err = err };
	FILE *f = nt_infile_open(path, NULL, err);
	char *line = malloc(CSV_MAX_LINE + 2);
	ssize_t len;
	int in_rows = 0, ret = -1;

	*out = NULL;
	if (!f || !line) {
		if (f)
			nt_err_set(err, "'%s': out of memory", path);
		goto out;
	}
	while ((len = read_line(f, line, CSV_MAX_LINE + 2)) != -1) {
		c.lineno++;
		if (len == -2) {
			nt_err_set(err, "'%s' line %d: longer than %d bytes", path, c.lineno, CSV_MAX_LINE);
			goto out;
		}
		if (memchr(line, '\0', len)) {
			bad(&c, "a NUL byte", NULL);
			goto out;
		}
		if (line[len - 1] != '\n') {
			bad(&c, "no newline at the end (truncated?)", NULL);
			goto out;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		if (in_rows ? row(&c, line) :
		    line[0] == '#' ? header_line(&c, line) :
		    strcmp(line, "part,sm,line,value") ? bad(&c, "expected '# key=value' or "
							     "'part,sm,line,value'", NULL) :
		    (in_rows = 1, start_rows(&c)))
			goto out;
	}
	if (ferror(f)) {
		nt_err_set(err, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (finish(&c, in_rows) || nt_map_check_values(c.m, path, err))
		goto out;
	*out = c.m;
	c.m = NULL;
	ret = 0;
out:
	for (int p = 0; p < N_PARTS; p++)
		free(c.seen[p]);
	nt_map_free(c.m);
	free(line);
	if (f)
		fclose(f);
	return ret;
}
