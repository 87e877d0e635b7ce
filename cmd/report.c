/* report.c - `clockprof report`: one self-contained HTML file from run
 * files and/or a verdict (lib/report/include/report.h does the work). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "grow.h"
#include "json_file.h"
#include "output_set.h"
#include "report.h"
#include "run_file.h"
#include "verdict_file.h"

enum { OPT_BASE = CP_OPT_FIRST_LONG, OPT_HEAD };

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
static const struct cp_option options[] = {
	CP_OPTION_OUTPUT("write the report to FILE ('-' for stdout); required"),
	CP_OPTION_FILE(OPT_BASE, "base", "RUN...",
	  "the verdict's base run files: RUN and the files after it"),
	CP_OPTION_FILE(OPT_HEAD, "head", "RUN...",
	  "the verdict's head run files: RUN and the files after it"),
	{ 0 },
};
/* clang-format on */

const struct cp_command_spec cmd_report_spec = {
	.name = "report",
	.synopsis = { "[OPTIONS] RUN.json... -o report.html",
		      "[OPTIONS] VERDICT.json [--base RUN.json... --head RUN.json...] -o report.html" },
	.summary = "write one self-contained HTML report of runs or a verdict",
	.description = "Writes one self-contained HTML file to open in a browser: it loads "
		       "nothing from the network and reads without JavaScript (tables), with "
		       "charts and an interactive flame graph when JavaScript runs.\n\n"
		       "Run files (clockprof.run/1): a run report each: target, host, window, "
		       "warnings, headline, clock reads by entry, path and clock, reads per "
		       "request, call sites, counters, flame graph of clock-read stacks.\n\n"
		       "A verdict (clockprof.verdict/1, from 'clockprof compare'): the verdict, "
		       "every measure base vs head, a before/after chart; with the base and "
		       "head run files of that comparison also a differential flame graph and "
		       "the call sites that appeared or disappeared.",
	.options = options,
	.notes = "With a verdict, give as many base and head runs as the verdict compared "
		 "(its base.runs and head.runs); run files given without --base/--head "
		 "after a verdict are taken in order, base runs first.",
	.exit_codes = "Exit codes: 0 written, 2 usage error or unreadable/invalid input.",
	.order = CP_ORDER_IN_ORDER,
	.operands = CP_COMPLETE_FILE,
};

enum side { SIDE_NONE, SIDE_BASE, SIDE_HEAD };

struct input {
	json_t **docs;
	size_t n, docs_cap, side_cap;
	enum side *side;
};

static int load(struct input *in, const char *path, enum side side, struct cp_error *err)
{
	json_t *doc;
	const char *schema;

	if (cp_run_file_parse(path, &doc, err))
		return -1;
	schema = json_string_value(json_object_get(doc, "schema"));
	if (!schema || (strcmp(schema, CP_VERDICT_SCHEMA) && strcmp(schema, CP_RUN_SCHEMA))) {
		cp_fail(err, CP_EXIT_USAGE,
			"%s: neither a clockprof run file (%s) nor a verdict (%s)", path,
			CP_RUN_SCHEMA, CP_VERDICT_SCHEMA);
		goto fail;
	}
	if (!strcmp(schema, CP_VERDICT_SCHEMA)) {
		if (cp_verdict_file_validate(doc, path, err))
			goto fail;
		side = SIDE_NONE;
	} /* a run file was checked as it was read */
	if (cp_grow(&in->docs, &in->docs_cap, in->n + 1, sizeof(*in->docs)) ||
	    cp_grow(&in->side, &in->side_cap, in->n + 1, sizeof(*in->side)))
		goto oom;
	in->docs[in->n] = doc;
	in->side[in->n++] = side;
	return 0;
oom:
	cp_fail(err, CP_EXIT_USAGE, "out of memory reading %s", path);
fail:
	json_decref(doc);
	return -1;
}

static int is_verdict(const json_t *doc)
{
	const char *schema = json_string_value(json_object_get(doc, "schema"));

	return schema && !strcmp(schema, CP_VERDICT_SCHEMA);
}

/* Orders the documents for cp_report_write: the verdict, base runs, head
 * runs, then runs given without a side. */
