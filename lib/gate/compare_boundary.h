/* compare_boundary.h - refusing runs whose ops are not the same thing
 * (lib/gate/compare_boundary.c). */
#ifndef CP_COMPARE_BOUNDARY_H
#define CP_COMPARE_BOUNDARY_H

#include <jansson.h>

#include "compare.h"

/* Fails (CP_EXIT_USAGE), naming two runs and the field, when the runs of
 * both sides differ in their request boundary as resolved or in their
 * ops_source; with allow (--allow-mismatch) the difference is a line in
 * warnings instead. */
int cp_compare_check_ops(const struct cp_compare_side *base, const struct cp_compare_side *head,
			 int allow, json_t *warnings, struct cp_error *err);

#endif
