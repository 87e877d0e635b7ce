/* compare.c - `clockprof compare`: the gate's options. The gate itself
 * (loading, judging, verdict.json, markdown, HTML) is cp_gate_run()
 * (lib/report/include/gate_run.h); this prints the table and the GitHub
 * annotations and exits 0 (within bounds), 1 (regressed; or inconclusive
 * with --fail-on-inconclusive) or 2 (usage or bad input). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "cmd.h"
#include "error.h"
#include "gate_run.h"
#include "grow.h"
#include "github_annotations.h"

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
	  "line (-N%/-N: an improvement required; 'removed-ok GLOB': may vanish), "
	  "first match wins, # comments; without it exact measures allow "
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
		"the bound and the test of 'beyond the bound' holds after Holm "
		"correction over the measures whose estimate is beyond theirs. A "
		"measure every base run has that the head lacks fails the gate.",
	.exit_codes = "Exit codes: 0 within bounds, 1 a measure regressed beyond its bound "
		      "or went missing from the head (or inconclusive, with "
		      "--fail-on-inconclusive), 2 usage error or invalid input, the "
		      "same run given twice included.",
	.order = CP_ORDER_IN_ORDER,
	.operands = CP_COMPLETE_FILE,
};

struct side_files {
	const char **names;
	size_t n, cap;
};

static int add_file(struct side_files *s, const char *name)
{
	if (cp_grow(&s->names, &s->cap, s->n + 1, sizeof(*s->names)))
		return -1;
	s->names[s->n++] = name;
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	struct side_files base = { 0 }, head = { 0 }, *current = NULL;
	const char *bounds_path = NULL, *output = NULL, *markdown = NULL;
	const char *html = NULL;
	int github = 0, fail_inconclusive = 0, quiet, color, opt, code;
	struct cp_cli cli;
	struct cp_error err = { 0 };
	FILE *table_out = stdout;
	struct cp_gate_outcome gate = { 0 };

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
		case OPT_FAIL_INCONCLUSIVE: fail_inconclusive = 1; current = NULL; break;
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
	if (cli.verbose)
		fprintf(stderr, "clockprof: compare: %zu base and %zu head run files, bounds %s\n",
			base.n, head.n, bounds_path ? bounds_path : "(defaults)");
	{
		struct cp_gate_request rq = {
			base.names, base.n, head.names, head.n, bounds_path,
			output, markdown, html, github, fail_inconclusive,
		};

		if (cp_gate_run(&rq, &gate, &err))
			goto fail;
		code = gate.exit_code;
	}
	if (gate.warning[0])
		fprintf(stderr, "clockprof: warning: %s\n", gate.warning);
	if (!quiet || github) {
		char token[33];

		/* With --github the table (which prints names from the
		 * target) runs with workflow commands off; the annotations
		 * follow on the same stream (with -o -, stdout is JSON). */
		if (!quiet) {
			if (github)
				cp_github_stop_commands(table_out, token);
			if (cp_gate_table_write(&gate, table_out, color))
				fprintf(stderr, "clockprof: warning: the table was not written in full\n");
			if (github)
				cp_github_resume_commands(table_out, token);
		}
		if (github)
			fputs(gate.texts.annotations, table_out);
	}
	fflush(stdout);
	goto out;
oom:
	cp_fail(&err, CP_EXIT_USAGE, "out of memory");
fail:
	code = cmd_error(err.exit_code ? err.exit_code : CP_EXIT_USAGE, "%s", err.msg);
out:
	cp_gate_outcome_free(&gate);
	free(base.names);
	free(head.names);
	return code;
}
