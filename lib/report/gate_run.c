/* gate_run.c - see gate_run.h. The orchestration of `clockprof compare`, out of
 * cmd/ so that the gate is one library call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append_file.h"
#include "atomic_file.h"
#include "bounds.h"
#include "compare.h"
#include "compare_markdown.h"
#include "error.h"
#include "gate_run.h"
#include "json_file.h"
#include "report.h"
#include "verdict_file.h"
#include "verdict_measures.h"

/* Loads both sides in one batch, base files first: the loader's threads
 * then never wait for the last file of one side before starting the
 * other (8 ms of a 1,000-measure, 60-run gate). *all holds base runs
 * then head runs. whole: keep every run's whole document, for the HTML
 * report. */
static int load_sides(const struct cp_gate_request *rq, int whole,
		      struct cp_compare_run **all, struct cp_error *err)
{
	size_t n = rq->nbase + rq->nhead;
	const char **names = calloc(n + 1, sizeof(*names));
	int rc;

	*all = calloc(n + 1, sizeof(**all));
	if (!names || !*all) {
		free(names);
		free(*all);
		*all = NULL;
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	}
	memcpy(names, rq->base_files, rq->nbase * sizeof(*names));
	memcpy(names + rq->nbase, rq->head_files, rq->nhead * sizeof(*names));
	rc = cp_compare_load_runs(names, n, whole, *all, err);
	free(names);
	if (rc) {
		free(*all);
		*all = NULL;
	}
	return rc;
}

static int write_html(const json_t *verdict, const struct cp_compare_run *runs,
		      size_t nruns, const char *html, struct cp_error *err)
{
	/* The verdict first, then the base runs, then the head runs:
	 * lib/report.h splits them by the verdict's base.runs/head.runs. */
	json_t **docs = calloc(nruns + 1, sizeof(*docs));
	int rc;

	if (!docs)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory writing %s", html);
	docs[0] = (json_t *)verdict;
	for (size_t i = 0; i < nruns; i++)
		docs[i + 1] = runs[i].doc;
	rc = cp_report_write(docs, nruns + 1, html, err);
	free(docs);
	return rc;
}

/* Writes the files of the rendered texts (verdict.json is written as it
 * is rendered); returns 0 or -1 with the message in err. */
static int write_outputs(const struct cp_gate_request *rq, struct cp_gate_outcome *out,
			 struct cp_error *err)
{
	const struct cp_compare_texts *t = &out->texts;
	const char *summary = getenv("GITHUB_STEP_SUMMARY");

	if (rq->markdown && cp_write_file_atomic(rq->markdown, t->markdown,
						 strlen(t->markdown), err))
		return -1;
	if (t->markdown && summary && *summary) {
		struct cp_error e = { 0 };

		/* The step summary is a courtesy: a full disk there must not
		 * turn a failing gate into a usage error, or a passing one
		 * into a failure, nor stop the annotations. */
		if (cp_append_text_file(summary, t->markdown, &e))
			snprintf(out->warning, sizeof(out->warning),
				 "GITHUB_STEP_SUMMARY not written: %.400s", e.msg);
	}
	return 0;
}

/* The whole verdict, for the HTML report that draws every measure: the
 * skeleton's copy (the same created_at as verdict.json) with them all. */
static json_t *whole_verdict(const json_t *skeleton, const struct cp_verdict_measures *ms)
{
	json_t *whole = json_copy((json_t *)skeleton), *all = json_array();

	for (size_t i = 0; all && i < ms->n; i++)
		if (json_array_append_new(all, cp_verdict_measures_get(ms, i))) {
			json_decref(all);
			all = NULL;
		}
	if (!whole || !all || json_object_set_new(whole, "measures", all)) {
		json_decref(whole);
		if (!whole)
			json_decref(all);
		return NULL;
	}
	return whole;
}

