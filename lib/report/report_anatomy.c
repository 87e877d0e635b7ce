/* report_anatomy.c - the "Anatomy of a request" section of a run report,
 * written when run.json has "anatomy" (docs/run-json.md, docs/report.md):
 * what was sampled and whether reuse was judged, the reads that could
 * reuse an earlier value (largest saving first), the common shapes and
 * their shares, and each shape as a row of the timeline
 * (report_timeline.c). Tables and timeline are written here, escaped, so
 * the section reads without JavaScript. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_file.h"
#include "report_anatomy.h"
#include "report_html.h"
#include "report_sections.h"

/* A name cell: the read (or any frame) with its callers, escaped. */
static void name_cell(struct cp_buf *b, const json_t *frame)
{
	struct cp_buf plain = { 0 };

	cp_buf_puts(b, "<td><code>");
	if (frame)
		cp_anatomy_read_label(&plain, frame, 1, 1);
	cp_buf_text(b, frame ? plain.data : "(unknown read)");
	cp_buf_puts(b, "</code></td>");
	cp_buf_free(&plain);
}

static void ns_cell(struct cp_buf *b, const json_t *v)
{
	if (!json_is_number(v)) {
		cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
		return;
	}
	cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", json_number_value(v));
	cp_html_ns(b, json_number_value(v));
	cp_buf_puts(b, "</td>");
}

static void share_cell(struct cp_buf *b, const json_t *v)
{
	if (!json_is_number(v))
		cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
	else
		cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.1f%%</td>",
			      json_number_value(v), 100 * json_number_value(v));
}

/* What was sampled, and the notes a reader needs before the figures: not
 * judged (and why), sampled rather than every request, requests left out. */
static void intro(struct cp_buf *b, const json_t *a)
{
	double sampled = NAN, requests = NAN, size = NAN, truncated = 0, gap = NAN, share = NAN;

	cp_rj_num(a, "sampled_requests", &sampled);
	cp_rj_num(a, "requests", &requests);
	cp_rj_num(a, "sample_size", &size);
	cp_rj_num(a, "truncated_requests", &truncated);
	cp_rj_num(a, "reuse_gap_ns", &gap);
	cp_rj_num(a, "reuse_share", &share);
	cp_buf_puts(b, "<p class=\"anatomy-sample\">The reads of ");
	cp_html_num(b, sampled);
	cp_buf_puts(b, " sampled requests in order, each on its own thread (of ");
	cp_html_num(b, requests);
	cp_buf_puts(b, " complete requests in the window; <code>--anatomy=");
	cp_html_num(b, size);
	cp_buf_puts(b, "</code>). A read could reuse an earlier read of the same clock when no "
		       "syscall and no voluntary switch lies between them and they are less than ");
	cp_html_ns(b, gap);
	if (isfinite(share))
		cp_buf_printf(b,
			      " apart, in at least %.4g%% of the sampled requests with both.</p>",
			      100 * share);
	else
		cp_buf_puts(b, " apart, in most of the sampled requests with both.</p>");
	if (!json_is_true(json_object_get(a, "judged"))) {
		cp_buf_puts(b,
			    "<p class=\"note anatomy-not-judged\">Reusable reads were not judged");
		if (cp_json_str(a, "not_judged_because", NULL)) {
			cp_buf_puts(b, ": ");
			cp_buf_text(b, cp_json_str(a, "not_judged_because", NULL));
		}
		cp_buf_puts(b, ". The shapes below are the order of the reads only.</p>");
	}
	if (!json_is_true(json_object_get(a, "every_request")))
		cp_buf_puts(b,
			    "<p class=\"note anatomy-sampled\">Sampled: not every request was "
			    "logged, so the shapes' shares and the reads per op that could go are "
			    "estimated from the sample.</p>");
	if (truncated > 0) {
		cp_buf_puts(b, "<p class=\"note anatomy-truncated\">");
		cp_html_num(b, truncated);
		cp_buf_puts(b,
			    " sampled requests made more reads than the log holds: they are left "
			    "out of the shapes and of the rule.</p>");
	}
}

static double per_op_of(const json_t *e)
{
	double v;

	return cp_rj_num(e, "per_op", &v) && isfinite(v) ? v : -1;
}

static int by_saving(const void *x, const void *y)
{
	double a = per_op_of(*(json_t *const *)x), c = per_op_of(*(json_t *const *)y);

	return (a < c) - (a > c);
}

