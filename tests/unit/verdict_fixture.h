/* verdict_fixture.h - run documents and verdicts made in memory, for the
 * unit tests of compare and of the verdict's outputs (markdown, table,
 * annotations). */
#ifndef VERDICT_FIXTURE_H
#define VERDICT_FIXTURE_H

#include <jansson.h>
#include <stddef.h>

/* A valid run document with no measures yet ("measures": {}), from host
 * kernel `kernel` with clocksource `clocksource`. */
json_t *fixture_run_doc(const char *clocksource, const char *kernel);

/* The verdict of one base run against one head run in which each of
 * names[] is an exact measure going from 1 to 2 (regressed); with
 * `within`, each also has NAME.same at 1 on both sides. NULL on failure. */
json_t *fixture_regressed_verdict(const char *const *names, size_t n, int within);

#endif
