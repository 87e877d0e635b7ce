/* main.c - the clockprof command: one dispatch table, no logic. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "escape_display.h"
#include "version.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
};

static const struct subcommand subcommands[] = {
	{ "attach", cmd_attach, "attach [OPTIONS] PID          count clock reads of a running process" },
	{ "run", cmd_run, "run [OPTIONS] -- CMD [ARG...]  launch CMD and count its clock reads" },
	{ "ab", cmd_ab, "ab N DIR [OPTIONS] -- BASE_CMD... -- HEAD_CMD...  interleaved base/head runs" },
	{ "compare", cmd_compare, "compare [OPTIONS] --base RUN.json... --head RUN.json...  gate base vs head" },
	{ "report", cmd_report, "report [OPTIONS] FILE.json... -o report.html  one self-contained HTML report" },
};

/* An error is one line; what it quotes (a measure name from a run file, a
 * path from the target) may hold newlines or escape sequences: shown
 * escaped, so stderr and CI logs get exactly that one line. */
int cmd_error(int code, const char *fmt, ...)
{
	char msg[2048], shown[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cp_escape_display(shown, sizeof(shown), msg, sizeof(shown));
	fprintf(stderr, "clockprof: %s\n", shown);
	return code;
}

static int usage(FILE *out)
{
	fprintf(out, "usage: clockprof COMMAND [OPTIONS]\n\n"
		     "How many times a program reads the clock, from where, at what cost.\n\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  clockprof %s\n", subcommands[i].usage);
	fprintf(out, "\n'clockprof COMMAND --help' describes each command's options.\n"
		     "Exit codes: 0 success or gate passed, 1 gate failed, 2 usage or\n"
		     "invalid input, 3 could not profile.\n");
	return CP_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr), CP_EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("clockprof %s\n", CLOCKPROF_VERSION);
		return CP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].fn(argc - 1, argv + 1);
	return cmd_error(CP_EXIT_USAGE,
			 "unknown command '%s'; run 'clockprof --help' for the list",
			 argv[1]);
}
