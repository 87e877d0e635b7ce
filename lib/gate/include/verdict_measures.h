/* verdict_measures.h - the measures of a verdict, one at a time.
 *
 * A verdict's measures are objects of ~25 members: as jansson values,
 * ~2.5 KB each, so a gate of 100,000 measures held a quarter of a
 * gigabyte of them before writing a byte. The writers (verdict.json, the
 * table, markdown, annotations) take them from here one by one instead:
 * from a verdict file read back (its "measures" array), or built on demand
 * from the gate's own compact result and dropped once written. */
#ifndef CP_VERDICT_MEASURES_H
#define CP_VERDICT_MEASURES_H

#include <jansson.h>
#include <stddef.h>

struct cp_compare_result;
struct cp_measure_verdict;

struct cp_verdict_measures {
	const json_t *array;			/* a verdict's "measures", or */
	const struct cp_compare_result *result; /* the gate's result */
	size_t n;
};

/* One measure's verdict.json object (new reference). */
json_t *cp_verdict_measure_json(const struct cp_measure_verdict *m);

/* The order measures are listed in everywhere (table, markdown, report):
 * the statuses needing attention first. Unknown statuses rank last (6). */
int cp_verdict_status_rank(const char *status);

/* The measures of a verdict document (NULL or none: an empty list). */
void cp_verdict_measures_of_doc(struct cp_verdict_measures *ms, const json_t *verdict);
/* The measures of a result; it (and the runs its units point into) must
 * outlive ms. */
void cp_verdict_measures_of_result(struct cp_verdict_measures *ms,
				   const struct cp_compare_result *r);

/* Measure i, in verdict.json's order, as its verdict.json object: a new
 * reference (decref it when done), or NULL when out of memory. Safe to
 * call from several threads at once. */
json_t *cp_verdict_measures_get(const struct cp_verdict_measures *ms, size_t i);

/* The indexes of the measures in the order everything lists them
 * (cp_verdict_status_rank, then name): malloc'd, n entries (NULL when out
 * of memory). */
size_t *cp_verdict_measures_sorted(const struct cp_verdict_measures *ms);

#endif
