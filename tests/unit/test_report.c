/* test_report.c - the HTML report writer without a browser: escaping of
 * every name, the CSP's hashes, the verdict headline, base/head splitting,
 * unsupported counters and the stack merging behind the flame graphs.
 * (tests/browser opens the same reports in chromium.) */
#include <gcrypt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "report.h"
#include "buf.h"
#include "report_html.h"
#include "report_stacks.h"
#include "unit.h"

#define HOSTILE "</script><img src=x onerror=alert(1)>"
#define HOSTILE_HTML "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"

static const char run_json[] =
	"{\"schema\":\"clockprof.run/1\",\"tool\":{\"name\":\"clockprof\",\"version\":\"0.1.0\"},"
	"\"complete\":true,\"started_at\":\"2026-11-29T21:00:00Z\",\"duration_s\":2.0,"
	"\"target\":{\"pid\":7,\"comm\":\"<i>srv</i>\",\"exe\":\"/bin/srv\",\"cmdline\":[\"./srv\",\"<b>x</b>\"]},"
	"\"host\":{\"kernel\":\"6.1\",\"cpu\":\"cpu\",\"clocksource\":\"tsc\",\"pmu\":false},"
	"\"request\":{\"spec\":\"func:handle\",\"count\":%d},\"ops\":%d,"
	"\"clock_reads\":{\"total\":300,\"per_op\":3.0,\"by_entry\":{\"clock_gettime\":300},\"by_clock\":{},\"by_path\":{\"vdso\":300}},"
	"\"per_request\":{\"count\":100,\"min\":3,\"p50\":3,\"p90\":3,\"p99\":3,\"max\":3,\"mean\":3.0,\"histogram\":[[3,100]]},"
	"\"call_sites\":[{\"function\":\"%s\",\"file\":\"a.c\",\"line\":1,\"via\":\"clock_gettime\",\"count\":%d,\"per_op\":1.0},"
	"{\"function\":\"operator<<\",\"file\":\"b.cc\",\"line\":2,\"via\":\"clock_gettime\",\"count\":200,\"per_op\":2.0}],"
	"\"stacks\":[{\"frames\":[\"main\",\"%s\",\"clock_gettime\"],\"count\":%d},"
	"{\"frames\":[\"main\",\"operator<<\",\"clock_gettime\"],\"count\":200}],"
	"\"counters\":{\"instructions:u\":{\"supported\":false,\"reason\":\"no hardware PMU\"}},"
	"\"probe\":{\"hits\":300,\"cost_ns_per_hit\":10000.0,\"estimated_overhead_pct\":1.5},"
	"\"measures\":{\"clock_reads/op\":{\"value\":3.0,\"unit\":\"reads/op\",\"kind\":\"exact\",\"better\":\"lower\"}},"
	"\"warnings\":[\"<script>alert(2)</script>\"]}";

static json_t *make_run(int ops, const char *fn, int count)
{
	char text[sizeof(run_json) + 512];
	json_error_t e;

	snprintf(text, sizeof(text), run_json, ops, ops, fn, count, fn, count);
	return json_loads(text, 0, &e);
}

static json_t *make_verdict(int base_runs, int head_runs)
{
	return json_pack("{s:s, s:s, s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i}, s:{s:n, s:n},"
			 " s:{s:i, s:[]}, s:{s:i, s:[]}, s:[], s:[{s:s, s:s, s:s, s:s,"
			 " s:{s:f, s:f, s:f, s:i}, s:{s:f, s:f, s:f, s:i}, s:{s:f, s:f, s:f},"
			 " s:n, s:s, s:s, s:s}]}",
			 "schema", "clockprof.verdict/1", "status", "fail", "summary", "measures",
			 41, "judged", 41, "within", 38, "regressed", 3, "improved", 0,
			 "inconclusive", 0, "outside_bounds", 3, "bounds", "file", "sha256", "base",
			 "runs", base_runs, "files", "head", "runs", head_runs, "files",
			 "env_mismatch", "measures", "name", "clock_reads@" HOSTILE "/op", "unit",
			 "reads/op", "kind", "exact", "better", "lower", "base", "median", 1.0,
			 "lo", 1.0, "hi", 1.0, "n", 1, "head", "median", 2.0, "lo", 2.0, "hi", 2.0,
			 "n", 1, "change_pct", "point", 100.0, "lo", 100.0, "hi", 100.0, "p_value",
			 "bound", "+0", "status", "regressed", "direction", "worse");
}

