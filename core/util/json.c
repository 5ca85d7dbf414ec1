#include "util/json.h"
#include "util/text.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void nt_json_init(struct nt_json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

static void newline(struct nt_json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Whatever goes before a value or a key: a comma, a line break. */
static void before_item(struct nt_json *j, int is_key)
{
	int in_object = j->depth && j->stack[j->depth - 1].type == '{';

	if (j->want_value) {
		if (is_key)
			j->bad = 1;
		j->want_value = 0;
		return;
	}
	if (in_object != is_key)
		j->bad = 1;	/* a value without a key, or a key in an array */
	if (!j->depth)
		return;
	if (j->stack[j->depth - 1].count++)
		fputc(',', j->f);
	if (!j->pretty)
		return;
	if (!j->stack[j->depth - 1].inline_)
		newline(j);
	else if (j->stack[j->depth - 1].count > 1)
		fputc(' ', j->f);
}

static void begin(struct nt_json *j, char type, int inline_)
{
	before_item(j, 0);
	fputc(type, j->f);
	if (j->depth == NT_JSON_MAX_DEPTH) {
		j->bad = 1;
		return;
	}
	j->stack[j->depth].type = type;
	j->stack[j->depth].inline_ = inline_ || (j->depth && j->stack[j->depth - 1].inline_);
	j->stack[j->depth].count = 0;
	j->depth++;
}

static void end(struct nt_json *j, char type)
{
	int count, inline_;

	if (!j->depth || j->stack[j->depth - 1].type != type || j->want_value) {
		j->bad = 1;
		return;
	}
	count = j->stack[j->depth - 1].count;
	inline_ = j->stack[j->depth - 1].inline_;
	j->depth--;
	if (j->pretty && count && !inline_)
		newline(j);
	fputc(type == '{' ? '}' : ']', j->f);
}

void nt_json_begin_object(struct nt_json *j)
{
	begin(j, '{', 0);
}

void nt_json_end_object(struct nt_json *j)
{
	end(j, '{');
}

void nt_json_begin_array(struct nt_json *j)
{
	begin(j, '[', 0);
}

void nt_json_end_array(struct nt_json *j)
{
	end(j, '[');
}

static void write_string(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		len = nt_utf8_len(s + i, n - i);
		if (!len) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		fwrite(s + i, 1, len, f);
		i += len;
	}
	fputc('"', f);
}

void nt_json_key(struct nt_json *j, const char *key)
{
	before_item(j, 1);
	write_string(j->f, key, strlen(key));
	fputs(j->pretty ? ": " : ":", j->f);
	j->want_value = 1;
}

void nt_json_strn(struct nt_json *j, const char *s, size_t len)
{
	before_item(j, 0);
	write_string(j->f, s, len);
}

void nt_json_str(struct nt_json *j, const char *s)
{
	if (!s)
		nt_json_null(j);
	else
		nt_json_strn(j, s, strlen(s));
}

void nt_json_int(struct nt_json *j, int64_t v)
{
	before_item(j, 0);
	fprintf(j->f, "%" PRId64, v);
}

void nt_json_format_double(char *buf, size_t len, double v, int digits)
{
	if (isnan(v)) {
		snprintf(buf, len, "nan");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v < 0 ? "-inf" : "inf");
		return;
	}
	if (digits) {
		snprintf(buf, len, "%.*g", digits, v);
		return;
	}
	for (digits = 15; digits < 17; digits++) {
		snprintf(buf, len, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

void nt_json_double(struct nt_json *j, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		nt_json_null(j);
		return;
	}
	before_item(j, 0);
	nt_json_format_double(buf, sizeof(buf), v, j->exact ? 0 : 10);
	fputs(buf, j->f);
}

void nt_json_bool(struct nt_json *j, int v)
{
	before_item(j, 0);
	fputs(v ? "true" : "false", j->f);
}

void nt_json_null(struct nt_json *j)
{
	before_item(j, 0);
	fputs("null", j->f);
}

void nt_json_double_array(struct nt_json *j, const double *v, int n)
{
	begin(j, '[', 1);
	for (int i = 0; i < n; i++)
		nt_json_double(j, v[i]);
	end(j, '[');
}

void nt_json_int_array(struct nt_json *j, const int64_t *v, int n)
{
	begin(j, '[', 1);
	for (int i = 0; i < n; i++)
		nt_json_int(j, v[i]);
	end(j, '[');
}

int nt_json_finish(struct nt_json *j)
{
	if (j->pretty)
		fputc('\n', j->f);
	if (fflush(j->f) || ferror(j->f) || j->depth || j->want_value || j->bad)
		return -1;
	return 0;
}

void nt_json_kv_double(struct nt_json *j, const char *key, double v)
{
	nt_json_key(j, key);
	nt_json_double(j, v);
}

void nt_json_kv_int(struct nt_json *j, const char *key, int64_t v)
{
	nt_json_key(j, key);
	nt_json_int(j, v);
}

void nt_json_kv_str(struct nt_json *j, const char *key, const char *v)
{
	nt_json_key(j, key);
	nt_json_str(j, v);
}

void nt_json_kv_bool(struct nt_json *j, const char *key, int v)
{
	nt_json_key(j, key);
	nt_json_bool(j, v);
}
