/* test_run_anatomy.c - --anatomy in run.json ("anatomy" and the measure
 * clock_reads_reusable/op, docs/run-json.md), in the loader's checks, and
 * in the terminal summary ("could reuse"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "interval_record.h"
#include "profile.h"
#include "run_file.h"
#include "summary_fixture.h"
#include "unit.h"

static char *dup_s(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* A read named as the window names it: t.c:line in function, via
 * clock_gettime, callers at the given lines. */
static void named(struct cp_anatomy_read *r, const char *function, int line, int caller)
{
	r->function = dup_s(function);
	r->file = dup_s("t.c");
	r->line = line;
	r->module = dup_s("/srv/t");
	r->via = dup_s("clock_gettime");
	if (caller) {
		r->callers[0].function = dup_s("handle");
		r->callers[0].file = dup_s("t.c");
		r->callers[0].line = caller;
		r->ncallers = 1;
	}
}

/* 10 requests, 4 sampled, through one helper (t.c:5) from t.c:40 and
 * t.c:41, 300 ns apart, then a read() and a read at t.c:12 (no reuse). */
static void profile_with_anatomy(struct cp_profile *p, bool exact)
{
	struct cp_anatomy_samples s = { .gaps_exact = exact, .requests_seen = 10 };

	memset(p, 0, sizeof(*p));
	p->target.pid = 42;
	p->complete = true;
	p->duration_s = p->clock_window_s = 1;
	p->totals.requests = 10;
	p->totals.in_requests.reads = 30;
	p->totals.all = p->totals.in_requests;
	p->ops = 10;
	p->ops_source = CP_OPS_REQUEST;
	if (!exact)
		strcpy(s.why_not_exact, "uprobes trap in every gap");
	s.reads = calloc(3, sizeof(*s.reads));
	s.nreads = 3;
	for (int i = 0; i < 3; i++) {
		s.reads[i].pc = i < 2 ? 0x1000 : 0x2000;
		s.reads[i].clock = CLOCK_MONOTONIC;
		s.reads[i].callers[0] = i < 2 ? 0x3000 + (uint64_t)i : 0;
	}
	s.requests = calloc(4, sizeof(*s.requests));
	s.nrequests = 4;
	for (int i = 0; i < 4; i++) {
		struct cp_anatomy_event *e = calloc(4, sizeof(*e));
		uint64_t t = 10000 * (uint64_t)i;

		e[0] = (struct cp_anatomy_event){ t, CP_ANATOMY_READ, 0 };
		e[1] = (struct cp_anatomy_event){ t + 300, CP_ANATOMY_READ, 1 };
		e[2] = (struct cp_anatomy_event){ t + 400, CP_ANATOMY_SYSCALL, 0 };
		e[3] = (struct cp_anatomy_event){ t + 900, CP_ANATOMY_READ, 2 };
		s.requests[i] = (struct cp_anatomy_request){
			.tid = 42, .events = e, .nevents = 4, .start_ns = t, .end_ns = t + 1000
		};
	}
	cp_anatomy_judge(&s, 1000, 0.95, &p->anatomy);
	cp_anatomy_samples_free(&s);
	p->anatomy.sample_size = 200;
	named(&p->anatomy.reads[0], "helper", 5, 40);
	named(&p->anatomy.reads[1], "helper", 5, 41);
	named(&p->anatomy.reads[2], "serve", 12, 0);
	/* the third read: a helper inlined into serve at line 60 */
	p->anatomy.reads[2].inlined_at_line = 60;
	p->anatomy.reads[2].location = dup_s("t.c:12 (inlined at line 60)");
}

static json_t *at(json_t *o, const char *key)
{
	return json_object_get(o, key);
}