/* Writes docs to a temporary file and returns its contents (free()). */
static char *write_report(json_t **docs, size_t n, struct cp_error *err)
{
	char path[] = "/tmp/clockprof-report-test-XXXXXX";
	int fd = mkstemp(path);
	char *text = NULL;
	FILE *f;
	long size;

	if (fd < 0)
		return NULL;
	close(fd);
	f = fopen(path, "w");
	if (!f)
		return NULL;
	if (cp_report_write(docs, n, f, path, err) || fclose(f)) {
		unlink(path);
		return NULL;
	}
	if ((f = fopen(path, "rb"))) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		rewind(f);
		text = calloc(1, (size_t)size + 1);
		if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
			free(text);
			text = NULL;
		}
		fclose(f);
	}
	unlink(path);
	return text;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The CSP names the sha256 of the inline script and style exactly. */
static int csp_matches(const char *html, const char *open_tag, const char *close_tag,
		       const char *csp_key)
{
	const char *start = strstr(html, open_tag), *end, *csp;
	uint8_t d[32];
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char b64[48], want[64];
	size_t o = 0;

	if (!start)
		return 0;
	start += strlen(open_tag);
	end = strstr(start, close_tag);
	if (!end)
		return 0;
	/* Computed here independently of the build's report_csp.h. */
	gcry_check_version(NULL);
	gcry_md_hash_buffer(GCRY_MD_SHA256, d, start, (size_t)(end - start));
	for (int i = 0; i < 32; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < 32 ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < 32 ? d[i + 2] : 0);

		b64[o++] = abc[(v >> 18) & 63];
		b64[o++] = abc[(v >> 12) & 63];
		b64[o++] = i + 1 < 32 ? abc[(v >> 6) & 63] : '=';
		b64[o++] = i + 2 < 32 ? abc[v & 63] : '=';
	}
	b64[o] = '\0';
	snprintf(want, sizeof(want), "%s 'sha256-%s'", csp_key, b64);
	csp = strstr(html, "Content-Security-Policy");
	return csp && strstr(csp, want) != NULL;
}

TEST(report_run_escapes_every_name)
{
	json_t *run = make_run(100, HOSTILE, 100);
	struct cp_error err = { 0 };
	char *html;

	CHECK(run);
	html = write_report(&run, 1, &err);
	CHECK(html);
	CHECK(strstr(html, HOSTILE) == NULL);
	CHECK(strstr(html, "<img") == NULL);
	CHECK(strstr(html, HOSTILE_HTML) != NULL);
	CHECK(strstr(html, "operator&lt;&lt;") != NULL);
	CHECK(strstr(html, "<title>clockprof: &lt;i&gt;srv&lt;/i&gt;</title>") != NULL);
	CHECK(strstr(html, "&lt;b&gt;x&lt;/b&gt;") != NULL);
	CHECK(strstr(html, "&lt;script&gt;alert(2)&lt;/script&gt;") != NULL);
	/* The JSON data block carries the names with < > & escaped. */
	CHECK(strstr(html, "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e") !=
	      NULL);
	CHECK_INT(count(html, "<script"), 2);
	CHECK_INT(count(html, "</script>"), 2);
	CHECK(strstr(html, "http:") == NULL && strstr(html, "https:") == NULL);
	free(html);
	json_decref(run);
}

/* The mechanism card says what was asked and why the patch was not used:
 * the reason comes from the target (its pid, its filters), escaped. A file
 * of an earlier version, without either, says neither. */
