/* verdict_file.h - verdict.json (contract "clockprof.verdict/1", every
 * member in docs/verdict-json.md): what `clockprof compare` decided and
 * why, for CI scripts, the HTML report and people. The builder turns a
 * struct cp_compare_result into the document; the loader validates a
 * document for `clockprof report`. */
#ifndef CP_VERDICT_FILE_H
#define CP_VERDICT_FILE_H

#include <jansson.h>

struct cp_error;
struct cp_bounds;
struct cp_compare_result;
struct cp_compare_side;

#define CP_VERDICT_SCHEMA "clockprof.verdict/1"

/* Builds the verdict document (new reference, NULL when out of memory). */
json_t *cp_verdict_build(const struct cp_compare_result *r,
			 const struct cp_bounds *bounds,
			 const struct cp_compare_side *base,
			 const struct cp_compare_side *head);

/* Loads path and checks the members report and the writers rely on
 * (schema, status, summary, bounds, base, head, env_mismatch, measures
 * with name, unit, kind, base, head, change_pct, p_value, bound, status).
 * On success *doc holds a new reference; invalid or unreadable input fails
 * with CP_EXIT_USAGE and a message naming the file and the member. */
int cp_verdict_file_load(const char *path, json_t **doc, struct cp_error *err);

/* The order measures are listed in everywhere (table, markdown, report):
 * the statuses needing attention first. Unknown statuses rank last (6). */
int cp_verdict_status_rank(const char *status);
/* qsort comparator on json_t * measures: by status rank, then name. */
int cp_verdict_measure_order(const void *a, const void *b);

/* Checks an already parsed document; `what` names it in messages. */
int cp_verdict_file_validate(const json_t *doc, const char *what,
			     struct cp_error *err);

#endif
