/* compare_notes.h - the words the gate attaches to what it judges: a
 * warning appended to a JSON array (whole; cut, if ever, at a character),
 * a measure's warnings array made when its first warning is, and a
 * measure's reason, as long as it is. Every step of the gate (admitting
 * runs, judging a measure, deciding the verdict) writes them alike. */
#ifndef CP_COMPARE_NOTES_H
#define CP_COMPARE_NOTES_H

#include <jansson.h>

#include "compare.h"

void cp_compare_warnf(json_t *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
json_t *cp_compare_lazy_array(json_t **arr);
void cp_compare_set_reason(struct cp_measure_verdict *mv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
