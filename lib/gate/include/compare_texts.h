/* compare_texts.h - the texts of a verdict, rendered side by side.
 *
 * verdict.json, the markdown summary and the terminal table are three
 * independent read-only walks over the verdict document. On a 1,000-
 * measure gate the JSON text alone takes ~9 ms, as long as the other two
 * together, so they are rendered on separate CPUs (lib/util/include/parallel.h); the
 * caller writes them where they go. */
#ifndef CP_COMPARE_TEXTS_H
#define CP_COMPARE_TEXTS_H

#include <jansson.h>

struct cp_compare_texts {
	char *json;		/* as cp_json_text(), or NULL when not asked */
	char *markdown;		/* as cp_compare_markdown(..., 0), or NULL */
	char *table;		/* as cp_compare_table_string(), or NULL */
};

/* Renders the texts asked for; color applies to the table. Returns -1
 * when out of memory, with nothing left to free. */
int cp_compare_texts_render(const json_t *verdict, int want_json,
			    int want_markdown, int want_table, int color,
			    struct cp_compare_texts *out);

void cp_compare_texts_free(struct cp_compare_texts *texts);

#endif
