/* ab.c - `clockprof ab N DIR [OPTIONS] -- BASE_CMD... -- HEAD_CMD...`: the CI
 * recipe's measuring step. Runs base and head N times each, interleaved
 * (base, head, base, head, ...) so that drift of the machine hits both sides
 * alike, under `clockprof run OPTIONS`, writing DIR/base-I.json and
 * DIR/head-I.json for `clockprof compare`. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "profile_command.h"

const struct cp_command_spec cmd_ab_spec = {
	.name = "ab",
	.synopsis = { "N DIR [OPTIONS] -- BASE_CMD [ARG...] -- HEAD_CMD [ARG...]" },
	.summary = "run base and head builds in turn, N times each",
	.options = profile_window_options, /* what it passes on to each run */
	.description =
		"Runs BASE_CMD and HEAD_CMD N times each (1 to 1000), interleaved (base, "
		"head, base, head, ...) so that drift of the machine hits both sides "
		"alike, each as 'clockprof run OPTIONS', writing DIR/base-I.json and "
		"DIR/head-I.json (DIR is created if needed). Then:\n\n"
		"  clockprof compare --base DIR/base-*.json --head DIR/head-*.json\n\n"
		"The mechanism is chosen once: every run after the first is asked for the one "
		"the first counted with (with auto, the patch or its fallback), and exits 3 "
		"if it cannot use it.\n\n"
		"ab launches only the programs: a server needs its load running throughout "
		"(started before ab). A run that saw no complete request (with -r) or no "
		"clock read gets a warning; compare refuses such runs (exit 2).",
	.exit_codes = "Exit codes: 0 all runs profiled; a command's own status when it "
		      "failed by itself (ab stops at that run); 2 usage or bad input, 3 could not "
		      "profile (or interrupted).",
	.order = CP_ORDER_STOP,
	.operands = CP_COMPLETE_COMMAND,
};

static const char usage[] = "clockprof ab N DIR [OPTIONS] -- BASE_CMD... -- HEAD_CMD...";

/* `ab --help`, `ab --version` or an option before N DIR. */
static int options_first(int argc, char **argv)
{
	struct profile_command pc;
	int rc = profile_command_parse(&pc, &cmd_ab_spec, argc, argv);

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	return cmd_error(CP_EXIT_USAGE, "ab needs N and DIR before the options: %s", usage);
}

/* A run that saw nothing (no load drove the program, or the probes saw
 * no read) is said where it happened: ab's runs print no summary, and
 * compare refuses such runs later with exit 2
 * (lib/gate/compare_evidence.c). */
static void warn_if_empty(const struct profile_command *pc, const char *name, long i, long runs)
{
	if (pc->has_boundary && !pc->requests)
		fprintf(stderr,
			"clockprof: warning: ab: %s run %ld of %ld saw no complete request: "
			"is the load driving the program during each run?\n",
			name, i, runs);
	else if (!pc->reads)
		fprintf(stderr, "clockprof: warning: ab: %s run %ld of %ld saw no clock read\n",
			name, i, runs);
}

/* Runs base and head in turn; returns the exit code. */
static int run_sides(struct profile_command *pc, long runs, const char *dir, char **base,
		     char **head, int quiet)
{
	char path[PATH_MAX];

	for (long i = 1; i <= runs; i++) {
		for (int side = 0; side < 2; side++) {
			const char *name = side ? "head" : "base";
			int rc;

			snprintf(path, sizeof(path), "%s/%s-%ld.json", dir, name, i);
			pc->output = path;
			pc->opts.command = side ? head : base;
			if (!quiet)
				fprintf(stderr, "clockprof ab: %s run %ld of %ld -> %s\n", name, i,
					runs, path);
			rc = profile_command_execute(pc);
			if (rc && pc->command_status == rc)
				return cmd_error(
					rc,
					"ab: stopped at %s run %ld of %ld: the %s command failed (%s); %s kept",
					name, i, runs, name, pc->command_how, path);
			if (rc)
				return rc;
			if (pc->interrupted)
				return cmd_error(
					CP_EXIT_PROFILE,
					"interrupted: stopped after %s run %ld of %ld (written, marked incomplete)",
					name, i, runs);
			warn_if_empty(pc, name, i, runs);
			/* One mechanism for every run: what the first counted
			 * with (auto's choice, or its fallback) is asked of the
			 * others by name, so a run that cannot use it exits 3
			 * rather than counting otherwise, and compare never
			 * gets a mixed pair. */
			pc->opts.mechanism = pc->counted;
		}
	}
	return CP_EXIT_OK;
}

int cmd_ab(int argc, char **argv)
{
	struct profile_command pc;
	char *end, **head = NULL;
	long runs;
	int rc, quiet;

	if (argc > 1 && argv[1][0] == '-')
		return options_first(argc, argv);
	if (argc < 3)
		return cmd_error(CP_EXIT_USAGE, "usage: %s", usage);
	runs = strtol(argv[1], &end, 10);
	if (*end || runs < 1 || runs > 1000)
		return cmd_error(CP_EXIT_USAGE, "invalid run count '%s': give 1 to 1000", argv[1]);
	if (mkdir(argv[2], 0755) && access(argv[2], W_OK))
		return cmd_error(CP_EXIT_USAGE, "cannot write to directory %s", argv[2]);
	rc = profile_command_parse(&pc, &cmd_ab_spec, argc - 2, argv + 2);
	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	/* argv after the options: BASE... -- HEAD... (getopt consumed the first --). */
	for (int i = pc.rest + 2; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			head = argv + i + 1;
			break;
		}
	if (pc.rest + 2 >= argc || !head || !*head || !argv[pc.rest + 2])
		return cmd_error(CP_EXIT_USAGE, "ab needs two commands: %s", usage);
	/* DIR may be somewhere no file can be made (/proc): the first run
	 * opens its file before launching anything, and says so. */
	quiet = pc.quiet;
	pc.quiet = 1; /* the runs' summaries: the run files hold them */
	return run_sides(&pc, runs, argv[2], argv + pc.rest + 2, head, quiet);
}
