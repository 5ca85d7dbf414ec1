/*
 * parse.h - strict parsing of numbers and sizes given as text (option
 * values, environment variables): the whole string, range checked,
 * nothing printed.  0 and *out set, or -1.
 */
#ifndef NT_PARSE_H
#define NT_PARSE_H

int nt_parse_int(const char *s, long lo, long hi, long *out);
int nt_parse_size(const char *s, long long *out);	/* "2M", "64KiB", "4096" */

#endif
