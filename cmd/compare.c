/* compare.c - `clockprof compare`: the gate's options. The gate itself
 * (loading, judging, verdict.json, markdown, HTML) is cp_gate_run()
 * (lib/gate/include/gate.h); this prints the table and the GitHub
 * annotations and exits 0 (within bounds), 1 (regressed; or inconclusive
 * with --fail-on-inconclusive) or 2 (usage or bad input). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounds.h"
#include "cmd.h"
#include "error.h"
#include "gate.h"
#include "grow.h"
#include "github_annotations.h"
#include "report.h"

enum {
	OPT_BASE = CP_OPT_FIRST_LONG,
	OPT_HEAD,
	OPT_BOUNDS,
	OPT_MARKDOWN,
	OPT_HTML,
	OPT_GITHUB,
	OPT_FAIL_INCONCLUSIVE,
	OPT_ALLOW_MISMATCH,
	OPT_SOURCE_ROOT
};

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
static const struct cp_option options[] = {
	{ .id = OPT_BASE, .long_name = "base", .value = "FILE...",
	  .help = "base run files (clockprof.run/1): FILE and "
	  "the files after it",
	  .complete = CP_COMPLETE_FILE, .repeatable = 1 },
	{ .id = OPT_HEAD, .long_name = "head", .value = "FILE...",
	  .help = "head run files: FILE and the files after it",
	  .complete = CP_COMPLETE_FILE, .repeatable = 1 },
	CP_OPTION_FILE(OPT_BOUNDS, "bounds", "FILE",
	  "bounds file: 'GLOB +N%' or 'GLOB +N' per "
	  "line (-N%/-N: an improvement required; 'removed-ok GLOB': may vanish), "
	  "first match wins, # comments; without it exact measures allow "
	  CP_BOUND_DEFAULT_EXACT " and sampled measures " CP_BOUND_DEFAULT_SAMPLED
	  ", both at least " CP_BOUND_DEFAULT_FLOOR " where the base median is "
	  "below 1 or an exact measure varies"),
	CP_OPTION_OUTPUT("write verdict.json (clockprof.verdict/1); - for "
	  "stdout (the table then goes to stderr)"),
	CP_OPTION_FILE(OPT_MARKDOWN, "markdown", "FILE",
	  "write a markdown summary; with --markdown or --github it "
	  "is also appended to $GITHUB_STEP_SUMMARY when that is set"),
	CP_OPTION_FILE(OPT_HTML, "html", "FILE", "write the HTML report of the comparison"),
	CP_OPTION_FLAG(OPT_GITHUB, "github",
	  "print GitHub Actions annotations for regressions (and "
	  "append the markdown summary to $GITHUB_STEP_SUMMARY when set)"),
	{ .id = OPT_SOURCE_ROOT, .long_name = "source-root", .value = "DIR",
	  .help = "the repository's root: the lines a regressed per-site measure "
	  "gained are named relative to it (annotations' file=); default the "
	  "current directory",
	  .complete = CP_COMPLETE_DIR },
	CP_OPTION_FLAG(OPT_FAIL_INCONCLUSIVE, "fail-on-inconclusive",
	  "exit 1 when the verdict is inconclusive too"),
	CP_OPTION_FLAG(OPT_ALLOW_MISMATCH, "allow-mismatch",
	  "judge runs whose request boundary (-r, as resolved) or ops_source "
	  "differ, when the change is meant (a warning says so); never runs of "
	  "different mechanisms"),
	{ 0 },
};
/* clang-format on */

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
	.notes = "Exact measures compare values; sampled ones need enough runs per side "
		 "for a 95% interval (Hodges-Lehmann; too few are reported with the "
		 "number needed) and regress only when their estimate lies beyond the "
		 "bound and the one-sided test of 'beyond the bound' holds after Holm "
		 "correction over the measures that could be beyond theirs. A "
		 "measure every base run has that the head lacks fails the gate.",
	.exit_codes = "Exit codes: 0 within bounds, 1 a measure regressed beyond its bound "
		      "or went missing from the head (or inconclusive, with "
		      "--fail-on-inconclusive), 2 usage error or invalid input, the "
		      "same run given twice and runs of different request boundaries "
		      "or ops_source (without --allow-mismatch) included; and no verdict "
		      "from runs that measured nothing: a side with a request boundary "
		      "and no complete request in any run, or no clock read in any run "
		      "of either side.",
	.order = CP_ORDER_IN_ORDER,
	.operands = CP_COMPLETE_FILE,
};

struct side_files {
	const char **names;
	size_t n, cap;
};

/* What the command line asked for. */
struct compare_args {
	struct side_files base, head;
	struct cp_gate_request rq;
};

