/* run_file_load.c - reading and validating run.json for compare and report.
 * A run file comes from another machine or another version: every member
 * we read is checked, and a bad file is one clear line, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "run_file.h"

/* What is wrong with obj[key] for the given type, or NULL when nothing. */
static const char *member_problem(const json_t *obj, const char *key, json_type type)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return "is missing";
	if (type == JSON_REAL ? !json_is_number(v) :
	    type == JSON_TRUE ? !json_is_boolean(v) : json_typeof(v) != type)
		return "has the wrong type";
	return NULL;
}

static int need(const json_t *obj, const char *key, json_type type,
		const char *what, struct cp_error *err)
{
	const char *problem = member_problem(obj, key, type);

	if (problem)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: %s %s", what,
			       key, problem);
	return 0;
}

/* Called for each of thousands of measures: the message with the
 * measure's name is only formatted when something is wrong. */
static int validate_measure(const char *name, const json_t *m, const char *what,
			    struct cp_error *err)
{
	static const struct {
		const char *key;
		json_type type;
	} members[] = {
		{ "value", JSON_REAL },
		{ "unit", JSON_STRING },
		{ "kind", JSON_STRING },
		{ "better", JSON_STRING },
	};
	const char *kind, *better;

	if (!json_is_object(m))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: measure \"%.200s\" is not an object",
			       what, name);
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		const char *problem = member_problem(m, members[i].key, members[i].type);

		if (problem)
			return cp_fail(err, CP_EXIT_USAGE,
				       "%s: invalid run file: measures[\"%.200s\"].%s %s",
				       what, name, members[i].key, problem);
	}
	kind = json_string_value(json_object_get(m, "kind"));
	better = json_string_value(json_object_get(m, "better"));
	if (strcmp(kind, "exact") && strcmp(kind, "sampled"))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: measures[\"%.200s\"].kind must be \"exact\" or \"sampled\"",
			       what, name);
	if (strcmp(better, "lower") && strcmp(better, "higher"))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: measures[\"%.200s\"].better must be \"lower\" or \"higher\"",
			       what, name);
	return 0;
}

/* Is s a counting mechanism this version knows? */
static int known_mechanism(const char *s)
{
	return !strcmp(s, "uprobe") || !strcmp(s, "breakpoint");
}

const char *cp_run_mechanism(const json_t *doc)
{
	const json_t *m = json_object_get(json_object_get(doc, "clock_reads"),
					  "mechanism");

	/* Files of earlier versions name none: all were counted with
	 * hardware breakpoints, the only mechanism those versions had. */
	return json_is_string(m) ? json_string_value(m) : "breakpoint";
}

/* The members that came with the uprobe mechanism are optional (files of
 * earlier versions lack them) but, when present, compare relies on them:
 * a mechanism it does not know could not be told apart from another. */
static int validate_mechanism(const json_t *doc, const char *what,
			      struct cp_error *err)
{
	const json_t *mech = json_object_get(json_object_get(doc, "clock_reads"),
					     "mechanism");
	const json_t *fire = json_object_get(json_object_get(doc, "host"),
					     "breakpoints_fire");

	if (mech && !json_is_string(mech))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: clock_reads.mechanism has the wrong type",
			       what);
	if (mech && !known_mechanism(json_string_value(mech)))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: clock_reads.mechanism must be \"uprobe\" or \"breakpoint\"",
			       what);
	/* null: the start-up self-test did not run. */
	if (fire && !json_is_boolean(fire) && !json_is_null(fire))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: host.breakpoints_fire must be true, false or null",
			       what);
	return 0;
}

int cp_run_file_validate(const json_t *doc, const char *what,
			 struct cp_error *err)
{
	const json_t *schema, *measures, *m;
	const char *name;

	if (!json_is_object(doc))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: not a JSON object", what);
	schema = json_object_get(doc, "schema");
	if (!json_is_string(schema) ||
	    strcmp(json_string_value(schema), CP_RUN_SCHEMA) != 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: not a clockprof run file (schema must be \"%s\")",
			       what, CP_RUN_SCHEMA);
	if (need(doc, "tool", JSON_OBJECT, what, err) ||
	    need(doc, "complete", JSON_TRUE, what, err) ||
	    need(doc, "duration_s", JSON_REAL, what, err) ||
	    need(doc, "target", JSON_OBJECT, what, err) ||
	    need(doc, "host", JSON_OBJECT, what, err) ||
	    need(doc, "clock_reads", JSON_OBJECT, what, err) ||
	    need(doc, "measures", JSON_OBJECT, what, err) ||
	    validate_mechanism(doc, what, err))
		return -1;
	measures = json_object_get(doc, "measures");
	json_object_foreach((json_t *)measures, name, m)
		if (validate_measure(name, m, what, err))
			return -1;
	return 0;
}

int cp_run_file_load(const char *path, json_t **doc, struct cp_error *err)
{
	return cp_json_load_file(path, cp_run_file_validate, doc, err);
}
