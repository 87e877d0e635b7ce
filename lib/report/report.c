/* report.c - assembles the HTML report (see report.h): classifies the
 * documents, has report_run.c and report_verdict.c write the sections,
 * fills the template from reports/report.html with the page, the data
 * block and the hashes that the Content-Security-Policy allows (computed
 * at build time), and writes the file atomically. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"
#include "report_assets.h"
#include "report_html.h"
#include "report_sections.h"
#include "report_csp.h"
#include "version.h"

#define VERDICT_SCHEMA "clockprof.verdict/1"
#define RUN_SCHEMA "clockprof.run/1"

/* The hashes of the compiled-in script and style, computed by the build
 * from the same files (Makefile: report_csp.h). */
static void csp(struct cp_buf *b)
{
	cp_buf_puts(b, "default-src 'none'; script-src " CP_REPORT_CSP_SCRIPT
		       "; style-src " CP_REPORT_CSP_STYLE "; base-uri 'none'; form-action 'none'");
}

static void title(struct cp_buf *b, const json_t *verdict, json_t *const *runs, size_t nruns)
{
	const json_t *target = nruns ? json_object_get(runs[0], "target") : NULL;
	const json_t *sum = json_object_get(verdict, "summary");
	double outside, judged;

	cp_buf_puts(b, "clockprof: ");
	if (verdict) {
		cp_buf_text(b, cp_json_str(verdict, "status", NULL));
		if (cp_rj_num(sum, "judged", &judged) &&
		    (cp_rj_num(sum, "outside_bounds", &outside) ||
		     cp_rj_num(sum, "regressed", &outside)))
			cp_buf_printf(b, ", %.0f of %.0f measures outside bounds", outside, judged);
	} else if (target) {
		cp_buf_text(b, cp_json_str(target, "comm", NULL));
		if (nruns > 1)
			cp_buf_printf(b, " and %zu more runs", nruns - 1);
	}
}

static void body(struct cp_buf *b, const json_t *verdict, size_t nruns)
{
	cp_buf_puts(b,
		    "<header><h1>clockprof report</h1><p class=\"sub\">"
		    "How often the program reads the clock, from where, at what cost. "
		    "Written by clockprof " CLOCKPROF_VERSION ".</p>"
		    "<noscript><p class=\"note\">JavaScript is off: the tables below carry every "
		    "figure; the charts and the flame graph need JavaScript.</p></noscript>"
		    "<nav><ul>");
	if (verdict)
		cp_buf_puts(b, "<li><a href=\"#verdict\">verdict</a></li>"
			       "<li><a href=\"#dumbbell\">measures</a></li>");
	for (size_t i = 0; i < nruns && !verdict; i++) {
		cp_buf_printf(b, "<li><a href=\"#run-%zu\">run %zu</a></li>", i, i + 1);
		cp_buf_printf(b, "<li><a href=\"#stacks-%zu\">stacks %zu</a></li>", i, i + 1);
	}
	if (verdict && nruns)
		cp_buf_puts(b, "<li><a href=\"#diff-stacks\">stacks base vs head</a></li>");
	cp_buf_puts(b, "</ul></nav></header>\n<main>\n");
}

/* Splits the run documents of a verdict into base and head. */
static int split_runs(const json_t *verdict, size_t nruns, size_t *nbase, size_t *nhead,
		      struct cp_error *err)
{
	double b = -1, h = -1;

	*nbase = *nhead = 0;
	if (!nruns)
		return 0;
	cp_rj_num(json_object_get(verdict, "base"), "runs", &b);
	cp_rj_num(json_object_get(verdict, "head"), "runs", &h);
	if (b < 1 || h < 1 || b + h != (double)nruns)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"the verdict compared %.0f base and %.0f head runs, but %zu run %s given; "
			"give the same run files, base runs first, then head runs",
			b, h, nruns, nruns == 1 ? "file was" : "files were");
	*nbase = (size_t)b;
	*nhead = (size_t)h;
	return 0;
}

/* Writes the template to out, replacing each {{NAME}} with its part: the
 * page goes out as it is made, never held whole beside its parts. */
static int fill(FILE *out, const char *names[], const struct cp_buf *parts[], size_t nparts)
{
	const char *t = cp_report_asset_html, *end = t + cp_report_asset_html_len;

	while (t < end) {
		const char *open = strstr(t, "{{"), *close;
		size_t i;

		if (!open) {
			fwrite(t, 1, (size_t)(end - t), out);
			break;
		}
		fwrite(t, 1, (size_t)(open - t), out);
		close = strstr(open, "}}");
		if (!close)
			return -1;
		for (i = 0; i < nparts; i++)
			if (strlen(names[i]) == (size_t)(close - open - 2) &&
			    !strncmp(open + 2, names[i], strlen(names[i])))
				break;
		if (i == nparts)
			return -1;
		if (parts[i]->len)
			fwrite(parts[i]->data, 1, parts[i]->len, out);
		t = close + 2;
	}
	return ferror(out) ? -1 : 0;
}

