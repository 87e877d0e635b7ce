/* test_compare_markdown.c - the markdown summary (lib/gate/compare_markdown.c)
 * and the terminal table (lib/gate/compare_table.c) with hostile measure names:
 * nothing a name contains may break a table row, open HTML or start a
 * new line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "compare_markdown.h"
#include "compare_table.h"
#include "compare_texts.h"
#include "error.h"
#include "github_annotations.h"
#include "verdict_file.h"
#include "verdict_measures.h"
#include "json_file.h"
#include "unit.h"
#include "verdict_fixture.h"

static const char *const hostile[] = {
	"a`b",
	"``x``",
	"`",
	"p|q",
	"line1\nline2",
	"::error::pwn",
	"100%",
	"cr\rlf",
	"back\\|slash",
	"<script>alert(1)</script>",
	" lead",
	"@someone",
	"tab\there",
	"esc\033[31mred",
	"c1\xc2\x9bx",
	"\xe2\x96\xb2 arrow",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

/* Cell delimiters of a GFM table row, the way the table extension scans
 * it: a backslash escapes the next character, other pipes split cells. */
static int row_pipes(const char *line, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++) {
		if (line[i] == '\\') {
			i++;
			continue;
		}
		if (line[i] == '|')
			n++;
	}
	return n;
}

TEST(markdown_code_span_escaping)
{
	char buf[256];

	cp_markdown_code(buf, sizeof(buf), "clock_reads/op", 100);
	CHECK_STR(buf, "`clock_reads/op`");
	cp_markdown_code(buf, sizeof(buf), "a`b", 100);
	CHECK_STR(buf, "``a`b``");
	cp_markdown_code(buf, sizeof(buf), "``x``", 100);
	CHECK_STR(buf, "``` ``x`` ```");
	cp_markdown_code(buf, sizeof(buf), "`", 100);
	CHECK_STR(buf, "`` ` ``");
	cp_markdown_code(buf, sizeof(buf), "p|q", 100);
	CHECK_STR(buf, "`p\\|q`");
	cp_markdown_code(buf, sizeof(buf), "line1\nline2\r", 100);
	CHECK_STR(buf, "`line1\\nline2\\r`");
	cp_markdown_code(buf, sizeof(buf), "back\\|slash", 100);
	CHECK_STR(buf, "`back\\\\\\|slash`");
	cp_markdown_code(buf, sizeof(buf), "", 100);
	CHECK_STR(buf, "(empty)");
	cp_markdown_code(buf, sizeof(buf), "abcdefgh", 3);
	CHECK_STR(buf, "`abc\xe2\x80\xa6`");
}

TEST(markdown_hostile_names_keep_tables_intact)
{
	json_t *v = fixture_regressed_verdict(hostile, NHOSTILE, 1);
	char *md, *line, *next;
	size_t top_rows = 0, all_rows = 0;

	CHECK(v != NULL);
	md = cp_compare_markdown(v, 0);
	CHECK(md != NULL);
	CHECK(strchr(md, '\r') == NULL);
	CHECK(strchr(md, '\033') == NULL);
	CHECK(strstr(md, "<script>") == NULL || strstr(md, "`<script>") != NULL);
	CHECK(strstr(md, "### clockprof: **FAIL** \xe2\x80\x94 16 of 32 measures outside bounds") !=
	      NULL);
	for (line = md; *line; line = next) {
		size_t len;

		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		len = (size_t)(next - line);
		/* Every line either is a table row or has no raw pipe from a
		 * name; rows have exactly 7 (6 columns) or 8 (7) pipes. */
		if (line[0] != '|')
			continue;
		if (!strncmp(line, "|:--", 4) || !strncmp(line, "| measure", 9))
			continue;
		if (row_pipes(line, len) == 8) {
			top_rows++;
		} else if (row_pipes(line, len) == 7) {
			all_rows++;
		} else {
			unit_fail(__FILE__, __LINE__, "broken row: %.*s", (int)len, line);
			break;
		}
	}
	CHECK_INT(top_rows, NHOSTILE);
	CHECK_INT(all_rows, 2 * NHOSTILE);
	/* Names are code spans, so @mentions and HTML stay text. */
	CHECK(strstr(md, "`@someone`") != NULL);
	CHECK(strstr(md, "`<script>alert(1)</script>`") != NULL);
	CHECK(strstr(md, "`::error::pwn`") != NULL);
	CHECK(strstr(md, "`100%`") != NULL);
	CHECK(strstr(md, "<details><summary>All 32 measures</summary>") != NULL);
	free(md);
	json_decref(v);
}