TEST(run_file_anatomy_member_and_measure)
{
	struct cp_profile p;
	struct cp_error err;
	json_t *doc, *a, *u, *m, *step;

	profile_with_anatomy(&p, true);
	doc = cp_run_file_build(&p);
	CHECK(doc != NULL);
	CHECK(cp_run_file_validate(doc, "built", &err) == 0);
	a = at(doc, "anatomy");
	CHECK(json_is_object(a));
	CHECK_INT(json_integer_value(at(a, "sample_size")), 200);
	CHECK_INT(json_integer_value(at(a, "sampled_requests")), 4);
	CHECK_INT(json_integer_value(at(a, "truncated_requests")), 0);
	CHECK_INT(json_integer_value(at(a, "requests")), 10);
	CHECK(json_is_false(at(a, "every_request")));
	CHECK_INT(json_integer_value(at(a, "reuse_gap_ns")), 1000);
	CHECK_NEAR(json_number_value(at(a, "reuse_share")), 0.95, 1e-12);
	CHECK(json_is_true(at(a, "judged")));
	CHECK(json_is_null(at(a, "not_judged_because")));
	CHECK_INT(json_array_size(at(a, "reads")), 3);
	CHECK_STR(json_string_value(at(json_array_get(at(a, "reads"), 1), "clock")),
		  "CLOCK_MONOTONIC");
	CHECK_INT(json_integer_value(
			  at(json_array_get(at(json_array_get(at(a, "reads"), 1), "callers"), 0),
			     "line")),
		  41);
	CHECK_INT(json_array_size(at(json_array_get(at(a, "reads"), 2), "callers")), 0);
	CHECK(json_is_null(at(json_array_get(at(a, "reads"), 0), "inlined_at")));
	CHECK_INT(
		json_integer_value(at(at(json_array_get(at(a, "reads"), 2), "inlined_at"), "line")),
		60);
	CHECK_INT(json_array_size(at(a, "shapes")), 1);
	step = json_array_get(at(json_array_get(at(a, "shapes"), 0), "steps"), 2);
	CHECK_INT(json_integer_value(at(step, "gap_ns")), 600);
	CHECK_STR(json_string_value(json_array_get(at(step, "syscalls"), 0)), "read");
	CHECK_INT(json_integer_value(at(at(step, "switches"), "voluntary")), 0);
	CHECK_INT(json_array_size(at(a, "reusable")), 1);
	u = json_array_get(at(a, "reusable"), 0);
	CHECK_INT(json_integer_value(at(u, "read")), 1);
	CHECK_INT(json_integer_value(at(u, "reuses")), 0);
	CHECK_INT(json_integer_value(at(at(u, "gap_ns"), "p50")), 300);
	CHECK_NEAR(json_number_value(at(u, "per_op")), 1.0, 1e-12);
	CHECK_NEAR(json_number_value(at(a, "reusable_per_op")), 1.0, 1e-12);
	m = at(at(doc, "measures"), "clock_reads_reusable/op");
	CHECK_NEAR(json_number_value(at(m, "value")), 1.0, 1e-12);
	CHECK_STR(json_string_value(at(m, "kind")), "sampled");
	CHECK_STR(json_string_value(at(m, "unit")), "reads/op");
	json_decref(doc);
	cp_anatomy_free(&p.anatomy);
}

/* Not judged: the reason, no reusable entry and no measure; without
 * --anatomy, no member at all. */
TEST(run_file_anatomy_not_judged_has_no_measure)
{
	struct cp_profile p;
	json_t *doc, *a;

	profile_with_anatomy(&p, false);
	doc = cp_run_file_build(&p);
	a = at(doc, "anatomy");
	CHECK(json_is_false(at(a, "judged")));
	CHECK_STR(json_string_value(at(a, "not_judged_because")), "uprobes trap in every gap");
	CHECK_INT(json_array_size(at(a, "reusable")), 0);
	CHECK_NEAR(json_number_value(at(a, "reusable_per_op")), 0.0, 1e-12);
	CHECK(!at(at(doc, "measures"), "clock_reads_reusable/op"));
	json_decref(doc);
	cp_anatomy_free(&p.anatomy);
	p.anatomy.on = false;
	doc = cp_run_file_build(&p);
	CHECK(!at(doc, "anatomy"));
	CHECK(!at(at(doc, "measures"), "clock_reads_reusable/op"));
	json_decref(doc);
}

