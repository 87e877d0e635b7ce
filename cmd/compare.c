/* compare.c - `clockprof compare`: the gate's options. The gate itself
 * (loading, judging, verdict.json, markdown, HTML) is cp_gate_run()
 * (lib/report/gate_run.h); this prints the table and the GitHub
 * annotations and exits 0 (within bounds), 1 (regressed; or
 * inconclusive with --fail-on-inconclusive) or 2 (usage or bad input). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "cmd.h"
#include "compare.h"
#include "compare_table.h"
#include "error.h"
#include "gate_run.h"
#include "github_annotations.h"
#include "stats.h"

static const char usage_text[] =
"usage: clockprof compare [OPTIONS] --base RUN.json... --head RUN.json...\n"
"\n"
"Judge head runs against base runs, measure by measure, and gate CI:\n"
"exit 0 within bounds, 1 a measure regressed beyond its bound, 2 usage\n"
"error or invalid input. Each side is one or more run files (repeated\n"
"runs of one build); a shell glob after --base or --head is fine.\n"
"\n"
"  --base FILE...          base run files (clockprof.run/1)\n"
"  --head FILE...          head run files\n"
"  --bounds FILE           bounds file: 'GLOB +N%%' or 'GLOB +N' per line (-N%%/-N:\n"
"                          an improvement required; 'removed-ok GLOB': may vanish),\n"
"                          first match wins, # comments; without it exact measures\n"
"                          allow +%s and sampled measures +%s\n"
"  -o, --output FILE       write verdict.json (clockprof.verdict/1); - is stdout\n"
"  --markdown FILE         write a markdown summary (also appended to\n"
"                          $GITHUB_STEP_SUMMARY when that is set)\n"
"  --html FILE             write the HTML report of the comparison\n"
"  --github                print GitHub Actions annotations for regressions\n"
"  --fail-on-inconclusive  exit 1 when the verdict is inconclusive too\n"
"  --color=WHEN            auto (default: on a TTY, unless NO_COLOR), always, never\n"
"  -q, --quiet             do not print the table\n"
"  -h, --help              this help\n"
"\n"
"Exact measures compare values; sampled ones need at least %zu runs per side\n"
"and regress only when their whole 95%% interval (Hodges-Lehmann) lies beyond\n"
"the bound and the test of 'beyond the bound' holds after Holm correction\n"
"over the measures whose estimate is beyond theirs. A measure every base run\n"
"has that the head lacks fails the gate; duplicate runs exit 2.\n";

enum { OPT_BASE = 256, OPT_HEAD, OPT_BOUNDS, OPT_MARKDOWN, OPT_HTML, OPT_GITHUB,
       OPT_FAIL_INCONCLUSIVE, OPT_COLOR };

struct side_files {
	const char **names;
	size_t n;
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

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, OPT_BASE },
		{ "head", required_argument, NULL, OPT_HEAD },
		{ "bounds", required_argument, NULL, OPT_BOUNDS },
		{ "output", required_argument, NULL, 'o' },
		{ "markdown", required_argument, NULL, OPT_MARKDOWN },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "github", no_argument, NULL, OPT_GITHUB },
		{ "fail-on-inconclusive", no_argument, NULL, OPT_FAIL_INCONCLUSIVE },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "colour", required_argument, NULL, OPT_COLOR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct side_files base = { 0 }, head = { 0 }, *current = NULL;
	const char *bounds_path = NULL, *output = NULL, *markdown = NULL;
	const char *html = NULL, *color_mode = NULL;
	int github = 0, quiet = 0, color, opt, code;
	struct cp_compare_opts opts = { .alpha = 0.05 };
	struct cp_error err = { 0 };
	FILE *table_out = stdout;
	struct cp_gate_outcome gate = { 0 };

	opterr = 0;
	optind = 1;
	/* Leading '-': non-option arguments come back in order as 1, so the
	 * files of a glob after --base/--head join the side named last. */
	while ((opt = getopt_long(argc, argv, "-:o:qh", longopts, NULL)) != -1) {
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
		case 1:
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
		case OPT_COLOR: color_mode = optarg; current = NULL; break;
		case 'q': quiet = 1; current = NULL; break;
		case 'h':
			printf(usage_text, CP_BOUND_DEFAULT_EXACT,
			       CP_BOUND_DEFAULT_SAMPLED, cp_hl_min_runs(CP_Z_975));
			code = CP_EXIT_OK;
			goto out;
		case ':':
			code = cmd_error(CP_EXIT_USAGE, "compare: %s needs a value; see 'clockprof compare --help'",
					 argv[optind - 1]);
			goto out;
		default:
			code = cmd_error(CP_EXIT_USAGE, "compare: unknown option '%s'; see 'clockprof compare --help'",
					 argv[optind - 1]);
			goto out;
		}
	}
	if (!base.n || !head.n) {
		code = cmd_error(CP_EXIT_USAGE,
				 "compare: give at least one run file after --base and one after --head");
		goto out;
	}
	color = cp_color_wanted(color_mode, STDOUT_FILENO);
	if (color < 0) {
		code = cmd_error(CP_EXIT_USAGE,
				 "compare: --color must be auto, always or never, not '%s'",
				 color_mode);
		goto out;
	}
	if (output && !strcmp(output, "-")) {
		table_out = stderr;	/* stdout carries the JSON */
		color = cp_color_wanted(color_mode, STDERR_FILENO);
	}
	{
		struct cp_gate_request rq = {
			base.names, base.n, head.names, head.n, bounds_path,
			output, markdown, html, github, !quiet, color,
			opts.fail_on_inconclusive,
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
			fputs(gate.texts.table, table_out);
			if (github)
				cp_github_resume_commands(table_out, token);
		}
		if (github)
			cp_github_annotations_write(table_out, gate.verdict);
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
