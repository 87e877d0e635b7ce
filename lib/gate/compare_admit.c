/* compare_admit.c - see compare_admit.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_admit.h"
#include "compare_boundary.h"
#include "compare_evidence.h"
#include "compare_notes.h"
#include "json_file.h"
#include "run_file.h"
#include "warning_groups.h"

/* --- environment fingerprint ------------------------------------------ */

/* Fields compared across runs; "inconclusive" ones make up the host
 * fingerprint and change what sampled measures mean (another CPU model or
 * kernel runs the same code at another speed; a different clocksource
 * changes what a clock read costs; with or without a PMU the machine is
 * not the same kind), so sampled measures are judged only between runs
 * that agree on all of them. build_id and exe
 * are expected to differ between base and head and are only recorded; so
 * is mechanism, because different mechanisms never get this far
 * (check_mechanisms refuses them). */
static const struct {
	const char *field;
	const char *effect; /* NULL: not compared */
} env_fields[] = {
	{ "kernel", "inconclusive" }, { "cpu", "inconclusive" }, { "clocksource", "inconclusive" },
	{ "pmu", "inconclusive" },    { "mechanism", NULL },	 { "tool_version", "warning" },
	{ "build_id", NULL },	      { "exe", NULL },
};
#define N_ENV_FIELDS (sizeof(env_fields) / sizeof(env_fields[0]))

static json_t *copy_or_null(const json_t *v)
{
	return v && !json_is_null(v) ? json_deep_copy(v) : json_null();
}

json_t *cp_run_fingerprint(const json_t *run)
{
	const json_t *host = json_object_get(run, "host");
	const json_t *target = json_object_get(run, "target");
	const json_t *tool_version = json_object_get(host, "tool_version");
	json_t *fp = json_object();

	if (!tool_version)
		tool_version = json_object_get(json_object_get(run, "tool"), "version");
	json_object_set_new(fp, "kernel", copy_or_null(json_object_get(host, "kernel")));
	json_object_set_new(fp, "cpu", copy_or_null(json_object_get(host, "cpu")));
	json_object_set_new(fp, "clocksource", copy_or_null(json_object_get(host, "clocksource")));
	json_object_set_new(fp, "pmu", copy_or_null(json_object_get(host, "pmu")));
	/* Never null: a file without one was counted with breakpoints. */
	json_object_set_new(fp, "mechanism", json_string(cp_run_mechanism(run)));
	json_object_set_new(fp, "tool_version", copy_or_null(tool_version));
	json_object_set_new(fp, "build_id", copy_or_null(json_object_get(target, "build_id")));
	json_object_set_new(fp, "exe", copy_or_null(json_object_get(target, "exe")));
	return fp;
}

static int array_has(const json_t *arr, const json_t *v)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (json_equal(e, (json_t *)v))
			return 1;
	return 0;
}

static int same_set(const json_t *a, const json_t *b)
{
	size_t i;
	json_t *e;

	if (json_array_size(a) != json_array_size(b))
		return 0;
	json_array_foreach(a, i, e)
		if (!array_has(b, e))
			return 0;
	return 1;
}

/* {field: [distinct values over the side's runs]} */
static json_t *side_env(const struct cp_compare_side *s)
{
	json_t *env = json_object();

	for (size_t f = 0; f < N_ENV_FIELDS; f++)
		json_object_set_new(env, env_fields[f].field, json_array());
	for (size_t r = 0; r < s->n; r++) {
		json_t *fp = cp_run_fingerprint(s->runs[r].doc);

		for (size_t f = 0; f < N_ENV_FIELDS; f++) {
			json_t *arr = json_object_get(env, env_fields[f].field);
			json_t *v = json_object_get(fp, env_fields[f].field);

			if (!array_has(arr, v))
				json_array_append(arr, v);
		}
		json_decref(fp);
	}
	return env;
}

static void values_text(const json_t *arr, char *buf, size_t len)
{
	size_t i, used = 0;
	json_t *e;

	buf[0] = '\0';
	json_array_foreach(arr, i, e) {
		char *t = json_dumps(e, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);

		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%.80s", i ? ", " : "",
						 t ? t : "?");
		free(t);
	}
}

/* Adds field to the comma-separated list in why (once). */
static void name_field(char *why, size_t len, const char *field)
{
	size_t used = strlen(why);

	if (strstr(why, field))
		return;
	snprintf(why + used, len - used, "%s%s", used ? ", " : "", field);
}

/* Fills base_env, head_env, env_mismatch; returns 1 when sampled measures
 * must be inconclusive, naming the fingerprint fields that differ (within
 * a side or between the sides) in why. */
