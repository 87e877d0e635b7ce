/* compare_texts.h - the texts of a verdict, rendered side by side.
 *
 * verdict.json, the markdown summary, the terminal table and the GitHub
 * annotations are independent read-only walks over the verdict's
 * measures. On a 1,000-measure gate the JSON text alone takes ~9 ms, as
 * long as the other two together, so they are rendered on separate CPUs
 * (lib/util/include/parallel.h). verdict.json is written as it is
 * rendered, measure by measure (it is the one text as big as the input:
 * ~1 KB a measure); the others are bounded (markdown 1 MiB, annotations
 * tens of lines) or a line a measure (the table), and are kept for the
 * caller to write where they go. */
#ifndef CP_COMPARE_TEXTS_H
#define CP_COMPARE_TEXTS_H

#include <jansson.h>

struct cp_error;
struct cp_verdict_measures;

struct cp_compare_texts {
	char *markdown;		/* as cp_compare_markdown(..., 0), or NULL */
	char *table;		/* as cp_compare_table_string(), or NULL */
	char *annotations;	/* as cp_github_annotations_write(), or NULL */
};

struct cp_compare_texts_request {
	const char *json_path;	/* write verdict.json here ("-": standard
				 * output, then a newline), or NULL */
	int markdown, table, annotations;	/* which texts to render */
	int color;		/* colour in the table */
};

/* Renders the texts asked for from verdict (whose own "measures" are not
 * read: cp_verdict_skeleton() is enough) and ms, and writes verdict.json.
 * Returns 0, or -1 with err set (out of memory, or verdict.json not
 * written), with nothing left to free then. */
int cp_compare_texts_render(const json_t *verdict, const struct cp_verdict_measures *ms,
			    const struct cp_compare_texts_request *rq,
			    struct cp_compare_texts *out, struct cp_error *err);

void cp_compare_texts_free(struct cp_compare_texts *texts);

#endif
