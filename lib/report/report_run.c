/* report_run.c - the run section of the HTML report: what one profiling
 * window of one process saw (run.json, "clockprof.run/1"). Tables are
 * written here, escaped, so the page reads without JavaScript; the
 * histogram and the flame graph also get their data for report.js. The
 * section opens with the run's facts and warnings (report_run_facts.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_walk.h"
#include "report_html.h"
#include "report_sections.h"
#include "run_file.h"

static void card(struct cp_buf *b, const char *label, double v, const char *unit, const char *note)
{
	cp_buf_puts(b, "<div class=\"card\"><dt>");
	cp_buf_text(b, label);
	cp_buf_puts(b, "</dt><dd><span class=\"big\">");
	cp_html_num(b, v);
	cp_buf_puts(b, "</span> ");
	cp_buf_text(b, unit);
	if (note) {
		cp_buf_puts(b, "<small>");
		cp_buf_text(b, note);
		cp_buf_puts(b, "</small>");
	}
	cp_buf_puts(b, "</dd></div>");
}

/* The probes' estimated cost as a share of the target's CPU time: a
 * plain decimal however small or large (never 2.14e-05), and the hits and
 * cost per hit it comes from when both are known. */
static void overhead_card(struct cp_buf *b, const json_t *probe, double pct)
{
	double hits = -1, cost = -1, measured = -1;

	/* Measured where the window was split: CPU per request with every
	 * probe against with the boundary's alone (run-json.md). */
	if (cp_rj_num(json_object_get(probe, "measured"), "overhead_pct", &measured)) {
		cp_buf_printf(
			b,
			"<div class=\"card overhead\"><dt>probe overhead (measured)</dt><dd><span class=\"big\">%.0f</span> %% of the target's CPU",
			measured);
		if (isfinite(pct) && pct >= 0)
			cp_buf_printf(b, "<small>estimated from the hits: %.0f %%</small>", pct);
		cp_buf_puts(b, "</dd></div>");
		return;
	}
	cp_buf_puts(
		b,
		"<div class=\"card overhead\"><dt>probe overhead (estimated)</dt><dd><span class=\"big\">");
	if (!isfinite(pct) || pct < 0)
		cp_buf_puts(b, "n/a");
	else if (pct > 0 && pct < 0.01)
		cp_buf_puts(b, "&lt; 0.01");
	else
		cp_buf_printf(b, "%.*f", pct >= 10 ? 0 : pct >= 1 ? 1 : 2, pct);
	cp_buf_puts(b, "</span> % of the target's CPU");
	cp_rj_num(probe, "hits", &hits);
	cp_rj_num(probe, "cost_ns_per_hit", &cost);
	if (hits > 0 && cost > 0) /* a cost per trap only where traps were taken */
		cp_buf_printf(b, "<small>%.0f probe hits × %.1f µs each</small>", hits,
			      cost / 1000);
	else if (hits == 0)
		cp_buf_puts(b, "<small>no probe hit: nothing trapped</small>");
	cp_buf_puts(b, "</dd></div>");
}

/* open, then text from the target (escaped), then </small>. */
static void small_text(struct cp_buf *b, const char *open, const char *text)
{
	cp_buf_puts(b, open);
	cp_buf_text(b, text);
	cp_buf_puts(b, "</small>");
}

/* How the reads were counted: the mechanism, and for the vDSO patch how
 * long one thread of the target was held to attach and detach. */
static void mechanism_card(struct cp_buf *b, const json_t *run)
{
	const json_t *probe = json_object_get(run, "probe");
	const json_t *pause = json_object_get(probe, "pause_ms");
	const json_t *asked = json_object_get(probe, "requested_mechanism");
	const json_t *why = json_object_get(probe, "fallback_reason");
	const char *m = cp_run_mechanism(run);
	double attach = -1, detach = -1;

	cp_buf_puts(b, "<div class=\"card mechanism\"><dt>counted by</dt><dd><span class=\"big\">");
	cp_buf_text(b, m);
	cp_buf_puts(b, "</span>");
	/* Files of earlier versions have neither: nothing said. The reason
	 * comes from the target (its pid, its filters): escaped. */
	if (json_is_string(asked) && strcmp(json_string_value(asked), m))
		small_text(b, "<small>asked: ", json_string_value(asked));
	if (json_is_string(why))
		small_text(b, "<small class=\"fallback\">the patch was not used: ",
			   json_string_value(why));
	cp_rj_num(pause, "attach", &attach);
	cp_rj_num(pause, "detach", &detach);
	if (!strcmp(m, "patch"))
		cp_buf_puts(b, "<small>inside the target's vDSO: no trap per read</small>");
	if (attach >= 0 || detach >= 0) {
		cp_buf_puts(b, "<small>one thread of the target held");
		if (attach >= 0)
			cp_buf_printf(b, " %.2f ms to attach", attach);
		if (detach >= 0)
			cp_buf_printf(b, "%s %.2f ms to detach", attach >= 0 ? "," : "", detach);
		cp_buf_puts(b, "</small>");
	}
	cp_buf_puts(b, "</dd></div>");
}