static void reusable_row(struct cp_buf *b, const json_t *a, const json_t *e)
{
	const json_t *read = cp_anatomy_read(a, json_object_get(e, "read"));
	const json_t *gap = json_object_get(e, "gap_ns");

	cp_buf_puts(b, "<tr>");
	name_cell(b, read);
	name_cell(b, cp_anatomy_read(a, json_object_get(e, "reuses")));
	cp_html_td_json(b, json_object_get(read, "clock"));
	share_cell(b, json_object_get(e, "share"));
	ns_cell(b, json_object_get(gap, "p50"));
	ns_cell(b, json_object_get(gap, "p99"));
	cp_html_td_json(b, json_object_get(e, "per_op"));
	cp_buf_puts(b, "</tr>");
}

/* The "could reuse" list, largest saving (reads per op) first. */
static void reusable_table(struct cp_buf *b, const json_t *a)
{
	const json_t *list = json_object_get(a, "reusable");
	size_t n = json_array_size(list);
	const json_t **sorted;
	double total;

	if (!json_is_true(json_object_get(a, "judged")))
		return;
	cp_buf_puts(b, "<h4>Could reuse</h4>");
	if (!n) {
		cp_buf_puts(b, "<p class=\"na anatomy-none\">No read could reuse an earlier one: "
			       "every read follows a syscall, a switch or a longer gap.</p>");
		return;
	}
	if (!(sorted = malloc(n * sizeof(*sorted)))) {
		b->failed = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = json_array_get(list, i);
	qsort(sorted, n, sizeof(*sorted), by_saving);
	cp_buf_puts(b, "<table class=\"sortable reusable\"><caption>Reads that could reuse the "
		       "value of an earlier read (largest saving first)");
	if (cp_rj_num(a, "reusable_per_op", &total)) {
		cp_buf_puts(b, ": ");
		cp_html_num(b, total);
		cp_buf_puts(b, " reads per op could go");
	}
	cp_buf_puts(
		b,
		"</caption><thead><tr><th>read</th><th>could reuse</th><th>clock</th>"
		"<th class=\"num\">share</th><th class=\"num\">gap p50</th>"
		"<th class=\"num\">gap p99</th><th class=\"num\">reads/op</th></tr></thead><tbody>");
	for (size_t i = 0; i < n; i++)
		reusable_row(b, a, sorted[i]);
	cp_buf_puts(b, "</tbody></table><p class=\"legend\">The rule sees when the clock was "
		       "read, not what the program does with the value: check that the earlier "
		       "value may stand for the later one.</p>");
	free(sorted);
}

/* The common shapes with their shares, then the requests in none. */
static void shapes_table(struct cp_buf *b, const json_t *a)
{
	const json_t *shapes = json_object_get(a, "shapes"), *s;
	size_t i;

	cp_buf_puts(b,
		    "<table class=\"sortable shapes\"><caption>Common shapes: requests whose "
		    "reads came in the same order</caption><thead><tr><th class=\"num\">shape</th>"
		    "<th class=\"num\">requests</th><th class=\"num\">share</th>"
		    "<th class=\"num\">reads</th></tr></thead><tbody>");
	json_array_foreach(shapes, i, s) {
		cp_buf_printf(b, "<tr><td class=\"num\" data-v=\"%zu\">%zu</td>", i + 1, i + 1);
		cp_html_td_json(b, json_object_get(s, "requests"));
		share_cell(b, json_object_get(s, "share"));
		cp_html_td_num(b, (double)json_array_size(json_object_get(s, "steps")));
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody><tfoot><tr><td>other</td>");
	cp_html_td_json(b, json_object_get(a, "other_requests"));
	cp_buf_puts(b,
		    "<td colspan=\"2\">in shapes less common than these</td></tr></tfoot></table>");
}

static void step_row(struct cp_buf *b, const json_t *a, const json_t *steps, size_t k)
{
	const json_t *st = json_array_get(steps, k), *sw = json_object_get(st, "switches");
	const json_t *reuse;
	size_t from = 0;

	cp_buf_printf(b, "<tr><td class=\"num\" data-v=\"%zu\">%zu</td>", k + 1, k + 1);
	name_cell(b, cp_anatomy_read(a, json_object_get(st, "read")));
	ns_cell(b, json_object_get(st, "at_ns"));
	ns_cell(b, json_object_get(st, "gap_ns"));
	cp_buf_puts(b, "<td>");
	cp_html_json_join(b, json_object_get(st, "syscalls"), ", ");
	cp_buf_puts(b, "</td>");
	cp_html_td_members(b, sw, (const char *const[]){ "voluntary", "preempted", NULL });
	reuse = cp_anatomy_step_reuse(a, steps, k, &from);
	if (reuse) {
		cp_buf_printf(b, "<td class=\"reuse\">could reuse %zu. (", from + 1);
		cp_html_num(b, 100 * json_number_value(json_object_get(reuse, "share")));
		cp_buf_puts(b, "%)</td></tr>");
	} else {
		cp_buf_puts(b, "<td></td></tr>");
	}
}

/* One row of the timeline: the shape drawn, its steps in a table. */
static void shape_row(struct cp_buf *b, const json_t *a, const json_t *shape, size_t index,
		      size_t s)
{
	const json_t *steps = json_object_get(shape, "steps");
	double share = NAN;

	cp_rj_num(shape, "share", &share);
	cp_buf_printf(b,
		      "<div class=\"shape\" id=\"shape-%zu-%zu\"><p class=\"shape-head\">"
		      "Shape %zu: ",
		      index, s, s + 1);
	cp_html_num(b, json_number_value(json_object_get(shape, "requests")));
	cp_buf_puts(b, " requests (");
	if (isfinite(share))
		cp_buf_printf(b, "%.1f%%", 100 * share);
	else
		cp_buf_puts(b, "n/a");
	cp_buf_printf(b, "), %zu reads</p>", json_array_size(steps));
	cp_report_timeline(b, a, shape, index, s);
	cp_buf_puts(b, "<details><summary>its reads in order</summary><table class=\"steps\">"
		       "<thead><tr><th class=\"num\">#</th><th>read</th><th class=\"num\">at</th>"
		       "<th class=\"num\">gap</th><th>syscalls before</th>"
		       "<th class=\"num\">voluntary switches</th><th class=\"num\">preempted</th>"
		       "<th>reuse</th></tr></thead><tbody>");
	for (size_t k = 0; k < json_array_size(steps); k++)
		step_row(b, a, steps, k);
	cp_buf_puts(b, "</tbody></table></details></div>");
}

/* Each shape as a timeline, with its reads in order. */
static void timelines(struct cp_buf *b, const json_t *a, size_t index)
{
	const json_t *shape;
	size_t s;

	if (json_array_size(json_object_get(a, "shapes"))) {
		cp_buf_printf(b,
			      "<figure class=\"timelines\" id=\"timeline-%zu\"><figcaption>Each "
			      "common shape as a timeline: reads are marks at their median time "
			      "since the request's first read (marks too close to tell apart are "
			      "spread), syscalls and switches between two reads above the line, a "
			      "read that could reuse an earlier one ringed and joined to it"
			      "</figcaption>",
			      index);
		json_array_foreach(json_object_get(a, "shapes"), s, shape)
			shape_row(b, a, shape, index, s);
		cp_buf_puts(b, "</figure>");
	} else {
		cp_buf_puts(b,
			    "<p class=\"na\">No request was sampled whole: there is no shape.</p>");
	}
}

void cp_report_anatomy(struct cp_buf *b, const json_t *run, size_t index)
{
	const json_t *a = json_object_get(run, "anatomy");

	if (!json_is_object(a))
		return;
	cp_buf_printf(b,
		      "<h3 id=\"anatomy-%zu\">Anatomy of a request</h3>"
		      "<div class=\"anatomy\">",
		      index);
	intro(b, a);
	reusable_table(b, a);
	cp_buf_puts(b, "<h4>Shapes</h4>");
	shapes_table(b, a);
	timelines(b, a, index);
	cp_buf_puts(b, "</div>\n");
}

/* A reusable read of base that head no longer lists (verdict.json). */
static void removed_row(struct cp_buf *b, const json_t *e)
{
	const json_t *gap = json_object_get(e, "gap_ns");

	cp_buf_puts(b, "<tr>");
	name_cell(b, json_object_get(e, "read"));
	name_cell(b, json_object_get(e, "reuses"));
	share_cell(b, json_object_get(e, "share"));
	ns_cell(b, json_object_get(gap, "p50"));
	ns_cell(b, json_object_get(gap, "p99"));
	cp_html_td_json(b, json_object_get(e, "per_op"));
	cp_buf_puts(b, json_is_true(json_object_get(e, "still_read")) ?
			       "<td>still read, no longer reusable</td></tr>" :
			       "<td>the read is gone</td></tr>");
}

void cp_report_reusable_removed(struct cp_buf *b, const json_t *verdict)
{
	const json_t *list = json_object_get(verdict, "reusable_removed"), *e;
	size_t i;

	if (!json_array_size(list))
		return;
	cp_buf_puts(b,
		    "<h3>Reusable reads head no longer has</h3><table class=\"sortable "
		    "reusable-removed\"><caption>Reads that could reuse an earlier value in every "
		    "base run and in no head run (as base measured them)</caption><thead><tr>"
		    "<th>read</th><th>could reuse</th><th class=\"num\">share</th>"
		    "<th class=\"num\">gap p50</th><th class=\"num\">gap p99</th>"
		    "<th class=\"num\">reads/op</th><th>in head</th></tr></thead><tbody>");
	json_array_foreach(list, i, e)
		removed_row(b, e);
	cp_buf_puts(b, "</tbody></table>\n");
}
