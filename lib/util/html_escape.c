/* html_escape.c - see html_escape.h. */
#include <stdlib.h>
#include <string.h>

#include "html_escape.h"

/* The replacement for one byte in HTML text, or NULL to copy it. */
static const char *html_replacement(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	case '\t':
	case '\n':
	case '\r': return NULL;
	}
	if (c < 0x20 || c == 0x7f)
		return "\xef\xbf\xbd"; /* U+FFFD: controls are not text */
	return NULL;
}

size_t cp_html_escaped_len(const char *s, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		const char *r = html_replacement((unsigned char)s[i]);

		len += r ? strlen(r) : 1;
	}
	return len;
}

size_t cp_html_escape_to(char *out, const char *s, size_t n)
{
	char *p = out;

	for (size_t i = 0; i < n; i++) {
		const char *r = html_replacement((unsigned char)s[i]);

		if (!r) {
			*p++ = s[i];
			continue;
		}
		while (*r)
			*p++ = *r++;
	}
	return (size_t)(p - out);
}

char *cp_html_escape(const char *s)
{
	size_t n = s ? strlen(s) : 0, len = cp_html_escaped_len(s, n);
	char *out = malloc(len + 1);

	if (!out)
		return NULL;
	cp_html_escape_to(out, s, n);
	out[len] = '\0';
	return out;
}

/* U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8. */
static int is_line_sep(const char *j, size_t i, size_t n)
{
	return i + 2 < n && (unsigned char)j[i] == 0xe2 && (unsigned char)j[i + 1] == 0x80 &&
	       ((unsigned char)j[i + 2] == 0xa8 || (unsigned char)j[i + 2] == 0xa9);
}

size_t cp_json_script_escaped_len(const char *j, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (j[i] == '<' || j[i] == '>' || j[i] == '&') {
			len += 6;
		} else if (is_line_sep(j, i, n)) {
			len += 6;
			i += 2;
		} else {
			len++;
		}
	}
	return len;
}

size_t cp_json_script_escape_to(char *out, const char *j, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	for (size_t i = 0; i < n; i++) {
		unsigned code;

		if (j[i] == '<' || j[i] == '>' || j[i] == '&') {
			code = (unsigned char)j[i];
		} else if (is_line_sep(j, i, n)) {
			code = (unsigned char)j[i + 2] == 0xa8 ? 0x2028 : 0x2029;
			i += 2;
		} else {
			*p++ = j[i];
			continue;
		}
		*p++ = '\\';
		*p++ = 'u';
		*p++ = hex[(code >> 12) & 0xf];
		*p++ = hex[(code >> 8) & 0xf];
		*p++ = hex[(code >> 4) & 0xf];
		*p++ = hex[code & 0xf];
	}
	return (size_t)(p - out);
}