TEST(markdown_size_capped_with_note)
{
	enum { N = 3000 };
	char **names = calloc(N, sizeof(*names));
	json_t *v;
	char *md;

	CHECK(names != NULL);
	for (size_t i = 0; i < N; i++) {
		names[i] = malloc(320);
		snprintf(names[i], 320, "%04zu/%0300d", i, 0);
	}
	v = fixture_regressed_verdict((const char *const *)names, N, 0);
	CHECK(v != NULL);
	md = cp_compare_markdown(v, 64 * 1024);
	CHECK(md != NULL);
	CHECK(strlen(md) < 64 * 1024);
	CHECK(strstr(md, "more measures not shown") != NULL);
	CHECK(strstr(md, "more regressed or inconclusive measures not shown") != NULL);
	CHECK(strstr(md, "</details>") != NULL);
	free(md);
	/* The default budget is GitHub's 1 MiB. */
	md = cp_compare_markdown(v, 0);
	CHECK(md != NULL);
	CHECK(strlen(md) < CP_MARKDOWN_MAX_BYTES);
	free(md);
	json_decref(v);
	for (size_t i = 0; i < N; i++)
		free(names[i]);
	free(names);
}

TEST(table_escapes_names_and_marks_without_colour)
{
	json_t *v = fixture_regressed_verdict(hostile, NHOSTILE, 0);
	char *t;

	CHECK(v != NULL);
	t = cp_compare_table_string(v, 0);
	CHECK(t != NULL);
	CHECK(strchr(t, '\r') == NULL);
	CHECK(strchr(t, '\033') == NULL); /* no colour, no escapes from names */
	CHECK(strstr(t, "esc\\x1b[31mred") != NULL);
	CHECK(strstr(t, "c1\\u009bx") != NULL);
	CHECK(strstr(t, "line1\\nline2") != NULL);
	CHECK(strstr(t, "\xe2\x96\xb2 +1 (+100%)") != NULL); /* ▲ without colour */
	CHECK(strstr(t, "REGRESSED") != NULL);
	CHECK(strstr(t, "fail: 16 of 16 measures outside bounds") != NULL);
	free(t);
	t = cp_compare_table_string(v, 1);
	CHECK(t && strstr(t, "\033[1;31mREGRESSED") != NULL);
	free(t);
	json_decref(v);
}

TEST(table_colour_modes)
{
	CHECK_INT(cp_color_wanted("always", -1), 1);
	CHECK_INT(cp_color_wanted("never", 1), 0);
	CHECK_INT(cp_color_wanted("auto", -1), 0); /* not a TTY */
	CHECK_INT(cp_color_wanted("sometimes", 1), -1);
}

TEST(table_value_formatting)
{
	char buf[64];
	json_t *v = json_real(19196.4);

	cp_format_value(buf, sizeof(buf), v);
	CHECK_STR(buf, "19,196");
	json_real_set(v, 1234567.0);
	cp_format_value(buf, sizeof(buf), v);
	CHECK_STR(buf, "1,234,567");
	json_real_set(v, 0.16994);
	cp_format_value(buf, sizeof(buf), v);
	CHECK_STR(buf, "0.1699");
	json_real_set(v, -25.981);
	cp_format_value(buf, sizeof(buf), v);
	CHECK_STR(buf, "-25.98");
	cp_format_value(buf, sizeof(buf), json_null());
	CHECK_STR(buf, "-");
	json_decref(v);
}

static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* What the gate writes from its compact result, measure by measure (a
 * skeleton plus measures built one at a time), is byte for byte what the
 * renderers make of the whole verdict document, for no measures as for
 * several, hostile names included. */
