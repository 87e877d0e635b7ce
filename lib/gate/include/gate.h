/* gate.h - `clockprof compare` as one call: load the runs and the
 * bounds, judge (compare.h), build verdict.json and write the files asked
 * for. The HTML report among them is drawn by the report stage, above
 * this one: the caller hands its writer in (cp_gate_request.html_writer).
 *
 * cmd/compare.c only parses options and prints what this returns, so the
 * whole gate can be driven from a test or a benchmark without a process. */
#ifndef CP_GATE_H
#define CP_GATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "compare_texts.h"
#include "fifo_open.h"

struct cp_error;
struct cp_bounds;
struct cp_compare_result;
struct cp_compare_run;

/* Writes an HTML report of docs[0] (the verdict) and the runs after it
 * to f, as cp_report_write (lib/report/include/report.h) does. */
typedef int (*cp_gate_html_writer)(json_t *const *docs, size_t ndocs, FILE *f, const char *path,
				   struct cp_error *err);

struct cp_gate_request {
	const char *const *base_files;
	size_t nbase;
	const char *const *head_files;
	size_t nhead;
	const char *bounds_path;	 /* NULL: built-in defaults */
	const char *output;		 /* verdict.json, "-" for the texts only */
	const char *markdown;		 /* markdown file, or NULL */
	const char *html;		 /* HTML report, or NULL */
	cp_gate_html_writer html_writer; /* needed with html */
	int github;			 /* markdown for $GITHUB_STEP_SUMMARY */
	int fail_on_inconclusive;
	int allow_mismatch;	 /* --allow-mismatch (compare.h) */
	const char *source_root; /* --source-root (compare.h), or NULL */
	cp_wait_notice notice;	 /* told of an output FIFO waiting for
					 * its reader, or NULL */
};

struct cp_gate_outcome {
	/* The verdict without its measures (cp_verdict_skeleton): they are
	 * written one by one, never held as JSON all at once. */
	json_t *verdict;
	struct cp_compare_texts texts; /* annotations with github */
	/* What the table is written from (cp_gate_table_write): the
	 * result, and the runs and bounds its names, units and rules point
	 * into. */
	struct cp_compare_result *result;
	struct cp_bounds *bounds;
	struct cp_compare_run *runs;
	size_t nruns;
	int exit_code; /* the gate's: 0 or 1 */
	/* Problems that must not change the gate's exit code (appending to
	 * $GITHUB_STEP_SUMMARY failed); "" when none. */
	char warning[512];
};

/* Runs the gate. The files are opened first, before anything is read
 * (output_set.h), and verdict.json is put in place last, after the
 * markdown, the HTML report and $GITHUB_STEP_SUMMARY: when any of them
 * fails, no verdict.json is put in place (an older one stays as it was).
 * Returns 0 with *out filled (free with
 * cp_gate_outcome_free), or -1 with the message and exit code (2) in err;
 * nothing is left to free then. */
int cp_gate_run(const struct cp_gate_request *rq, struct cp_gate_outcome *out,
		struct cp_error *err);

/* Writes the terminal table of the outcome to f, a line a measure, with
 * the summary lines after. 0, or -1 when out of memory or f fails. */
int cp_gate_table_write(const struct cp_gate_outcome *out, FILE *f, int color);

void cp_gate_outcome_free(struct cp_gate_outcome *out);

#endif
