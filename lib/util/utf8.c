/* utf8.c - see utf8.h. */
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), or 0; its code point in *out. */
static size_t valid_sequence(const unsigned char *p, unsigned int *out)
{
	size_t n;
	unsigned int min, cp;

	if (p[0] < 0x80) {
		*out = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, min = 0x80, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, min = 0x800, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, min = 0x10000, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*out = cp;
	return n;
}

size_t cp_utf8_decode(const char *s, unsigned int *cp)
{
	return *s ? valid_sequence((const unsigned char *)s, cp) : 0;
}

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
static const char replacement[] = "\xef\xbf\xbd";
#define REPLACEMENT_LEN (sizeof(replacement) - 1)

/* Writes s made valid into out (when not NULL), whole characters up to
 * max bytes; returns its length, and in *cut whether it did not fit. */
static size_t sanitize_into(const unsigned char *p, char *out, size_t max, int *cut)
{
	size_t len = 0;

	*cut = 0;
	while (*p) {
		unsigned int cp;
		size_t n = valid_sequence(p, &cp);
		const void *from = n ? (const void *)p : replacement;
		size_t step = n ? n : REPLACEMENT_LEN;

		if (len + step > max) {
			*cut = 1;
			break;
		}
		if (out)
			memcpy(out + len, from, step);
		len += step;
		p += n ? n : 1;
	}
	return len;
}

char *cp_utf8_dup(const char *s)
{
	const size_t mark = sizeof(CP_STRING_CUT_MARK) - 1;
	size_t len, max = CP_STRING_MAX;
	char *copy;
	int cut;

	if (!s)
		return NULL;
	len = sanitize_into((const unsigned char *)s, NULL, max, &cut);
	if (cut) /* the mark within the limit too */
		len = sanitize_into((const unsigned char *)s, NULL, max = CP_STRING_MAX - mark,
				    &cut);
	if (!(copy = malloc(len + (cut ? mark : 0) + 1)))
		return NULL;
	sanitize_into((const unsigned char *)s, copy, max, &cut);
	if (cut)
		memcpy(copy + len, CP_STRING_CUT_MARK, mark);
	copy[len + (cut ? mark : 0)] = '\0';
	return copy;
}

char *cp_utf8_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
	char *raw = malloc(size);
	size_t len = 0;
	int cut;

	if (raw) {
		vsnprintf(raw, size, fmt, ap);
		len = sanitize_into((const unsigned char *)raw, buf, size - 1, &cut);
		free(raw);
	}
	buf[len] = '\0';
	return buf;
}

char *cp_utf8_format(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cp_utf8_vformat(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}