static void headline(struct cp_buf *b, const json_t *run)
{
	const json_t *cr = json_object_get(run, "clock_reads");
	const json_t *pr = json_object_get(run, "per_request");
	const json_t *probe = json_object_get(run, "probe");
	double v, w;
	char note[128];

	cp_buf_puts(b, "<h3>Headline</h3><dl class=\"cards\">");
	if (cp_rj_num(cr, "per_op", &v))
		card(b, "clock reads per op", v, "reads/op", NULL);
	else
		card(b, "clock reads per op", NAN, "", "no request boundary or --ops");
	if (cp_rj_num(cr, "total", &v))
		card(b, "clock reads in the window", v, "reads", NULL);
	if (cp_rj_num(cr, "per_second", &v))
		card(b, "clock reads per second", v, "reads/s", NULL);
	if (cp_rj_num(pr, "p50", &v) && cp_rj_num(pr, "p99", &w)) {
		snprintf(note, sizeof(note), "p99 %.17g", w);
		card(b, "reads per request (p50)", v, "reads", note);
	}
	if (cp_rj_num(probe, "estimated_overhead_pct", &v))
		overhead_card(b, probe, v);
	mechanism_card(b, run);
	cp_buf_puts(b, "</dl>\n");
}

static void measure_row(struct cp_buf *b, const char *name, const json_t *m)
{
	cp_buf_puts(b, "<tr>");
	cp_html_td_code(b, name);
	cp_html_td_members(b, m, (const char *const[]){ "value", "unit", "kind", "better", NULL });
	cp_buf_puts(b, "</tr>");
}

/* One measure of a run read by cp_run_file_parse(), its measures kept as
 * text: parsed, drawn and dropped. */
static int text_row(struct cp_json_walk *w, void *ctx, const char *name, size_t key_at, size_t *at)
{
	json_t *m = cp_json_walk_value(w, at);

	(void)key_at;
	if (!m)
		return -1;
	measure_row(ctx, name, m);
	json_decref(m);
	return 0;
}

static void measures_table(struct cp_buf *b, const json_t *run)
{
	const json_t *ms = json_object_get(run, "measures"), *m;
	const char *name;

	cp_buf_puts(
		b,
		"<h3>Measures</h3><table class=\"sortable measures\"><caption>The measures that clockprof compare judges</caption>"
		"<thead><tr><th>measure</th><th class=\"num\">value</th><th>unit</th><th>kind</th><th>better</th></tr></thead><tbody>");
	if (json_is_string(ms)) {
		struct cp_error err;
		struct cp_json_walk w = { .text = json_string_value(ms),
					  .len = json_string_length(ms),
					  .what = "measures",
					  .err = &err };
		size_t at = 0;

		/* The text was walked once already: it is sound. */
		cp_json_walk_object(&w, &at, NULL, text_row, b);
	}
	json_object_foreach((json_t *)ms, name, m)
		measure_row(b, name, m);
	cp_buf_puts(b, "</tbody></table>\n");
}

