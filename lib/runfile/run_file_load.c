/* run_file_load.c - reading and validating run.json for compare and report.
 * A run file comes from another machine or another version: every member
 * we read is checked, and a bad file is one clear line, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_walk.h"
#include "run_anatomy.h"
#include "run_file.h"
#include "run_file_ranges.h"

/* What is wrong with obj[key] for the given type, or NULL when nothing. */
static const char *member_problem(const json_t *obj, const char *key, json_type type)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return "is missing";
	if (type == JSON_REAL ? !json_is_number(v) :
	    type == JSON_TRUE ? !json_is_boolean(v) :
				json_typeof(v) != type)
		return "has the wrong type";
	return NULL;
}

static int need(const json_t *obj, const char *key, json_type type, const char *what,
		struct cp_error *err)
{
	const char *problem = member_problem(obj, key, type);

	if (problem)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid run file: %s %s", what, key,
			       problem);
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
			       "%s: invalid run file: measure \"%.200s\" is not an object", what,
			       name);
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		const char *problem = member_problem(m, members[i].key, members[i].type);

		if (problem)
			return cp_fail(err, CP_EXIT_USAGE,
				       "%s: invalid run file: measures[\"%.200s\"].%s %s", what,
				       name, members[i].key, problem);
	}
	kind = json_string_value(json_object_get(m, "kind"));
	better = json_string_value(json_object_get(m, "better"));
	if (strcmp(kind, "exact") && strcmp(kind, "sampled"))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid run file: measures[\"%.200s\"].kind must be \"exact\" or \"sampled\"",
			what, name);
	if (strcmp(better, "lower") && strcmp(better, "higher"))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid run file: measures[\"%.200s\"].better must be \"lower\" or \"higher\"",
			what, name);
	return 0;
}

/* Is s a counting mechanism this version knows? */
static int known_mechanism(const char *s)
{
	return !strcmp(s, "uprobe") || !strcmp(s, "breakpoint") || !strcmp(s, "patch");
}

const char *cp_run_mechanism(const json_t *doc)
{
	const json_t *m = json_object_get(json_object_get(doc, "clock_reads"), "mechanism");

	/* Files of earlier versions name none: all were counted with
	 * hardware breakpoints, the only mechanism those versions had. */
	return json_is_string(m) ? json_string_value(m) : "breakpoint";
}

/* The members that came with the uprobe mechanism are optional (files of
 * earlier versions lack them) but, when present, compare relies on them:
 * a mechanism it does not know could not be told apart from another. */
static int validate_mechanism(const json_t *doc, const char *what, struct cp_error *err)
{
	const json_t *mech = json_object_get(json_object_get(doc, "clock_reads"), "mechanism");
	const json_t *fire = json_object_get(json_object_get(doc, "host"), "breakpoints_fire");

	if (mech && !json_is_string(mech))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid run file: clock_reads.mechanism has the wrong type",
			       what);
	if (mech && !known_mechanism(json_string_value(mech)))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid run file: clock_reads.mechanism must be \"uprobe\", \"breakpoint\" or \"patch\"",
			what);
	/* null: the start-up self-test did not run. */
	if (fire && !json_is_boolean(fire) && !json_is_null(fire))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid run file: host.breakpoints_fire must be true, false or null",
			what);
	return 0;
}

/* Everything but the measures one by one (and their number). */
static int validate_top(const json_t *doc, const char *what, struct cp_error *err)
{
	if (cp_json_check_schema(doc, what, "run", CP_RUN_SCHEMA, err) ||
	    need(doc, "tool", JSON_OBJECT, what, err) ||
	    need(doc, "complete", JSON_TRUE, what, err) ||
	    need(doc, "duration_s", JSON_REAL, what, err) ||
	    need(doc, "target", JSON_OBJECT, what, err) ||
	    need(doc, "host", JSON_OBJECT, what, err) ||
	    need(doc, "clock_reads", JSON_OBJECT, what, err) ||
	    need(doc, "measures", JSON_OBJECT, what, err) || validate_mechanism(doc, what, err) ||
	    cp_run_anatomy_validate(doc, what, err))
		return -1;
	return 0;
}

int cp_run_file_validate(const json_t *doc, const char *what, struct cp_error *err)
{
	struct cp_run_ranges ranges = { 0 };
	const json_t *measures, *m;
	const char *name;

	if (validate_top(doc, what, err))
		return -1;
	measures = json_object_get(doc, "measures");
	if (json_object_size(measures) > CP_RUN_MAX_MEASURES)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: %zu measures; clockprof reads at most %d per run file", what,
			       json_object_size(measures), CP_RUN_MAX_MEASURES);
	json_object_foreach((json_t *)measures, name, m)
		if (validate_measure(name, m, what, err) ||
		    cp_run_ranges_measure(&ranges, name, m, what, err))
			return -1;
	return cp_run_ranges_check(doc, &ranges, what, err);
}

/* A run file being read member by member (lib/util/include/json_walk.h). */
struct run_read {
	json_t *doc;	  /* the members read so far */
	json_t *measures; /* the measures kept, or (with fn) their names */
	cp_run_measure_fn fn;
	void *ctx;
	int keep_text; /* keep the measures as their JSON text */
	json_t *measures_text;
	size_t count;
	int bad; /* a measure was invalid: first_bad says which */
	struct cp_error first_bad;
	struct cp_run_ranges ranges; /* run_file_ranges.h */
};

