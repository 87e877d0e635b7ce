/* test_compare_mechanism.c - run files counted by the uprobe or the
 * breakpoint mechanism: the loader checks clock_reads.mechanism and
 * host.breakpoints_fire, and compare refuses to judge runs that were not
 * all counted the same way (a file without a mechanism is a breakpoint
 * one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "compare.h"
#include "error.h"
#include "json_file.h"
#include "run_file.h"
#include "unit.h"
#include "verdict_fixture.h"

#define RERUN_HINT "rerun both sides with one --mechanism (clockprof run --mechanism uprobe ...)"
#define MAX_RUNS 3

/* A run with one exact measure, counted with `mechanism` (NULL: a file of
 * an earlier version, which names none). */
static json_t *run_doc(const char *mechanism, double reads)
{
	json_t *doc = fixture_run_doc("tsc", "6.1.0");

	if (mechanism)
		json_object_set_new(json_object_get(doc, "clock_reads"), "mechanism",
				    json_string(mechanism));
	json_object_set_new(json_object_get(doc, "measures"), "clock_reads/op",
			    json_pack("{s:f, s:s, s:s, s:s}", "value", reads, "unit", "reads/op",
				      "kind", "exact", "better", "lower"));
	return doc;
}

/* What a comparison gave: its return code and error, or the verdict of
 * clock_reads/op and the mechanisms each side's env reports. */
struct outcome {
	int rc;
	struct cp_error err;
	int status;
	char base_env[64], head_env[64];
	size_t mismatches;
};

static void env_text(const json_t *env, char *buf, size_t len)
{
	char *t = json_dumps(json_object_get(env, "mechanism"), JSON_ENCODE_ANY);

	snprintf(buf, len, "%s", t ? t : "?");
	free(t);
}

static void load_side(const char *const *mech, size_t n, double reads, struct cp_compare_run *runs)
{
	for (size_t i = 0; i < n; i++) {
		json_t *doc = run_doc(mech[i], reads);

		if (cp_compare_run_from_doc(doc, 0, &runs[i]))
			abort();
		json_decref(doc);
	}
}

/* Base runs counted with base_mech[0..nb) (3 clock reads per op) against
 * head runs counted with head_mech[0..nh) (also 3). */
static void judge(const char *const *base_mech, size_t nb, const char *const *head_mech, size_t nh,
		  struct outcome *o)
{
	static const char *const names[] = { "b0.json", "b1.json", "b2.json",
					     "h0.json", "h1.json", "h2.json" };
	struct cp_compare_run runs[2 * MAX_RUNS];
	struct cp_compare_side b = { runs, names, nb };
	struct cp_compare_side h = { runs + MAX_RUNS, names + MAX_RUNS, nh };
	struct cp_compare_result r;
	struct cp_bounds bounds;

	memset(o, 0, sizeof(*o));
	cp_bounds_init_defaults(&bounds);
	load_side(base_mech, nb, 3, runs);
	load_side(head_mech, nh, 3, runs + MAX_RUNS);
	o->rc = cp_compare(&b, &h, &bounds, NULL, &r, &o->err);
	if (!o->rc) {
		o->status = r.measures[0].status;
		env_text(r.base_env, o->base_env, sizeof(o->base_env));
		env_text(r.head_env, o->head_env, sizeof(o->head_env));
		o->mismatches = json_array_size(r.env_mismatch);
		cp_compare_result_free(&r);
	}
	for (size_t i = 0; i < nb; i++)
		cp_compare_run_free(&runs[i]);
	for (size_t i = 0; i < nh; i++)
		cp_compare_run_free(&runs[MAX_RUNS + i]);
	cp_bounds_free(&bounds);
}