TEST(report_run_shows_the_fallback_reason_escaped)
{
	json_t *run = make_run(100, "handle", 100);
	json_t *probe = json_object_get(run, "probe");
	struct cp_error err = { 0 };
	char *html;

	CHECK(run);
	html = write_report(&run, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "the patch was not used") == NULL);
	CHECK(strstr(html, "asked: ") == NULL);
	free(html);
	json_object_set_new(json_object_get(run, "clock_reads"), "mechanism",
			    json_string("uprobe"));
	json_object_set_new(probe, "requested_mechanism", json_string("auto"));
	json_object_set_new(probe, "fallback_reason", json_string("process 7: " HOSTILE));
	html = write_report(&run, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "asked: auto") != NULL);
	CHECK(strstr(html, "the patch was not used: process 7: " HOSTILE_HTML) != NULL);
	CHECK(strstr(html, HOSTILE) == NULL);
	free(html);
	json_decref(run);
}

/* The path the target was started by is said where it is not the
 * executable's (escaped: it comes from the target); a file of an earlier
 * version, without it, says nothing more. The overhead tile multiplies no
 * 0 hits by a cost. */
TEST(report_run_says_the_path_started_by)
{
	json_t *run = make_run(100, "handle", 100);
	json_t *target = json_object_get(run, "target");
	struct cp_error err = { 0 };
	char *html;

	CHECK(run);
	json_object_set_new(json_object_get(run, "probe"), "hits", json_integer(0));
	html = write_report(&run, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "started as") == NULL);
	CHECK(strstr(html, "no probe hit: nothing trapped") != NULL);
	CHECK(strstr(html, "0 probe hits") == NULL);
	free(html);
	json_object_set_new(target, "exe", json_string("/usr/bin/redis-check-rdb"));
	json_object_set_new(target, "exec_path", json_string("/usr/bin/" HOSTILE));
	html = write_report(&run, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "<dt>started as</dt><dd>/usr/bin/" HOSTILE_HTML "</dd>") != NULL);
	free(html);
	json_decref(run);
}

TEST(report_csp_hashes_inline_script_and_style)
{
	json_t *run = make_run(100, "f", 100);
	struct cp_error err = { 0 };
	char *html = write_report(&run, 1, &err);

	CHECK(html);
	CHECK(strstr(html, "default-src 'none'") != NULL);
	CHECK(strstr(html, "unsafe-inline") == NULL);
	CHECK(csp_matches(html, "<style>", "</style>", "style-src"));
	/* "<script>" without attributes is the inline script, not the data. */
	CHECK(csp_matches(html, "<script>", "</script>", "script-src"));
	free(html);
	json_decref(run);
}

TEST(report_unsupported_counter_is_not_zero)
{
	json_t *run = make_run(100, "f", 100);
	struct cp_error err = { 0 };
	char *html = write_report(&run, 1, &err);

	CHECK(html);
	CHECK(strstr(html, "unsupported: no hardware PMU") != NULL);
	CHECK(strstr(html, "<code>instructions:u</code></td><td class=\"num\"") == NULL);
	free(html);
	json_decref(run);
}

TEST(report_verdict_headline_and_marks)
{
	json_t *v = make_verdict(1, 1);
	struct cp_error err = { 0 };
	char *html;

	CHECK(v);
	html = write_report(&v, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "<strong>fail</strong>: 3 of 41 measures outside bounds") != NULL);
	CHECK(strstr(html, "▲ regressed") != NULL);
	CHECK(strstr(html, "clock_reads@" HOSTILE_HTML "/op") != NULL);
	CHECK(strstr(html, "id=\"no-runs\"") != NULL);
	free(html);
	json_decref(v);
}

TEST(report_verdict_with_runs_shows_differential)
{
	json_t *docs[3] = { make_verdict(1, 1), make_run(100, "old_fn", 100),
			    make_run(100, HOSTILE, 50) };
	struct cp_error err = { 0 };
	char *html, *appeared, *gone;

	CHECK(docs[0] && docs[1] && docs[2]);
	html = write_report(docs, 3, &err);
	CHECK(html);
	CHECK(strstr(html, "id=\"flame-diff\"") != NULL);
	appeared = strstr(html, "▲ appeared in head (1)");
	gone = strstr(html, "▼ disappeared from head (1)");
	CHECK(appeared && gone && appeared < gone);
	CHECK(strstr(appeared, HOSTILE_HTML) < gone);
	CHECK(strstr(gone, "old_fn") != NULL);
	/* operator<< reads 2 per op on both sides: it did not move. */
	CHECK(strstr(html, "◆ read more or less often (0)") != NULL);
	/* Both sides' counts travel to the flame graph: [base, head, frames]. */
	CHECK(strstr(html, "\"diff\":{") != NULL);
	for (int i = 0; i < 3; i++)
		json_decref(docs[i]);
	free(html);
}

