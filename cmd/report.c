/* report.c - `clockprof report`: one self-contained HTML file from run
 * files and/or a verdict (lib/report/report.h does the work). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cmd.h"
#include "error.h"
#include "json_file.h"
#include "report.h"
#include "run_file.h"
#include "verdict_file.h"

static void usage(FILE *out)
{
	fputs("usage: clockprof report [OPTIONS] RUN.json... -o report.html\n"
	      "       clockprof report [OPTIONS] VERDICT.json [--base RUN.json... --head RUN.json...] -o report.html\n"
	      "\n"
	      "Writes one self-contained HTML file to open in a browser: it loads\n"
	      "nothing from the network and reads without JavaScript (tables), with\n"
	      "charts and an interactive flame graph when JavaScript runs.\n"
	      "\n"
	      "  Run files (clockprof.run/1): a run report each: target, host, window,\n"
	      "  warnings, headline, clock reads by entry, path and clock, reads per\n"
	      "  request, call sites, counters, flame graph of clock-read stacks.\n"
	      "  A verdict (clockprof.verdict/1, from 'clockprof compare'): the verdict,\n"
	      "  every measure base vs head, a before/after chart; with the base and\n"
	      "  head run files of that comparison also a differential flame graph and\n"
	      "  the call sites that appeared or disappeared.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE   write the report to FILE ('-' for standard output); required\n"
	      "      --base RUN...   the verdict's base run files: RUN and the files after it\n"
	      "      --head RUN...   the verdict's head run files: RUN and the files after it\n"
	      "  -h, --help          show this help\n"
	      "\n"
	      "With a verdict, give as many base and head runs as the verdict compared\n"
	      "(its base.runs and head.runs); run files given without --base/--head\n"
	      "after a verdict are taken in order, base runs first.\n"
	      "\n"
	      "Exit codes: 0 written, 2 usage error or unreadable/invalid input.\n",
	      out);
}

enum side { SIDE_NONE, SIDE_BASE, SIDE_HEAD };

struct input {
	json_t **docs;
	size_t n;
	enum side *side;
};

static int load(struct input *in, const char *path, enum side side,
		struct cp_error *err)
{
	json_t *doc;
	const char *schema;
	void *p;

	if (cp_json_load_file(path, NULL, &doc, err))
		return -1;
	schema = json_string_value(json_object_get(doc, "schema"));
	if (!schema || (strcmp(schema, CP_VERDICT_SCHEMA) && strcmp(schema, CP_RUN_SCHEMA))) {
		cp_fail(err, CP_EXIT_USAGE,
			"%s: neither a clockprof run file (%s) nor a verdict (%s)",
			path, CP_RUN_SCHEMA, CP_VERDICT_SCHEMA);
		goto fail;
	}
	if (!strcmp(schema, CP_VERDICT_SCHEMA)) {
		if (cp_verdict_file_validate(doc, path, err))
			goto fail;
		side = SIDE_NONE;
	} else if (cp_run_file_validate(doc, path, err)) {
		goto fail;
	}
	if (!(p = realloc(in->docs, (in->n + 1) * sizeof(*in->docs))))
		goto oom;
	in->docs = p;
	if (!(p = realloc(in->side, (in->n + 1) * sizeof(*in->side))))
		goto oom;
	in->side = p;
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
		return cp_fail(err, CP_EXIT_USAGE,
			       "--base and --head go with a verdict file; give the verdict from 'clockprof compare' too");
	if (sided && unsided)
		return cp_fail(err, CP_EXIT_USAGE,
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

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "base", required_argument, NULL, 'b' },
		{ "head", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct input in = { 0 };
	struct cp_error err = { 0 };
	enum side side = SIDE_NONE;
	const char *output = NULL;
	json_t **ordered = NULL;
	int c, rc = CP_EXIT_USAGE;

	opterr = 0;
	optind = 1;
	/* A leading '-' hands files to us in order (c == 1), so that the files
	 * after --base or --head belong to that side. */
	while ((c = getopt_long(argc, argv, "-:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'b':
		case 'H':
			side = c == 'b' ? SIDE_BASE : SIDE_HEAD;
			/* fall through */
		case 1:
			if (load(&in, optarg, side, &err))
				goto fail;
			break;
		case 'h':
			usage(stdout);
			rc = CP_EXIT_OK;
			goto out;
		case ':':
			cmd_error(CP_EXIT_USAGE, "option %s needs a value; see 'clockprof report --help'",
				  argv[optind - 1]);
			goto out;
		default:
			cmd_error(CP_EXIT_USAGE, "unknown option %s; see 'clockprof report --help'",
				  argv[optind - 1]);
			goto out;
		}
	}
	if (!output) {
		cmd_error(CP_EXIT_USAGE, "no output file; give -o report.html (see 'clockprof report --help')");
		goto out;
	}
	if (!in.n) {
		cmd_error(CP_EXIT_USAGE, "no input; give run files or a verdict (see 'clockprof report --help')");
		goto out;
	}
	if (cp_check_writable(output, &err))
		goto fail;
	if (!(ordered = calloc(in.n, sizeof(*ordered)))) {
		cmd_error(CP_EXIT_USAGE, "out of memory");
		goto out;
	}
	if (order(&in, ordered, &err) ||
	    cp_report_write(ordered, in.n, output, &err))
		goto fail;
	if (strcmp(output, "-"))
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
