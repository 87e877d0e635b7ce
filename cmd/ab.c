/* ab.c - `clockprof ab N DIR [OPTIONS] -- BASE_CMD... -- HEAD_CMD...`: the CI
 * recipe's measuring step. Runs base and head N times each, interleaved
 * (base, head, base, head, ...) so that drift of the machine hits both sides
 * alike, under `clockprof run OPTIONS`, writing DIR/base-I.json and
 * DIR/head-I.json for `clockprof compare`. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "profile_command.h"

static const char usage[] =
	"clockprof ab N DIR [RUN OPTIONS] -- BASE_CMD [ARG...] -- HEAD_CMD [ARG...]";

int cmd_ab(int argc, char **argv)
{
	struct profile_command pc;
	char path[PATH_MAX], *end, **head = NULL;
	long runs;
	int rc;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: %s\n\nRuns BASE_CMD and HEAD_CMD N times each, interleaved, under\n"
		       "'clockprof run RUN OPTIONS' (see clockprof run --help), writing\n"
		       "DIR/base-I.json and DIR/head-I.json; then:\n"
		       "  clockprof compare --base DIR/base-*.json --head DIR/head-*.json\n", usage);
		return CP_EXIT_OK;
	}
	if (argc < 3)
		return cmd_error(CP_EXIT_USAGE, "usage: %s", usage);
	runs = strtol(argv[1], &end, 10);
	if (*end || runs < 1 || runs > 1000)
		return cmd_error(CP_EXIT_USAGE, "invalid run count '%s': give 1 to 1000", argv[1]);
	if (mkdir(argv[2], 0755) && access(argv[2], W_OK))
		return cmd_error(CP_EXIT_USAGE, "cannot write to directory %s", argv[2]);
	rc = profile_command_parse(&pc, argc - 2, argv + 2, usage);
	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	/* argv after the options: BASE... -- HEAD... (getopt consumed the first --). */
	for (int i = optind + 2; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			head = argv + i + 1;
			break;
		}
	if (optind + 2 >= argc || !head || !*head || !argv[optind + 2])
		return cmd_error(CP_EXIT_USAGE, "ab needs two commands: %s", usage);
	pc.quiet = 1;
	for (long i = 1; i <= runs; i++) {
		for (int side = 0; side < 2; side++) {
			const char *name = side ? "head" : "base";

			snprintf(path, sizeof(path), "%s/%s-%ld.json", argv[2], name, i);
			pc.output = path;
			pc.opts.command = side ? head : argv + optind + 2;
			fprintf(stderr, "clockprof ab: %s run %ld of %ld -> %s\n", name, i, runs, path);
			rc = profile_command_execute(&pc);
			if (rc && pc.command_status == rc)
				return cmd_error(rc, "ab: stopped at %s run %ld of %ld: the %s command failed (%s); %s kept",
						 name, i, runs, name, pc.command_how, path);
			if (rc)
				return rc;
			if (pc.interrupted)
				return cmd_error(CP_EXIT_PROFILE,
						 "interrupted: stopped after %s run %ld of %ld (written, marked incomplete)",
						 name, i, runs);
		}
	}
	return CP_EXIT_OK;
}