/* The gate's verdict, then its texts and files. The measures are never
 * all built as JSON at once, but for the HTML report, which draws them
 * all. */
static int verdict_outputs(const struct cp_gate_request *rq, struct cp_bounds *bounds,
			   const struct cp_compare_run *runs,
			   const struct cp_compare_result *result,
			   struct cp_gate_outcome *out, struct cp_error *err)
{
	struct cp_compare_side b = { runs, rq->base_files, rq->nbase };
	struct cp_compare_side h = { runs + rq->nbase, rq->head_files, rq->nhead };
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	struct cp_compare_texts_request tr = {
		.json_path = rq->output,
		.markdown = rq->markdown || (rq->github && summary && *summary),
		.annotations = rq->github,
	};
	struct cp_verdict_measures ms;
	json_t *whole;
	int rc;

	out->verdict = cp_verdict_skeleton(result, bounds, &b, &h);
	if (!out->verdict)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	cp_verdict_measures_of_result(&ms, result);
	if (cp_compare_texts_render(out->verdict, &ms, &tr, &out->texts, err) ||
	    write_outputs(rq, out, err))
		return -1;
	if (!rq->html)
		return 0;
	if (!(whole = whole_verdict(out->verdict, &ms)))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	rc = write_html(whole, runs, rq->nbase + rq->nhead, rq->html, err);
	json_decref(whole);
	return rc;
}

static int judge(const struct cp_gate_request *rq, struct cp_bounds *bounds,
		 const struct cp_compare_run *runs, struct cp_gate_outcome *out,
		 struct cp_error *err)
{
	struct cp_compare_side b = { runs, rq->base_files, rq->nbase };
	struct cp_compare_side h = { runs + rq->nbase, rq->head_files, rq->nhead };
	struct cp_compare_opts opts = { .alpha = 0.05,
					.fail_on_inconclusive = rq->fail_on_inconclusive,
					.allow_mismatch = rq->allow_mismatch };

	if (!(out->result = calloc(1, sizeof(*out->result))))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	if (cp_compare(&b, &h, bounds, &opts, out->result, err)) {
		free(out->result);
		out->result = NULL;
		return -1;
	}
	out->exit_code = out->result->exit_code;
	return verdict_outputs(rq, bounds, runs, out->result, out, err);
}

int cp_gate_run(const struct cp_gate_request *rq, struct cp_gate_outcome *out,
		struct cp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!(out->bounds = calloc(1, sizeof(*out->bounds))))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	cp_bounds_init_defaults(out->bounds);
	if ((rq->output && cp_check_writable(rq->output, err)) ||
	    (rq->markdown && cp_check_writable(rq->markdown, err)) ||
	    (rq->html && cp_check_writable(rq->html, err)) ||
	    (rq->bounds_path && cp_bounds_load(rq->bounds_path, out->bounds, err)) ||
	    load_sides(rq, rq->html != NULL, &out->runs, err))
		goto fail;
	out->nruns = rq->nbase + rq->nhead;
	if (judge(rq, out->bounds, out->runs, out, err))
		goto fail;
	return 0;
fail:
	cp_gate_outcome_free(out);
	return -1;
}

int cp_gate_table_write(const struct cp_gate_outcome *out, FILE *f, int color)
{
	struct cp_verdict_measures ms;

	cp_verdict_measures_of_result(&ms, out->result);
	return cp_compare_texts_table(f, out->verdict, &ms, color);
}

void cp_gate_outcome_free(struct cp_gate_outcome *out)
{
	cp_compare_texts_free(&out->texts);
	json_decref(out->verdict);
	if (out->result)
		cp_compare_result_free(out->result);
	free(out->result);
	for (size_t i = 0; out->runs && i < out->nruns; i++)
		cp_compare_run_free(&out->runs[i]);
	free(out->runs);
	if (out->bounds)
		cp_bounds_free(out->bounds);
	free(out->bounds);
	memset(out, 0, sizeof(*out));
}