/* A {name: count} breakdown as a table with share and per op. */
static void breakdown(struct cp_buf *b, const char *title, const char *col, const json_t *counts,
		      double total, double ops)
{
	const json_t *v;
	const char *name;

	cp_buf_puts(b, "<table class=\"sortable breakdown\"><caption>");
	cp_buf_text(b, title);
	cp_buf_puts(b, "</caption><thead><tr><th>");
	cp_buf_text(b, col);
	cp_buf_puts(
		b,
		"</th><th class=\"num\">reads</th><th class=\"num\">share</th><th class=\"num\">per op</th></tr></thead><tbody>");
	if (!json_object_size(counts))
		cp_buf_puts(b, "<tr><td colspan=\"4\" class=\"na\">not recorded</td></tr>");
	json_object_foreach((json_t *)counts, name, v) {
		double c = json_is_number(v) ? json_number_value(v) : NAN;

		cp_buf_puts(b, "<tr>");
		cp_html_td_code(b, name);
		cp_html_td_num(b, c);
		if (total > 0 && isfinite(c))
			cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.1f%%</td>",
				      c / total, 100 * c / total);
		else
			cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
		cp_html_td_num(b, c / ops);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table>");
}

static void clock_reads(struct cp_buf *b, const json_t *run)
{
	const json_t *cr = json_object_get(run, "clock_reads");
	double total = 0, ops = cp_report_run_ops(run);

	cp_rj_num(cr, "total", &total);
	cp_buf_puts(b, "<h3>Clock reads by entry, path and clock</h3><div class=\"row\">");
	breakdown(b, "by entry point", "entry", json_object_get(cr, "by_entry"), total, ops);
	breakdown(b, "by path", "path", json_object_get(cr, "by_path"), total, ops);
	breakdown(b, "by clock id", "clock", json_object_get(cr, "by_clock"), total, ops);
	cp_buf_puts(b, "</div>\n");
}

static void histogram(struct cp_buf *b, const json_t *run, size_t index)
{
	const json_t *pr = json_object_get(run, "per_request");
	const json_t *hist = json_object_get(pr, "histogram"), *pair;
	double requests = 0;
	size_t i;
	static const char *const pct[] = { "count", "min", "p50", "p90", "p99", "max", "mean" };

	cp_buf_puts(b, "<h3>Reads per request</h3>");
	if (!json_is_object(pr)) {
		cp_buf_puts(
			b,
			"<p class=\"na\">No request boundary was given (--request), so reads per request are not known.</p>\n");
		return;
	}
	cp_buf_puts(b,
		    "<table class=\"pcts\"><caption>Clock reads per request</caption><thead><tr>");
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		cp_buf_printf(b, "<th class=\"num\">%s</th>", pct[i]);
	cp_buf_puts(b, "</tr></thead><tbody><tr>");
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		cp_html_td_json(b, json_object_get(pr, pct[i]));
	cp_buf_puts(b, "</tr></tbody></table>");
	if (!json_array_size(hist))
		return;
	json_array_foreach(hist, i, pair)
		requests += json_number_value(json_array_get(pair, 1));
	cp_buf_printf(
		b,
		"<figure class=\"chart\" id=\"hist-%zu\" data-chart=\"hist\" data-run=\"%zu\">"
		"<figcaption>Histogram: how many requests read the clock how many times</figcaption>"
		"<div class=\"plot\"></div>",
		index, index);
	cp_buf_puts(
		b,
		"<div class=\"scroll\"><table class=\"sortable\"><caption>Requests by clock reads per request</caption>"
		"<thead><tr><th class=\"num\">reads in the request</th><th class=\"num\">requests</th><th class=\"num\">share</th></tr></thead><tbody>");
	json_array_foreach(hist, i, pair) {
		double n = json_number_value(json_array_get(pair, 1));

		cp_buf_puts(b, "<tr>");
		cp_html_td_json(b, json_array_get(pair, 0));
		cp_html_td_json(b, json_array_get(pair, 1));
		if (requests > 0)
			cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.1f%%</td>",
				      n / requests, 100 * n / requests);
		else
			cp_buf_puts(b, "<td class=\"na\">n/a</td>");
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table></div></figure>\n");
}

static double site_count(const json_t *s)
{
	double c;

	return cp_rj_num(s, "count", &c) ? c : 0;
}

static int by_count_desc(const void *a, const void *b)
{
	double x = site_count(*(json_t *const *)a), y = site_count(*(json_t *const *)b);

	return (x < y) - (x > y);
}

/* Where the site's function calls its inlined helper, the line of its
 * own that reads (run-json.md: inlined_at). */
