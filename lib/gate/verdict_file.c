/* verdict_file.c - see verdict_file.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bounds.h"
#include "compare.h"
#include "error.h"
#include "json_file.h"
#include "verdict_file.h"
#include "verdict_measures.h"
#include "version.h"

static json_t *rule_json(const struct cp_bound_rule *r)
{
	return json_pack("{s:o, s:s, s:s, s:I}", "line",
			 r->line ? json_integer(r->line) : json_null(), "pattern", r->pattern,
			 "bound", r->text, "matched", (json_int_t)r->matched);
}

static json_t *side_json(const struct cp_compare_side *s, json_t *env)
{
	json_t *files = json_array();

	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(files, s->names && s->names[i] ? json_string(s->names[i]) :
								       json_null());
	return json_pack("{s:I, s:o, s:O}", "runs", (json_int_t)s->n, "files", files, "env", env);
}

/* The bounds' rules as judged: the file's, then the defaults. */
static json_t *rules_json(const struct cp_bounds *bounds)
{
	json_t *rules = json_array();

	for (size_t i = 0; i < bounds->nrules; i++)
		json_array_append_new(rules, rule_json(&bounds->rules[i]));
	json_array_append_new(rules, rule_json(&bounds->default_exact));
	json_array_append_new(rules, rule_json(&bounds->default_sampled));
	json_array_append_new(rules, rule_json(&bounds->default_floor));
	return rules;
}

/* The marker that stands for the measures in the skeleton: JSON text of a
 * string never holds an unescaped '"' inside it, so the marker with its
 * key and quotes, as the dumper writes it at the top level, is found only
 * where the skeleton put it. */
#define MEASURES_MARKER "clockprof: measures go here"
static const char MEASURES_AT[] = "\n  \"measures\": \"" MEASURES_MARKER "\"";

json_t *cp_verdict_skeleton(const struct cp_compare_result *r, const struct cp_bounds *bounds,
			    const struct cp_compare_side *base, const struct cp_compare_side *head)
{
	json_t *doc = json_object(), *rules = rules_json(bounds);
	const size_t *c = r->counts;
	char now[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(doc, "schema", json_string(CP_VERDICT_SCHEMA));
	json_object_set_new(doc, "tool",
			    json_pack("{s:s, s:s}", "name", "clockprof", "version",
				      CLOCKPROF_VERSION));
	json_object_set_new(doc, "created_at", json_string(now));
	json_object_set_new(doc, "status", json_string(cp_verdict_status_name(r->status)));
	json_object_set_new(doc, "exit_code", json_integer(r->exit_code));
	/* One key and its value a line (clang-format would pack them): */
	/* clang-format off */
	json_object_set_new(doc, "summary", json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"measures", (json_int_t)r->n,
		"within", (json_int_t)c[CP_MEASURE_WITHIN],
		"regressed", (json_int_t)c[CP_MEASURE_REGRESSED],
		"improved", (json_int_t)c[CP_MEASURE_IMPROVED],
		"inconclusive", (json_int_t)c[CP_MEASURE_INCONCLUSIVE],
		"added", (json_int_t)c[CP_MEASURE_ADDED],
		"removed", (json_int_t)c[CP_MEASURE_REMOVED],
		"removed_not_allowed", (json_int_t)r->blocking,
		"outside_bounds", (json_int_t)(c[CP_MEASURE_REGRESSED] + r->blocking),
		"judged", (json_int_t)(r->n - c[CP_MEASURE_ADDED] - c[CP_MEASURE_REMOVED])));
	json_object_set_new(doc, "method", json_pack(
		"{s:f, s:f, s:s, s:s, s:s, s:s, s:I, s:f, s:I, s:b}",
		"alpha", r->alpha, "confidence", 1 - r->alpha,
		"interval", "hodges-lehmann",
		"test", "mann-whitney-u (exact up to 256 pairs, ties kept; else normal approximation, tie and continuity corrected)",
		"hypothesis", "change beyond the bound (head against base moved to the bound, one-sided)",
		"correction", "holm",
		"holm_family", (json_int_t)r->holm_family,
		"family_select", CP_FAMILY_SELECT,
		"min_runs", (json_int_t)r->min_runs,
		"fail_on_inconclusive", r->fail_on_inconclusive));
	json_object_set_new(doc, "bounds", json_pack("{s:o, s:o, s:b, s:o}",
		"file", bounds->file ? json_string(bounds->file) : json_null(),
		"sha256", bounds->sha256[0] ? json_string(bounds->sha256) : json_null(),
		"default", bounds->file == NULL, "rules", rules));
	/* clang-format on */
	json_object_set_new(doc, "base", side_json(base, r->base_env));
	json_object_set_new(doc, "head", side_json(head, r->head_env));
	json_object_set(doc, "env_mismatch", r->env_mismatch);
	json_object_set_new(doc, "measures", json_string(MEASURES_MARKER));
	json_object_set(doc, "warnings", r->warnings);
	json_object_set(doc, "excluded_runs", r->excluded);
	json_object_set(doc, "inconclusive_reasons", r->inconclusive_reasons);
	json_object_set_new(doc, "reusable_removed",
			    r->reusable_removed ? json_incref(r->reusable_removed) : json_null());
	return doc;
}