TEST(report_rejects_mismatched_runs_and_foreign_documents)
{
	json_t *docs[3] = { make_verdict(2, 2), make_run(1, "a", 1), make_run(1, "b", 1) };
	json_t *other = json_pack("{s:s}", "schema", "something/1");
	struct cp_error err = { 0 };
	char *html = write_report(docs, 3, &err);

	CHECK(html == NULL);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "2 base and 2 head runs, but 2 run files were given") != NULL);
	memset(&err, 0, sizeof(err));
	CHECK(write_report(&other, 1, &err) == NULL);
	CHECK_INT(err.exit_code, CP_EXIT_USAGE);
	CHECK(strstr(err.msg, "neither a run") != NULL);
	{
		json_t *two[2] = { docs[0], docs[0] };

		memset(&err, 0, sizeof(err));
		CHECK(write_report(two, 2, &err) == NULL);
		CHECK(strstr(err.msg, "one verdict") != NULL);
	}
	json_decref(docs[0]);
	json_decref(docs[1]);
	json_decref(docs[2]);
	json_decref(other);
}

TEST(report_stacks_merge_and_count_recursion_once)
{
	struct cp_stacks st = { 0 };
	json_t *a = json_loads("[{\"frames\":[\"m\",\"f\",\"f\",\"clock\"],\"count\":3},"
			       "{\"frames\":[\"m\",\"g\",\"clock\"],\"count\":2},"
			       "{\"frames\":[],\"count\":9},{\"frames\":[\"m\",1],\"count\":9}]",
			       0, NULL);
	json_t *b = json_loads("[{\"frames\":[\"m\",\"f\",\"f\",\"clock\"],\"count\":4}]", 0, NULL);
	struct cp_func_total *f;
	size_t n;

	CHECK_INT(cp_stacks_add(&st, a, 0), 2);
	CHECK_INT(cp_stacks_add(&st, b, 1), 1);
	CHECK_INT(st.nstacks, 2);
	CHECK_INT(st.names.n, 4);
	CHECK_NEAR(st.stacks[0].count[0], 3, 0);
	CHECK_NEAR(st.stacks[0].count[1], 4, 0);
	n = cp_stacks_functions(&st, &f);
	CHECK_INT(n, 4);
	CHECK_STR(st.names.keys[f[1].name], "f");
	CHECK_NEAR(f[1].v[0], 3, 0); /* f;f counts its stack once */
	CHECK_NEAR(f[0].v[0], 5, 0);
	CHECK_NEAR(f[0].v[1], 4, 0);
	free(f);
	cp_stacks_free(&st);
	json_decref(a);
	json_decref(b);
}

TEST(report_numbers_read_as_people_write_them)
{
	struct cp_buf b = { 0 };

	cp_html_num(&b, 1234567);
	cp_buf_puts(&b, " ");
	cp_html_num(&b, 6.0);
	cp_buf_puts(&b, " ");
	cp_html_num(&b, 0.17);
	cp_buf_puts(&b, " ");
	cp_html_num(&b, -1234.4);
	cp_buf_puts(&b, " ");
	cp_html_num(&b, 5.5);
	cp_buf_puts(&b, " ");
	cp_html_num(&b, NAN);
	cp_buf_puts(&b, " ");
	cp_html_pct(&b, 33.333);
	CHECK_STR(b.data, "1,234,567 6 0.17 -1,234 5.5 n/a +33.33%");
	cp_buf_free(&b);
}