static void inlined_at(struct cp_buf *b, const json_t *at, const char *file)
{
	const char *at_file = cp_json_str(at, "file", NULL);
	double line;

	if (!cp_rj_num(at, "line", &line) || line <= 0)
		return;
	cp_buf_puts(b, "<small> inlined at ");
	if (at_file && (!file || strcmp(at_file, file))) {
		cp_buf_puts(b, "<code>");
		cp_buf_text(b, at_file);
		cp_buf_printf(b, ":%.0f</code>", line);
	} else {
		cp_buf_printf(b, "line %.0f", line);
	}
	cp_buf_puts(b, "</small>");
}

void cp_report_site_cells(struct cp_buf *b, const json_t *s)
{
	const json_t *inl = json_object_get(s, "inlined");
	const char *file = cp_json_str(s, "file", NULL);
	double line;

	cp_buf_puts(b, "<td><code>");
	cp_buf_text(b, cp_json_str(s, "function", NULL) ? cp_json_str(s, "function", NULL) : "??");
	cp_buf_puts(b, "</code>");
	if (json_array_size(inl)) {
		cp_buf_puts(b, "<small> inlined: ");
		cp_html_json_join(b, inl, ", ");
		cp_buf_puts(b, "</small>");
	}
	cp_buf_puts(b, "</td><td><code>");
	cp_buf_text(b, file ? file : "??");
	if (cp_rj_num(s, "line", &line) && line > 0)
		cp_buf_printf(b, ":%.0f", line);
	cp_buf_puts(b, "</code>");
	inlined_at(b, json_object_get(s, "inlined_at"), file);
	cp_buf_puts(b, "</td>");
	cp_html_td_json(b, json_object_get(s, "via"));
	cp_buf_puts(b, "<td class=\"module\">");
	cp_buf_text(b, cp_json_str(s, "module", NULL));
	cp_buf_puts(b, "</td>");
}

