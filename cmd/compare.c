/* compare.c - `clockprof compare`: the gate. Loads the base and head run
 * files and the bounds, judges every measure (lib/gate/compare.h), writes
 * verdict.json, markdown, the HTML report and GitHub annotations as asked,
 * prints the table, and exits 0 (within bounds), 1 (regressed; or
 * inconclusive with --fail-on-inconclusive) or 2 (usage or bad input). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "bounds.h"
#include "cmd.h"
#include "compare.h"
#include "compare_markdown.h"
#include "compare_table.h"
#include "compare_texts.h"
#include "error.h"
#include "github_annotations.h"
#include "json_file.h"
#include "report.h"
#include "run_file.h"
#include "stats.h"
#include "verdict_file.h"

enum { OPT_BASE = CP_OPT_FIRST_LONG, OPT_HEAD, OPT_BOUNDS, OPT_MARKDOWN, OPT_HTML,
       OPT_GITHUB, OPT_FAIL_INCONCLUSIVE };

static const struct cp_option options[] = {
	{ .id = OPT_BASE, .long_name = "base", .value = "FILE...",
	  .help = "base run files (clockprof.run/1): FILE and "
	  "the files after it",
	  .complete = CP_COMPLETE_FILE },
	{ .id = OPT_HEAD, .long_name = "head", .value = "FILE...",
	  .help = "head run files: FILE and the files after it",
	  .complete = CP_COMPLETE_FILE },
	{ .id = OPT_BOUNDS, .long_name = "bounds", .value = "FILE",
	  .help = "bounds file: 'GLOB +N%' or 'GLOB +N' per "
	  "line, first match wins, # comments; without it exact measures allow "
	  CP_BOUND_DEFAULT_EXACT " and sampled measures " CP_BOUND_DEFAULT_SAMPLED,
	  .complete = CP_COMPLETE_FILE },
	{ .id = 'o', .short_name = 'o', .long_name = "output", .value = "FILE",
	  .help = "write verdict.json (clockprof.verdict/1); - for "
	  "stdout (the table then goes to stderr)",
	  .complete = CP_COMPLETE_FILE },
	{ .id = OPT_MARKDOWN, .long_name = "markdown", .value = "FILE",
	  .help = "write a markdown summary (also appended "
	  "to $GITHUB_STEP_SUMMARY when that is set)",
	  .complete = CP_COMPLETE_FILE },
	{ .id = OPT_HTML, .long_name = "html", .value = "FILE",
	  .help = "write the HTML report of the comparison",
	  .complete = CP_COMPLETE_FILE },
	{ .id = OPT_GITHUB, .long_name = "github",
	  .help = "print GitHub Actions annotations for regressions" },
	{ .id = OPT_FAIL_INCONCLUSIVE, .long_name = "fail-on-inconclusive",
	  .help = "exit 1 when the verdict is inconclusive too" },
	{ 0 },
};

const struct cp_command_spec cmd_compare_spec = {
	.name = "compare",
	.synopsis = { "[OPTIONS] --base RUN.json... --head RUN.json..." },
	.summary = "judge head runs against base runs and gate CI",
	.description =
		"Judges head runs against base runs, measure by measure. Each side is "
		"one or more run files (repeated runs of one build); a shell glob after "
		"--base or --head is fine.\n\n"
		"  clockprof compare --base ab/base-*.json --head ab/head-*.json --bounds clockprof.bounds",
	.options = options,
	.notes =
		"Exact measures compare values; sampled ones need enough runs per side "
		"for a 95% interval (Hodges-Lehmann; too few are reported with the "
		"number needed) and regress only when that whole interval lies beyond "
		"the bound after Holm correction over all sampled measures.",
	.exit_codes = "Exit codes: 0 within bounds, 1 a measure regressed beyond its bound "
		      "(or inconclusive, with --fail-on-inconclusive), 2 usage error or "
		      "invalid input.",
	.order = CP_ORDER_IN_ORDER,
	.operands = CP_COMPLETE_FILE,
};

struct side_files {
	const char **names;
	size_t n;
	struct cp_compare_run *runs;
};

static int add_file(struct side_files *s, const char *name)
{
	const char **n = realloc(s->names, (s->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	s->names = n;
	s->names[s->n++] = name;
	return 0;
}

/* Loads both sides in one batch, base files first: the loader's threads
 * then never wait for the last file of one side before starting the
 * other (8 ms of a 1,000-measure, 60-run gate). base->runs and
 * head->runs point into *all. whole: keep every run's whole document,
 * for the HTML report. */
static int load_sides(struct side_files *base, struct side_files *head, int whole,
		      struct cp_compare_run **all, struct cp_error *err)
{
	size_t n = base->n + head->n;
	const char **names = calloc(n + 1, sizeof(*names));
	int rc;

	*all = calloc(n + 1, sizeof(**all));
	if (!names || !*all) {
		free(names);
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	}
	memcpy(names, base->names, base->n * sizeof(*names));
	memcpy(names + base->n, head->names, head->n * sizeof(*names));
	rc = cp_compare_load_runs(names, n, whole, *all, err);
	free(names);
	base->runs = *all;
	head->runs = *all + base->n;
	return rc;
}

/* Writes the outputs from the rendered texts; returns 0 or -1 with the
 * message in err. */
static int write_outputs(const json_t *verdict, const struct cp_compare_texts *t,
			 struct side_files *base, struct side_files *head,
			 const char *output, const char *markdown, const char *html,
			 struct cp_error *err)
{
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	int rc = 0;

