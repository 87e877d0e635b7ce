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

/* Writes the outputs from the rendered texts; returns 0 or -1 with the
 * message in err. */
static int write_outputs(const struct cp_gate_request *rq, struct cp_gate_outcome *out,
			 const struct cp_compare_run *runs, struct cp_error *err)
{
	const struct cp_compare_texts *t = &out->texts;
	const char *summary = getenv("GITHUB_STEP_SUMMARY");

	if (rq->output && cp_json_write_text(t->json, rq->output, err))
		return -1;
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
	if (rq->html && write_html(out->verdict, runs, rq->nbase + rq->nhead,
				   rq->html, err))
		return -1;
	return 0;
}

static int judge(const struct cp_gate_request *rq, struct cp_bounds *bounds,
		 const struct cp_compare_run *runs, struct cp_gate_outcome *out,
		 struct cp_error *err)
{
	struct cp_compare_side b = { runs, rq->base_files, rq->nbase };
	struct cp_compare_side h = { runs + rq->nbase, rq->head_files, rq->nhead };
	struct cp_compare_opts opts = { .alpha = 0.05,
					.fail_on_inconclusive = rq->fail_on_inconclusive };
	struct cp_compare_result result;

	if (cp_compare(&b, &h, bounds, &opts, &result, err))
		return -1;
	out->verdict = cp_verdict_build(&result, bounds, &b, &h);
	out->exit_code = result.exit_code;
	cp_compare_result_free(&result);
	if (!out->verdict)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	return 0;
}

int cp_gate_run(const struct cp_gate_request *rq, struct cp_gate_outcome *out,
		struct cp_error *err)
{
	struct cp_compare_run *runs = NULL;
	struct cp_bounds bounds;
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	int want_md = rq->markdown || (rq->github && summary && *summary);
	int rc = -1;

	memset(out, 0, sizeof(*out));
	cp_bounds_init_defaults(&bounds);
	if ((rq->output && cp_check_writable(rq->output, err)) ||
	    (rq->markdown && cp_check_writable(rq->markdown, err)) ||
	    (rq->html && cp_check_writable(rq->html, err)) ||
	    (rq->bounds_path && cp_bounds_load(rq->bounds_path, &bounds, err)) ||
	    load_sides(rq, rq->html != NULL, &runs, err) ||
	    judge(rq, &bounds, runs, out, err))
		goto out;
	if (cp_compare_texts_render(out->verdict, rq->output != NULL, want_md,
				    rq->want_table, rq->color, &out->texts)) {
		cp_fail(err, CP_EXIT_USAGE, "out of memory");
		goto out;
	}
	rc = write_outputs(rq, out, runs, err);
out:
	cp_bounds_free(&bounds);
	for (size_t i = 0; runs && i < rq->nbase + rq->nhead; i++)
		cp_compare_run_free(&runs[i]);
	free(runs);
	if (rc)
		cp_gate_outcome_free(out);
	return rc;
}

void cp_gate_outcome_free(struct cp_gate_outcome *out)
{
	cp_compare_texts_free(&out->texts);
	json_decref(out->verdict);
	memset(out, 0, sizeof(*out));
}
