/* warning_groups.h - the runs' warnings, like ones merged: warnings that
 * differ only in their numbers ("probe overhead is about 84% ..." and
 * "... about 100% ...") are one warning with each number as the range the
 * runs gave ("about 84-100%"), and how many runs gave it. Eight runs of one
 * build said the same thing eight times in compare's output otherwise. */
#ifndef CP_WARNING_GROUPS_H
#define CP_WARNING_GROUPS_H

#include <jansson.h>
#include <stddef.h>

/* An empty set of groups: a JSON object, released with json_decref. */
json_t *cp_warning_groups_new(void);
/* Adds one run's warning: to the group of its like ones, or a new one. */
void cp_warning_groups_add(json_t *groups, const char *text);
/* Calls fn for each group, in the order first seen: its text (the numbers
 * as ranges) and how many warnings it merged. */
void cp_warning_groups_each(const json_t *groups,
			    void (*fn)(const char *text, size_t count, void *arg), void *arg);

#endif
