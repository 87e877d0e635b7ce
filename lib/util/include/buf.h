/* buf.h - a growing byte buffer for building a text in memory: the
 * HTML report and the markdown summary are assembled whole and written in
 * one atomic call, so their writers append to a cp_buf. Appends never
 * fail individually: running out of memory sets `failed`, later appends do
 * nothing, and the caller checks once at the end. cp_buf_text() is the
 * only way report code puts a string from a document into the page: it
 * escapes it (html_escape.h). */
#ifndef CP_BUF_H
#define CP_BUF_H

#include <stddef.h>

struct cp_buf {
	char *data; /* NUL-terminated once anything was added */
	size_t len, cap;
	int failed; /* an allocation failed: the contents are incomplete */
};

void cp_buf_add(struct cp_buf *b, const void *p, size_t n);
void cp_buf_puts(struct cp_buf *b, const char *s);
void cp_buf_printf(struct cp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s (NULL: nothing) escaped for HTML text or a quoted attribute. */
void cp_buf_text(struct cp_buf *b, const char *s);
void cp_buf_textn(struct cp_buf *b, const char *s, size_t n);
/* Appends serialised JSON escaped for a <script type="application/json">. */
void cp_buf_json_script(struct cp_buf *b, const char *json, size_t n);
void cp_buf_free(struct cp_buf *b);

#endif
