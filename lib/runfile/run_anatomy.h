/* run_anatomy.h - run.json's "anatomy" (--anatomy, docs/run-json.md and
 * docs/anatomy.md): written from a profile's struct cp_anatomy, its
 * measure clock_reads_reusable/op, and the checks a loaded file's member
 * must pass before compare and report read it. */
#ifndef CP_RUN_ANATOMY_H
#define CP_RUN_ANATOMY_H

#include <jansson.h>

#include "anatomy.h"

struct cp_error;

#define CP_REUSABLE_MEASURE "clock_reads_reusable/op"

/* The member (new reference). */
json_t *cp_run_anatomy_build(const struct cp_anatomy *a);

/* Adds CP_REUSABLE_MEASURE to measures where a was on and judged:
 * "exact" when every request was sampled whole, else "sampled". */
void cp_run_anatomy_measure(json_t *measures, const struct cp_anatomy *a);

/* Checks doc's "anatomy" where there is one: its counts, and every
 * reusable entry's reads among its reads. 0, or -1 with err set. */
int cp_run_anatomy_validate(const json_t *doc, const char *what, struct cp_error *err);

#endif
