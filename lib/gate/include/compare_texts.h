/* compare_texts.h - the texts of a verdict, rendered side by side.
 *
 * verdict.json, the markdown summary and the GitHub annotations are
 * independent read-only walks over the verdict's measures. On a
 * 1,000-measure gate the JSON text alone takes ~9 ms, so they are rendered
 * on separate CPUs (lib/util/include/parallel.h). verdict.json is written
 * as it is rendered, measure by measure (~1 KB a measure: never held
 * whole); the others are bounded (markdown 1 MiB, annotations tens of
 * lines) and kept for the caller to write where they go. The terminal
 * table, a line a measure, is written straight to its stream. */
#ifndef CP_COMPARE_TEXTS_H
#define CP_COMPARE_TEXTS_H

#include <jansson.h>
#include <stdio.h>

struct cp_error;
struct cp_verdict_measures;

struct cp_compare_texts {
	char *markdown;	   /* as cp_compare_markdown(..., 0), or NULL */
	char *annotations; /* as cp_github_annotations_write(), or NULL */
};

struct cp_compare_texts_request {
	FILE *json;		   /* write verdict.json to this stream, or NULL */
	const char *json_name;	   /* its path, for messages ("-": standard
				 * output, then a newline) */
	int markdown, annotations; /* which texts to render */
};

/* Renders the texts asked for from verdict (whose own "measures" are not
 * read: cp_verdict_skeleton() is enough) and ms, and writes verdict.json
 * to rq->json (not flushed: the caller owns the stream). Returns 0, or -1
 * with err set (out of memory, or verdict.json not written), with nothing
 * left to free then. */
int cp_compare_texts_render(const json_t *verdict, const struct cp_verdict_measures *ms,
			    const struct cp_compare_texts_request *rq, struct cp_compare_texts *out,
			    struct cp_error *err);

/* Writes verdict.json alone to f, as cp_compare_texts_render() does (for
 * an output that must wait until others are written). 0, or -1 with err
 * (CP_EXIT_USAGE) naming name. */
int cp_compare_texts_json(FILE *f, const char *name, const json_t *verdict,
			  const struct cp_verdict_measures *ms, struct cp_error *err);

/* Writes the terminal table of verdict and ms to f (colour: color). 0,
 * or -1 when out of memory or f fails. */
int cp_compare_texts_table(FILE *f, const json_t *verdict, const struct cp_verdict_measures *ms,
			   int color);

void cp_compare_texts_free(struct cp_compare_texts *texts);

#endif