static void call_sites(struct cp_buf *b, const json_t *run)
{
	const json_t *sites = json_object_get(run, "call_sites");
	size_t n = json_array_size(sites), i;
	json_t **sorted;
	double ops = cp_report_run_ops(run);

	cp_buf_puts(b, "<h3>Call sites</h3>");
	if (!n) {
		cp_buf_puts(b, "<p class=\"na\">No call sites were recorded.</p>\n");
		return;
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {
		b->failed = 1;
		return;
	}
	for (i = 0; i < n; i++)
		sorted[i] = json_array_get(sites, i);
	qsort(sorted, n, sizeof(*sorted), by_count_desc);
	cp_buf_puts(
		b,
		"<div class=\"scroll\"><table class=\"sortable sites\"><caption>Where the program's own code reads the clock (first frame past libc and the vDSO)</caption>"
		"<thead><tr><th>function</th><th>file:line</th><th>via</th><th>module</th><th class=\"num\">count</th><th class=\"num\">per op</th></tr></thead><tbody>");
	for (i = 0; i < n; i++) {
		double per_op;

		cp_buf_puts(b, "<tr>");
		cp_report_site_cells(b, sorted[i]);
		cp_html_td_json(b, json_object_get(sorted[i], "count"));
		if (!cp_rj_num(sorted[i], "per_op", &per_op))
			per_op = site_count(sorted[i]) / ops;
		cp_html_td_num(b, per_op);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table></div>\n");
	free(sorted);
}

static void extra_probes(struct cp_buf *b, const json_t *run)
{
	const json_t *probes = json_object_get(run, "extra_probes"), *p;
	size_t i;

	if (!json_array_size(probes))
		return;
	cp_buf_puts(
		b,
		"<h3>Extra probes</h3><table class=\"sortable\"><thead><tr><th>probe</th><th>file</th>"
		"<th class=\"num\">calls</th><th class=\"num\">per op</th></tr></thead><tbody>");
	json_array_foreach(probes, i, p) {
		cp_buf_puts(b, "<tr>");
		cp_html_td_code(b, cp_json_str(p, "name", NULL));
		cp_html_td_members(b, p, (const char *const[]){ "file", "calls", "per_op", NULL });
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table>\n");
}

/* The same processes by the file they ran: the workers of one binary are
 * one row, with the spread of their reads (paths from the target:
 * escaped). */
static void executables(struct cp_buf *b, const json_t *rows)
{
	const json_t *r;
	size_t i;

	cp_buf_puts(
		b, "<h3>By executable</h3><table class=\"sortable\"><thead><tr>"
		   "<th>executable</th><th class=\"num\">processes</th><th class=\"num\">reads</th>"
		   "<th class=\"num\">least</th><th class=\"num\">most</th>"
		   "<th class=\"num\">requests</th><th class=\"num\">reads per request</th>"
		   "</tr></thead><tbody>");
	json_array_foreach(rows, i, r) {
		cp_buf_puts(b, "<tr>");
		cp_html_td_code(b, cp_json_str(r, "executable", NULL));
		cp_html_td_members(b, r,
				   (const char *const[]){ "processes", "reads",
							  "reads_per_process.min",
							  "reads_per_process.max", "requests",
							  "reads_per_request", NULL });
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table>\n");
}

/* The processes a run counted when run followed the target's forks: one
 * row each, the target first (their commands come from the target:
 * escaped). */
static void processes(struct cp_buf *b, const json_t *run)
{
	const json_t *rows = json_object_get(run, "processes"), *r;
	size_t i;

	if (json_array_size(rows) < 2)
		return;
	cp_buf_printf(
		b,
		"<h3>Processes (%zu, the target first)</h3><table class=\"sortable\"><thead><tr>"
		"<th class=\"num\">pid</th><th class=\"num\">parent</th><th>command</th>"
		"<th class=\"num\">reads</th><th class=\"num\">requests</th>"
		"<th class=\"num\">reads per request</th><th>note</th></tr></thead><tbody>",
		json_array_size(rows));
	json_array_foreach(rows, i, r) {
		cp_buf_puts(b, "<tr>");
		cp_html_td_members(b, r, (const char *const[]){ "pid", "parent", NULL });
		cp_html_td_code(b, cp_json_str(r, "command", NULL));
		cp_html_td_members(b, r,
				   (const char *const[]){ "reads", "requests", "reads_per_request",
							  NULL });
		cp_buf_puts(b, "<td>");
		cp_buf_puts(b, json_is_true(json_object_get(r, "execed")) ?
				       "exec()ed another program: not counted" :
			       !json_is_true(json_object_get(r, "counted")) ? "not counted" :
			       json_is_null(json_object_get(r, "exit_s"))   ? "running at the end" :
									      "");
		cp_buf_puts(b, "</td></tr>");
	}
	cp_buf_puts(b, "</tbody></table>\n");
	executables(b, json_object_get(run, "executables"));
}

static void counters(struct cp_buf *b, const json_t *run)
{
	const json_t *cs = json_object_get(run, "counters"), *c;
	const char *name;

	cp_buf_puts(b, "<h3>Counters per op</h3>");
	if (!json_object_size(cs)) {
		cp_buf_puts(b, "<p class=\"na\">No counters were recorded.</p>\n");
		return;
	}
	cp_buf_puts(
		b,
		"<table class=\"sortable counters\"><thead><tr><th>event</th><th class=\"num\">value</th><th>unit</th>"
		"<th class=\"num\">per op</th><th>scaled</th><th class=\"num\">running</th></tr></thead><tbody>");
	json_object_foreach((json_t *)cs, name, c) {
		double ratio;

		cp_buf_puts(b, "<tr>");
		cp_html_td_code(b, name);
		if (json_is_false(json_object_get(c, "supported"))) {
			cp_buf_puts(
				b,
				"<td colspan=\"5\" class=\"unsupported\" data-v=\"\">unsupported");
			if (cp_json_str(c, "reason", NULL)) {
				cp_buf_puts(b, ": ");
				cp_buf_text(b, cp_json_str(c, "reason", NULL));
			}
			cp_buf_puts(b, "</td></tr>");
			continue;
		}
		cp_html_td_members(
			b, c, (const char *const[]){ "value", "unit", "per_op", "scaled", NULL });
		if (cp_rj_num(c, "running_ratio", &ratio))
			cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.0f%%</td>", ratio,
				      100 * ratio);
		else
			cp_buf_puts(b, "<td class=\"na\">n/a</td>");
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table>\n");
}

/* Why a run has no flame graph: it was profiled without --stacks (no
 * "stacks" member), or with it and no read had a stack to record. */
static void no_stacks(struct cp_buf *b, const json_t *run)
{
	double total = 0;

	cp_rj_num(json_object_get(run, "clock_reads"), "total", &total);
	if (!json_is_array(json_object_get(run, "stacks")))
		cp_buf_puts(b,
			    "<p class=\"na\">This run was profiled without --stacks, so it has no "
			    "stacks (profile with --stacks to record them).</p>\n");
	else if (total <= 0)
		cp_buf_puts(
			b, "<p class=\"na\">This run was profiled with --stacks, but no clock read "
			   "was seen in its window: there is no stack to show.</p>\n");
	else
		cp_buf_printf(
			b,
			"<p class=\"na\">This run was profiled with --stacks, but none of its "
			"%.0f clock reads had a user stack that could be recorded%s.</p>\n",
			total,
			json_array_size(json_object_get(run, "warnings")) ? " (see the warnings)" :
									    "");
}

/* The flame graph of a run's stacks (st, one side), its data in entry. */
static int flame_figure(struct cp_buf *b, const struct cp_stacks *st, size_t index, double ops,
			json_t *entry)
{
	double div[2] = { isnan(ops) ? 1 : ops, 1 };
	json_t *fj = cp_stacks_to_json(st, 1);

	if (!fj)
		return -1;
	json_object_set_new(fj, "total", json_real(st->total[0]));
	json_object_set_new(fj, "div", json_real(div[0]));
	json_object_set_new(fj, "unit", json_string(isnan(ops) ? "reads" : "reads/op"));
	json_object_set_new(entry, "flame", fj);
	cp_buf_printf(
		b,
		"<figure class=\"flamegraph\" id=\"flame-%zu\" data-flame=\"run\" data-run=\"%zu\">"
		"<figcaption>Flame graph of ",
		index, index);
	cp_html_num(b, st->total[0]);
	cp_buf_printf(
		b,
		" clock reads in %zu distinct stacks (root at top; width is the share of reads)</figcaption>"
		"<div class=\"plot\"></div>",
		st->nstacks);
	cp_report_function_table(b, st, 1, div, isnan(ops) ? "reads" : "per op");
	cp_buf_puts(b, "</figure>\n");
	return 0;
}

static int flame(struct cp_buf *b, const json_t *run, size_t index, json_t *entry)
{
	struct cp_stacks st = { 0 };
	int rc = 0;

	cp_buf_printf(b, "<h3 id=\"stacks-%zu\">Clock-read stacks</h3>", index);
	cp_stacks_add(&st, json_object_get(run, "stacks"), 0);
	if (st.failed)
		rc = -1;
	else if (!st.nstacks)
		no_stacks(b, run);
	else
		rc = flame_figure(b, &st, index, cp_report_run_ops(run), entry);
	cp_stacks_free(&st);
	return rc;
}

int cp_report_run_section(struct cp_buf *b, const json_t *run, size_t index, size_t nruns,
			  json_t *data)
{
	const json_t *target = json_object_get(run, "target");
	json_t *runs = json_object_get(data, "runs"), *entry = json_object();
	const json_t *hist = json_object_get(json_object_get(run, "per_request"), "histogram");
	double pid;

	if (!entry || json_array_append_new(runs, entry))
		return -1;
	json_object_set_new(entry, "hist",
			    json_is_array(hist) ? json_deep_copy(hist) : json_null());
	cp_buf_printf(b, "<section class=\"run\" id=\"run-%zu\"><h2>", index);
	if (nruns > 1)
		cp_buf_printf(b, "Run %zu of %zu: ", index + 1, nruns);
	else
		cp_buf_puts(b, "Run: ");
	cp_buf_puts(b, "<code>");
	cp_buf_text(b, cp_json_str(target, "comm", NULL) ? cp_json_str(target, "comm", NULL) : "?");
	cp_buf_puts(b, "</code>");
	if (cp_rj_num(target, "pid", &pid))
		cp_buf_printf(b, " (pid %.0f)", pid);
	cp_buf_puts(b, "</h2>\n");
	cp_report_run_facts(b, run);
	headline(b, run);
	measures_table(b, run);
	clock_reads(b, run);
	histogram(b, run, index);
	processes(b, run);
	call_sites(b, run);
	cp_report_anatomy(b, run, index);
	extra_probes(b, run);
	counters(b, run);
	if (flame(b, run, index, entry))
		return -1;
	cp_buf_puts(b, "</section>\n");
	return b->failed ? -1 : 0;
}
