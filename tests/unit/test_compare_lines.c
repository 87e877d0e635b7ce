/* test_compare_lines.c - lib/gate/compare_lines.c: a regressed
 * clock_reads@FUNCTION/op names the lines of FUNCTION that gained reads
 * per op, and no other line: not an unchanged one, not one that only
 * moved, not another function's, not for a measure that did not regress;
 * and base and head built in checkouts of their own still match. */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "compare_lines.h"
#include "compare_run.h"
#include "unit.h"

#define MAX_SITES 8
/* A site: function, file, line, reads per op (no inlined_at). */
#define S(fn, f, l, per) \
	{ \
		.function = (fn), .file = (f), .line = (l), .per_op = (per) \
	}
/* A read in a helper at h.h:5, inlined at x.c:AT of F. */
#define HELPER_AT(at, per) \
	{ \
		.function = "F", .file = "h.h", .line = 5, .per_op = (per), .at_file = "x.c", \
		.at_line = (at) \
	}

/* A run of the sites given as {function, file, line, per_op}, ending at a
 * NULL function. */
static struct cp_compare_run run_of(const struct cp_run_site *sites)
{
	struct cp_compare_run r = { .sites = (struct cp_run_site *)sites };

	while (r.nsites < MAX_SITES && sites[r.nsites].function)
		r.nsites++;
	return r;
}

/* The lines named for clock_reads@F/op, regressed, of base against head. */
static json_t *lines_of(struct cp_compare_run *base, size_t nb, struct cp_compare_run *head,
			size_t nh, const char *root)
{
	struct cp_measure_verdict m = { .name = "clock_reads@F/op",
					.status = CP_MEASURE_REGRESSED };
	struct cp_compare_result r = { .measures = &m, .n = 1 };
	struct cp_compare_side b = { base, NULL, nb }, h = { head, NULL, nh };

	if (cp_compare_name_lines(&r, &b, &h, root))
		return json_string("failed"); /* named() shows no line then */
	return m.lines;
}

/* "line:base->head" of each named line, in order, into buf. */
static const char *named(json_t *lines, char *buf, size_t len)
{
	const json_t *l;
	size_t i, at = 0;

	buf[0] = '\0';
	json_array_foreach(lines, i, l)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld:%g->%g", i ? " " : "",
				       (long long)json_integer_value(json_object_get(l, "line")),
				       json_number_value(json_object_get(l, "base")),
				       json_number_value(json_object_get(l, "head")));
	json_decref(lines);
	return buf;
}

TEST(compare_lines_name_what_gained_and_nothing_else)
{
	static const struct cp_run_site b0[] = {
		S("F", "a.c", 10, 2), S("F", "b.c", 5, 1), S("G", "a.c", 20, 1), { 0 }
	};
	static const struct cp_run_site h0[] = { S("F", "a.c", 10, 3),
						 S("F", "b.c", 5, 1),
						 S("G", "a.c", 20, 5),
						 S("F", "a.c", 12, 1),
						 { 0 } };
	static const struct cp_run_site h1[] = {
		S("F", "a.c", 10, 3), S("F", "b.c", 5, 1), S("G", "a.c", 20, 5), { 0 }
	};
	struct cp_compare_run base[2] = { run_of(b0), run_of(b0) };
	struct cp_compare_run head[2] = { run_of(h0), run_of(h1) };
	char buf[256];

	/* b.c:5 and G's line did not gain; a.c:12 is in one head run of two. */
	CHECK_STR(named(lines_of(base, 2, head, 2, NULL), buf, sizeof(buf)), "10:2->3 12:0->0.5");
}

TEST(compare_lines_a_read_that_only_moved_did_not_gain)
{
	static const struct cp_run_site b[] = { S("F", "x.c", 10, 1), S("F", "x.c", 30, 2), { 0 } };
	static const struct cp_run_site h[] = {
		S("F", "x.c", 10, 1), S("F", "x.c", 20, 1), S("F", "x.c", 31, 2), { 0 }
	};
	static const struct cp_run_site rose[] = { S("F", "x.c", 12, 3), { 0 } };
	static const struct cp_run_site was[] = { S("F", "x.c", 10, 2), { 0 } };
	struct cp_compare_run base = run_of(b), head = run_of(h), r = run_of(rose), w = run_of(was);
	char buf[256];

	CHECK_STR(named(lines_of(&base, 1, &head, 1, NULL), buf, sizeof(buf)), "20:0->1");
	/* Moved down two lines and read once more there. */
	CHECK_STR(named(lines_of(&w, 1, &r, 1, NULL), buf, sizeof(buf)), "12:2->3");
}

