/* github_annotations.h - GitHub Actions workflow commands for a verdict.
 *
 * `clockprof compare --github` prints one `::error title=...::message` line
 * per measure that fails the gate (regressed, or removed without
 * removed-ok; at most CP_GITHUB_MAX_ERRORS, then one ::notice with the
 * count of the rest), then `::warning` lines for the verdict's
 * inconclusive reasons and warnings (the runs' own among them), so they
 * show on the pull request.
 *
 * Measure names come from the target. The runner reads any stdout line
 * that starts with `::` as a command, so (1) every name is C-escaped
 * (no control bytes) and then escaped as the runner documents (data: % CR
 * LF; properties also : and ,) so it stays inside its own line and field,
 * and (2) the rest of compare's stdout (the table, which prints names) is
 * wrapped in `::stop-commands::TOKEN` ... `::TOKEN::` with a random token
 * so no name there can start a command. */
#ifndef CP_GITHUB_ANNOTATIONS_H
#define CP_GITHUB_ANNOTATIONS_H

#include <jansson.h>
#include <stdio.h>

#define CP_GITHUB_MAX_ERRORS 10

/* Escapes s for the message part of a workflow command. */
void cp_github_escape_data(char *buf, size_t len, const char *s);

/* Escapes s for a property value (title=...). */
void cp_github_escape_property(char *buf, size_t len, const char *s);

/* Writes the annotations for verdict; returns how many lines. */
int cp_github_annotations_write(FILE *out, const json_t *verdict);
/* The same, the measures taken one at a time from ms. */
struct cp_verdict_measures;
int cp_github_annotations_write_of(FILE *out, const json_t *verdict,
				   const struct cp_verdict_measures *ms);

/* Starts a block in which the runner ignores workflow commands; token
 * receives the random hex token needed by cp_github_resume_commands(). */
int cp_github_stop_commands(FILE *out, char token[33]);
void cp_github_resume_commands(FILE *out, const char token[33]);

#endif