static int oom(struct cp_json_walk *w)
{
	return cp_fail(w->err, CP_EXIT_USAGE, "%s: out of memory", w->what);
}

/* One measure: counted (a file past the limit is refused here, before the
 * rest of it is parsed), checked, then kept or handed to fn. The first
 * invalid one is reported only once the whole file has parsed, as
 * validating the whole document after parsing it said it. */
static int measure_member(struct cp_json_walk *w, void *ctx, const char *name, size_t key_at,
			  size_t *at)
{
	struct run_read *rr = ctx;
	json_t *m;

	(void)key_at;
	if (++rr->count > CP_RUN_MAX_MEASURES)
		return cp_fail(w->err, CP_EXIT_USAGE,
			       "%s: more than %d measures; clockprof reads at most %d per run file",
			       w->what, CP_RUN_MAX_MEASURES, CP_RUN_MAX_MEASURES);
	if (!(m = cp_json_walk_value(w, at)))
		return -1;
	if (!rr->bad && (validate_measure(name, m, w->what, &rr->first_bad) ||
			 cp_run_ranges_measure(&rr->ranges, name, m, w->what, &rr->first_bad)))
		rr->bad = 1;
	if (rr->fn || rr->keep_text) {
		int failed = rr->fn && !rr->bad && rr->fn(rr->ctx, name, m);

		json_decref(m);
		if (failed || json_object_set_new(rr->measures, name, json_null()))
			return oom(w);
		return 0;
	}
	return json_object_set_new(rr->measures, name, m) ? oom(w) : 0;
}

static int top_member(struct cp_json_walk *w, void *ctx, const char *key, size_t key_at, size_t *at)
{
	struct run_read *rr = ctx;
	json_t *v;

	(void)key_at;
	if (!strcmp(key, "measures") && cp_json_walk_peek(w, at) == '{') {
		size_t start = *at;

		if (!(rr->measures = json_object()) ||
		    json_object_set_new(rr->doc, key, rr->measures))
			return oom(w);
		if (cp_json_walk_object(w, at, rr->measures, measure_member, rr))
			return -1;
		if (rr->keep_text &&
		    !(rr->measures_text = json_stringn_nocheck(w->text + start, *at - start)))
			return oom(w);
		return 0;
	}
	if (!(v = cp_json_walk_value(w, at)))
		return -1;
	return json_object_set_new(rr->doc, key, v) ? oom(w) : 0;
}

/* Walks path into rr->doc; *other: a document that is not an object. */
static int walk(const char *path, struct run_read *rr, json_t **other, struct cp_error *err)
{
	if (!(rr->doc = json_object()))
		return cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
	if (cp_json_walk_file(path, rr->doc, top_member, rr, other, err)) {
		json_decref(rr->doc);
		return -1;
	}
	return 0;
}

/* What a walk read, checked as a whole once it has all: the top-level
 * members, the first bad measure, the ranges the measures must keep. */
static int check_read(const struct run_read *rr, const char *path, struct cp_error *err)
{
	if (validate_top(rr->doc, path, err))
		return -1;
	if (rr->bad) {
		if (err)
			*err = rr->first_bad;
		return -1;
	}
	return cp_run_ranges_check(rr->doc, &rr->ranges, path, err);
}

int cp_run_file_read(const char *path, cp_run_measure_fn fn, void *ctx, json_t **doc,
		     struct cp_error *err)
{
	struct run_read rr = { .fn = fn, .ctx = ctx };
	json_t *other = NULL;

	if (walk(path, &rr, &other, err))
		return -1;
	if (other) { /* not an object: says so */
		cp_run_file_validate(other, path, err);
		json_decref(other);
		goto fail;
	}
	if (check_read(&rr, path, err))
		goto fail;
	/* fn had the measures: the names kept to find duplicates go. */
	if (fn && rr.measures && json_object_clear(rr.measures))
		goto fail;
	*doc = rr.doc;
	return 0;
fail:
	json_decref(rr.doc);
	return -1;
}

int cp_run_file_parse(const char *path, json_t **doc, struct cp_error *err)
{
	struct run_read rr = { .keep_text = 1 };
	json_t *other = NULL;
	const char *schema;

	if (walk(path, &rr, &other, err)) {
		json_decref(rr.measures_text); /* kept before a later member failed */
		return -1;
	}
	if (other) {
		json_decref(rr.doc);
		*doc = other;
		return 0;
	}
	schema = json_string_value(json_object_get(rr.doc, "schema"));
	if (schema && !strcmp(schema, CP_RUN_SCHEMA) && check_read(&rr, path, err))
		goto fail;
	if (rr.measures_text && json_object_set_new(rr.doc, "measures", rr.measures_text)) {
		rr.measures_text = NULL;
		cp_fail(err, CP_EXIT_USAGE, "%s: out of memory", path);
		goto fail;
	}
	*doc = rr.doc;
	return 0;
fail:
	json_decref(rr.measures_text);
	json_decref(rr.doc);
	return -1;
}

int cp_run_file_load(const char *path, json_t **doc, struct cp_error *err)
{
	return cp_run_file_read(path, NULL, NULL, doc, err);
}
