/* report_verdict.c - the verdict section of the HTML report: what
 * `clockprof compare` decided (verdict.json, "clockprof.verdict/1") and,
 * when the base and head run files are given too, where the clock reads
 * moved: a differential flame graph and the call sites that appeared,
 * disappeared or were read more or less often per op. Marks follow the
 * other writers: ▲ a change in the worse direction, ▼ in the better one,
 * so nothing relies on colour alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "grow.h"
#include "report_html.h"
#include "report_sections.h"
#include "verdict_file.h"
#include "verdict_measures.h"

static double summary_num(const json_t *summary, const char *key, const char *fallback)
{
	double v;

	if (cp_rj_num(summary, key, &v))
		return v;
	if (fallback && cp_rj_num(summary, fallback, &v))
		return v;
	return NAN;
}

static void headline(struct cp_buf *b, const json_t *v)
{
	const json_t *sum = json_object_get(v, "summary");
	const char *status = cp_json_str(v, "status", NULL);
	double outside = summary_num(sum, "outside_bounds", "regressed");
	double judged = summary_num(sum, "judged", "measures");
	double inconclusive = summary_num(sum, "inconclusive", NULL);
	double improved = summary_num(sum, "improved", NULL);
	static const char *const keys[] = { "measures", "judged",	"within", "regressed",
					    "improved", "inconclusive", "added",  "removed" };

	if (!status)
		status = "unknown";
	cp_buf_puts(b, "<p class=\"verdict-headline st-");
	cp_buf_puts(b, !strcmp(status, "pass") ? "pass" :
		       !strcmp(status, "fail") ? "fail" :
						 "inconclusive");
	cp_buf_puts(b, "\" id=\"verdict-headline\"><strong>");
	cp_buf_text(b, status);
	cp_buf_puts(b, "</strong>: ");
	cp_html_num(b, outside);
	cp_buf_puts(b, " of ");
	cp_html_num(b, judged);
	cp_buf_puts(b, judged == 1 ? " measure outside bounds" : " measures outside bounds");
	if (inconclusive > 0) {
		cp_buf_puts(b, ", ");
		cp_html_num(b, inconclusive);
		cp_buf_puts(b, " inconclusive");
	}
	if (improved > 0) {
		cp_buf_puts(b, ", ");
		cp_html_num(b, improved);
		cp_buf_puts(b, " improved");
	}
	cp_buf_puts(b, "</p>\n<dl class=\"cards\">");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double n = summary_num(sum, keys[i], NULL);

		if (isnan(n))
			continue;
		cp_buf_printf(b, "<div class=\"card st-%s\"><dt>%s</dt><dd><span class=\"big\">",
			      keys[i], keys[i]);
		cp_html_num(b, n);
		cp_buf_puts(b, "</span></dd></div>");
	}
	cp_buf_puts(b, "</dl>\n");
}

static void file_list(struct cp_buf *b, const char *term, const json_t *side)
{
	const json_t *files = json_object_get(side, "files"), *f;
	double runs;
	size_t i;

	cp_buf_puts(b, "<dt>");
	cp_buf_text(b, term);
	cp_buf_puts(b, "</dt><dd>");
	if (cp_rj_num(side, "runs", &runs)) {
		cp_html_num(b, runs);
		cp_buf_puts(b, runs == 1 ? " run" : " runs");
	}
	if (json_array_size(files)) {
		cp_buf_puts(b, ": ");
		json_array_foreach(files, i, f) {
			if (i)
				cp_buf_puts(b, ", ");
			cp_buf_puts(b, "<code>");
			cp_html_json_text(b, f);
			cp_buf_puts(b, "</code>");
		}
	}
	cp_buf_puts(b, "</dd>");
}

static void facts(struct cp_buf *b, const json_t *v)
{
	const json_t *bounds = json_object_get(v, "bounds");
	const json_t *method = json_object_get(v, "method");
	double conf;

	cp_buf_puts(
		b,
		"<div class=\"facts\"><dl><dt class=\"group\">Comparison</dt><dd class=\"group\"></dd>");
	file_list(b, "base", json_object_get(v, "base"));
	file_list(b, "head", json_object_get(v, "head"));
	cp_html_fact(b, "created", cp_json_str(v, "created_at", NULL));
	cp_html_fact(b, "clockprof", cp_json_str(json_object_get(v, "tool"), "version", NULL));
	cp_buf_puts(b, "</dl><dl><dt class=\"group\">Bounds</dt><dd class=\"group\"></dd>");
	cp_html_fact(b, "file",
		     cp_json_str(bounds, "file", NULL) ? cp_json_str(bounds, "file", NULL) :
							 "none: built-in defaults");
	cp_html_fact(b, "sha256", cp_json_str(bounds, "sha256", NULL));
	if (json_is_object(method)) {
		cp_buf_puts(b, "</dl><dl><dt class=\"group\">Method</dt><dd class=\"group\"></dd>");
		if (cp_rj_num(method, "confidence", &conf)) {
			cp_buf_printf(b, "<dt>confidence</dt><dd>%.0f%%</dd>", 100 * conf);
		}
		cp_html_fact(b, "interval", cp_json_str(method, "interval", NULL));
		cp_html_fact(b, "test", cp_json_str(method, "test", NULL));
		cp_html_fact(b, "correction", cp_json_str(method, "correction", NULL));
	}
	cp_buf_puts(b, "</dl></div>\n");
}

static void warnings(struct cp_buf *b, const json_t *v)
{
	const json_t *mm = json_object_get(v, "env_mismatch");
	const json_t *w = json_object_get(v, "warnings"), *x;
	const json_t *why = json_object_get(v, "inconclusive_reasons");
	size_t i;

	if (!json_array_size(mm) && !json_array_size(w) && !json_array_size(why))
		return;
	cp_buf_puts(b, "<div class=\"warnings\" role=\"note\"><h3>Warnings</h3><ul>");
	json_array_foreach(mm, i, x) {
		if (!json_is_object(x)) {
			cp_buf_puts(b, "<li>environment differs: ");
			cp_html_json_text(b, x);
			cp_buf_puts(b, "</li>");
			continue;
		}
		cp_buf_puts(b, "<li>Environment differs in <code>");
		cp_buf_text(b, cp_json_str(x, "field", NULL));
		cp_buf_puts(b, "</code>: base ");
		cp_html_json_text(b, json_object_get(x, "base"));
		cp_buf_puts(b, ", head ");
		cp_html_json_text(b, json_object_get(x, "head"));
		if (cp_json_str(x, "effect", NULL) &&
		    !strcmp(cp_json_str(x, "effect", NULL), "inconclusive"))
			cp_buf_puts(b, " (sampled measures are judged inconclusive)");
		cp_buf_puts(b, "</li>");
	}
	/* Run-level reasons the verdict is inconclusive (cut-short runs),
	 * first: they say the numbers below may mean nothing. */
	json_array_foreach(why, i, x) {
		cp_buf_puts(b, "<li><strong>Inconclusive:</strong> ");
		cp_html_json_text(b, x);
		cp_buf_puts(b, "</li>");
	}
	json_array_foreach(w, i, x) {
		cp_buf_puts(b, "<li>");
		cp_html_json_text(b, x);
		cp_buf_puts(b, "</li>");
	}
	cp_buf_puts(b, "</ul></div>\n");
}