/* The pieces the template is filled with. */
struct report_parts {
	struct cp_buf csp, title, body, data, style, script;
};

/* Frees every piece of the page. */
static void report_parts_free(struct report_parts *p)
{
	cp_buf_free(&p->csp);
	cp_buf_free(&p->title);
	cp_buf_free(&p->body);
	cp_buf_free(&p->data);
	cp_buf_free(&p->style);
	cp_buf_free(&p->script);
}

/* Sorts the documents into run documents and at most one verdict. */
static int classify_docs(json_t *const *docs, size_t ndocs, json_t **runs, size_t *nruns,
			 const json_t **verdict, struct cp_error *err)
{
	if (!ndocs)
		return cp_fail(err, CP_EXIT_USAGE, "no run or verdict file to report on");
	for (size_t i = 0; i < ndocs; i++) {
		const char *schema = cp_json_str(docs[i], "schema", NULL);

		if (schema && !strcmp(schema, RUN_SCHEMA)) {
			runs[(*nruns)++] = docs[i];
		} else if (schema && !strcmp(schema, VERDICT_SCHEMA)) {
			if (*verdict)
				return cp_fail(err, CP_EXIT_USAGE, "a report shows one verdict; %s",
					       "give one verdict file");
			*verdict = docs[i];
		} else {
			return cp_fail(err, CP_EXIT_USAGE,
				       "document %zu is neither a run (%s) nor a verdict (%s)",
				       i + 1, RUN_SCHEMA, VERDICT_SCHEMA);
		}
	}
	return 0;
}

/* Writes the page's body: header, the verdict or run sections, footer.
 * Returns -1 when out of memory. */
static int write_body(struct cp_buf *tbody, const json_t *verdict, json_t **runs, size_t nruns,
		      size_t nbase, size_t nhead, json_t *data)
{
	body(tbody, verdict, nruns);
	if (verdict) {
		if (cp_report_verdict_section(tbody, verdict, runs, nbase, runs + nbase, nhead,
					      data))
			return -1;
	} else {
		for (size_t i = 0; i < nruns; i++)
			if (cp_report_run_section(tbody, runs[i], i, nruns, data))
				return -1;
	}
	cp_buf_puts(
		tbody,
		"</main>\n<footer><p>clockprof " CLOCKPROF_VERSION
		" · this file is self-contained: it loads nothing and sends nothing.</p></footer>\n"
		"<div id=\"tooltip\" class=\"tooltip\" role=\"status\" hidden></div>");
	return 0;
}

/* Adds the data block, style and script. Returns -1 when out of memory. */
static int assemble_parts(struct report_parts *p, const json_t *data)
{
	char *json = json_dumps(data, JSON_COMPACT);

	if (!json)
		return -1;
	cp_buf_json_script(&p->data, json, strlen(json));
	free(json);
	cp_buf_add(&p->style, cp_report_asset_css, cp_report_asset_css_len);
	cp_buf_add(&p->script, cp_report_asset_js, cp_report_asset_js_len);
	if (p->csp.failed || p->title.failed || p->body.failed || p->data.failed ||
	    p->style.failed || p->script.failed)
		return -1;
	return 0;
}

/* Fills the template with the parts, straight into f. */
static int write_page(const struct report_parts *p, FILE *f, const char *path, struct cp_error *err)
{
	const char *names[] = { "CSP", "TITLE", "STYLE", "BODY", "DATA", "SCRIPT" };
	const struct cp_buf *parts[] = { &p->csp,  &p->title, &p->style,
					 &p->body, &p->data,  &p->script };

	errno = 0;
	if (fill(f, names, parts, 6)) {
		int saved = errno;

		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
			       saved ? strerror(saved) : "bad report template");
	}
	return 0;
}

int cp_report_write(json_t *const *docs, size_t ndocs, FILE *f, const char *path,
		    struct cp_error *err)
{
	const json_t *verdict = NULL;
	json_t **runs = calloc(ndocs ? ndocs : 1, sizeof(*runs));
	json_t *data = json_pack("{s[]}", "runs");
	struct report_parts p = { 0 };
	size_t nruns = 0, nbase = 0, nhead = 0;
	int rc = -1;

	if (!runs || !data) {
		cp_fail(err, CP_EXIT_USAGE, "out of memory writing %s", path);
		goto out;
	}
	if (classify_docs(docs, ndocs, runs, &nruns, &verdict, err))
		goto out;
	if (verdict && split_runs(verdict, nruns, &nbase, &nhead, err))
		goto out;

	csp(&p.csp);
	title(&p.title, verdict, runs, nruns);
	if (write_body(&p.body, verdict, runs, nruns, nbase, nhead, data) ||
	    assemble_parts(&p, data)) {
		cp_fail(err, CP_EXIT_USAGE, "out of memory writing %s", path);
		goto out;
	}
	rc = write_page(&p, f, path, err);
out:
	free(runs);
	json_decref(data);
	report_parts_free(&p);
	return rc;
}
