/* report.h - the HTML report: one self-contained file a user opens in a
 * browser (`clockprof report`, and --html on attach, run and compare).
 *
 * The page carries its own CSS and JavaScript (reports/, compiled in),
 * loads nothing from anywhere, and allows only its own inline script and
 * style through a Content-Security-Policy of their sha256 hashes. Tables
 * are written as HTML so the report reads with JavaScript disabled; the
 * charts and flame graphs are drawn by the script from a JSON data block.
 * Every name from the profiled program is escaped (html_escape.h). */
#ifndef CP_REPORT_H
#define CP_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct cp_error;

/* Writes the report of docs (run documents, "clockprof.run/1", and/or one
 * verdict, "clockprof.verdict/1", all already validated) to f, an output
 * of output_set.h; path names it in messages.
 *
 * Without a verdict, each run gets a run report. With a verdict, the run
 * documents (if any) are the comparison's runs: first the base runs, then
 * the head runs, as many of each as the verdict's base.runs and head.runs
 * say; they give the differential flame graph and the call sites that
 * appeared or disappeared. Fails with CP_EXIT_USAGE for a document of
 * another schema, two verdicts, or run counts that do not match. */
int cp_report_write(json_t *const *docs, size_t ndocs, FILE *f, const char *path,
		    struct cp_error *err);

#endif