TEST(report_html_cells_of_members_in_order_nested_and_absent)
{
	json_t *o = json_pack("{s:s, s:i, s:{s:i}}", "name", "<a>", "n", 3, "spread", "max", 7);
	struct cp_buf b = { 0 };

	cp_html_td_members(
		&b, o, (const char *const[]){ "spread.max", "name", "gone", "spread.gone", NULL });
	CHECK_STR(b.data,
		  "<td class=\"num\" data-v=\"7\">7</td><td>&lt;a&gt;</td>"
		  "<td class=\"na\" data-v=\"\">n/a</td><td class=\"na\" data-v=\"\">n/a</td>");
	cp_buf_free(&b);
	json_decref(o);
}

/* A site read on both sides, more often per op in head: listed with both
 * values, where the tables of appeared and disappeared sites have none. */
TEST(report_verdict_lists_a_site_read_more_often_per_op)
{
	json_t *docs[3] = { make_verdict(1, 1), make_run(100, "f", 100), make_run(100, "f", 100) };
	struct cp_error err = { 0 };
	char *html, *moved;

	CHECK(docs[0] && docs[1] && docs[2]);
	json_object_set_new(json_array_get(json_object_get(docs[2], "call_sites"), 1), "per_op",
			    json_real(3.0));
	html = write_report(docs, 3, &err);
	CHECK(html);
	CHECK(strstr(html, "▲ appeared in head (0)") &&
	      strstr(html, "▼ disappeared from head (0)"));
	moved = strstr(html, "◆ read more or less often (1)");
	CHECK(moved && strstr(moved, "<tr class=\"more\">") && strstr(moved, "operator&lt;&lt;"));
	CHECK(strstr(moved, "data-v=\"2\">2</td><td class=\"num\" data-v=\"3\">3</td>") != NULL);
	for (int i = 0; i < 3; i++)
		json_decref(docs[i]);
	free(html);
}

/* A base run written before call sites had "inlined_at" lacks the key;
 * head's sites say null (run-json.md: readers take a missing one as
 * null): the same sites on both sides, none appeared or disappeared. */
TEST(report_verdict_site_without_inlined_at_is_one_with_null)
{
	json_t *docs[3] = { make_verdict(1, 1), make_run(100, "f", 100), make_run(100, "f", 100) };
	struct cp_error err = { 0 };
	const json_t *s;
	size_t i;
	char *html;

	CHECK(docs[0] && docs[1] && docs[2]);
	json_array_foreach(json_object_get(docs[2], "call_sites"), i, s)
		json_object_set_new((json_t *)s, "inlined_at", json_null());
	html = write_report(docs, 3, &err);
	CHECK(html);
	CHECK(html && strstr(html, "▲ appeared in head (0)") &&
	      strstr(html, "▼ disappeared from head (0)"));
	for (int k = 0; k < 3; k++)
		json_decref(docs[k]);
	free(html);
}

/* A regressed per-site measure's lines that gained reads are named in the
 * why cell, their paths (from the target's debug information) escaped. */
TEST(report_verdict_names_the_lines_that_gained_escaped)
{
	json_t *v = make_verdict(1, 1);
	json_t *m = json_array_get(json_object_get(v, "measures"), 0);
	struct cp_error err = { 0 };
	char *html;

	CHECK(v && m);
	json_object_set_new(m, "lines",
			    json_pack("[{s:s, s:i, s:f, s:f, s:s}, {s:s, s:i, s:f, s:f, s:n}]",
				      "file", "/w/src/a.c", "line", 42, "base", 2.0, "head", 3.0,
				      "repo_path", "src/a.c", "file", "/w/" HOSTILE ".c", "line", 7,
				      "base", 0.0, "head", 1.0, "repo_path"));
	html = write_report(&v, 1, &err);
	CHECK(html);
	CHECK(strstr(html, "gained at <code>src/a.c:42</code> 2 → 3</small>") != NULL);
	CHECK(strstr(html, "gained at <code>/w/" HOSTILE_HTML ".c:7</code>") != NULL);
	CHECK(strstr(html, HOSTILE) == NULL);
	free(html);
	json_decref(v);
}