static int compare_env(const struct cp_compare_side *base, const struct cp_compare_side *head,
		       struct cp_compare_result *r, char *why, size_t why_len)
{
	r->base_env = side_env(base);
	r->head_env = side_env(head);
	r->env_mismatch = json_array();
	why[0] = '\0';
	for (size_t f = 0; f < N_ENV_FIELDS; f++) {
		const char *field = env_fields[f].field;
		json_t *b = json_object_get(r->base_env, field);
		json_t *h = json_object_get(r->head_env, field);
		int fingerprint;
		char text[256];

		if (!env_fields[f].effect)
			continue;
		fingerprint = !strcmp(env_fields[f].effect, "inconclusive");
		if (json_array_size(b) > 1) {
			values_text(b, text, sizeof(text));
			cp_compare_warnf(r->warnings, "base runs differ in %s: %s", field, text);
			if (fingerprint)
				name_field(why, why_len, field);
		}
		if (json_array_size(h) > 1) {
			values_text(h, text, sizeof(text));
			cp_compare_warnf(r->warnings, "head runs differ in %s: %s", field, text);
			if (fingerprint)
				name_field(why, why_len, field);
		}
		if (same_set(b, h))
			continue;
		json_array_append_new(r->env_mismatch,
				      json_pack("{s:s, s:O, s:O, s:s}", "field", field, "base", b,
						"head", h, "effect", env_fields[f].effect));
		if (fingerprint)
			name_field(why, why_len, field);
	}
	return why[0] != '\0';
}

/* --- counting mechanism ------------------------------------------------ */

/* uprobe is the one suggested: it needs no hardware breakpoint to fire,
 * which the start-up self-test finds false on some hosts
 * (host.breakpoints_fire). */
#define RERUN_HINT "rerun both sides with one --mechanism (clockprof run --mechanism uprobe ...)"

static const char *run_name(const struct cp_compare_side *s, size_t r)
{
	return s->names && s->names[r] ? s->names[r] : "?";
}

/* Fails naming the first run of s counted otherwise than its first run. */
static int mixed_side(const struct cp_compare_side *s, const char *side, struct cp_error *err)
{
	const char *first = cp_run_mechanism(s->runs[0].doc);

	for (size_t r = 1; r < s->n; r++) {
		const char *m = cp_run_mechanism(s->runs[r].doc);

		if (strcmp(m, first))
			return cp_fail(
				err, CP_EXIT_USAGE,
				"%s runs were counted with %.40s (%.120s) and %.40s (%.120s): " RERUN_HINT,
				side, first, run_name(s, 0), m, run_name(s, r));
	}
	return 0;
}

/* Exact clock counts from different mechanisms need not be the same
 * quantity (a breakpoint sits on the vDSO entry; a uprobe one step before
 * it, where calls that skip the PLT go unseen), so a change between them
 * would be judged as a regression or an improvement of the code. Refused
 * whatever the measures: every run has clock measures (clock_reads/op is
 * always written), and even sampled ones (times, counters) carry the
 * probe's cost per hit, which differs between a trap and a uprobe. */
static int check_mechanisms(const struct cp_compare_side *base, const struct cp_compare_side *head,
			    struct cp_error *err)
{
	const char *b, *h;

	if (mixed_side(base, "base", err) || mixed_side(head, "head", err))
		return -1;
	b = cp_run_mechanism(base->runs[0].doc);
	h = cp_run_mechanism(head->runs[0].doc);
	if (strcmp(b, h))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"base runs were counted with %.40s, head runs with %.40s: " RERUN_HINT, b,
			h);
	return 0;
}

/* --- processes counted ------------------------------------------------- */

/* Where two runs' counts cover different processes: one counted the
 * target alone (no `processes`: --no-inherit, an attach of one pid, or a
 * clockprof before run followed forks), another counted several (run
 * following the processes its command forked, attach of several). A
 * command that forks gives counts of another size by construction, which
 * would be judged as a change of its code. Runs that counted one process
 * either way agree. */
static int check_processes(const struct cp_compare_side *base, const struct cp_compare_side *head,
			   struct cp_error *err)
{
	const struct cp_compare_side *sides[2] = { base, head };
	const char *alone = NULL, *several = NULL;
	size_t many = 0;

	for (int k = 0; k < 2; k++)
		for (size_t r = 0; r < sides[k]->n; r++) {
			const json_t *p = json_object_get(sides[k]->runs[r].doc, "processes");

			if (!json_is_array(p) && !alone)
				alone = run_name(sides[k], r);
			else if (json_array_size(p) > 1 && !several) {
				several = run_name(sides[k], r);
				many = json_array_size(p);
			}
		}
	if (alone && several)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%.120s counted %zu processes (the target and those it forked), %.120s "
			"the target alone: rerun both with one clockprof, and both with or "
			"without --no-inherit",
			several, many, alone);
	return 0;
}

/* Each distinct warning of a side's runs once, with how many runs gave
 * it, like ones merged (warning_groups.h): a profiler that saw nothing says
 * so in its runs, and that must reach whoever reads the verdict, once. */
struct side_warnings {
	const char *side;
	size_t nruns;
	json_t *warnings;
};

