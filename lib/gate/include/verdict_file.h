/* verdict_file.h - verdict.json (contract "clockprof.verdict/1", every
 * member in docs/verdict-json.md): what `clockprof compare` decided and
 * why, for CI scripts, the HTML report and people. The builder turns a
 * struct cp_compare_result into the document; the loader validates a
 * document for `clockprof report`. */
#ifndef CP_VERDICT_FILE_H
#define CP_VERDICT_FILE_H

#include <jansson.h>
#include <stdio.h>

struct cp_error;
struct cp_bounds;
struct cp_compare_result;
struct cp_compare_side;
struct cp_measure_verdict;
struct cp_verdict_measures;

#define CP_VERDICT_SCHEMA "clockprof.verdict/1"

/* Builds the verdict document (new reference, NULL when out of memory). */
json_t *cp_verdict_build(const struct cp_compare_result *r, const struct cp_bounds *bounds,
			 const struct cp_compare_side *base, const struct cp_compare_side *head);

/* The verdict document without its measures ("measures" holds a marker
 * string): what the writers read besides the measures, which they take
 * one at a time (verdict_measures.h). New reference, NULL when out of
 * memory. */
json_t *cp_verdict_skeleton(const struct cp_compare_result *r, const struct cp_bounds *bounds,
			    const struct cp_compare_side *base, const struct cp_compare_side *head);

/* Writes verdict.json to out, the skeleton's text with the measures
 * written one by one where its marker is: byte for byte what
 * cp_json_text() of the whole document (cp_verdict_build) would be, never
 * held whole. 0, or -1 when out of memory or out fails. */
int cp_verdict_write(FILE *out, const json_t *skeleton, const struct cp_verdict_measures *ms);

/* Loads path and checks the members report and the writers rely on
 * (schema, status, summary, bounds, base, head, env_mismatch, measures
 * with name, unit, kind, base, head, change_pct, p_value, bound, status).
 * On success *doc holds a new reference; invalid or unreadable input fails
 * with CP_EXIT_USAGE and a message naming the file and the member. */
int cp_verdict_file_load(const char *path, json_t **doc, struct cp_error *err);

/* Checks an already parsed document; `what` names it in messages. */
int cp_verdict_file_validate(const json_t *doc, const char *what, struct cp_error *err);

#endif
