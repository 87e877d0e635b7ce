/* counters_json.h - perf counters into run.json: the `counters` member
 * ({event: {value, unit, per_op, scaled, running_ratio, time_enabled_ns,
 * time_running_ns}} or {event: {supported: false, reason}}) and the
 * `EVENT/op` entries of `measures` that compare reads (docs/run-json.md).
 * An unsupported event is never written as a number, and gets no measure. */
#ifndef CP_COUNTERS_JSON_H
#define CP_COUNTERS_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "counters.h"

/* New object for run.json `counters`. ops <= 0: per_op is null. */
json_t *cp_counters_json(const struct cp_event_spec *specs, const struct cp_counter_value *values,
			 size_t n, double ops);

/* Adds "NAME/op": {value, unit: "UNIT/op", kind: "sampled", better:
 * "lower"} to measures for each supported event; nothing when ops <= 0.
 * Returns 0, or -1 when jansson fails (out of memory). */
int cp_counters_add_measures(json_t *measures, const struct cp_event_spec *specs,
			     const struct cp_counter_value *values, size_t n, double ops);

#endif