TEST(compare_lines_match_files_across_checkouts_and_runs_without_the_function)
{
	static const struct cp_run_site b[] = { S("F", "/ws/base/src/x.c", 10, 2), { 0 } };
	static const struct cp_run_site none[] = { S("G", "/ws/base/src/y.c", 3, 1), { 0 } };
	static const struct cp_run_site h[] = { S("F", "/ws/head/src/x.c", 10, 2),
						S("F", "/ws/head/src/x.c", 20, 1),
						{ 0 } };
	struct cp_compare_run base[2] = { run_of(b), run_of(none) };
	struct cp_compare_run head[2] = { run_of(h), run_of(h) };
	char buf[256];

	/* The run without F is no 0 in base's mean: line 10 read 2 on both. */
	CHECK_STR(named(lines_of(base, 2, head, 2, NULL), buf, sizeof(buf)), "20:0->1");
}

/* The repo_path named for a line of file that gained, under root: a new
 * reference ("" when none was named). */
static json_t *repo_path_of(const char *file, const char *root)
{
	struct cp_run_site b[] = { S("F", file, 10, 1), { 0 } },
			   h[] = { S("F", file, 10, 2), { 0 } };
	struct cp_compare_run base = run_of(b), head = run_of(h);
	json_t *lines = lines_of(&base, 1, &head, 1, root);
	json_t *path = json_object_get(json_array_get(lines, 0), "repo_path");

	path = path ? json_incref(path) : json_string("");
	json_decref(lines);
	return path;
}

static int names(json_t *path, const char *want)
{
	int same = want ? json_is_string(path) && !strcmp(json_string_value(path), want) :
			  json_is_null(path);

	json_decref(path);
	return same;
}

TEST(compare_lines_repo_path_only_below_the_source_root)
{
	char dir[] = "/tmp/cp-lines-XXXXXX", a[PATH_MAX];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(a, sizeof(a), "%s/a.c", dir);
	CHECK((f = fopen(a, "w")) != NULL);
	fclose(f);
	CHECK(names(repo_path_of(a, dir), "a.c"));
	CHECK(names(repo_path_of(a, "/proc"), NULL));
	CHECK(names(repo_path_of("a.c", dir), "a.c")); /* relative: from the root */
	CHECK(names(repo_path_of(dir, "/"), NULL));    /* not a file */
	unlink(a);
	rmdir(dir);
}

TEST(compare_lines_none_for_other_measures)
{
	static const struct cp_run_site b[] = { S("F", "x.c", 10, 1), { 0 } };
	static const struct cp_run_site h[] = { S("F", "x.c", 10, 2), { 0 } };
	struct cp_compare_run base = run_of(b), head = run_of(h);
	struct cp_measure_verdict ms[2] = {
		{ .name = "clock_reads@F/op", .status = CP_MEASURE_WITHIN },
		{ .name = "clock_reads/op", .status = CP_MEASURE_REGRESSED },
	};
	struct cp_compare_result r = { .measures = ms, .n = 2 };
	struct cp_compare_side bs = { &base, NULL, 1 }, hs = { &head, NULL, 1 };

	CHECK_INT(cp_compare_name_lines(&r, &bs, &hs, NULL), 0);
	CHECK(ms[0].lines == NULL && ms[1].lines == NULL);
}

/* An independent review's cases: a read added between two that stay,
 * the other counting more (each named by what it gained); counts that
 * waver in their last digits; a count that rose at one line and fell at
 * another; a header only head inlines from. */