static int add_file(struct side_files *s, const char *name, struct cp_error *err)
{
	if (cp_grow(&s->names, &s->cap, s->n + 1, sizeof(*s->names)))
		return cp_fail(err, CP_EXIT_USAGE, "out of memory");
	s->names[s->n++] = name;
	return 0;
}

static int is_directory(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Parses argv into a; returns 1 to go on, or 0 with the exit code in
 * *code (--help, --version, or an error already said). In order: the files
 * of a glob after --base/--head come back one by one as operands and join
 * the side named last. */
static int parse_args(struct cp_cli *cli, struct compare_args *a, int *code)
{
	struct side_files *current = NULL;
	struct cp_error err = { 0 };
	int opt;

	while ((opt = cp_cli_next(cli, &err)) != CP_OPT_END) {
		const char *v = cli->value;

		if (opt == OPT_BASE || opt == OPT_HEAD)
			current = opt == OPT_BASE ? &a->base : &a->head;
		else if (opt != CP_OPT_OPERAND)
			current = NULL;
		switch (opt) {
		case OPT_BASE:
		case OPT_HEAD:
		case CP_OPT_OPERAND:
			if (!current) {
				*code = cmd_error(
					CP_EXIT_USAGE,
					"compare: '%s' is not an option; put run files after --base or --head",
					v);
				return 0;
			}
			if (add_file(current, v, &err)) {
				*code = cmd_error(err.exit_code, "%s", err.msg);
				return 0;
			}
			break;
		case OPT_BOUNDS: a->rq.bounds_path = v; break;
		case 'o': a->rq.output = v; break;
		case OPT_MARKDOWN: a->rq.markdown = v; break;
		case OPT_HTML: a->rq.html = v; break;
		case OPT_GITHUB: a->rq.github = 1; break;
		case OPT_FAIL_INCONCLUSIVE: a->rq.fail_on_inconclusive = 1; break;
		case OPT_ALLOW_MISMATCH: a->rq.allow_mismatch = 1; break;
		case OPT_SOURCE_ROOT: a->rq.source_root = v; break;
		default: *code = cmd_option_exit(cli, opt, &err); return 0;
		}
	}
	if (!a->base.n || !a->head.n) {
		*code = cmd_error(
			CP_EXIT_USAGE,
			"compare: give at least one run file after --base and one after --head");
		return 0;
	}
	if (a->rq.source_root && !is_directory(a->rq.source_root)) {
		*code = cmd_error(CP_EXIT_USAGE, "compare: --source-root %s: not a directory",
				  a->rq.source_root);
		return 0;
	}
	return 1;
}

/* The table, and with --github the annotations after it on the same
 * stream. The table prints names from the target, so under --github it
 * runs with workflow commands off. */
static void print_outcome(const struct cp_gate_outcome *gate, FILE *out, int quiet, int color,
			  int github)
{
	char token[33];

	if (gate->warning[0])
		fprintf(stderr, "clockprof: warning: %s\n", gate->warning);
	if (!quiet) {
		if (github)
			cp_github_stop_commands(out, token);
		if (cp_gate_table_write(gate, out, color))
			fprintf(stderr, "clockprof: warning: the table was not written in full\n");
		if (github)
			cp_github_resume_commands(out, token);
	}
	if (github)
		fputs(gate->texts.annotations, out);
	fflush(stdout);
	fflush(stderr);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args a = { 0 };
	struct cp_error err = { 0 };
	struct cp_gate_outcome gate = { 0 };
	FILE *table_out = stdout; /* with -o -, stdout carries the JSON */
	struct cp_cli cli;
	int code;

	cp_cli_init(&cli, &cmd_compare_spec, argc, argv);
	if (!parse_args(&cli, &a, &code))
		goto out;
	if (a.rq.output && !strcmp(a.rq.output, "-"))
		table_out = stderr;
	a.rq.base_files = a.base.names;
	a.rq.nbase = a.base.n;
	a.rq.head_files = a.head.names;
	a.rq.nhead = a.head.n;
	a.rq.notice = cmd_wait_notice;
	a.rq.html_writer = cp_report_write;
	if (cli.verbose)
		fprintf(stderr, "clockprof: compare: %zu base and %zu head run files, bounds %s\n",
			a.base.n, a.head.n, a.rq.bounds_path ? a.rq.bounds_path : "(defaults)");
	if (cp_gate_run(&a.rq, &gate, &err)) {
		code = cmd_error(err.exit_code ? err.exit_code : CP_EXIT_USAGE, "%s", err.msg);
		goto out;
	}
	code = gate.exit_code;
	print_outcome(&gate, table_out, cli.quiet, cp_cli_color(&cli, fileno(table_out)),
		      a.rq.github);
out:
	cp_gate_outcome_free(&gate);
	free(a.base.names);
	free(a.head.names);
	return code;
}
