/* test_compare_evidence.c - no verdict from no evidence
 * (lib/gate/compare_evidence.c): a side whose every run has a request
 * boundary and no complete request, or no clock read in any run of
 * either side, is refused (exit 2, no result); one side reading nothing
 * while the other reads is judged. */
#include <string.h>

#include "bounds.h"
#include "compare.h"
#include "error.h"
#include "unit.h"
#include "verdict_fixture.h"

#define RUNS 3

/* A run reading `reads` in all, `per_op` per op; with requests >= 0 a
 * boundary counting that many complete requests (< 0: no boundary). */
static json_t *run(long long reads, long long requests, double per_op)
{
	json_t *doc = fixture_run_doc("tsc", "6.1");

	json_object_set_new(json_object_get(doc, "clock_reads"), "total", json_integer(reads));
	if (requests >= 0)
		json_object_set_new(doc, "request",
				    json_pack("{s:s, s:I}", "spec", "func:handle_request", "count",
					      requests));
	json_object_set_new(json_object_get(doc, "measures"),
			    requests > 0 ? "clock_reads/op" : "clock_reads/s",
			    json_pack("{s:f, s:s, s:s, s:s}", "value", per_op, "unit",
				      requests > 0 ? "reads/op" : "reads/s", "kind",
				      requests > 0 ? "exact" : "sampled", "better", "lower"));
	return doc;
}

struct pair {
	struct cp_compare_run runs[2 * RUNS];
	struct cp_compare_result result;
	struct cp_error err;
	int rc;
};

/* Judges RUNS base runs of (reads, requests, per_op)[0] against RUNS head
 * runs of [1]; the last base run may differ (last_base). */
static void judge(struct pair *p, const long long reads[2], const long long requests[2],
		  const double per_op[2], const long long *last_base)
{
	static const char *const names[2 * RUNS] = { "b1", "b2", "b3", "h1", "h2", "h3" };
	struct cp_compare_side b = { p->runs, names, RUNS };
	struct cp_compare_side h = { p->runs + RUNS, names + RUNS, RUNS };
	struct cp_compare_opts opts = { .alpha = 0.05, .fail_on_inconclusive = 1 };
	struct cp_bounds bounds;

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < 2 * RUNS; i++) {
		int s = i >= RUNS;
		json_t *doc = i == RUNS - 1 && last_base ?
				      run(last_base[0], last_base[1], per_op[0]) :
				      run(reads[s], requests[s], per_op[s]);

		cp_compare_run_from_doc(doc, 0, &p->runs[i]);
		json_decref(doc);
	}
	cp_bounds_init_defaults(&bounds);
	p->rc = cp_compare(&b, &h, &bounds, &opts, &p->result, &p->err);
	cp_bounds_free(&bounds);
}

static void pair_free(struct pair *p)
{
	if (p->rc == 0)
		cp_compare_result_free(&p->result);
	for (int i = 0; i < 2 * RUNS; i++)
		cp_compare_run_free(&p->runs[i]);
}

TEST(compare_refuses_when_neither_side_read_the_clock)
{
	static const long long reads[2] = { 0, 0 }, none[2] = { -1, -1 }, some[2] = { 50, 50 };
	static const double zero[2] = { 0, 0 };
	struct pair p;

	/* No boundary (the window's reads per second): 0 against 0. */
	judge(&p, reads, none, zero, NULL);
	CHECK_INT(p.rc, -1);
	CHECK_INT(p.err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(p.err.msg, "neither side read the clock") != NULL);
	CHECK(strstr(p.err.msg, "3 base and 3 head runs") != NULL);
	pair_free(&p);
	/* Requests counted, no read seen on either side (probes blind). */
	judge(&p, reads, some, zero, NULL);
	CHECK_INT(p.rc, -1);
	CHECK(strstr(p.err.msg, "neither side read the clock") != NULL);
	pair_free(&p);
}

TEST(compare_refuses_a_side_with_no_complete_request)
{
	static const long long reads[2] = { 300, 300 }, requests[2] = { 60, 0 };
	static const long long both[2] = { 0, 0 }, one_base_run[2] = { 300, 0 };
	static const double per_op[2] = { 5, 0 };
	struct pair p;

	/* The head was never driven: its window read (a Go runtime does). */
	judge(&p, reads, requests, per_op, NULL);
	CHECK_INT(p.rc, -1);
	CHECK_INT(p.err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(p.err.msg, "no head run saw a complete request") != NULL);
	CHECK(strstr(p.err.msg, "func:handle_request") != NULL);
	pair_free(&p);
	/* Neither side driven: the base is named first. */
	judge(&p, reads, both, per_op, NULL);
	CHECK_INT(p.rc, -1);
	CHECK(strstr(p.err.msg, "no base run saw a complete request") != NULL);
	pair_free(&p);
	/* One base run of 0 requests among others that have some: judged. */
	{
		static const long long fed[2] = { 60, 60 };
		static const double same[2] = { 5, 5 };

		judge(&p, reads, fed, same, one_base_run);
		CHECK_INT(p.rc, 0);
		pair_free(&p);
	}
}

TEST(compare_judges_one_side_reading_nothing)
{
	static const long long requests[2] = { 60, 60 };
	static const long long head_none[2] = { 300, 0 }, base_none[2] = { 0, 300 };
	static const double removed[2] = { 5, 0 }, added[2] = { 0, 5 };
	struct pair p;

	/* A head that removed every read: an improvement, judged. */
	judge(&p, head_none, requests, removed, NULL);
	CHECK_INT(p.rc, 0);
	CHECK_INT(p.result.status, CP_VERDICT_PASS);
	CHECK_INT(p.result.n, 1);
	CHECK_INT(p.result.measures[0].status, CP_MEASURE_IMPROVED);
	pair_free(&p);
	/* A base that read none, a head that reads: a regression. */
	judge(&p, base_none, requests, added, NULL);
	CHECK_INT(p.rc, 0);
	CHECK_INT(p.result.status, CP_VERDICT_FAIL);
	CHECK_INT(p.result.exit_code, 1);
	CHECK_INT(p.result.measures[0].status, CP_MEASURE_REGRESSED);
	pair_free(&p);
}