TEST(compare_lines_pair_by_line_then_by_reads)
{
	static const struct cp_run_site b1[] = { S("F", "x.c", 10, 1),
						 S("F", "x.c", 20, 3),
						 { 0 } };
	static const struct cp_run_site h1[] = {
		S("F", "x.c", 10, 1), S("F", "x.c", 15, 1), S("F", "x.c", 20, 4), { 0 }
	};
	static const struct cp_run_site b2[] = { S("F", "x.c", 10, 1),
						 S("F", "x.c", 20, 0.5),
						 { 0 } };
	static const struct cp_run_site h2[] = {
		S("F", "x.c", 10, 1), S("F", "x.c", 15, 1), S("F", "x.c", 21, 0.5003), { 0 }
	};
	static const struct cp_run_site b3[] = { S("F", "x.c", 10, 1),
						 S("F", "x.c", 20, 2),
						 { 0 } };
	static const struct cp_run_site h3[] = { S("F", "x.c", 10, 2),
						 S("F", "x.c", 20, 1.5),
						 { 0 } };
	static const struct cp_run_site b4[] = { S("F", "/w/b/src/x.c", 10, 1), { 0 } };
	static const struct cp_run_site h4[] = { S("F", "/w/h/src/x.c", 10, 1),
						 S("F", "/w/h/include/c.h", 5, 1),
						 { 0 } };
	struct cp_compare_run b[4] = { run_of(b1), run_of(b2), run_of(b3), run_of(b4) };
	struct cp_compare_run h[4] = { run_of(h1), run_of(h2), run_of(h3), run_of(h4) };
	char buf[256];

	CHECK_STR(named(lines_of(&b[0], 1, &h[0], 1, NULL), buf, sizeof(buf)), "15:0->1 20:3->4");
	CHECK_STR(named(lines_of(&b[1], 1, &h[1], 1, NULL), buf, sizeof(buf)), "15:0->1");
	CHECK_STR(named(lines_of(&b[2], 1, &h[2], 1, NULL), buf, sizeof(buf)), "10:1->2");
	CHECK_STR(named(lines_of(&b[3], 1, &h[3], 1, NULL), buf, sizeof(buf)), "5:0->1");
}

/* A source root given through a symbolic link, as a build records $PWD. */
TEST(compare_lines_repo_path_through_a_linked_root)
{
	char dir[] = "/tmp/cp-lines-XXXXXX", real[PATH_MAX], link[PATH_MAX], file[PATH_MAX];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(file, sizeof(file), "%s/link/a.c", dir);
	CHECK(mkdir(real, 0700) == 0 && symlink(real, link) == 0);
	CHECK((f = fopen(file, "w")) != NULL);
	fclose(f);
	CHECK(names(repo_path_of(file, link), "a.c"));
	unlink(file);
	unlink(link);
	rmdir(real);
	rmdir(dir);
}

/* A site's line for the gate is its function's own (inlined_at) only
 * where inlined_at names a file and a line: one with a line but no file
 * (a hand-edited or foreign run) keeps the site's own file:line rather
 * than losing the line. */
TEST(compare_run_site_line_is_inlined_at_only_with_a_file)
{
	json_error_t e;
	json_t *doc = json_loads(
		"{\"measures\": {}, \"call_sites\": ["
		"{\"function\": \"F\", \"file\": \"h.h\", \"line\": 5, \"inlined\": [\"g\"],"
		" \"inlined_at\": {\"file\": \"x.c\", \"line\": 60}, \"per_op\": 1},"
		"{\"function\": \"F\", \"file\": \"h.h\", \"line\": 5, \"inlined\": [\"g\"],"
		" \"inlined_at\": {\"line\": 66}, \"per_op\": 1},"
		"{\"function\": \"F\", \"file\": \"h.h\", \"line\": 5, \"inlined\": [\"g\"],"
		" \"inlined_at\": {\"file\": 7, \"line\": 70}, \"per_op\": 1}]}",
		0, &e);
	struct cp_compare_run run;

	CHECK(doc && cp_compare_run_from_doc(doc, 0, &run) == 0);
	CHECK_INT(run.nsites, 3);
	CHECK(run.names_inlined_at);
	for (size_t i = 0; i < 3; i++)
		CHECK(run.sites[i].file && !strcmp(run.sites[i].file, "h.h") &&
		      run.sites[i].line == 5);
	CHECK(run.sites[0].at_file && !strcmp(run.sites[0].at_file, "x.c") &&
	      run.sites[0].at_line == 60);
	for (size_t i = 1; i < 3; i++)
		CHECK(!run.sites[i].at_file && run.sites[i].at_line == 0);
	cp_compare_run_free(&run);
	json_decref(doc);
}

/* A helper inlined at a new line of F: named at F's line, as both sides
 * name the lines calling it; beside a base written before inlined_at
 * (its calls merged at the helper's line), at the helper's line on both
 * sides, never a caller's line paired with the helper's. */