json_t *cp_verdict_build(const struct cp_compare_result *r, const struct cp_bounds *bounds,
			 const struct cp_compare_side *base, const struct cp_compare_side *head)
{
	json_t *doc = cp_verdict_skeleton(r, bounds, base, head);
	json_t *measures = json_array();

	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(measures, cp_verdict_measure_json(&r->measures[i]));
	if (!doc || !measures || json_object_set_new(doc, "measures", measures)) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* One measure's text as cp_json_text() writes it two levels down: the
 * same dump, each line indented four more spaces (a dumped string never
 * holds a raw newline). */
static int write_measure(FILE *out, const json_t *m)
{
	char *text = cp_json_text(m);

	if (!text)
		return -1;
	for (char *p = text, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(nl - p), out);
		fputs("\n    ", out);
	}
	free(text);
	return 0;
}

int cp_verdict_write(FILE *out, const json_t *skeleton, const struct cp_verdict_measures *ms)
{
	char *text = cp_json_text(skeleton), *at;
	size_t split;
	int rc = 0;

	if (!text)
		return -1;
	if (!(at = strstr(text, MEASURES_AT))) {
		free(text);
		return -1;
	}
	split = (size_t)(at - text) + sizeof(MEASURES_AT) - 1 - strlen(MEASURES_MARKER) - 2;
	fwrite(text, 1, split, out);
	fputs(ms->n ? "[\n    " : "[]", out);
	for (size_t i = 0; i < ms->n && !rc; i++) {
		json_t *m = cp_verdict_measures_get(ms, i);

		if (i)
			fputs(",\n    ", out);
		rc = m ? write_measure(out, m) : -1;
		json_decref(m);
	}
	if (ms->n)
		fputs("\n  ]", out);
	fputs(at + sizeof(MEASURES_AT) - 1, out);
	free(text);
	return rc || ferror(out) ? -1 : 0;
}

/* --- loading ----------------------------------------------------------- */

static int need(const json_t *obj, const char *key, json_type type, int nullable, const char *what,
		const char *where, struct cp_error *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return cp_fail(err, CP_EXIT_USAGE, "%s: invalid verdict file: %s%s is missing",
			       what, where, key);
	if (nullable && json_is_null(v))
		return 0;
	if (type == JSON_REAL ? !json_is_number(v) :
	    type == JSON_TRUE ? !json_is_boolean(v) :
				json_typeof(v) != type)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid verdict file: %s%s has the wrong type", what, where,
			       key);
	return 0;
}