/* The loader refuses an anatomy whose reusable entry names no read. */
TEST(run_file_anatomy_loader_checks_reads)
{
	struct cp_profile p;
	struct cp_error err;
	json_t *doc, *u;

	profile_with_anatomy(&p, true);
	doc = cp_run_file_build(&p);
	cp_anatomy_free(&p.anatomy);
	u = json_array_get(at(at(doc, "anatomy"), "reusable"), 0);
	json_object_set_new(u, "reuses", json_integer(3));
	CHECK(cp_run_file_validate(doc, "bad.json", &err) != 0);
	CHECK(strstr(err.msg, "anatomy.reusable[0].reuses") != NULL);
	json_object_set_new(u, "reuses", json_integer(0));
	CHECK(cp_run_file_validate(doc, "good.json", &err) == 0);
	json_object_set_new(at(doc, "anatomy"), "judged", json_string("yes"));
	CHECK(cp_run_file_validate(doc, "bad.json", &err) != 0);
	CHECK(strstr(err.msg, "anatomy.judged") != NULL);
	json_decref(doc);
}

TEST(summary_could_reuse_names_both_lines)
{
	struct cp_profile p;
	char *text;

	profile_with_anatomy(&p, true);
	text = summary_of(&p);
	CHECK(text != NULL);
	CHECK(strstr(text, "could reuse (--anatomy: 4 of 10 requests sampled") != NULL);
	CHECK(strstr(text,
		     "1.000/op  t.c:5 from t.c:41 (helper, CLOCK_MONOTONIC): could reuse t.c:5 from t.c:40, read 300 ns before (p50), in 100% of requests") !=
	      NULL);
	CHECK(strstr(text, "t.c:12") == NULL);
	CHECK(strstr(text, "1.000 reads/op could go in all") != NULL);
	free(text);
	cp_anatomy_free(&p.anatomy);
	profile_with_anatomy(&p, false);
	text = summary_of(&p);
	CHECK(strstr(text, "  not judged: uprobes trap in every gap\n") != NULL);
	free(text);
	cp_anatomy_free(&p.anatomy);
}

/* Two reads of one helper inlined at two lines: each said where it is
 * inlined, as call sites are, so they read apart. */
TEST(summary_could_reuse_says_where_a_helper_is_inlined)
{
	struct cp_profile p;
	char *text;

	profile_with_anatomy(&p, true);
	p.anatomy.reads[0].location = dup_s("t.c:5 (inlined at line 40)");
	p.anatomy.reads[1].location = dup_s("t.c:5 (inlined at line 41)");
	text = summary_of(&p);
	CHECK(text != NULL);
	CHECK(strstr(text,
		     "1.000/op  t.c:5 (inlined at line 41) from t.c:41 (helper, CLOCK_MONOTONIC): could reuse t.c:5 (inlined at line 40) from t.c:40,") !=
	      NULL);
	free(text);
	cp_anatomy_free(&p.anatomy);
}

/* Interval records leave the anatomy out: it is judged once, at the end. */
TEST(interval_record_leaves_the_anatomy_out)
{
	struct cp_interval_writer w;
	struct cp_profile *p = calloc(1, sizeof(*p));
	json_t *doc;

	CHECK(p != NULL);
	profile_with_anatomy(p, true);
	p->dist_event = -1;
	CHECK(cp_interval_writer_init(&w, NULL) == 0);
	doc = cp_interval_record_build(&w, p, true);
	CHECK(doc != NULL);
	CHECK(!at(doc, "anatomy"));
	CHECK(!at(at(doc, "measures"), "clock_reads_reusable/op"));
	json_decref(doc);
	cp_interval_writer_free(&w);
	cp_anatomy_free(&p->anatomy);
	free(p);
}
