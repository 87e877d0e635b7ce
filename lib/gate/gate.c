/* gate.c - see gate.h. The orchestration of `clockprof compare`, out of
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
#include "gate.h"
#include "json_file.h"
#include "output_set.h"
#include "verdict_file.h"
#include "verdict_measures.h"

/* Loads both sides in one batch, base files first: the loader's threads
 * then never wait for the last file of one side before starting the
 * other (8 ms of a 1,000-measure, 60-run gate). *all holds base runs
 * then head runs. whole: keep every run's whole document, for the HTML
 * report. */
static int load_sides(const struct cp_gate_request *rq, int whole, struct cp_compare_run **all,
		      struct cp_error *err)
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

/* The outputs, verdict.json last: it is put in place after the others. */
enum { GATE_MARKDOWN, GATE_HTML, GATE_VERDICT, NGATE };

/* What the output writers draw from. */
struct gate_writing {
	const struct cp_gate_request *rq;
	const struct cp_compare_run *runs;
	const struct cp_gate_outcome *out;
	struct cp_verdict_measures ms;
};

static int write_markdown(FILE *f, void *ctx, struct cp_error *err)
{
	const struct gate_writing *w = ctx;

	(void)err;
	fputs(w->out->texts.markdown, f);
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

/* The verdict first, then the base runs, then the head runs: the report
 * splits them by the verdict's base.runs/head.runs. The
 * measures are never all built as JSON at once, but here, for the HTML
 * report, which draws them all. */
static int write_html(FILE *f, void *ctx, struct cp_error *err)
{
	const struct gate_writing *w = ctx;
	size_t nruns = w->rq->nbase + w->rq->nhead;
	json_t **docs = calloc(nruns + 1, sizeof(*docs));
	int rc = -1;

	if (!docs || !(docs[0] = whole_verdict(w->out->verdict, &w->ms))) {
		free(docs);
		return cp_fail(err, CP_EXIT_USAGE, "out of memory writing %s", w->rq->html);
	}
	for (size_t i = 0; i < nruns; i++)
		docs[i + 1] = w->runs[i].doc;
	rc = w->rq->html_writer(docs, nruns + 1, f, w->rq->html, err);
	json_decref(docs[0]);
	free(docs);
	return rc;
}

static int write_verdict(FILE *f, void *ctx, struct cp_error *err)
{
	const struct gate_writing *w = ctx;

	return cp_compare_texts_json(f, w->rq->output, w->out->verdict, &w->ms, err);
}

/* The step summary is a courtesy: a full disk there must not turn a
 * failing gate into a usage error, or a passing one into a failure, nor
 * stop the annotations. */
static void append_summary(struct cp_gate_outcome *out)
{
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	struct cp_error e = { 0 };

	if (out->texts.markdown && summary && *summary &&
	    cp_append_text_file(summary, out->texts.markdown, &e))
		snprintf(out->warning, sizeof(out->warning),
			 "GITHUB_STEP_SUMMARY not written: %.400s", e.msg);
}

/* The gate's verdict, then its texts and files. A staged verdict.json
 * (a file) is written as it is rendered, beside the other texts; one that
 * cannot be staged (stdout, a FIFO) after the staged files. */
static int verdict_outputs(const struct cp_gate_request *rq, struct cp_bounds *bounds,
			   const struct cp_compare_run *runs,
			   const struct cp_compare_result *result, struct cp_gate_outcome *out,
			   struct cp_output *outs, struct cp_error *err)
{
	struct cp_compare_side b = { runs, rq->base_files, rq->nbase };
	struct cp_compare_side h = { runs + rq->nbase, rq->head_files, rq->nhead };
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	struct cp_atomic_out *v = outs[GATE_VERDICT].out;
	struct gate_writing w = { rq, runs, out, { 0 } };
	struct cp_compare_texts_request tr = {
		.json = v && cp_atomic_staged(v) ? cp_atomic_stream(v) : NULL,
		.json_name = rq->output,
		.markdown = rq->markdown || (rq->github && summary && *summary),
		.annotations = rq->github,
	};

	out->verdict = cp_verdict_skeleton(result, bounds, &b, &h);
	if (!out->verdict)
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	cp_verdict_measures_of_result(&w.ms, result);
	if (cp_compare_texts_render(out->verdict, &w.ms, &tr, &out->texts, err))
		return -1;
	for (size_t i = 0; i < NGATE; i++)
		outs[i].ctx = &w;
	outs[GATE_MARKDOWN].write = write_markdown;
	outs[GATE_HTML].write = write_html;
	outs[GATE_VERDICT].write = tr.json ? NULL : write_verdict;
	if (cp_outputs_write(outs, NGATE, CP_OUTPUTS_ALL_OR_NONE, err))
		return -1;
	append_summary(out);
	return cp_outputs_publish(outs, NGATE, err);
}

static int judge(const struct cp_gate_request *rq, struct cp_bounds *bounds,
		 const struct cp_compare_run *runs, struct cp_gate_outcome *out,
		 struct cp_output *outs, struct cp_error *err)
{
	struct cp_compare_side b = { runs, rq->base_files, rq->nbase };
	struct cp_compare_side h = { runs + rq->nbase, rq->head_files, rq->nhead };
	struct cp_compare_opts opts = { .alpha = 0.05,
					.fail_on_inconclusive = rq->fail_on_inconclusive,
					.allow_mismatch = rq->allow_mismatch,
					.source_root = rq->source_root };

	if (!(out->result = calloc(1, sizeof(*out->result))))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	if (cp_compare(&b, &h, bounds, &opts, out->result, err)) {
		free(out->result);
		out->result = NULL;
		return -1;
	}
	out->exit_code = out->result->exit_code;
	return verdict_outputs(rq, bounds, runs, out->result, out, outs, err);
}

int cp_gate_run(const struct cp_gate_request *rq, struct cp_gate_outcome *out, struct cp_error *err)
{
	struct cp_output outs[NGATE] = { [GATE_MARKDOWN] = { .path = rq->markdown },
					 [GATE_HTML] = { .path = rq->html },
					 [GATE_VERDICT] = { .path = rq->output } };

	memset(out, 0, sizeof(*out));
	if (rq->html && !rq->html_writer)
		return cp_fail(err, CP_EXIT_USAGE, "no HTML writer for %s", rq->html);
	if (!(out->bounds = calloc(1, sizeof(*out->bounds))))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	cp_bounds_init_defaults(out->bounds);
	if (cp_outputs_open(outs, NGATE, rq->notice, err))
		goto fail;
	if ((rq->bounds_path && cp_bounds_load(rq->bounds_path, out->bounds, err)) ||
	    load_sides(rq, rq->html != NULL, &out->runs, err))
		goto fail;
	out->nruns = rq->nbase + rq->nhead;
	if (judge(rq, out->bounds, out->runs, out, outs, err))
		goto fail;
	return 0;
fail:
	cp_outputs_abort(outs, NGATE);
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
