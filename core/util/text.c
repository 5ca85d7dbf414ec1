/* UTF-8 and control characters (text.h). */
#include "util/text.h"

#include <stdint.h>
#include <string.h>

size_t nt_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

/* The character at s (n bytes left) as shown: *out and its length, the
 * bytes of s it stands for in *used. */
static size_t show_char(const unsigned char *s, size_t n, const char **out, size_t *used)
{
	size_t len = nt_utf8_len(s, n);

	*used = len ? len : 1;
	if (!len) {
		*out = REPLACEMENT;
		return 3;
	}
	/* C0 and DEL; C1 is U+0080..U+009F, 0xc2 0x80..0x9f */
	if ((len == 1 && (s[0] < 0x20 || s[0] == 0x7f)) || (len == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
		*out = "?";
		return 1;
	}
	*out = (const char *)s;
	return len;
}

char *nt_text_safe(char *buf, size_t len, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), o = 0, chars = 0, used, k;
	const char *out;

	if (!len)
		return buf;
	for (size_t i = 0; i < n; i += used) {
		k = show_char(s + i, n - i, &out, &used);
		/* room for this one, and for "..." should it be the last */
		if ((max && chars == max) || o + k + 4 > len) {
			if (o + 4 <= len) {
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(buf + o, out, k);
		o += k;
		chars++;
	}
	buf[o] = '\0';
	return buf;
}

void nt_text_put(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), used, k;
	const char *out;

	for (size_t i = 0; i < n; i += used) {
		k = show_char(s + i, n - i, &out, &used);
		fwrite(out, 1, k, f);
	}
}
