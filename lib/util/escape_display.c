/* escape_display.c - see escape_display.h. */
#include <stdio.h>
#include <string.h>

#include "escape_display.h"
#include "utf8.h"

static int is_hidden_control(unsigned int cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The text shown for the character at p (n bytes, code point cp; n is 0
 * for a byte that is not UTF-8); its length. */
static size_t shown(const unsigned char *p, size_t n, unsigned int cp, char *tmp, size_t size)
{
	if (n == 0)
		return (size_t)snprintf(tmp, size, "\\x%02x", p[0]);
	if (cp == '\\')
		return (size_t)snprintf(tmp, size, "\\\\");
	if (cp == '\n')
		return (size_t)snprintf(tmp, size, "\\n");
	if (cp == '\r')
		return (size_t)snprintf(tmp, size, "\\r");
	if (cp == '\t')
		return (size_t)snprintf(tmp, size, "\\t");
	if (cp < 0x20 || cp == 0x7f)
		return (size_t)snprintf(tmp, size, "\\x%02x", cp);
	if (is_hidden_control(cp))
		return (size_t)snprintf(tmp, size, "\\u%04x", cp);
	memcpy(tmp, p, n);
	return n;
}

void cp_escape_display(char *buf, size_t len, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t w = 0, chars = 0, ellipsis_at = 0;

	if (!len)
		return;
	while (*p) {
		unsigned int cp = 0;
		size_t n = cp_utf8_decode((const char *)p, &cp), step = n ? n : 1;
		char tmp[16];
		size_t t;

		if (chars == max_chars) {
			/* Cut: end with "…" where it fits whole. */
			w = w + 3 < len ? w : ellipsis_at;
			if (w + 3 < len) {
				memcpy(buf + w, "\xe2\x80\xa6", 3);
				w += 3;
			}
			break;
		}
		t = shown(p, n, cp, tmp, sizeof(tmp));
		if (w + t + 1 > len)
			break;
		/* Where "…" would go if the next character is cut off. */
		if (w + 3 < len)
			ellipsis_at = w;
		memcpy(buf + w, tmp, t);
		w += t;
		chars++;
		p += step;
	}
	buf[w] = '\0';
}