static int one_of(const json_t *v, const char *const *names)
{
	const char *s = json_string_value(v);

	for (; s && *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

static int validate_measure(const json_t *m, size_t i, const char *what, struct cp_error *err)
{
	static const char *const statuses[] = { "within", "regressed", "improved", "inconclusive",
						"added",  "removed",   NULL };
	static const char *const kinds[] = { "exact", "sampled", NULL };
	char where[64];

	snprintf(where, sizeof(where), "measures[%zu].", i);
	if (!json_is_object(m))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid verdict file: measures[%zu] is not an object", what, i);
	if (need(m, "name", JSON_STRING, 0, what, where, err) ||
	    need(m, "unit", JSON_STRING, 0, what, where, err) ||
	    need(m, "kind", JSON_STRING, 0, what, where, err) ||
	    need(m, "base", JSON_OBJECT, 1, what, where, err) ||
	    need(m, "head", JSON_OBJECT, 1, what, where, err) ||
	    need(m, "change_pct", JSON_OBJECT, 1, what, where, err) ||
	    need(m, "p_value", JSON_REAL, 1, what, where, err) ||
	    need(m, "bound", JSON_STRING, 1, what, where, err) ||
	    need(m, "status", JSON_STRING, 0, what, where, err))
		return -1;
	if (!one_of(json_object_get(m, "status"), statuses))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid verdict file: %sstatus is not one of within, regressed, improved, inconclusive, added, removed",
			what, where);
	if (!one_of(json_object_get(m, "kind"), kinds))
		return cp_fail(err, CP_EXIT_USAGE,
			       "%s: invalid verdict file: %skind must be \"exact\" or \"sampled\"",
			       what, where);
	return 0;
}

int cp_verdict_file_validate(const json_t *doc, const char *what, struct cp_error *err)
{
	static const char *const statuses[] = { "pass", "fail", "inconclusive", NULL };
	static const char *const counts[] = { "measures", "within", "regressed", "improved",
					      "inconclusive" };
	const json_t *summary, *measures, *m;
	size_t i;

	if (cp_json_check_schema(doc, what, "verdict", CP_VERDICT_SCHEMA, err) ||
	    need(doc, "status", JSON_STRING, 0, what, "", err) ||
	    need(doc, "summary", JSON_OBJECT, 0, what, "", err) ||
	    need(doc, "bounds", JSON_OBJECT, 0, what, "", err) ||
	    need(doc, "base", JSON_OBJECT, 0, what, "", err) ||
	    need(doc, "head", JSON_OBJECT, 0, what, "", err) ||
	    need(doc, "env_mismatch", JSON_ARRAY, 0, what, "", err) ||
	    need(doc, "measures", JSON_ARRAY, 0, what, "", err))
		return -1;
	if (!one_of(json_object_get(doc, "status"), statuses))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s: invalid verdict file: status must be pass, fail or inconclusive",
			what);
	summary = json_object_get(doc, "summary");
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		if (need(summary, counts[i], JSON_INTEGER, 0, what, "summary.", err))
			return -1;
	if (need(json_object_get(doc, "bounds"), "file", JSON_STRING, 1, what, "bounds.", err) ||
	    need(json_object_get(doc, "bounds"), "sha256", JSON_STRING, 1, what, "bounds.", err) ||
	    need(json_object_get(doc, "base"), "runs", JSON_INTEGER, 0, what, "base.", err) ||
	    need(json_object_get(doc, "head"), "runs", JSON_INTEGER, 0, what, "head.", err))
		return -1;
	measures = json_object_get(doc, "measures");
	json_array_foreach(measures, i, m)
		if (validate_measure(m, i, what, err))
			return -1;
	return 0;
}

int cp_verdict_file_load(const char *path, json_t **doc, struct cp_error *err)
{
	return cp_json_load_file(path, cp_verdict_file_validate, doc, err);
}
