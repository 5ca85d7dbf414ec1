/*
 * text.h - strings from traces, maps and stores as the outputs show them.
 *
 * Names in a trace or a map (a kernel's, a GPU's, a host's) come from
 * files that travel between machines and people: any byte may be in
 * them.  Every output shows them through one of three doors, all built
 * on nt_utf8_len():
 *
 *   - JSON (json.h): control characters escaped, bytes that are not
 *     UTF-8 written as U+FFFD;
 *   - HTML and SVG (nt_xml_escape, heatmap.h): markup escaped, control
 *     characters '?', bytes that are not UTF-8 U+FFFD;
 *   - text for a terminal, and CSV cells: nt_text_safe() and
 *     nt_text_put() below: control characters (C0, DEL and the C1
 *     controls U+0080..U+009F) '?', bytes that are not UTF-8 U+FFFD, so
 *     no escape sequence, bell or line break of a name reaches a
 *     terminal.  usage.c passes every message through them.
 */
#ifndef NT_TEXT_H
#define NT_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left), 0 when
 * s[0] does not start one (overlong forms, surrogates and code points
 * beyond U+10FFFF are not valid). */
size_t nt_utf8_len(const unsigned char *s, size_t n);

/* Room nt_text_safe() needs for any string of n bytes, cut or not: a
 * byte becomes at most 3 (U+FFFD), and "..." may follow. */
#define NT_TEXT_ROOM(n) (3 * (size_t)(n) + 4)

/* s made safe for a terminal (above) into buf (len bytes, always
 * terminated), keeping at most max characters (0: all) and ending in
 * "..." when it cut; characters never are cut in half, also when buf is
 * too small.  NULL gives "".  Returns buf. */
char *nt_text_safe(char *buf, size_t len, const char *s, size_t max);

/* The same written to f, without a length limit. */
void nt_text_put(FILE *f, const char *s);

#endif
