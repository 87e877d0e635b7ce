/* compare_table.h - the terminal table of a verdict, like a bench bot's:
 * measure, base, head, change [interval], bound, status.
 *
 * Works from the verdict document (lib/gate/include/verdict_file.h) so it can render a
 * verdict loaded from disk as well as a fresh one. Marks never rely on
 * colour: ▲ is a change in the measure's worse direction, ▼ in its better
 * one, and the status is a word. Colour (optional) only adds emphasis.
 * Names and other strings from the target are shown C-escaped (control
 * bytes as \n, \r, \xNN) so they cannot move the cursor or forge lines.
 * The formatting helpers are shared with the markdown writer. */
#ifndef CP_COMPARE_TABLE_H
#define CP_COMPARE_TABLE_H

#include <jansson.h>
#include <stdio.h>
#include "escape_display.h"

/* Writes the table and the summary lines for verdict to out. */
int cp_compare_table_write(FILE *out, const json_t *verdict, int color);

/* The same as a malloc'ed string (NULL when out of memory). */
char *cp_compare_table_string(const json_t *verdict, int color);

/* The same, the measures taken one at a time from ms (verdict's own
 * "measures" are not read). */
struct cp_verdict_measures;
int cp_compare_table_write_of(FILE *out, const json_t *verdict,
			      const struct cp_verdict_measures *ms, int color);
char *cp_compare_table_string_of(const json_t *verdict, const struct cp_verdict_measures *ms,
				 int color);

/* A value for people: 4 significant digits, thousands separators for
 * large numbers ("19,196", "25.98", "0.1699"); "-" for null. */
void cp_format_value(char *buf, size_t len, const json_t *v);

/* One line a regressed per-site measure gained (an element of its
 * "lines"), for the terminal and annotations: "PATH:LINE (BASE -> HEAD)",
 * PATH repo_path (else file) C-escaped, cut to 300 characters. */
void cp_format_gained_line(char *buf, size_t len, const json_t *line);

/* Calls fn for each measure of ms that names lines it gained (verdict
 * "lines": a regressed per-site measure), in the order of rows (NULL: as
 * ms has them), at most CP_GAINED_MEASURES_MAX; returns how many. */
#define CP_GAINED_MEASURES_MAX 10
size_t cp_gained_measures_each(const struct cp_verdict_measures *ms, const size_t *rows,
			       void (*fn)(const json_t *m, void *arg), void *arg);

/* The change column of measure m, e.g. "▲ +25.2% [+23.2, +33.2]" (the
 * 95% interval's ends, in percent), "▲ +1 (+33%)" for exact measures, ""
 * for added/removed; "?" where a number is unknown, never "nan". */
void cp_format_change(char *buf, size_t len, const json_t *m);

/* One environment difference of a verdict (env_mismatch), its values as
 * JSON text ("?" when they cannot be): the table and the markdown each
 * print it their way. */
struct cp_env_mismatch {
	const char *field, *base, *head, *effect;
};
/* Calls fn for each of verdict's environment differences. */
void cp_env_mismatches_each(const json_t *verdict,
			    void (*fn)(const struct cp_env_mismatch *e, void *arg), void *arg);

#endif
