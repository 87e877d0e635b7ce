/* report_sections.h - the report's sections, written by report_run.c and
 * report_verdict.c and assembled by report.c. Each writer appends escaped
 * HTML (the tables, readable without JavaScript) to the page and adds the
 * data its charts need to `data`, the JSON object embedded for report.js. */
#ifndef CP_REPORT_SECTIONS_H
#define CP_REPORT_SECTIONS_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "report_stacks.h"

/* How many functions the flame graphs' tables list (the rest are counted). */
#define CP_REPORT_TOP_FUNCTIONS 40

/* A run report: target, host, window, warnings, headline, clock reads,
 * histogram, call sites, counters, flame graph. `index` numbers it among
 * `nruns` runs; chart data goes to data["runs"]. */
int cp_report_run_section(struct cp_buf *b, const json_t *run, size_t index, size_t nruns,
			  json_t *data);

/* The top of a run report: the target, the host, the window and the
 * run's warnings (report_run_facts.c). */
void cp_report_run_facts(struct cp_buf *b, const json_t *run);

/* The "Anatomy of a request" section of a run with run.json "anatomy"
 * (report_anatomy.c); nothing without one. */
void cp_report_anatomy(struct cp_buf *b, const json_t *run, size_t index);

/* The reusable reads of base that head no longer lists (verdict.json
 * reusable_removed), as a table; nothing when there are none. */
void cp_report_reusable_removed(struct cp_buf *b, const json_t *verdict);

/* The per-op divisor of a run (its ops), NAN when it has none. */
double cp_report_run_ops(const json_t *run);

/* A verdict report: headline, measures table and dumbbell chart; and, when
 * base and head runs are given (nbase and nhead may be 0), the differential
 * flame graph and the call sites that appeared or disappeared. */
int cp_report_verdict_section(struct cp_buf *b, const json_t *verdict, json_t *const *base,
			      size_t nbase, json_t *const *head, size_t nhead, json_t *data);

/* The function table shared by both kinds of flame graph: the top
 * functions by inclusive reads (sides 1) or by change (sides 2), where
 * div[side] turns counts into the unit shown. */
void cp_report_function_table(struct cp_buf *b, const struct cp_stacks *st, int sides,
			      const double div[2], const char *unit);

/* One call site's cells: function (with inlined frames), file:line, via,
 * module. */
void cp_report_site_cells(struct cp_buf *b, const json_t *site);

#endif
