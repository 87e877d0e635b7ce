/* run_file_ranges.c - values no run can hold. A run file that passes the
 * type checks can still say -5 reads/op (shown by compare as an
 * improvement), ops = -3, or 5 reads/op over 100 requests next to 300
 * reads in them: nothing clockprof writes, so a hand-edited or broken
 * file, refused (exit 2) with the file and the member named rather than
 * judged. Kept apart from the type checks of run_file_load.c. */
#include <math.h>
#include <string.h>

#include "error.h"
#include "run_file_ranges.h"

int cp_run_ranges_measure(struct cp_run_ranges *r, const char *name, const json_t *m,
			  const char *what, struct cp_error *err)
{
	double v = json_number_value(json_object_get(m, "value"));
	size_t len = strlen(name);

	/* Every measure is a count, a time or a rate, per op or per second. */
	if (v < 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: measures[\"%.200s\"].value is negative (%g); "
			       "counts, times and rates are never below 0",
			       what, name, v);
	r->per_op += len >= 3 && !strcmp(name + len - 3, "/op");
	if (!strcmp(name, "clock_reads/op")) {
		r->has_clock_per_op = 1;
		r->clock_per_op = v;
	}
	return 0;
}

/* obj.key, when it is a number, must be >= 0 (and whole, for counts). */
static int count_ok(const json_t *obj, const char *path, const char *key, int whole,
		    const char *what, struct cp_error *err)
{
	const json_t *v = json_object_get(obj, key);
	double d = json_number_value(v);

	if (!json_is_number(v))
		return 0;
	if (d < 0 || (whole && d != floor(d)))
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: %s%s is %s (%g)", what,
			       path, key, d < 0 ? "negative" : "not a whole number", d);
	return 0;
}

/* A per-op value times ops is the count it divides, within rounding
 * (half a read: the count is whole). */
static int per_op_agrees(double per_op, const char *member, const json_t *doc, const char *what,
			 struct cp_error *err)
{
	const json_t *reads = json_object_get(doc, "clock_reads");
	const char *source = json_string_value(json_object_get(doc, "ops_source"));
	double ops = json_number_value(json_object_get(doc, "ops"));
	const char *basis;
	const json_t *count;

	/* Which count per_op divides depends on where ops came from; a file
	 * that does not say is not checked. */
	if (!source || ops <= 0)
		return 0;
	basis = !strcmp(source, "request") ? "in_requests" :
		!strcmp(source, "--ops")   ? "total" :
					     NULL;
	count = basis ? json_object_get(reads, basis) : NULL;
	if (!json_is_number(count) ||
	    fabs(per_op * ops - json_number_value(count)) <= 0.5 + 1e-9 * json_number_value(count))
		return 0;
	return cp_fail(err, CP_EXIT_USAGE,
		       "%s: invalid run file: %s %g times ops %g is %g, but clock_reads.%s is %g "
		       "(ops_source \"%s\")",
		       what, member, per_op, ops, per_op * ops, basis, json_number_value(count),
		       source);
}

int cp_run_ranges_check(const json_t *doc, const struct cp_run_ranges *r, const char *what,
			struct cp_error *err)
{
	const json_t *reads = json_object_get(doc, "clock_reads");
	const json_t *ops = json_object_get(doc, "ops");
	const json_t *per_op = json_object_get(reads, "per_op");

	if (ops && !json_is_null(ops) && !json_is_number(ops))
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: ops has the wrong type",
			       what);
	if (count_ok(doc, "", "ops", 0, what, err) ||
	    count_ok(reads, "clock_reads.", "total", 1, what, err) ||
	    count_ok(reads, "clock_reads.", "in_requests", 1, what, err) ||
	    count_ok(reads, "clock_reads.", "per_op", 0, what, err) ||
	    count_ok(json_object_get(doc, "request"), "request.", "count", 1, what, err))
		return -1;
	if (json_is_number(ops) && json_number_value(ops) == 0 && r->per_op)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: ops is 0 but %zu measures are per op", what,
			       r->per_op);
	if (json_number_value(json_object_get(reads, "in_requests")) >
		    json_number_value(json_object_get(reads, "total")) &&
	    json_is_number(json_object_get(reads, "total")))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid run file: clock_reads.in_requests is more than clock_reads.total",
			what);
	if ((json_is_number(per_op) &&
	     per_op_agrees(json_number_value(per_op), "clock_reads.per_op", doc, what, err)) ||
	    (r->has_clock_per_op &&
	     per_op_agrees(r->clock_per_op, "measures[\"clock_reads/op\"].value", doc, what, err)))
		return -1;
	return 0;
}
