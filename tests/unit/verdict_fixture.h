/* verdict_fixture.h - run documents and verdicts made in memory, for the
 * unit tests of compare and of the verdict's outputs (markdown, table,
 * annotations). */
#ifndef VERDICT_FIXTURE_H
#define VERDICT_FIXTURE_H

#include <jansson.h>
#include <stddef.h>

#include "bounds.h"
#include "compare.h"

/* A valid run document with no measures yet ("measures": {}), from host
 * kernel `kernel` with clocksource `clocksource`. */
json_t *fixture_run_doc(const char *clocksource, const char *kernel);

/* The verdict of one base run against one head run in which each of
 * names[] is an exact measure going from 1 to 2 (regressed); with
 * `within`, each also has NAME.same at 1 on both sides. NULL on failure. */
json_t *fixture_regressed_verdict(const char *const *names, size_t n, int within);

/* The same gate kept as the result the verdict is built from, with the
 * runs and bounds it points into (free with fixture_result_free). 0, or
 * -1 when the gate failed. */
struct fixture_result {
	struct cp_compare_run runs[2];
	struct cp_compare_side base, head;
	struct cp_bounds bounds;
	struct cp_compare_result result;
	int judged;
};
int fixture_regressed_result(const char *const *names, size_t n, int within,
			     struct fixture_result *f);
void fixture_result_free(struct fixture_result *f);

#endif
