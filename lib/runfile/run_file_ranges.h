/* run_file_ranges.h - the values no run can hold (lib/runfile/run_file_ranges.c):
 * checked by the run file readers after the types, apart from them. */
#ifndef CP_RUN_FILE_RANGES_H
#define CP_RUN_FILE_RANGES_H

#include <jansson.h>

struct cp_error;

/* What the measures said, for the checks that need the whole file. */
struct cp_run_ranges {
	size_t per_op;	      /* measures named .../op */
	int has_clock_per_op; /* measure clock_reads/op, of value: */
	double clock_per_op;
};

/* One valid measure: its value must not be below 0; noted in r. */
int cp_run_ranges_measure(struct cp_run_ranges *r, const char *name, const json_t *m,
			  const char *what, struct cp_error *err);

/* The whole document, once its measures went through
 * cp_run_ranges_measure(): counts not below 0, no per-op measure with
 * ops 0, per-op values that agree with the counts and ops. */
int cp_run_ranges_check(const json_t *doc, const struct cp_run_ranges *r, const char *what,
			struct cp_error *err);

#endif
