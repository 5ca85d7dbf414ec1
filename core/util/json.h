/*
 * json.h - a small streaming JSON writer.
 *
 * Writes one JSON value to a FILE* as it is described, without building
 * a tree: commas, colons and (when pretty) newlines and indentation are
 * placed automatically from a stack of open containers.
 *
 *	struct nt_json j;
 *
 *	nt_json_init(&j, stdout, 1);
 *	nt_json_begin_object(&j);
 *	nt_json_key(&j, "sm_count");
 *	nt_json_int(&j, 132);
 *	nt_json_key(&j, "chain");
 *	nt_json_double_array(&j, chain, 132);
 *	nt_json_end_object(&j);
 *	if (nt_json_finish(&j))
 *		... write error or unbalanced nesting ...
 *
 * Strings: '"', '\\' and control characters are escaped; valid UTF-8 is
 * passed through; bytes that are not valid UTF-8 become U+FFFD, so the
 * output is always valid JSON.
 *
 * Numbers: doubles are written with "%.10g", or, when j->exact is set,
 * with the fewest digits (15 to 17) that read back as the same double.
 * NAN and infinities have no JSON spelling and are written as null.
 *
 * Pretty output puts each member of an object or array on its own line,
 * indented by two spaces per level, except the number arrays written by
 * nt_json_double_array / nt_json_int_array, which stay on one line.
 *
 * Misuse (a value where a key is needed, nesting deeper than
 * NT_JSON_MAX_DEPTH, an end that does not match) sets j->bad; nothing
 * is printed about it: nt_json_finish() reports it with the stream's
 * write errors.
 */
#ifndef NT_JSON_H
#define NT_JSON_H

#include <stdint.h>
#include <stdio.h>

#define NT_JSON_MAX_DEPTH 32

struct nt_json {
	FILE *f;
	int pretty;
	int exact;		/* round-trip doubles exactly */
	int depth;		/* open containers */
	int bad;		/* misuse seen */
	int want_value;		/* a key was written, its value is next */
	struct {
		char type;	/* '{' or '[' */
		char inline_;	/* no newlines inside */
		int count;	/* members written so far */
	} stack[NT_JSON_MAX_DEPTH];
};

void nt_json_init(struct nt_json *j, FILE *f, int pretty);

void nt_json_begin_object(struct nt_json *j);
void nt_json_end_object(struct nt_json *j);
void nt_json_begin_array(struct nt_json *j);
void nt_json_end_array(struct nt_json *j);

/* Inside an object: the next member's key.  A value must follow. */
void nt_json_key(struct nt_json *j, const char *key);

void nt_json_str(struct nt_json *j, const char *s);	/* NULL writes null */
void nt_json_strn(struct nt_json *j, const char *s, size_t len);
void nt_json_int(struct nt_json *j, int64_t v);
void nt_json_double(struct nt_json *j, double v);
void nt_json_bool(struct nt_json *j, int v);
void nt_json_null(struct nt_json *j);
void nt_json_double_array(struct nt_json *j, const double *v, int n);

/* A key and its value in one call, for the many flat fields of reports. */
void nt_json_kv_double(struct nt_json *j, const char *key, double v);
void nt_json_kv_int(struct nt_json *j, const char *key, int64_t v);
void nt_json_kv_str(struct nt_json *j, const char *key, const char *v);	/* NULL: null */
void nt_json_kv_bool(struct nt_json *j, const char *key, int v);
void nt_json_int_array(struct nt_json *j, const int64_t *v, int n);

/* Ends the document (a newline when pretty).  0, or -1 when the stream
 * had a write error, a container is still open, or the API was misused. */
int nt_json_finish(struct nt_json *j);

/* Format a finite double as nt_json_double would (digits = 10), or with
 * the fewest digits that round-trip (digits = 0).  buf needs 32 bytes.
 * Non-finite values give "nan", "inf" or "-inf". */
void nt_json_format_double(char *buf, size_t len, double v, int digits);

#endif
