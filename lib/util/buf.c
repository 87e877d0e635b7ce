/* buf.c - see buf.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_escape.h"
#include "buf.h"

/* Makes room for n more bytes plus a NUL; returns the write position. */
static char *reserve(struct cp_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	return b->data + b->len;
}

static void commit(struct cp_buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = '\0';
}

void cp_buf_add(struct cp_buf *b, const void *p, size_t n)
{
	char *w = reserve(b, n);

	if (!w)
		return;
	memcpy(w, p, n);
	commit(b, n);
}

void cp_buf_puts(struct cp_buf *b, const char *s)
{
	cp_buf_add(b, s, strlen(s));
}

void cp_buf_printf(struct cp_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *w;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(w = reserve(b, (size_t)n)))
		return;
	va_start(ap, fmt);
	vsnprintf(w, (size_t)n + 1, fmt, ap);
	va_end(ap);
	commit(b, (size_t)n);
}

void cp_buf_textn(struct cp_buf *b, const char *s, size_t n)
{
	size_t len;
	char *w;

	if (!s)
		return;
	len = cp_html_escaped_len(s, n);
	w = reserve(b, len);
	if (!w)
		return;
	cp_html_escape_to(w, s, n);
	commit(b, len);
}

void cp_buf_text(struct cp_buf *b, const char *s)
{
	if (s)
		cp_buf_textn(b, s, strlen(s));
}

void cp_buf_json_script(struct cp_buf *b, const char *json, size_t n)
{
	size_t len = cp_json_script_escaped_len(json, n);
	char *w = reserve(b, len);

	if (!w)
		return;
	cp_json_script_escape_to(w, json, n);
	commit(b, len);
}

void cp_buf_free(struct cp_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
