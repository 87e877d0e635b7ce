/* counters_json.c - see counters_json.h. Kept apart from counters.c so the
 * counting code does not depend on jansson and the run.json shape of
 * counters lives in one place. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "counters_json.h"

/* An unscaled count is exact: write it as an integer so readers can test
 * equality; a scaled one is an estimate and stays a real. */
static json_t *value_json(const struct cp_counter_value *v)
{
	if (!v->scaled && v->raw <= (uint64_t)LLONG_MAX)
		return json_integer((json_int_t)v->raw);
	return json_real(v->value);
}

static json_t *counter_json(const struct cp_event_spec *s, const struct cp_counter_value *v,
			    double ops)
{
	if (!v->supported)
		return json_pack("{s:b, s:s}", "supported", 0, "reason",
				 v->reason[0] ? v->reason : "not supported");
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	return json_pack("{s:o, s:s, s:o, s:b, s:f, s:I, s:I}",
			 "value", value_json(v),
			 "unit", s->unit ? s->unit : "events",
			 "per_op", ops > 0 ? json_real(v->value / ops) : json_null(),
			 "scaled", v->scaled,
			 "running_ratio", v->running_ratio,
			 "time_enabled_ns", (json_int_t)v->time_enabled,
			 "time_running_ns", (json_int_t)v->time_running);
	/* clang-format on */
}

json_t *cp_counters_json(const struct cp_event_spec *specs, const struct cp_counter_value *values,
			 size_t n, double ops)
{
	json_t *obj = json_object();

	if (!obj)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *c = counter_json(&specs[i], &values[i], ops);

		if (!c || json_object_set_new(obj, specs[i].name, c)) {
			json_decref(obj);
			return NULL;
		}
	}
	return obj;
}

int cp_counters_add_measures(json_t *measures, const struct cp_event_spec *specs,
			     const struct cp_counter_value *values, size_t n, double ops)
{
	if (ops <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char name[80], unit[80];
		json_t *m;

		if (!values[i].supported)
			continue;
		snprintf(name, sizeof(name), "%s/op", specs[i].name);
		snprintf(unit, sizeof(unit), "%s/op", specs[i].unit ? specs[i].unit : "events");
		m = json_pack("{s:f, s:s, s:s, s:s}", "value", values[i].value / ops, "unit", unit,
			      "kind", "sampled", "better", "lower");
		if (!m || json_object_set_new(measures, name, m))
			return -1;
	}
	return 0;
}