	if (output && cp_json_write_text(t->json, output, err))
		return -1;
	if (markdown && cp_write_file_atomic(markdown, t->markdown,
					     strlen(t->markdown), err))
		return -1;
	if (t->markdown && summary && *summary &&
	    cp_append_text_file(summary, t->markdown, err))
		return -1;
	if (html) {
		/* The verdict first, then the base runs, then the head runs:
		 * lib/report/report.h splits them by the verdict's base.runs/head.runs. */
		size_t n = 1 + base->n + head->n, k = 0;
		json_t **docs = calloc(n, sizeof(*docs));

		if (!docs)
			return cp_fail(err, CP_EXIT_USAGE, "out of memory writing %s", html);
		docs[k++] = (json_t *)verdict;
		for (size_t i = 0; i < base->n; i++)
			docs[k++] = base->runs[i].doc;
		for (size_t i = 0; i < head->n; i++)
			docs[k++] = head->runs[i].doc;
		rc = cp_report_write(docs, n, html, err);
		free(docs);
	}
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct side_files base = { 0 }, head = { 0 }, *current = NULL;
	struct cp_compare_run *runs = NULL;	/* both sides' */
	const char *bounds_path = NULL, *output = NULL, *markdown = NULL;
	const char *html = NULL;
	int github = 0, quiet, color, opt, code;
	struct cp_cli cli;
	struct cp_compare_opts opts = { .alpha = 0.05 };
	struct cp_bounds bounds;
	struct cp_compare_result result;
	struct cp_error err = { 0 };
	json_t *verdict = NULL;
	FILE *table_out = stdout;
	struct cp_compare_texts texts = { 0 };

	cp_bounds_init_defaults(&bounds);
	cp_cli_init(&cli, &cmd_compare_spec, argc, argv);
	/* In order: the files of a glob after --base/--head come back one by
	 * one as operands and join the side named last. */
	while ((opt = cp_cli_next(&cli, &err)) != CP_OPT_END) {
		const char *optarg = cli.value;

		switch (opt) {
		case OPT_BASE:
			current = &base;
			if (add_file(current, optarg))
				goto oom;
			break;
		case OPT_HEAD:
			current = &head;
			if (add_file(current, optarg))
				goto oom;
			break;
		case CP_OPT_OPERAND:
			if (!current) {
				code = cmd_error(CP_EXIT_USAGE,
						 "compare: '%s' is not an option; put run files after --base or --head",
						 optarg);
				goto out;
			}
			if (add_file(current, optarg))
				goto oom;
			break;
		case OPT_BOUNDS: bounds_path = optarg; current = NULL; break;
		case 'o': output = optarg; current = NULL; break;
		case OPT_MARKDOWN: markdown = optarg; current = NULL; break;
		case OPT_HTML: html = optarg; current = NULL; break;
		case OPT_GITHUB: github = 1; current = NULL; break;
		case OPT_FAIL_INCONCLUSIVE: opts.fail_on_inconclusive = 1; current = NULL; break;
		default:
			code = cmd_option_exit(&cli, opt, &err);
			goto out;
		}
	}
	quiet = cli.quiet;
	if (!base.n || !head.n) {
		code = cmd_error(CP_EXIT_USAGE,
				 "compare: give at least one run file after --base and one after --head");
		goto out;
	}
	color = cp_cli_color(&cli, STDOUT_FILENO);
	if (output && !strcmp(output, "-")) {
		table_out = stderr;	/* stdout carries the JSON */
		color = cp_cli_color(&cli, STDERR_FILENO);
	}
	if ((output && cp_check_writable(output, &err)) ||
	    (markdown && cp_check_writable(markdown, &err)) ||
	    (html && cp_check_writable(html, &err)) ||
	    (bounds_path && cp_bounds_load(bounds_path, &bounds, &err)) ||
	    load_sides(&base, &head, html != NULL, &runs, &err))
		goto fail;
	{
		struct cp_compare_side b = { base.runs, base.names, base.n };
		struct cp_compare_side h = { head.runs, head.names, head.n };

		if (cli.verbose)
			fprintf(stderr, "clockprof: compare: %zu base and %zu head run files, bounds %s\n",
				base.n, head.n, bounds_path ? bounds_path : "(defaults)");

		if (cp_compare(&b, &h, &bounds, &opts, &result, &err))
			goto fail;
		verdict = cp_verdict_build(&result, &bounds, &b, &h);
		code = result.exit_code;
		cp_compare_result_free(&result);
	}
	if (!verdict)
		goto oom;
	{
		const char *summary = getenv("GITHUB_STEP_SUMMARY");
		int want_md = markdown || (github && summary && *summary);

		if (cp_compare_texts_render(verdict, output != NULL, want_md, !quiet,
					    color, &texts))
			goto oom;
	}
	if (write_outputs(verdict, &texts, &base, &head, output, markdown, html, &err))
		goto fail;
	if (!quiet || github) {
		char token[33];

		/* With --github the table (which prints names from the
		 * target) runs with workflow commands off; the annotations
		 * follow on the same stream (with -o -, stdout is JSON). */
		if (!quiet) {
			if (github)
				cp_github_stop_commands(table_out, token);
			fputs(texts.table, table_out);
			if (github)
				cp_github_resume_commands(table_out, token);
		}
		if (github)
			cp_github_annotations_write(table_out, verdict);
	}
	fflush(stdout);
	goto out;
oom:
	cp_fail(&err, CP_EXIT_USAGE, "out of memory");
fail:
	code = cmd_error(err.exit_code ? err.exit_code : CP_EXIT_USAGE, "%s", err.msg);
out:
	cp_compare_texts_free(&texts);
	json_decref(verdict);
	cp_bounds_free(&bounds);
	for (size_t i = 0; runs && i < base.n + head.n; i++)
		cp_compare_run_free(&runs[i]);
	free(runs);
	free(base.names);
	free(head.names);
	return code;
}
