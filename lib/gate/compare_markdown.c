/* compare_markdown.c - see compare_markdown.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_markdown.h"
#include "compare_reusable.h"
#include "compare_table.h"
#include "error.h"
#include "buf.h"
#include "json_file.h"
#include "verdict_file.h"
#include "verdict_measures.h"

#define NAME_CHARS 200
/* Room kept for closing the <details> and the "rows left out" note. */
#define TAIL_RESERVE 512

void cp_markdown_code(char *buf, size_t len, const char *s, size_t max_chars)
{
	char esc[2048], piped[sizeof(esc) * 2];
	size_t run = 0, longest = 0, w = 0, plen;
	int pad;

	if (!len)
		return;
	cp_escape_display(esc, sizeof(esc), s ? s : "", max_chars);
	for (const char *p = esc; *p; p++) {
		if (*p == '|')
			piped[w++] = '\\'; /* GFM table cell escape */
		piped[w++] = *p;
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	piped[w] = '\0';
	plen = w;
	if (!plen) {
		snprintf(buf, len, "(empty)");
		return;
	}
	/* A fence one longer than any backtick run; pad with spaces when the
	 * content starts or ends with a backtick or a space (CommonMark strips
	 * exactly one space from each side when both are there). */
	pad = piped[0] == '`' || piped[0] == ' ' || piped[plen - 1] == '`' ||
	      piped[plen - 1] == ' ';
	w = 0;
	for (size_t i = 0; i <= longest && w + 1 < len; i++)
		buf[w++] = '`';
	if (pad && w + 1 < len)
		buf[w++] = ' ';
	if (w + plen + longest + 3 < len) {
		memcpy(buf + w, piped, plen);
		w += plen;
	}
	if (pad && w + 1 < len)
		buf[w++] = ' ';
	for (size_t i = 0; i <= longest && w + 1 < len; i++)
		buf[w++] = '`';
	buf[w] = '\0';
}

static long long integer(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

/* One table row into row (a fixed buffer). */
static void format_row(char *row, size_t len, const json_t *m, int with_reason)
{
	char name[4096], base[48], head[48], change[96], bound[128], reason[4096];
	const json_t *bnd = json_object_get(m, "bound");
	const char *status = cp_json_str(m, "status", "");

	cp_markdown_code(name, sizeof(name), cp_json_str(m, "name", ""), NAME_CHARS);
	cp_format_value(base, sizeof(base), json_object_get(json_object_get(m, "base"), "median"));
	cp_format_value(head, sizeof(head), json_object_get(json_object_get(m, "head"), "median"));
	cp_format_change(change, sizeof(change), m);
	if (json_is_string(bnd))
		cp_markdown_code(bound, sizeof(bound), json_string_value(bnd), 20);
	else
		snprintf(bound, sizeof(bound), "-");
	if (with_reason)
		cp_markdown_code(reason, sizeof(reason), cp_json_str(m, "reason", ""), 300);
	snprintf(row, len, "| %s | %s | %s | %s | %s | %s%s%s |\n", name, base, head,
		 change[0] ? change : "-", bound,
		 !strcmp(status, "regressed") ? "**regressed**" : status, with_reason ? " | " : "",
		 with_reason ? reason : "");
}

static const char TABLE_HEAD[] = "| measure | base | head | change | bound | status |\n"
				 "|:--|--:|--:|--:|--:|:--|\n";
static const char TABLE_HEAD_REASON[] =
	"| measure | base | head | change | bound | status | why |\n"
	"|:--|--:|--:|--:|--:|:--|:--|\n";

/* Measures within their bound whose interval still reaches past it: one
 * bullet each (at most 10), without changing the status. */
static size_t not_excluded_lines(struct cp_buf *b, const struct cp_verdict_measures *ms,
				 const size_t *rows)
{
	char code[600], ne[100];
	size_t shown = 0, total = 0;

	for (size_t i = 0; i < ms->n; i++) {
		json_t *m = cp_verdict_measures_get(ms, rows[i]);
		int listed = json_is_string(json_object_get(m, "not_excluded"));

		total += listed;
		if (listed && shown < 10) {
			cp_markdown_code(code, sizeof(code), cp_json_str(m, "name", ""), 120);
			cp_markdown_code(ne, sizeof(ne), cp_json_str(m, "not_excluded", ""), 20);
			cp_buf_printf(b, "- %s: within its bound, not enough runs to exclude %s\n",
				      code, ne);
			shown++;
		}
		json_decref(m);
	}
	if (total > shown)
		cp_buf_printf(b, "- _%zu more not shown; see verdict.json_\n", total - shown);
	return total;
}

/* Adds rows (in the order given, filtered by `only_bad`) while they fit
 * under limit; returns how many eligible rows were left out. */
static size_t add_rows(struct cp_buf *b, const struct cp_verdict_measures *ms, const size_t *rows,
		       int only_bad, size_t limit)
{
	char row[16384];
	size_t left_out = 0;

	for (size_t i = 0; i < ms->n; i++) {
		json_t *m = cp_verdict_measures_get(ms, rows[i]);
		const char *s = cp_json_str(m, "status", "");

		if (only_bad && strcmp(s, "regressed") && strcmp(s, "inconclusive") &&
		    !json_is_true(json_object_get(m, "fails_gate"))) {
			json_decref(m);
			continue;
		}
		if (left_out) {
			left_out++;
			json_decref(m);
			continue;
		}
		format_row(row, sizeof(row), m, only_bad);
		json_decref(m);
		if (b->len + strlen(row) > limit) {
			left_out++;
			continue;
		}
		cp_buf_printf(b, "%s", row);
	}
	return left_out;
}

/* The heading and the paragraph of counts, runs and bounds. */
static void headline(struct cp_buf *b, const json_t *verdict)
{
	const json_t *summary = json_object_get(verdict, "summary");
	const json_t *bounds = json_object_get(verdict, "bounds");
	const char *status = cp_json_str(verdict, "status", "");
	char code[4096];

	cp_buf_printf(b, "### clockprof: %s \xe2\x80\x94 %lld of %lld measures outside bounds\n\n",
		      !strcmp(status, "fail") ? "**FAIL**" :
		      !strcmp(status, "pass") ? "pass" :
						"**inconclusive**",
		      integer(summary, "outside_bounds"), integer(summary, "judged"));
	cp_buf_printf(b,
		      "%lld regressed, %lld inconclusive, %lld improved, %lld within, "
		      "%lld added, %lld removed; base %lld runs, head %lld runs; ",
		      integer(summary, "regressed"), integer(summary, "inconclusive"),
		      integer(summary, "improved"), integer(summary, "within"),
		      integer(summary, "added"), integer(summary, "removed"),
		      integer(json_object_get(verdict, "base"), "runs"),
		      integer(json_object_get(verdict, "head"), "runs"));
	if (json_is_string(json_object_get(bounds, "file"))) {
		cp_markdown_code(code, sizeof(code), cp_json_str(bounds, "file", ""), 120);
		cp_buf_printf(b, "bounds %s (sha256 `%.12s`).\n\n", code,
			      cp_json_str(bounds, "sha256", ""));
	} else {
		cp_buf_printf(b, "built-in bounds (exact +0, sampled +5%%).\n\n");
	}
}

/* One bullet per environment field that differs between base and head. */
static void env_mismatch_line(const struct cp_env_mismatch *m, void *arg)
{
	char cb[600], ch[600];

	cp_markdown_code(cb, sizeof(cb), m->base, 120);
	cp_markdown_code(ch, sizeof(ch), m->head, 120);
	cp_buf_printf(arg, "- Environment differs: %s base %s, head %s%s\n", m->field, cb, ch,
		      !strcmp(m->effect, "inconclusive") ? " (sampled measures inconclusive)" : "");
}

/* One line a per-site measure gained, as `file:line` (base -> head). */
static void gained_line(struct cp_buf *b, const json_t *line)
{
	char code[1500], base[48], head[48];
	const char *path = cp_json_str(line, "repo_path", NULL);

	/* A path cut to its first 300 characters keeps its line number. */
	cp_markdown_code(code, sizeof(code), path ? path : cp_json_str(line, "file", ""), 300);
	cp_format_value(base, sizeof(base), json_object_get(line, "base"));
	cp_format_value(head, sizeof(head), json_object_get(line, "head"));
	cp_buf_printf(b, "%s line %lld (%s -> %s)", code,
		      (long long)json_integer_value(json_object_get(line, "line")), base, head);
}

/* A regressed per-site measure: the lines that gained reads, a bullet,
 * its lines most gained first. */
static void gained_measure(const json_t *m, void *arg)
{
	char code[600];
	const json_t *line;
	size_t k;

	cp_markdown_code(code, sizeof(code), cp_json_str(m, "name", ""), 120);
	cp_buf_printf(arg, "- %s gained reads at ", code);
	json_array_foreach(json_object_get(m, "lines"), k, line) {
		cp_buf_puts(arg, k ? ", " : "");
		gained_line(arg, line);
	}
	cp_buf_puts(arg, "\n");
}

/* A reusable read of base that no head run lists, as a bullet. */
static void removed_reuse(const struct cp_reusable_removed_line *l, void *arg)
{
	char read[1500], reuses[1500];

	if (l->more) {
		cp_buf_printf(arg, "- _%zu more reusable reads gone from head: see verdict.json_\n",
			      l->more);
		return;
	}
	cp_markdown_code(read, sizeof(read), l->read, 300);
	cp_markdown_code(reuses, sizeof(reuses), l->reuses, 300);
	cp_buf_printf(arg,
		      "- Reusable in base, not in head: %s (could reuse %s; %s reads/op in "
		      "base): %s\n",
		      read, reuses, l->per_op, l->outcome);
}

/* The bullets under the headline: environment differences, reasons for
 * inconclusiveness, the lines regressed per-site measures gained,
 * measures not excluded; then a blank line if any. */
static void notes(struct cp_buf *b, const json_t *verdict, const struct cp_verdict_measures *ms,
		  const size_t *rows)
{
	char code[4096];
	const json_t *e;
	size_t i, bullets;

	cp_env_mismatches_each(verdict, env_mismatch_line, b);
	json_array_foreach(json_object_get(verdict, "inconclusive_reasons"), i, e) {
		cp_markdown_code(code, sizeof(code), json_string_value(e), 300);
		cp_buf_printf(b, "- **Inconclusive**: %s\n", code);
	}
	bullets = cp_gained_measures_each(ms, rows, gained_measure, b);
	cp_reusable_removed_each(verdict, removed_reuse, b);
	bullets += json_array_size(json_object_get(verdict, "reusable_removed"));
	bullets += not_excluded_lines(b, ms, rows);
	if (bullets || json_array_size(json_object_get(verdict, "env_mismatch")) ||
	    json_array_size(json_object_get(verdict, "inconclusive_reasons")))
		cp_buf_printf(b, "\n");
}

/* The table of regressed or inconclusive measures, or the line saying there are none. */
static void bad_table(struct cp_buf *b, const json_t *verdict, const struct cp_verdict_measures *ms,
		      const size_t *rows, size_t limit)
{
	const json_t *summary = json_object_get(verdict, "summary");
	size_t left;

	if (integer(summary, "outside_bounds") + integer(summary, "inconclusive") > 0) {
		cp_buf_printf(b, "%s", TABLE_HEAD_REASON);
		/* Keep half the budget for the full table. */
		left = add_rows(b, ms, rows, 1, limit / 2 > b->len ? limit / 2 : b->len);
		if (left)
			cp_buf_printf(b,
				      "\n_%zu more regressed or inconclusive measures not shown "
				      "(size limit); see verdict.json._\n",
				      left);
		cp_buf_printf(b, "\n");
	} else {
		cp_buf_printf(b, "All measures present on both sides are within their bounds.\n\n");
	}
}

/* The collapsed table of all measures. */
static void full_table(struct cp_buf *b, const struct cp_verdict_measures *ms, const size_t *rows,
		       size_t limit)
{
	size_t left;

	cp_buf_printf(b, "<details><summary>All %zu measures</summary>\n\n%s", ms->n, TABLE_HEAD);
	left = add_rows(b, ms, rows, 0, limit);
	if (left)
		cp_buf_printf(b,
			      "\n_%zu more measures not shown: the summary is capped at "
			      "1 MiB; see verdict.json._\n",
			      left);
	cp_buf_printf(b, "\n</details>\n\n");
}

/* The collapsed list of warnings, while the size limit allows. */
static void warnings(struct cp_buf *b, const json_t *verdict, size_t limit)
{
	char code[4096];
	const json_t *e;
	size_t i;

	if (!json_array_size(json_object_get(verdict, "warnings")) || b->len >= limit)
		return;
	cp_buf_printf(b, "<details><summary>Warnings</summary>\n\n");
	json_array_foreach(json_object_get(verdict, "warnings"), i, e) {
		cp_markdown_code(code, sizeof(code), json_string_value(e), 300);
		if (b->len + strlen(code) + 8 > limit) {
			cp_buf_printf(b, "- _more warnings in verdict.json_\n");
			break;
		}
		cp_buf_printf(b, "- %s\n", code);
	}
	cp_buf_printf(b, "\n</details>\n\n");
}

char *cp_compare_markdown_of(const json_t *verdict, const struct cp_verdict_measures *ms,
			     size_t max_bytes)
{
	size_t *rows = cp_verdict_measures_sorted(ms), limit;
	struct cp_buf b = { 0 };

	if (!rows)
		return NULL;
	if (!max_bytes)
		max_bytes = CP_MARKDOWN_MAX_BYTES - 1;
	limit = max_bytes > TAIL_RESERVE ? max_bytes - TAIL_RESERVE : 0;

	headline(&b, verdict);
	notes(&b, verdict, ms, rows);
	bad_table(&b, verdict, ms, rows, limit);
	full_table(&b, ms, rows, limit);
	warnings(&b, verdict, limit);
	cp_buf_printf(&b, "_\xe2\x96\xb2 worse, \xe2\x96\xbc better; [lo, hi] is the 95%% interval "
			  "(Hodges\xe2\x80\x93Lehmann); sampled measures are Holm-corrected._\n");
	free(rows);
	if (b.failed) {
		free(b.data);
		return NULL;
	}
	return b.data;
}

char *cp_compare_markdown(const json_t *verdict, size_t max_bytes)
{
	struct cp_verdict_measures ms;

	cp_verdict_measures_of_doc(&ms, verdict);
	return cp_compare_markdown_of(verdict, &ms, max_bytes);
}