static void add_group(const char *text, size_t count, void *arg)
{
	const struct side_warnings *sw = arg;

	/* Whole: what the runs said is never cut (it comes from run files,
	 * read as UTF-8); cut only were it not, mid-character never. */
	json_t *whole = json_sprintf("%s runs (%zu of %zu): %s", sw->side, count, sw->nruns, text);

	if (whole)
		json_array_append_new(sw->warnings, whole);
	else
		cp_compare_warnf(sw->warnings, "%s runs (%zu of %zu): %.300s", sw->side, count,
				 sw->nruns, text);
}

static void run_warnings(const struct cp_compare_side *s, const char *side, json_t *warnings)
{
	struct side_warnings sw = { side, s->n, warnings };
	json_t *groups = cp_warning_groups_new();

	for (size_t r = 0; r < s->n; r++) {
		size_t i;
		json_t *w;

		json_array_foreach(json_object_get(s->runs[r].doc, "warnings"), i, w)
			if (json_string_value(w))
				cp_warning_groups_add(groups, json_string_value(w));
	}
	cp_warning_groups_each(groups, add_group, &sw);
	json_decref(groups);
}

/* The same run twice on one side would count its evidence twice. */
static int refuse_duplicates(const struct cp_compare_side *s, const char *side,
			     struct cp_error *err)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < i; j++)
			if (s->runs[i].digest[0] && !strcmp(s->runs[i].digest, s->runs[j].digest))
				return cp_fail(
					err, CP_EXIT_USAGE,
					"%s runs %.200s and %.200s are the same run (same content); give each run once",
					side, run_name(s, j), run_name(s, i));
	return 0;
}

static int is_complete(const struct cp_compare_run *run)
{
	return !json_is_false(json_object_get(run->doc, "complete"));
}

/* Lists run i of s in excluded: cut short, it measured something else. */
static void exclude_run(const struct cp_compare_side *s, const char *side, size_t i,
			struct cp_compare_result *r)
{
	json_array_append_new(r->excluded,
			      json_pack("{s:s, s:s, s:s}", "side", side, "file", run_name(s, i),
					"reason", "incomplete (complete: false)"));
	cp_compare_warnf(r->warnings, "%s run %.200s left out: cut short (complete: false)", side,
			 run_name(s, i));
}

/* The complete runs of s (a cut-short window measured something else),
 * into keep; the others are listed in excluded. When none is complete,
 * every run is listed and keep is all of s, so that their numbers are
 * still shown, but nothing is judged (returns 1): the verdict is
 * inconclusive, whatever the numbers say. */
static int complete_runs(const struct cp_compare_side *s, const char *side,
			 struct cp_compare_run *runs, const char **names,
			 struct cp_compare_side *keep, struct cp_compare_result *r)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		k += is_complete(&s->runs[i]);
	if (!k) {
		for (size_t i = 0; i < s->n; i++)
			exclude_run(s, side, i, r);
		cp_compare_warnf(
			r->inconclusive_reasons,
			"no complete %s run: all %zu were cut short (complete: false), so nothing was judged",
			side, s->n);
		*keep = *s;
		return 1;
	}
	k = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (is_complete(&s->runs[i])) {
			runs[k] = s->runs[i];
			names[k++] = run_name(s, i);
		} else {
			exclude_run(s, side, i, r);
		}
	}
	*keep = (struct cp_compare_side){ runs, names, k };
	return 0;
}

/* Run-level checks before any measure: duplicates, mechanisms, processes
 * counted, complete runs, runs that measured nothing (refused), host
 * fingerprint, warnings of the runs. */
int cp_compare_admit(const struct cp_compare_side *base, const struct cp_compare_side *head,
		     struct cp_compare_side *b, struct cp_compare_side *h, void **mem,
		     int *unjudged, struct cp_compare_result *out, char *env_why, size_t why_len,
		     struct cp_error *err)
{
	size_t n = base->n + head->n;
	struct cp_compare_run *runs;
	const char **names;

	if (refuse_duplicates(base, "base", err) || refuse_duplicates(head, "head", err) ||
	    check_mechanisms(base, head, err) || check_processes(base, head, err) ||
	    cp_compare_check_ops(base, head, out->allow_mismatch, out->warnings, err))
		return -1;
	*mem = malloc(n * (sizeof(*runs) + sizeof(*names)));
	if (!*mem)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory comparing runs");
	runs = *mem;
	names = (const char **)(runs + n);
	*unjudged = complete_runs(base, "base", runs, names, b, out);
	*unjudged |= complete_runs(head, "head", runs + base->n, names + base->n, h, out);
	if (cp_compare_check_evidence(b, h, err)) {
		free(*mem);
		*mem = NULL;
		return -1;
	}
	compare_env(b, h, out, env_why, why_len);
	run_warnings(b, "base", out->warnings);
	run_warnings(h, "head", out->warnings);
	return 0;
}
