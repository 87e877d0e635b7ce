/* test_compare_lines.c - lib/gate/compare_lines.c: a regressed
 * clock_reads@FUNCTION/op names the lines of FUNCTION that gained reads
 * per op, and no other line: not an unchanged one, not another
 * function's, not for a measure that did not regress. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "compare_lines.h"
#include "compare_run.h"
#include "unit.h"

static json_t *site(const char *fn, const char *file, int line, double per_op)
{
	return json_pack("{s:s, s:s, s:i, s:f}", "function", fn, "file", file, "line", line,
			 "per_op", per_op);
}

/* Base: F reads twice at a.c:10 and once at b.c:5, G once. Head: F
 * three times at a.c:10, once more at a new a.c:12, b.c:5 unchanged; G
 * five times. */
static void sides(struct cp_compare_run base[2], struct cp_compare_run head[2], const char *a)
{
	for (int i = 0; i < 2; i++) {
		base[i] = (struct cp_compare_run){ .call_sites = json_array() };
		head[i] = (struct cp_compare_run){ .call_sites = json_array() };
		json_array_append_new(base[i].call_sites, site("F", a, 10, 2));
		json_array_append_new(base[i].call_sites, site("F", "b.c", 5, 1));
		json_array_append_new(base[i].call_sites, site("G", a, 20, 1));
		json_array_append_new(head[i].call_sites, site("F", a, 10, 3));
		json_array_append_new(head[i].call_sites, site("F", "b.c", 5, 1));
		json_array_append_new(head[i].call_sites, site("G", a, 20, 5));
	}
	/* The new line in one head run only: 0.5 per op over the side. */
	json_array_append_new(head[0].call_sites, site("F", a, 12, 1));
}

TEST(compare_lines_name_the_lines_a_regressed_site_measure_gained)
{
	char dir[] = "/tmp/cp-lines-XXXXXX", a[PATH_MAX];
	struct cp_compare_run base[2], head[2];
	struct cp_measure_verdict ms[3] = {
		{ .name = "clock_reads@F/op", .status = CP_MEASURE_REGRESSED },
		{ .name = "clock_reads@G/op", .status = CP_MEASURE_WITHIN },
		{ .name = "clock_reads/op", .status = CP_MEASURE_REGRESSED },
	};
	struct cp_compare_result r = { .measures = ms, .n = 3 };
	struct cp_compare_side b = { base, NULL, 2 }, h = { head, NULL, 2 };
	const json_t *l;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(a, sizeof(a), "%s/a.c", dir);
	CHECK((f = fopen(a, "w")) != NULL);
	fclose(f);
	sides(base, head, a);
	CHECK_INT(cp_compare_name_lines(&r, &b, &h, dir), 0);
	CHECK(ms[1].lines == NULL && ms[2].lines == NULL);
	CHECK_INT((int)json_array_size(ms[0].lines), 2);	/* b.c:5 did not gain */
	l = json_array_get(ms[0].lines, 0);
	CHECK_STR(json_string_value(json_object_get(l, "file")), a);
	CHECK_INT((int)json_integer_value(json_object_get(l, "line")), 10);
	CHECK(json_number_value(json_object_get(l, "base")) == 2);
	CHECK(json_number_value(json_object_get(l, "head")) == 3);
	CHECK_STR(json_string_value(json_object_get(l, "repo_path")), "a.c");
	l = json_array_get(ms[0].lines, 1);
	CHECK_INT((int)json_integer_value(json_object_get(l, "line")), 12);
	CHECK(json_number_value(json_object_get(l, "base")) == 0);
	CHECK(json_number_value(json_object_get(l, "head")) == 0.5);
	json_decref(ms[0].lines);
	/* Outside the source root: no repository path. */
	CHECK_INT(cp_compare_name_lines(&r, &b, &h, "/proc"), 0);
	CHECK(json_is_null(json_object_get(json_array_get(ms[0].lines, 0), "repo_path")));
	json_decref(ms[0].lines);
	for (int i = 0; i < 2; i++) {
		json_decref(base[i].call_sites);
		json_decref(head[i].call_sites);
	}
	unlink(a);
	rmdir(dir);
}
