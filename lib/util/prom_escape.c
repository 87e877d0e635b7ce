/* prom_escape.c - see prom_escape.h. */
#include <stdlib.h>

#include "buf.h"
#include "prom_escape.h"
#include "utf8.h"

void cp_buf_prom_label(struct cp_buf *b, const char *s)
{
	char *valid;

	if (!s)
		return;
	valid = cp_utf8_dup(s);
	if (!valid) {
		b->failed = 1;
		return;
	}
	for (const char *c = valid; *c; c++) {
		if (*c == '\\')
			cp_buf_puts(b, "\\\\");
		else if (*c == '"')
			cp_buf_puts(b, "\\\"");
		else if (*c == '\n')
			cp_buf_puts(b, "\\n");
		else
			cp_buf_add(b, c, 1);
	}
	free(valid);
}
