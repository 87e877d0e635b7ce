/* test_anatomy_reads.c - the reads of run.json "anatomy" as compare and
 * the report take them (lib/gate/anatomy_reads.c): found by id however the
 * run lists them, named with their callers, and matched between runs by
 * site and callers, as far as both runs name callers; and which step of a
 * shape the report marks reusable (lib/report/report_timeline.c). */
#include <stdlib.h>
#include <string.h>

#include "anatomy_reads.h"
#include "report_anatomy.h"
#include "unit.h"

static json_t *frame(const char *fn, const char *file, int line)
{
	return json_pack("{s:s?, s:s?, s:i}", "function", fn, "file", file, "line", line);
}

/* A read with callers (innermost first), n of them from cs. */
static json_t *read_with(int id, const char *fn, int line, json_t *const *cs, size_t n)
{
	json_t *r = frame(fn, "time.h", line), *callers = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append(callers, cs[i]);
	json_object_set_new(r, "id", json_integer(id));
	json_object_set_new(r, "callers", callers);
	return r;
}

static char *name_of(const json_t *r, int callers, int all)
{
	struct cp_buf b = { 0 };

	cp_anatomy_read_label(&b, r, callers, all);
	return b.data;
}

TEST(anatomy_reads_same_read_by_site_and_callers)
{
	json_t *handle = frame("handle", "srv.c", 42), *stats = frame("stats", "srv.c", 70);
	json_t *top = frame("main", "m.c", 3);
	json_t *a = read_with(0, "now_ns", 12, (json_t *[]){ handle }, 1);
	json_t *deeper = read_with(7, "now_ns", 12, (json_t *[]){ handle, top }, 2);
	json_t *other = read_with(0, "now_ns", 12, (json_t *[]){ stats }, 1);
	json_t *line = read_with(0, "now_ns", 13, (json_t *[]){ handle }, 1);
	json_t *none = read_with(0, "now_ns", 12, NULL, 0);
	json_t *unnamed = read_with(0, NULL, 12, NULL, 0);

	CHECK(cp_anatomy_same_read(a, a));
	/* Ids differ between runs; one run names a caller more. */
	CHECK(cp_anatomy_same_read(a, deeper) && cp_anatomy_same_read(deeper, a));
	CHECK(!cp_anatomy_same_read(a, other));
	CHECK(!cp_anatomy_same_read(a, line));
	CHECK(cp_anatomy_same_read(a, none));
	CHECK(!cp_anatomy_same_read(none, unnamed));
	CHECK(cp_anatomy_same_read(unnamed, unnamed));
	CHECK(!cp_anatomy_same_read(a, NULL));
	json_decref(a);
	json_decref(deeper);
	json_decref(other);
	json_decref(line);
	json_decref(none);
	json_decref(unnamed);
	json_decref(handle);
	json_decref(stats);
	json_decref(top);
}

TEST(anatomy_reads_found_by_id_and_named)
{
	json_t *handle = frame("handle", "srv.c", 42), *top = frame("main", "m.c", 3);
	json_t *anatomy = json_pack("{s:[o, o, o]}", "reads",
				    read_with(2, "now_ns", 12, (json_t *[]){ handle, top }, 2),
				    read_with(0, "start", 5, NULL, 0),
				    read_with(1, "<b>", 9, NULL, 0));
	json_t *id = json_integer(2), *missing = json_integer(5), *text = json_string("2");
	const json_t *r = cp_anatomy_read(anatomy, id);
	char *s;

	CHECK(r && !strcmp(json_string_value(json_object_get(r, "function")), "now_ns"));
	CHECK(!cp_anatomy_read(anatomy, missing));
	CHECK(!cp_anatomy_read(anatomy, text));
	CHECK(!cp_anatomy_read(NULL, id));
	s = name_of(r, 1, 0);
	CHECK_STR(s, "now_ns time.h:12 \xe2\x86\x90 \xe2\x80\xa6 \xe2\x86\x90 main m.c:3");
	free(s);
	s = name_of(r, 1, 1);
	CHECK_STR(s, "now_ns time.h:12 \xe2\x86\x90 handle srv.c:42 \xe2\x86\x90 main m.c:3");
	free(s);
	s = name_of(r, 0, 0);
	CHECK_STR(s, "now_ns time.h:12");
	free(s);
	json_decref(anatomy);
	json_decref(id);
	json_decref(missing);
	json_decref(text);
	json_decref(handle);
	json_decref(top);
}

/* Two reads of one helper inlined at two lines are two reads: told apart
 * by inlined_at, and each named with it. */
TEST(anatomy_reads_of_one_inlined_helper_differ_by_where_inlined)
{
	json_t *a = json_pack("{s:s, s:s, s:i, s:{s:s, s:i}, s:[]}", "function", "serve", "file",
			      "t.c", "line", 23, "inlined_at", "file", "t.c", "line", 60,
			      "callers");
	json_t *b = json_pack("{s:s, s:s, s:i, s:{s:s, s:i}, s:[]}", "function", "serve", "file",
			      "t.c", "line", 23, "inlined_at", "file", "t.c", "line", 66,
			      "callers");
	char *s;

	CHECK(cp_anatomy_same_read(a, a));
	CHECK(!cp_anatomy_same_read(a, b));
	s = name_of(b, 0, 0);
	CHECK_STR(s, "serve t.c:23 (inlined at line 66)");
	free(s);
	json_decref(a);
	json_decref(b);
}

static json_t *clock_read(int id, const char *clock)
{
	return json_pack("{s:i, s:s, s:s, s:i, s:s, s:[]}", "id", id, "function", "f", "file",
			 "t.c", "line", id + 1, "clock", clock, "callers");
}

/* Step k reuses the earlier read only where that is the latest read of
 * its clock: a read of the same clock in between breaks the pair, one of
 * another clock does not. */
TEST(anatomy_step_reuse_only_after_the_clocks_latest_read)
{
	json_t *anatomy = json_pack("{s:[o, o, o, o], s:[{s:i, s:i, s:f}]}", "reads",
				    clock_read(0, "CLOCK_MONOTONIC"),
				    clock_read(1, "CLOCK_MONOTONIC"), clock_read(2, "gettimeofday"),
				    clock_read(3, "CLOCK_MONOTONIC"), "reusable", "read", 1,
				    "reuses", 0, "share", 0.99);
	/* Reads 0, 2 (another clock), 1: a pair. Then 0, 3, 1: not. */
	json_t *steps = json_pack("[{s:i}, {s:i}, {s:i}, {s:i}, {s:i}, {s:i}]", "read", 0, "read",
				  2, "read", 1, "read", 0, "read", 3, "read", 1);
	size_t from = 99;

	CHECK(cp_anatomy_step_reuse(anatomy, steps, 2, &from) != NULL);
	CHECK_INT(from, 0);
	CHECK(cp_anatomy_step_reuse(anatomy, steps, 5, &from) == NULL);
	CHECK(cp_anatomy_step_reuse(anatomy, steps, 0, &from) == NULL);
	CHECK(cp_anatomy_step_reuse(anatomy, steps, 1, &from) == NULL);
	json_decref(anatomy);
	json_decref(steps);
}