static void side_cell(struct cp_buf *b, const json_t *side)
{
	double med, lo, hi, n;

	if (!cp_rj_num(side, "median", &med)) {
		cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
		return;
	}
	cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">", med);
	cp_html_num(b, med);
	if (cp_rj_num(side, "lo", &lo) && cp_rj_num(side, "hi", &hi) && lo != hi) {
		cp_buf_puts(b, "<small> ");
		cp_html_num(b, lo);
		cp_buf_puts(b, "–");
		cp_html_num(b, hi);
		cp_buf_puts(b, "</small>");
	}
	if (cp_rj_num(side, "n", &n))
		cp_buf_printf(b, "<small> n=%.0f</small>", n);
	cp_buf_puts(b, "</td>");
}

static void change_cell(struct cp_buf *b, const json_t *m)
{
	const json_t *pct = json_object_get(m, "change_pct");
	const json_t *abs = json_object_get(m, "change_abs");
	const char *dir = cp_json_str(m, "direction", NULL);
	const char *mark = !dir			  ? "" :
			   !strcmp(dir, "worse")  ? "▲ " :
			   !strcmp(dir, "better") ? "▼ " :
						    "";
	double p, lo, hi;

	if (cp_rj_num(pct, "point", &p)) {
		cp_buf_printf(b, "<td class=\"num change\" data-v=\"%.17g\">%s", p, mark);
		cp_html_pct(b, p);
		if (cp_rj_num(pct, "lo", &lo) && cp_rj_num(pct, "hi", &hi) &&
		    (lo != p || hi != p)) {
			/* The interval's own ends: it is rarely symmetric. */
			cp_buf_puts(b, "<small> [");
			cp_html_pct(b, lo);
			cp_buf_puts(b, ", ");
			cp_html_pct(b, hi);
			cp_buf_puts(b, "]</small>");
		}
		cp_buf_puts(b, "</td>");
	} else if (cp_rj_num(abs, "point", &p)) {
		cp_buf_printf(b, "<td class=\"num change\" data-v=\"%.17g\">%s%s", p, mark,
			      p > 0 ? "+" : "");
		cp_html_num(b, p);
		cp_buf_puts(b, " ");
		cp_buf_text(b, cp_json_str(m, "unit", NULL));
		cp_buf_puts(b, "</td>");
	} else {
		cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">n/a</td>");
	}
}