static int order(const struct input *in, json_t **out, struct cp_error *err)
{
	size_t n = 0, verdicts = 0, sided = 0, unsided = 0;

	for (size_t i = 0; i < in->n; i++) {
		verdicts += is_verdict(in->docs[i]);
		sided += in->side[i] != SIDE_NONE;
		unsided += !is_verdict(in->docs[i]) && in->side[i] == SIDE_NONE;
	}
	if (verdicts > 1)
		return cp_fail(err, CP_EXIT_USAGE,
			       "%zu verdict files given; a report shows one verdict", verdicts);
	if (sided && !verdicts)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"--base and --head go with a verdict file; give the verdict from 'clockprof compare' too");
	if (sided && unsided)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"some run files are marked --base/--head and some are not; mark every run file of the comparison");
	for (size_t i = 0; i < in->n; i++)
		if (is_verdict(in->docs[i]))
			out[n++] = in->docs[i];
	for (enum side s = SIDE_BASE; s <= SIDE_HEAD; s++)
		for (size_t i = 0; i < in->n; i++)
			if (!is_verdict(in->docs[i]) && in->side[i] == s)
				out[n++] = in->docs[i];
	for (size_t i = 0; i < in->n; i++)
		if (!is_verdict(in->docs[i]) && in->side[i] == SIDE_NONE)
			out[n++] = in->docs[i];
	return 0;
}

struct report_writing {
	json_t **docs;
	size_t n;
	const char *output;
};

static int write_page(FILE *f, void *ctx, struct cp_error *err)
{
	const struct report_writing *w = ctx;

	return cp_report_write(w->docs, w->n, f, w->output, err);
}

static int write_report(json_t **docs, size_t n, const char *output, struct cp_error *err)
{
	struct report_writing w = { docs, n, output };
	struct cp_output out = { output, write_page, &w, NULL };

	if (cp_outputs_open(&out, 1, cmd_wait_notice, err))
		return -1;
	if (cp_outputs_write(&out, 1, CP_OUTPUTS_ALL_OR_NONE, err))
		return -1;
	return cp_outputs_publish(&out, 1, err);
}

/* Takes the options and loads the files they name, in order: the files
 * after --base or --head belong to that side. Returns 0 to go on, -1 with
 * err filled, or 1 when done (--help, --version, an option error already
 * said) with the exit code in *rc. */
static int parse_inputs(struct cp_cli *cli, struct input *in, const char **output,
			struct cp_error *err, int *rc)
{
	enum side side = SIDE_NONE;
	int c;

	while ((c = cp_cli_next(cli, err)) != CP_OPT_END) {
		switch (c) {
		case 'o': *output = cli->value; break;
		case OPT_BASE:
		case OPT_HEAD:
			side = c == OPT_BASE ? SIDE_BASE : SIDE_HEAD;
			/* fall through */
		case CP_OPT_OPERAND:
			if (load(in, cli->value, side, err))
				return -1;
			if (cli->verbose)
				fprintf(stderr, "clockprof: report: read %s\n", cli->value);
			break;
		default: *rc = cmd_option_exit(cli, c, err); return 1;
		}
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct input in = { 0 };
	struct cp_error err = { 0 };
	const char *output = NULL;
	json_t **ordered = NULL;
	int parsed, rc = CP_EXIT_USAGE;
	struct cp_cli cli;

	cp_cli_init(&cli, &cmd_report_spec, argc, argv);
	if ((parsed = parse_inputs(&cli, &in, &output, &err, &rc)) < 0)
		goto fail;
	if (parsed > 0)
		goto out;
	if (!output) {
		cmd_error(CP_EXIT_USAGE,
			  "no output file; give -o report.html (see 'clockprof report --help')");
		goto out;
	}
	if (!in.n) {
		cmd_error(CP_EXIT_USAGE,
			  "no input; give run files or a verdict (see 'clockprof report --help')");
		goto out;
	}
	if (!(ordered = calloc(in.n, sizeof(*ordered)))) {
		cmd_error(CP_EXIT_USAGE, "out of memory");
		goto out;
	}
	if (order(&in, ordered, &err) || write_report(ordered, in.n, output, &err))
		goto fail;
	if (strcmp(output, "-") && !cli.quiet)
		fprintf(stderr, "clockprof: wrote %s\n", output);
	rc = CP_EXIT_OK;
	goto out;
fail:
	rc = cmd_error(err.exit_code ? err.exit_code : CP_EXIT_USAGE, "%s", err.msg);
out:
	for (size_t i = 0; i < in.n; i++)
		json_decref(in.docs[i]);
	free(in.docs);
	free(in.side);
	free(ordered);
	return rc;
}