TEST(compare_lines_an_inlined_call_is_named_at_the_callers_line)
{
	static const struct cp_run_site b[] = { HELPER_AT(60, 1), { 0 } };
	static const struct cp_run_site h[] = { HELPER_AT(60, 1), HELPER_AT(66, 1), { 0 } };
	static const struct cp_run_site old[] = { S("F", "h.h", 5, 1), { 0 } };
	struct cp_compare_run base = run_of(b), head = run_of(h), before = run_of(old);
	char buf[256];

	base.names_inlined_at = head.names_inlined_at = 1;
	CHECK_STR(named(lines_of(&base, 1, &head, 1, NULL), buf, sizeof(buf)), "66:0->1");
	CHECK_STR(named(lines_of(&before, 1, &head, 1, NULL), buf, sizeof(buf)), "5:1->2");
}

/* One run document of call sites of F, as run.json has them: each
 * {"file", "line", "comp_dir"} (comp_dir NULL: null), a helper inlined at
 * the line of F given by "at" where at > 0. */
struct doc_site {
	const char *file, *comp_dir;
	int line, at;
	double per_op;
};

static int run_of_doc(const struct doc_site *s, size_t n, struct cp_compare_run *run)
{
	json_t *doc = json_pack("{s:{}, s:[]}", "measures", "call_sites");
	int rc;

	for (size_t i = 0; doc && i < n; i++)
		json_array_append_new(
			json_object_get(doc, "call_sites"),
			json_pack("{s:s, s:s, s:i, s:o, s:o, s:f}", "function", "F", "file",
				  s[i].at ? "/usr/include/clock.h" : s[i].file, "line",
				  s[i].at ? 5 : s[i].line, "inlined_at",
				  s[i].at ? json_pack("{s:s, s:i}", "file", s[i].file, "line",
						      s[i].at) :
					    json_null(),
				  "comp_dir",
				  s[i].comp_dir ? json_string(s[i].comp_dir) : json_null(),
				  "per_op", s[i].per_op));
	rc = doc ? cp_compare_run_from_doc(doc, 0, run) : -1;
	json_decref(doc);
	return rc;
}

/* A file DWARF names relative (`cc ../src/a.c` run in build/; `cc a.c`
 * in src/, as recursive make does) is its compile directory's: taken
 * from the site's comp_dir, it is below the source root and named from
 * it; the same name compiled in two directories is two files; without a
 * comp_dir (a run written before it), from the root as before. A helper
 * from a system header inlined into F is named at F's line. */
TEST(compare_lines_a_relative_file_is_taken_from_its_compile_directory)
{
	char dir[] = "/tmp/cp-lines-XXXXXX", p[PATH_MAX], build[PATH_MAX], src[PATH_MAX];
	const char *const made[] = { "src",	"build",      "tools",
				     "src/a.c", "src/main.c", "tools/main.c" };
	struct cp_compare_run b = { 0 }, h = { 0 };
	const json_t *l;
	json_t *lines;
	size_t i;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < 6; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, made[i]);
		CHECK(i < 3 ? mkdir(p, 0700) == 0 : (f = fopen(p, "w")) && !fclose(f));
	}
	snprintf(build, sizeof(build), "%s/build", dir);
	snprintf(src, sizeof(src), "%s/src", dir);
	{
		const struct doc_site bs[] = { { "../src/a.c", build, 7, 7, 1 },
					       { "main.c", src, 3, 0, 1 } };
		const struct doc_site hs[] = { { "../src/a.c", build, 7, 7, 2 },
					       { "main.c", src, 3, 0, 1 },
					       { "main.c", "./tools", 9, 0, 1 } };

		CHECK(run_of_doc(bs, 2, &b) == 0 && run_of_doc(hs, 3, &h) == 0);
	}
	CHECK(h.sites[0].at_file && !strncmp(h.sites[0].at_file, build, strlen(build)));
	b.names_inlined_at = h.names_inlined_at = 1;
	lines = lines_of(&b, 1, &h, 1, dir);
	CHECK_INT(json_array_size(lines), 2);
	json_array_foreach(lines, i, l) {
		const char *want = i ? "tools/main.c" : "src/a.c";

		CHECK(json_is_string(json_object_get(l, "repo_path")) &&
		      !strcmp(json_string_value(json_object_get(l, "repo_path")), want));
		CHECK_INT(json_integer_value(json_object_get(l, "line")), i ? 9 : 7);
	}
	json_decref(lines);
	cp_compare_run_free(&b);
	cp_compare_run_free(&h);
	/* Without comp_dir: "../src/a.c" from the root is outside it. */
	CHECK(names(repo_path_of("../src/a.c", dir), NULL));
	for (i = 6; i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", dir, made[i]);
		CHECK(i < 3 ? rmdir(p) == 0 : unlink(p) == 0);
	}
	rmdir(dir);
}