static void status_cell(struct cp_buf *b, const json_t *m)
{
	const char *st = cp_json_str(m, "status", NULL);
	const char *dir = cp_json_str(m, "direction", NULL);
	const char *mark = "";

	if (st && !strcmp(st, "added"))
		mark = "+ ";
	else if (st && !strcmp(st, "removed"))
		mark = "− ";
	else if (dir && !strcmp(dir, "worse"))
		mark = "▲ ";
	else if (dir && !strcmp(dir, "better"))
		mark = "▼ ";
	else if (st && !strcmp(st, "within"))
		mark = "= ";
	cp_buf_printf(b, "<td class=\"status st-%s\" data-v=\"%d\">%s",
		      st && cp_verdict_status_rank(st) < 6 ? st : "unknown",
		      cp_verdict_status_rank(st), mark);
	cp_buf_text(b, st ? st : "unknown");
	cp_buf_puts(b, "</td>");
}

/* Why a measure has its status: the reason, the lines a regressed
 * per-site measure gained (file names from the target: escaped), the
 * measure's warnings. */
static void why_cell(struct cp_buf *b, const json_t *m)
{
	const json_t *x;
	size_t k;

	cp_buf_puts(b, "<td class=\"why\">");
	cp_buf_text(b, cp_json_str(m, "reason", NULL));
	json_array_foreach(json_object_get(m, "lines"), k, x) {
		const char *path = cp_json_str(x, "repo_path", NULL);

		cp_buf_puts(b, "<br><small class=\"gained\">gained at <code>");
		cp_buf_text(b, path ? path : cp_json_str(x, "file", ""));
		cp_buf_printf(b, ":%lld</code> ",
			      (long long)json_integer_value(json_object_get(x, "line")));
		cp_html_num(b, json_number_value(json_object_get(x, "base")));
		cp_buf_puts(b, " → ");
		cp_html_num(b, json_number_value(json_object_get(x, "head")));
		cp_buf_puts(b, "</small>");
	}
	json_array_foreach(json_object_get(m, "warnings"), k, x) {
		cp_buf_puts(b, "<br><small>⚠ ");
		cp_html_json_text(b, x);
		cp_buf_puts(b, "</small>");
	}
	cp_buf_puts(b, "</td>");
}

