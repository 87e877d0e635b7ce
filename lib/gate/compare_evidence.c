/* compare_evidence.c - no verdict from no evidence. A server profiled
 * with nothing driving it (a CI load step that broke, or none at all)
 * writes runs of 0 requests and 0 reads; judged, their one measure
 * (clock_reads/s, 0 against 0) passed the gate, so a broken load script
 * kept CI green forever. Such runs are refused like unreadable input:
 * exit 2, no verdict.json. */
#include <jansson.h>

#include "compare_evidence.h"
#include "error.h"

static json_int_t member_int(const json_t *doc, const char *obj, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(doc, obj), key));
}

/* Every run of s has a request boundary and counted no complete request
 * at it; *spec is the first run's boundary as given (-r). */
static int no_requests(const struct cp_compare_side *s, const char **spec)
{
	for (size_t i = 0; i < s->n; i++) {
		const json_t *rq = json_object_get(s->runs[i].doc, "request");

		if (!json_is_object(rq) || member_int(s->runs[i].doc, "request", "count") != 0)
			return 0;
	}
	*spec = json_string_value(
		json_object_get(json_object_get(s->runs[0].doc, "request"), "spec"));
	return s->n > 0;
}

/* No run of s read the clock. */
static int no_reads(const struct cp_compare_side *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (member_int(s->runs[i].doc, "clock_reads", "total") != 0)
			return 0;
	return s->n > 0;
}

int cp_compare_check_evidence(const struct cp_compare_side *base,
			      const struct cp_compare_side *head, struct cp_error *err)
{
	const struct cp_compare_side *sides[2] = { base, head };
	const char *spec = NULL;

	for (int s = 0; s < 2; s++)
		if (no_requests(sides[s], &spec))
			return cp_fail(
				err, CP_EXIT_USAGE,
				"no verdict: no %s run saw a complete request (0 in each of %zu at "
				"the boundary %.200s): is the load driving the program during each "
				"run, and is the boundary on its request path?",
				s ? "head" : "base", sides[s]->n, spec ? spec : "?");
	if (no_reads(base) && no_reads(head))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"no verdict: neither side read the clock (0 reads in each of %zu base and "
			"%zu head runs): the runs measured nothing to judge",
			base->n, head->n);
	return 0;
}
