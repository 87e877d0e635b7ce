/* run_file_load.c - reading and validating run.json for compare and report.
 * A run file comes from another machine or another version: every member
 * we read is checked, and a bad file is one clear line, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "run_file.h"

static int need(const json_t *obj, const char *key, json_type type,
		const char *what, const char *where, struct cp_error *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: %s%s is missing",
			       what, where, key);
	if (type == JSON_REAL ? !json_is_number(v) :
	    type == JSON_TRUE ? !json_is_boolean(v) : json_typeof(v) != type)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: %s%s has the wrong type", what,
			       where, key);
	return 0;
}

static int validate_measure(const char *name, const json_t *m, const char *what,
			    struct cp_error *err)
{
	char where[300];
	const char *kind, *better;

	snprintf(where, sizeof(where), "measures[\"%.200s\"].", name);
	if (!json_is_object(m))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: measure \"%.200s\" is not an object",
			       what, name);
	if (need(m, "value", JSON_REAL, what, where, err) ||
	    need(m, "unit", JSON_STRING, what, where, err) ||
	    need(m, "kind", JSON_STRING, what, where, err) ||
	    need(m, "better", JSON_STRING, what, where, err))
		return -1;
	kind = json_string_value(json_object_get(m, "kind"));
	better = json_string_value(json_object_get(m, "better"));
	if (strcmp(kind, "exact") && strcmp(kind, "sampled"))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: %skind must be \"exact\" or \"sampled\"",
			       what, where);
	if (strcmp(better, "lower") && strcmp(better, "higher"))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: %sbetter must be \"lower\" or \"higher\"",
			       what, where);
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
	if (need(doc, "tool", JSON_OBJECT, what, "", err) ||
	    need(doc, "complete", JSON_TRUE, what, "", err) ||
	    need(doc, "duration_s", JSON_REAL, what, "", err) ||
	    need(doc, "target", JSON_OBJECT, what, "", err) ||
	    need(doc, "host", JSON_OBJECT, what, "", err) ||
	    need(doc, "clock_reads", JSON_OBJECT, what, "", err) ||
	    need(doc, "measures", JSON_OBJECT, what, "", err))
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