static void measures(struct cp_buf *b, const json_t *v, json_t *data)
{
	const json_t *ms = json_object_get(v, "measures"), *m;
	size_t i;

	json_object_set_new(data, "verdict", json_pack("{sO}", "measures", (json_t *)ms));
	cp_buf_puts(
		b,
		"<h3>Measures</h3>\n<figure class=\"chart\" id=\"dumbbell\" data-chart=\"dumbbell\">"
		"<figcaption>Before and after: each measure's head median against its base median "
		"(base = 1×, log scale), with the head's interval and the bound</figcaption>"
		"<div class=\"plot\"></div>"
		"<div class=\"scroll full\"><table class=\"sortable measures verdict-measures\"><caption>Every measure, base vs head</caption>"
		"<thead><tr><th>measure</th><th>unit</th><th>kind</th><th class=\"num\">base</th><th class=\"num\">head</th>"
		"<th class=\"num\">change [interval]</th><th>bound</th><th class=\"num\">p</th><th>status</th><th>why</th></tr></thead><tbody>");
	json_array_foreach(ms, i, m) {
		const json_t *p = json_object_get(m, "p_adjusted");

		if (!json_is_number(p))
			p = json_object_get(m, "p_value");
		cp_buf_printf(b, "<tr class=\"st-%s\">",
			      cp_verdict_status_rank(cp_json_str(m, "status", NULL)) < 6 ?
				      cp_json_str(m, "status", NULL) :
				      "unknown");
		cp_html_td_code(b, cp_json_str(m, "name", NULL));
		cp_html_td_json(b, json_object_get(m, "unit"));
		cp_html_td_json(b, json_object_get(m, "kind"));
		side_cell(b, json_object_get(m, "base"));
		side_cell(b, json_object_get(m, "head"));
		change_cell(b, m);
		cp_html_td_json(b, json_object_get(m, "bound"));
		if (json_is_number(p))
			cp_buf_printf(b, "<td class=\"num\" data-v=\"%.17g\">%.2g</td>",
				      json_number_value(p), json_number_value(p));
		else
			cp_buf_puts(b, "<td class=\"num na\" data-v=\"\">–</td>");
		status_cell(b, m);
		why_cell(b, m);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table></div></figure>\n");
}

/* Per-op divisor of one side: its total ops when every run has ops, else
 * the number of runs (the unit becomes reads/run). */
static double side_div(json_t *const *runs, size_t n, int *per_op)
{
	double ops = 0, v;

	for (size_t i = 0; i < n; i++) {
		if (!cp_rj_num(runs[i], "ops", &v) || v <= 0) {
			*per_op = 0;
			return (double)n;
		}
		ops += v;
	}
	return ops;
}

/* What the base and head runs' empty stacks say: recorded with none to
 * show, or not recorded (run.json has "stacks": [] under --stacks). */
static void no_diff_stacks(struct cp_buf *b, json_t *const *base, size_t nbase, json_t *const *head,
			   size_t nhead)
{
	int recorded = 0;

	for (size_t i = 0; i < nbase + nhead; i++)
		recorded |= json_is_array(
			json_object_get(i < nbase ? base[i] : head[i - nbase], "stacks"));
	cp_buf_puts(
		b,
		recorded ?
			"<p class=\"na\">The runs were profiled with --stacks, but no clock read "
			"had a user stack that could be recorded.</p>\n" :
			"<p class=\"na\">The run files have no stacks (profile with --stacks to record them).</p>\n");
}

/* The differential flame graph of st (two sides), its data in data. */
static int diff_flame_figure(struct cp_buf *b, const struct cp_stacks *st, const double div[2],
			     const char *unit, json_t *data)
{
	json_t *fj = cp_stacks_to_json(st, 2);

	if (!fj)
		return -1;
	json_object_set_new(fj, "div", json_pack("[ff]", div[0], div[1]));
	json_object_set_new(fj, "total", json_pack("[ff]", st->total[0], st->total[1]));
	json_object_set_new(fj, "unit", json_string(unit));
	json_object_set_new(data, "diff", fj);
	cp_buf_puts(b, "<figure class=\"flamegraph\" id=\"flame-diff\" data-flame=\"diff\">"
		       "<figcaption>Differential flame graph of clock reads (");
	cp_buf_text(b, unit);
	cp_buf_printf(
		b,
		"), %zu distinct stacks: width is the head (switch to base to see what went away); "
		"frames with more reads in head are marked ▲ and hatched, fewer ▼ and dotted</figcaption>"
		"<div class=\"plot\"></div>",
		st->nstacks);
	cp_report_function_table(b, st, 2, div, unit);
	cp_buf_puts(b, "</figure>\n");
	return 0;
}

static int diff_flame(struct cp_buf *b, json_t *const *base, size_t nbase, json_t *const *head,
		      size_t nhead, const double div[2], const char *unit, json_t *data)
{
	struct cp_stacks st = { 0 };
	int rc = 0;

	cp_buf_puts(b, "<h3 id=\"diff-stacks\">Clock-read stacks: base vs head</h3>");
	for (size_t i = 0; i < nbase; i++)
		cp_stacks_add(&st, json_object_get(base[i], "stacks"), 0);
	for (size_t i = 0; i < nhead; i++)
		cp_stacks_add(&st, json_object_get(head[i], "stacks"), 1);
	if (st.failed)
		rc = -1;
	else if (!st.nstacks)
		no_diff_stacks(b, base, nbase, head, nhead);
	else
		rc = diff_flame_figure(b, &st, div, unit, data);
	cp_stacks_free(&st);
	return rc;
}

struct site {
	const json_t *json; /* the first occurrence, for its cells */
	double count[2];
	double per_op[2]; /* summed over the side's runs */
	int no_per_op;	  /* a run gave it none (no ops) */
};

struct sites {
	struct site *v;
	size_t n, cap;
};

/* A key a run lacks is null: runs written before "inlined_at" was added
 * lack it where newer ones say null (run-json.md). */
static const json_t *site_field(const json_t *s, const char *key)
{
	const json_t *v = json_object_get(s, key);

	return v ? v : json_null();
}

static int same_site(const json_t *a, const json_t *b)
{
	static const char *const keys[] = { "function", "file", "line", "via", "inlined_at" };

	for (int i = 0; i < 5; i++)
		if (!json_equal(site_field(a, keys[i]), site_field(b, keys[i])))
			return 0;
	return 1;
}

static int gather_sites(struct sites *all, json_t *const *runs, size_t nruns, int side)
{
	for (size_t r = 0; r < nruns; r++) {
		const json_t *cs = json_object_get(runs[r], "call_sites"), *s;
		size_t i, k;

		json_array_foreach(cs, i, s) {
			double c = 0;

			cp_rj_num(s, "count", &c);
			for (k = 0; k < all->n; k++)
				if (same_site(all->v[k].json, s))
					break;
			if (k == all->n) {
				if (cp_grow(&all->v, &all->cap, all->n + 1, sizeof(*all->v)))
					return -1;
				all->v[all->n++] = (struct site){ .json = s };
			}
			all->v[k].count[side] += c;
			if (json_is_number(json_object_get(s, "per_op")))
				all->v[k].per_op[side] += json_number_value(
					json_object_get(s, "per_op"));
			else
				all->v[k].no_per_op = 1;
		}
	}
	return 0;
}

static void site_table(struct cp_buf *b, const char *title, const struct site *s, size_t n,
		       int side, double div, const char *unit)
{
	size_t rows = 0;

	for (size_t i = 0; i < n; i++)
		rows += s[i].count[side] > 0 && s[i].count[!side] == 0;
	cp_buf_puts(b, "<div class=\"scroll\"><table class=\"sortable sites\"><caption>");
	cp_buf_text(b, title);
	cp_buf_printf(
		b,
		" (%zu)</caption><thead><tr><th>function</th><th>file:line</th><th>via</th><th>module</th><th class=\"num\">",
		rows);
	cp_buf_text(b, unit);
	cp_buf_puts(b, "</th></tr></thead><tbody>");
	if (!rows)
		cp_buf_puts(b, "<tr><td colspan=\"5\" class=\"na\">none</td></tr>");
	for (size_t i = 0; i < n; i++) {
		if (!(s[i].count[side] > 0 && s[i].count[!side] == 0))
			continue;
		cp_buf_puts(b, side ? "<tr class=\"more\">" : "<tr class=\"less\">");
		cp_report_site_cells(b, s[i].json);
		cp_html_td_num(b, s[i].count[side] / div);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table></div>");
}

/* A site on both sides whose mean reads per op (the runs' per_op) are not
 * the same reads (cp_same_reads): a read added or removed at a line that
 * reads the clock on both sides. */
static int moved(const struct site *s, const size_t runs[2])
{
	double base = s->per_op[0] / (double)runs[0], head = s->per_op[1] / (double)runs[1];

	return !s->no_per_op && s->count[0] > 0 && s->count[1] > 0 && !cp_same_reads(base, head);
}

static void moved_table(struct cp_buf *b, const struct site *s, size_t n, const size_t runs[2])
{
	size_t rows = 0;

	for (size_t i = 0; i < n; i++)
		rows += moved(&s[i], runs);
	cp_buf_printf(
		b,
		"<div class=\"scroll\"><table class=\"sortable sites\"><caption>◆ read more or less "
		"often (%zu)</caption><thead><tr><th>function</th><th>file:line</th><th>via</th>"
		"<th>module</th><th class=\"num\">base reads/op</th><th class=\"num\">head reads/op</th>"
		"</tr></thead><tbody>",
		rows);
	if (!rows)
		cp_buf_puts(b, "<tr><td colspan=\"6\" class=\"na\">none</td></tr>");
	for (size_t i = 0; i < n; i++) {
		double base = s[i].per_op[0] / (double)runs[0];
		double head = s[i].per_op[1] / (double)runs[1];

		if (!moved(&s[i], runs))
			continue;
		cp_buf_puts(b, head > base ? "<tr class=\"more\">" : "<tr class=\"less\">");
		cp_report_site_cells(b, s[i].json);
		cp_html_td_num(b, base);
		cp_html_td_num(b, head);
		cp_buf_puts(b, "</tr>");
	}
	cp_buf_puts(b, "</tbody></table></div>");
}

static int call_site_changes(struct cp_buf *b, json_t *const *base, size_t nbase,
			     json_t *const *head, size_t nhead, const double div[2],
			     const char *unit)
{
	struct sites all = { 0 };
	struct site *sites;
	size_t n, both = 0;

	if (gather_sites(&all, base, nbase, 0) || gather_sites(&all, head, nhead, 1)) {
		free(all.v);
		return -1;
	}
	sites = all.v;
	n = all.n;
	for (size_t i = 0; i < n; i++)
		both += sites[i].count[0] > 0 && sites[i].count[1] > 0;
	cp_buf_printf(
		b,
		"<h3>Call sites that appeared, disappeared or moved</h3><p>%zu call sites read the clock on both sides.</p><div class=\"row\">",
		both);
	site_table(b, "▲ appeared in head", sites, n, 1, div[1], unit);
	site_table(b, "▼ disappeared from head", sites, n, 0, div[0], unit);
	moved_table(b, sites, n, (const size_t[2]){ nbase, nhead });
	cp_buf_puts(b, "</div>\n");
	free(sites);
	return 0;
}

int cp_report_verdict_section(struct cp_buf *b, const json_t *verdict, json_t *const *base,
			      size_t nbase, json_t *const *head, size_t nhead, json_t *data)
{
	cp_buf_puts(b,
		    "<section class=\"verdict\" id=\"verdict\"><h2>Verdict: base vs head</h2>\n");
	headline(b, verdict);
	facts(b, verdict);
	warnings(b, verdict);
	measures(b, verdict, data);
	cp_report_reusable_removed(b, verdict);
	if (nbase && nhead) {
		int per_op = 1;
		double div[2];
		const char *unit;

		div[0] = side_div(base, nbase, &per_op);
		div[1] = side_div(head, nhead, &per_op);
		if (!per_op) {
			div[0] = (double)nbase;
			div[1] = (double)nhead;
		}
		unit = per_op ? "reads/op" : "reads/run";
		if (diff_flame(b, base, nbase, head, nhead, div, unit, data) ||
		    call_site_changes(b, base, nbase, head, nhead, div, unit))
			return -1;
	} else {
		cp_buf_puts(
			b,
			"<p class=\"na\" id=\"no-runs\">Give the base and head run files too "
			"(clockprof report VERDICT --base RUN... --head RUN...) to see the differential "
			"flame graph and the call sites that appeared, disappeared or moved.</p>\n");
	}
	cp_buf_puts(b, "</section>\n");
	return b->failed ? -1 : 0;
}