static void check_texts_match_whole_verdict(const char *const *names, size_t n)
{
	struct fixture_result f;
	struct cp_verdict_measures ms;
	struct cp_compare_texts_request rq = { .markdown = 1, .annotations = 1 };
	struct cp_compare_texts t;
	struct cp_error err = { 0 };
	char path[] = "/tmp/clockprof-texts-XXXXXX", *json, *streamed, *whole_table;
	char *table = NULL, *ann = NULL;
	size_t len = 0;
	json_t *whole, *skel;
	FILE *mem;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(fixture_regressed_result(names, n, 1, &f), 0);
	whole = cp_verdict_build(&f.result, &f.bounds, &f.base, &f.head);
	skel = cp_verdict_skeleton(&f.result, &f.bounds, &f.base, &f.head);
	CHECK(whole && skel);
	/* The two were made a moment apart. */
	json_object_set(skel, "created_at", json_object_get(whole, "created_at"));
	cp_verdict_measures_of_result(&ms, &f.result);
	CHECK_INT(ms.n, 2 * n);
	json = cp_json_text(whole);
	rq.json = fopen(path, "w");
	rq.json_name = path;
	CHECK(rq.json != NULL);
	CHECK_INT(cp_compare_texts_render(skel, &ms, &rq, &t, &err), 0);
	CHECK(fclose(rq.json) == 0);
	streamed = file_text(path);
	CHECK(streamed != NULL);
	CHECK_STR(streamed, json);
	whole_table = cp_compare_table_string(whole, 1);
	CHECK(whole_table != NULL);
	mem = open_memstream(&table, &len);
	CHECK_INT(cp_compare_texts_table(mem, skel, &ms, 1), 0);
	fclose(mem);
	CHECK_STR(table, whole_table);
	free(table);
	free(whole_table);
	whole_table = cp_compare_markdown(whole, 0);
	CHECK_STR(t.markdown, whole_table);
	free(whole_table);
	mem = open_memstream(&ann, &len);
	cp_github_annotations_write(mem, whole);
	fclose(mem);
	CHECK_STR(t.annotations, ann);
	free(ann);
	cp_compare_texts_free(&t);
	/* Only the texts asked for. */
	rq = (struct cp_compare_texts_request){ .markdown = 1 };
	CHECK_INT(cp_compare_texts_render(skel, &ms, &rq, &t, &err), 0);
	CHECK(t.markdown != NULL && t.annotations == NULL);
	cp_compare_texts_free(&t);
	free(streamed);
	free(json);
	json_decref(whole);
	json_decref(skel);
	fixture_result_free(&f);
	unlink(path);
}

TEST(texts_from_the_result_match_the_whole_verdict)
{
	static const char *const names[] = { "a/op", "b\n::error x/op", "c\"}]/op",
					     "\xe2\x80\xae rtl/op" };

	check_texts_match_whole_verdict(names, 4);
	check_texts_match_whole_verdict(names, 0);
}

/* A regressed per-site measure with lines that gained (verdict-json.md
 * "lines"): the markdown and the terminal name each as path:line with
 * base -> head, the repository's path when there is one, else the file
 * as the runs give it; a path from the target cannot break the bullet or
 * the terminal's line. */
TEST(markdown_and_table_name_the_lines_a_site_measure_gained)
{
	const char *names[] = { "clock_reads@handle_request/op" };
	json_t *v = fixture_regressed_verdict(names, 1, 0);
	json_t *m = json_array_get(json_object_get(v, "measures"), 0);
	char *md, *t;

	CHECK(v && m);
	json_object_set_new(m, "lines",
			    json_pack("[{s:s, s:i, s:f, s:f, s:s}, {s:s, s:i, s:f, s:f, s:n}]",
				      "file", "/w/src/a.c", "line", 42, "base", 2.0, "head", 3.0,
				      "repo_path", "src/a.c", "file", "/x/b`|\n::error::c.c",
				      "line", 7, "base", 0.0, "head", 1.0, "repo_path"));
	md = cp_compare_markdown(v, CP_MARKDOWN_MAX_BYTES);
	CHECK(md != NULL);
	CHECK(strstr(md, "- `clock_reads@handle_request/op` gained reads at `src/a.c` line 42 "
			 "(2 -> 3), ``/x/b`\\|\\n::error::c.c`` line 7 (0 -> 1)\n") != NULL);
	t = cp_compare_table_string(v, 0);
	CHECK(t != NULL);
	CHECK(strstr(t, "\nclock_reads@handle_request/op gained reads at src/a.c:42 (2 -> 3), "
			"/x/b`|\\n::error::c.c:7 (0 -> 1)\n") != NULL);
	free(md);
	free(t);
	json_decref(v);
}
