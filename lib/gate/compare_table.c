/* compare_table.c - see compare_table.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_reusable.h"
#include "compare_table.h"
#include "json_file.h"
#include "verdict_measures.h"
#include "verdict_file.h"

#define NAME_COLUMNS 60

/* Characters on screen (UTF-8 code points; the marks are one column). */
static size_t columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

void cp_format_value(char *buf, size_t len, const json_t *v)
{
	double x, a;

	if (!json_is_number(v)) {
		snprintf(buf, len, "-");
		return;
	}
	x = json_number_value(v);
	a = fabs(x);
	if (a >= 1e4 && a < 1e15) {
		/* Integer with thousands separators. */
		char digits[32], out[48];
		long long ll = llround(a);
		int n = snprintf(digits, sizeof(digits), "%lld", ll), o = 0;

		if (x < 0)
			out[o++] = '-';
		for (int i = 0; i < n; i++) {
			if (i && (n - i) % 3 == 0)
				out[o++] = ',';
			out[o++] = digits[i];
		}
		out[o] = '\0';
		snprintf(buf, len, "%s", out);
	} else {
		snprintf(buf, len, "%.4g", x);
	}
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "+5.3", "-0.41", "+25.2", "+120" with 2-3 significant digits, then
 * suffix, never in e-notation; "?" for a number that is not one (never
 * "+nan"). */
static void signed_num(char *buf, size_t len, double v, const char *suffix)
{
	if (!isfinite(v))
		snprintf(buf, len, "?");
	else if (v == 0)
		snprintf(buf, len, "0%s", suffix);
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%+.0f%s", v, suffix);
	else if (fabs(v) >= 10)
		snprintf(buf, len, "%+.1f%s", v, suffix);
	else if (fabs(v) >= 0.01)
		snprintf(buf, len, "%+.2g%s", v, suffix);
	else
		snprintf(buf, len, "%+.2f%s", v, suffix); /* never e-notation */
}

static void signed_pct(char *buf, size_t len, double v)
{
	signed_num(buf, len, v, "%");
}

/* " [+23.2, +33.2]": the interval's own ends, not a ± of its larger
 * half (Hodges-Lehmann intervals are rarely symmetric). */
static void interval_text(char *buf, size_t len, double lo, double hi, int pct)
{
	char l[40], h[40];

	if (pct) {
		signed_num(l, sizeof(l), lo, "");
		signed_num(h, sizeof(h), hi, "");
	} else {
		snprintf(l, sizeof(l),
			 !isfinite(lo)	 ? "?" :
			 fabs(lo) >= 1e4 ? "%+.0f" :
					   "%+.4g",
			 lo);
		snprintf(h, sizeof(h),
			 !isfinite(hi)	 ? "?" :
			 fabs(hi) >= 1e4 ? "%+.0f" :
					   "%+.4g",
			 hi);
	}
	snprintf(buf, len, " [%.30s, %.30s]", l, h);
}

void cp_format_change(char *buf, size_t len, const json_t *m)
{
	const json_t *pct = json_object_get(m, "change_pct");
	const json_t *abs_ = json_object_get(m, "change_abs");
	const char *dir = cp_json_str(m, "direction", "");
	const char *mark = !strcmp(dir, "worse") ? "\xe2\x96\xb2 " : /* ▲ */
				   !strcmp(dir, "better") ? "\xe2\x96\xbc " :
							    ""; /* ▼ */
	double p = num(pct, "point"), lo = num(pct, "lo"), hi = num(pct, "hi");
	char a[48], b[80];

	if (!json_is_object(pct) && !json_is_object(abs_)) {
		snprintf(buf, len, "%s", "");
		return;
	}
	if (!strcmp(cp_json_str(m, "kind", ""), "exact")) {
		double d = num(abs_, "point");

		if (d == 0) {
			snprintf(buf, len, "0");
			return;
		}
		snprintf(a, sizeof(a), isfinite(d) ? "%+.6g" : "?", d);
		if (isnan(p)) {
			snprintf(buf, len, "%s%s", mark, a);
		} else {
			signed_pct(b, sizeof(b), p);
			snprintf(buf, len, "%s%s (%s)", mark, a, b);
		}
		return;
	}
	if (isnan(p)) { /* base median 0: absolute change */
		p = num(abs_, "point");
		lo = num(abs_, "lo");
		hi = num(abs_, "hi");
		snprintf(a, sizeof(a), !isfinite(p) ? "?" : fabs(p) >= 1e4 ? "%+.0f" : "%+.4g", p);
		if (isnan(lo))
			snprintf(buf, len, "%s%s (no interval)", mark, a);
		else {
			interval_text(b, sizeof(b), lo, hi, 0);
			snprintf(buf, len, "%s%s%s", mark, a, b);
		}
		return;
	}
	signed_pct(a, sizeof(a), p);
	if (isnan(lo) || isnan(hi)) {
		snprintf(buf, len, "%s%s (no interval)", mark, a);
		return;
	}
	interval_text(b, sizeof(b), lo, hi, 1);
	snprintf(buf, len, "%s%s%s", mark, a, b);
}

enum { COL_NAME, COL_BASE, COL_HEAD, COL_CHANGE, COL_BOUND, COL_STATUS, NCOLS };

struct row {
	char cell[NCOLS][300];
	const char *color;
};

static void fill_row(struct row *r, const json_t *m)
{
	const char *status = cp_json_str(m, "status", "");
	const json_t *bound = json_object_get(m, "bound");
	const char *name = cp_json_str(m, "name", "");

	/* The name starts the line: a CI runner reading stdout would take a
	 * leading "::" or "##[" (after spaces) as a workflow command, so such
	 * a first character is shown escaped too. */
	if (*name == ' ' || *name == ':' || *name == '#') {
		snprintf(r->cell[COL_NAME], sizeof(r->cell[0]), "\\x%02x", *name);
		cp_escape_display(r->cell[COL_NAME] + 4, sizeof(r->cell[0]) - 4, name + 1,
				  NAME_COLUMNS - 1);
	} else {
		cp_escape_display(r->cell[COL_NAME], sizeof(r->cell[0]), name, NAME_COLUMNS);
	}
	cp_format_value(r->cell[COL_BASE], sizeof(r->cell[0]),
			json_object_get(json_object_get(m, "base"), "median"));
	cp_format_value(r->cell[COL_HEAD], sizeof(r->cell[0]),
			json_object_get(json_object_get(m, "head"), "median"));
	cp_format_change(r->cell[COL_CHANGE], sizeof(r->cell[0]), m);
	cp_escape_display(r->cell[COL_BOUND], sizeof(r->cell[0]),
			  json_is_string(bound) ? json_string_value(bound) : "-", 20);
	snprintf(r->cell[COL_STATUS], sizeof(r->cell[0]), "%s",
		 !strcmp(status, "regressed") ? "REGRESSED" : status);
	r->color = !strcmp(status, "regressed")	   ? "\033[1;31m" :
		   !strcmp(status, "inconclusive") ? "\033[33m" :
		   !strcmp(status, "improved")	   ? "\033[32m" :
		   !strcmp(status, "within")	   ? NULL :
						     "\033[36m";
}

static void put_cell(FILE *out, const char *s, size_t width, int right)
{
	size_t c = columns(s);

	if (right)
		fprintf(out, "%*s%s", (int)(width > c ? width - c : 0), "", s);
	else
		fprintf(out, "%s%*s", s, (int)(width > c ? width - c : 0), "");
}

/* Measures within their bound whose interval still reaches past it:
 * listed, without changing the status (at most 10 named). */
static void not_excluded_line(FILE *out, const struct cp_verdict_measures *ms)
{
	size_t shown = 0, total = 0;
	char name[300], ne[64];

	for (size_t i = 0; i < ms->n; i++) {
		json_t *m = cp_verdict_measures_get(ms, i);

		total += json_is_string(json_object_get(m, "not_excluded"));
		json_decref(m);
	}
	if (!total)
		return;
	fprintf(out, "not enough runs to exclude:");
	for (size_t i = 0; i < ms->n; i++) {
		json_t *m = cp_verdict_measures_get(ms, i);

		if (!json_is_string(json_object_get(m, "not_excluded"))) {
			json_decref(m);
			continue;
		}
		if (shown++ == 10) {
			fprintf(out, " and %zu more", total - 10);
			json_decref(m);
			break;
		}
		cp_escape_display(name, sizeof(name), cp_json_str(m, "name", ""), 60);
		cp_escape_display(ne, sizeof(ne), cp_json_str(m, "not_excluded", ""), 20);
		fprintf(out, "%s %s %s", shown > 1 ? "," : "", name, ne);
		json_decref(m);
	}
	fprintf(out, "\n");
}

void cp_env_mismatches_each(const json_t *verdict,
			    void (*fn)(const struct cp_env_mismatch *e, void *arg), void *arg)
{
	const json_t *e;
	size_t i;

	json_array_foreach(json_object_get(verdict, "env_mismatch"), i, e) {
		char *b = json_dumps(json_object_get(e, "base"), JSON_ENCODE_ANY);
		char *h = json_dumps(json_object_get(e, "head"), JSON_ENCODE_ANY);
		struct cp_env_mismatch m = { cp_json_str(e, "field", ""), b ? b : "?", h ? h : "?",
					     cp_json_str(e, "effect", "") };

		fn(&m, arg);
		free(b);
		free(h);
	}
}

static void env_line(const struct cp_env_mismatch *m, void *arg)
{
	char eb[200], eh[200];

	cp_escape_display(eb, sizeof(eb), m->base, 80);
	cp_escape_display(eh, sizeof(eh), m->head, 80);
	fprintf(arg, "environment differs: %s base %s, head %s (%s)\n", m->field, eb, eh,
		m->effect);
}

/* A reusable read of base that no head run lists, as a line. */
static void removed_reuse_line(const struct cp_reusable_removed_line *l, void *arg)
{
	char read[400], reuses[400];

	if (l->more) {
		fprintf(arg, "%zu more reusable reads gone from head: see verdict.json\n", l->more);
		return;
	}
	cp_escape_display(read, sizeof(read), l->read, 160);
	cp_escape_display(reuses, sizeof(reuses), l->reuses, 160);
	fprintf(arg,
		"reusable in base, not in head: %s (could reuse %s; %s reads/op in base): %s\n",
		read, reuses, l->per_op, l->outcome);
}

void cp_format_gained_line(char *buf, size_t len, const json_t *line)
{
	char path[1300], base[48], head[48];
	const char *p = cp_json_str(line, "repo_path", NULL);

	/* A path cut to its first 300 characters keeps its line number. */
	cp_escape_display(path, sizeof(path), p ? p : cp_json_str(line, "file", ""), 300);
	cp_format_value(base, sizeof(base), json_object_get(line, "base"));
	cp_format_value(head, sizeof(head), json_object_get(line, "head"));
	snprintf(buf, len, "%s:%lld (%s -> %s)", path,
		 (long long)json_integer_value(json_object_get(line, "line")), base, head);
}

size_t cp_gained_measures_each(const struct cp_verdict_measures *ms, const size_t *rows,
			       void (*fn)(const json_t *m, void *arg), void *arg)
{
	size_t shown = 0;

	for (size_t i = 0; i < ms->n && shown < CP_GAINED_MEASURES_MAX; i++) {
		json_t *m = cp_verdict_measures_get(ms, rows ? rows[i] : i);

		if (json_array_size(json_object_get(m, "lines"))) {
			fn(m, arg);
			shown++;
		}
		json_decref(m);
	}
	return shown;
}

/* A regressed per-site measure's lines that gained, on one line. */
static void gained_measure(const json_t *m, void *arg)
{
	char name[300], text[1500];
	const json_t *line;
	size_t k;

	cp_escape_display(name, sizeof(name), cp_json_str(m, "name", ""), 120);
	fprintf(arg, "%s gained reads at ", name);
	json_array_foreach(json_object_get(m, "lines"), k, line) {
		cp_format_gained_line(text, sizeof(text), line);
		fprintf(arg, "%s%s", k ? ", " : "", text);
	}
	fputs("\n", arg);
}

static void summary_lines(FILE *out, const json_t *v, const struct cp_verdict_measures *ms,
			  int color)
{
	const json_t *s = json_object_get(v, "summary");
	const char *status = cp_json_str(v, "status", "");
	const json_t *e;
	size_t i;
	char text[400];

	fprintf(out, "%s%s%s: %lld of %lld measures outside bounds",
		color ? (!strcmp(status, "fail") ? "\033[1;31m" :
			 !strcmp(status, "pass") ? "\033[1;32m" :
						   "\033[1;33m") :
			"",
		status, color ? "\033[0m" : "",
		(long long)json_integer_value(json_object_get(s, "outside_bounds")),
		(long long)json_integer_value(json_object_get(s, "judged")));
	fprintf(out, " (%lld inconclusive, %lld improved, %lld within, %lld added, %lld removed)\n",
		(long long)json_integer_value(json_object_get(s, "inconclusive")),
		(long long)json_integer_value(json_object_get(s, "improved")),
		(long long)json_integer_value(json_object_get(s, "within")),
		(long long)json_integer_value(json_object_get(s, "added")),
		(long long)json_integer_value(json_object_get(s, "removed")));
	fprintf(out,
		"base: %lld runs, head: %lld runs; \xe2\x96\xb2 worse, \xe2\x96\xbc better, "
		"[95%% interval] (Hodges-Lehmann), Holm-corrected\n",
		(long long)json_integer_value(json_object_get(json_object_get(v, "base"), "runs")),
		(long long)json_integer_value(json_object_get(json_object_get(v, "head"), "runs")));
	cp_env_mismatches_each(v, env_line, out);
	json_array_foreach(json_object_get(v, "inconclusive_reasons"), i, e) {
		cp_escape_display(text, sizeof(text), json_string_value(e), 300);
		fprintf(out, "inconclusive: %s\n", text);
	}
	cp_gained_measures_each(ms, NULL, gained_measure, out);
	not_excluded_line(out, ms);
	cp_reusable_removed_each(v, removed_reuse_line, out);
	json_array_foreach(json_object_get(v, "warnings"), i, e) {
		cp_escape_display(text, sizeof(text), json_string_value(e), 300);
		fprintf(out, "warning: %s\n", text);
	}
}

/* Row i of the table, built from its measure (which is dropped again). */
static int fill_row_at(struct row *r, const struct cp_verdict_measures *ms, size_t i)
{
	json_t *m = cp_verdict_measures_get(ms, i);

	if (!m)
		return -1;
	fill_row(r, m);
	json_decref(m);
	return 0;
}

int cp_compare_table_write_of(FILE *out, const json_t *verdict,
			      const struct cp_verdict_measures *ms, int color)
{
	static const char *const head[NCOLS] = { "measure", "base",  "head",
						 "change",  "bound", "status" };
	size_t n = ms->n, width[NCOLS];
	size_t *sorted = cp_verdict_measures_sorted(ms);
	struct row *r = malloc(sizeof(*r));
	int rc = -1;

	if (!sorted || !r)
		goto out;
	/* Two passes (widths, then print) keep memory flat for big tables. */
	for (int c = 0; c < NCOLS; c++)
		width[c] = columns(head[c]);
	for (size_t i = 0; i < n; i++) {
		if (fill_row_at(r, ms, sorted[i]))
			goto out;
		for (int c = 0; c < NCOLS; c++)
			if (columns(r->cell[c]) > width[c])
				width[c] = columns(r->cell[c]);
	}
	for (int c = 0; c < NCOLS; c++) {
		put_cell(out, head[c], c + 1 < NCOLS ? width[c] : 0,
			 c > COL_NAME && c < COL_STATUS);
		fputs(c + 1 < NCOLS ? "  " : "\n", out);
	}
	for (size_t i = 0; i < n; i++) {
		if (fill_row_at(r, ms, sorted[i]))
			goto out;
		for (int c = 0; c < NCOLS; c++) {
			int colored = color && r->color && c == COL_STATUS;

			if (colored)
				fputs(r->color, out);
			put_cell(out, r->cell[c], c + 1 < NCOLS ? width[c] : 0,
				 c > COL_NAME && c < COL_STATUS);
			if (colored)
				fputs("\033[0m", out);
			fputs(c + 1 < NCOLS ? "  " : "\n", out);
		}
	}
	summary_lines(out, verdict, ms, color);
	rc = ferror(out) ? -1 : 0;
out:
	free(sorted);
	free(r);
	return rc;
}

int cp_compare_table_write(FILE *out, const json_t *verdict, int color)
{
	struct cp_verdict_measures ms;

	cp_verdict_measures_of_doc(&ms, verdict);
	return cp_compare_table_write_of(out, verdict, &ms, color);
}

char *cp_compare_table_string_of(const json_t *verdict, const struct cp_verdict_measures *ms,
				 int color)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return NULL;
	rc = cp_compare_table_write_of(f, verdict, ms, color);
	if (fclose(f) || rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *cp_compare_table_string(const json_t *verdict, int color)
{
	struct cp_verdict_measures ms;

	cp_verdict_measures_of_doc(&ms, verdict);
	return cp_compare_table_string_of(verdict, &ms, color);
}