TEST(compare_mechanism_differs_between_sides_refused)
{
	static const char *const bp[] = { "breakpoint", "breakpoint" };
	static const char *const up[] = { "uprobe", "uprobe" };
	struct outcome o;

	judge(bp, 2, up, 2, &o);
	CHECK_INT(o.rc, -1);
	CHECK_INT(o.err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(o.err.msg,
		  "base runs were counted with breakpoint, head runs with uprobe: " RERUN_HINT);
	judge(up, 1, bp, 1, &o);
	CHECK_INT(o.rc, -1);
	CHECK_STR(o.err.msg,
		  "base runs were counted with uprobe, head runs with breakpoint: " RERUN_HINT);
}

TEST(compare_mechanism_differs_within_a_side_refused)
{
	static const char *const mixed[] = { "uprobe", "uprobe", "breakpoint" };
	static const char *const up[] = { "uprobe" };
	struct outcome o;

	judge(up, 1, mixed, 3, &o);
	CHECK_INT(o.rc, -1);
	CHECK_INT(o.err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(
		o.err.msg,
		"head runs were counted with uprobe (h0.json) and breakpoint (h2.json): " RERUN_HINT);
	/* The base is looked at first, even when the head differs too. */
	judge(mixed, 3, mixed + 2, 1, &o);
	CHECK_INT(o.rc, -1);
	CHECK(strncmp(o.err.msg,
		      "base runs were counted with uprobe (b0.json) and breakpoint (b2.json)",
		      68) == 0);
}

TEST(compare_mechanism_same_judged_and_in_env)
{
	static const char *const up[] = { "uprobe", "uprobe" };
	static const char *const bp[] = { "breakpoint" };
	struct outcome o;

	judge(up, 2, up, 2, &o);
	CHECK_INT(o.rc, 0);
	CHECK_INT(o.status, CP_MEASURE_WITHIN);
	CHECK_STR(o.base_env, "[\"uprobe\"]");
	CHECK_STR(o.head_env, "[\"uprobe\"]");
	CHECK_INT(o.mismatches, 0);
	judge(bp, 1, bp, 1, &o);
	CHECK_INT(o.rc, 0);
	CHECK_STR(o.head_env, "[\"breakpoint\"]");
}

/* Files of earlier versions name no mechanism: they were counted with
 * breakpoints, so they compare with new breakpoint files, not uprobe ones. */
TEST(compare_mechanism_missing_is_breakpoint)
{
	static const char *const old[] = { NULL, NULL };
	static const char *const bp[] = { "breakpoint" };
	static const char *const up[] = { "uprobe" };
	static const char *const old_and_new[] = { NULL, "breakpoint" };
	struct outcome o;

	judge(old, 2, bp, 1, &o);
	CHECK_INT(o.rc, 0);
	CHECK_STR(o.base_env, "[\"breakpoint\"]");
	CHECK_STR(o.head_env, "[\"breakpoint\"]");
	CHECK_INT(o.mismatches, 0);
	judge(old_and_new, 2, old, 1, &o);
	CHECK_INT(o.rc, 0);
	judge(old, 2, up, 1, &o);
	CHECK_INT(o.rc, -1);
	CHECK_INT(o.err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(o.err.msg,
		  "base runs were counted with breakpoint, head runs with uprobe: " RERUN_HINT);
}

/* Validates doc after setting clock_reads.mechanism and
 * host.breakpoints_fire (each left out when NULL; both are stolen). */
static int validate_with(json_t *mechanism, json_t *fire, struct cp_error *err)
{
	json_t *doc = run_doc(NULL, 1);
	int rc;

	if (mechanism)
		json_object_set_new(json_object_get(doc, "clock_reads"), "mechanism", mechanism);
	if (fire)
		json_object_set_new(json_object_get(doc, "host"), "breakpoints_fire", fire);
	rc = cp_run_file_validate(doc, "r.json", err);
	json_decref(doc);
	return rc;
}

TEST(run_file_mechanism_members_validated)
{
	struct cp_error err = { 0 };

	CHECK_INT(validate_with(NULL, NULL, &err), 0);
	CHECK_INT(validate_with(json_string("uprobe"), json_true(), &err), 0);
	CHECK_INT(validate_with(json_string("breakpoint"), json_false(), &err), 0);
	CHECK_INT(validate_with(json_string("patch"), json_null(), &err), 0);
	CHECK_INT(validate_with(NULL, json_null(), &err), 0);
	CHECK_INT(validate_with(json_string("kprobe"), NULL, &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(err.msg, "r.json: invalid run file: clock_reads.mechanism must be "
			   "\"uprobe\", \"breakpoint\" or \"patch\"");
	CHECK_INT(validate_with(json_null(), NULL, &err), -1);
	CHECK_STR(err.msg, "r.json: invalid run file: clock_reads.mechanism has the wrong type");
	CHECK_INT(validate_with(json_string("Uprobe"), NULL, &err), -1);
	CHECK_INT(validate_with(NULL, json_string("yes"), &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(err.msg, "r.json: invalid run file: host.breakpoints_fire must be "
			   "true, false or null");
	CHECK_INT(validate_with(NULL, json_integer(1), &err), -1);
}

/* Through the loader compare uses: a file with an unknown mechanism is
 * one line and exit code 2, before anything is judged. */
TEST(compare_load_runs_rejects_unknown_mechanism)
{
	char dir[] = "/tmp/cp-unit-mech-XXXXXX", path[64];
	const char *names[1] = { path };
	struct cp_compare_run runs[1];
	struct cp_error err = { 0 };
	json_t *doc = run_doc("hw-breakpoint", 3);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/run.json", dir);
	CHECK_INT(cp_json_write_file(doc, path, &err), 0);
	json_decref(doc);
	CHECK_INT(cp_compare_load_runs(names, 1, 0, runs, &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "run.json: invalid run file: clock_reads.mechanism must be") != NULL);
	CHECK(strchr(err.msg, '\n') == NULL);
	unlink(path);
	rmdir(dir);
}

/* A run that counted 3 processes (run following forks) against one that
 * counted the target alone: refused, naming both; one process either way
 * is judged. */
TEST(compare_processes_counted_differently_refused)
{
	static const char *const names[] = { "b0.json", "h0.json" };
	struct cp_compare_run runs[2];
	struct cp_compare_side b = { runs, names, 1 }, h = { runs + 1, names + 1, 1 };
	struct cp_compare_result r;
	struct cp_bounds bounds;
	struct cp_error err = { 0 };
	json_t *base = run_doc("patch", 3), *head = run_doc("patch", 3);

	json_object_set_new(head, "processes", json_pack("[{}, {}, {}]"));
	CHECK(cp_compare_run_from_doc(base, 0, &runs[0]) == 0);
	CHECK(cp_compare_run_from_doc(head, 0, &runs[1]) == 0);
	cp_bounds_init_defaults(&bounds);
	CHECK_INT(cp_compare(&b, &h, &bounds, NULL, &r, &err), -1);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK_STR(err.msg,
		  "h0.json counted 3 processes (the target and those it forked), b0.json "
		  "the target alone: rerun both with one clockprof, and both with or without "
		  "--no-inherit");
	cp_compare_run_free(&runs[1]);
	json_object_set_new(head, "processes", json_pack("[{}]"));
	CHECK(cp_compare_run_from_doc(head, 0, &runs[1]) == 0);
	CHECK_INT(cp_compare(&b, &h, &bounds, NULL, &r, &err), 0);
	cp_compare_result_free(&r);
	cp_compare_run_free(&runs[0]);
	cp_compare_run_free(&runs[1]);
	cp_bounds_free(&bounds);
	json_decref(base);
	json_decref(head);
}
