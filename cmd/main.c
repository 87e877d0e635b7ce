/* main.c - the clockprof command: one dispatch table, no logic. */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
	bool window;	/* profiles: stop signals stay blocked for its signalfd */
};

static const struct subcommand subcommands[] = {
	{ "attach", cmd_attach, "attach [OPTIONS] PID          count clock reads of a running process", true },
	{ "run", cmd_run, "run [OPTIONS] -- CMD [ARG...]  launch CMD and count its clock reads", true },
	{ "ab", cmd_ab, "ab N DIR [OPTIONS] -- BASE_CMD... -- HEAD_CMD...  interleaved base/head runs", true },
	{ "compare", cmd_compare, "compare [OPTIONS] --base RUN.json... --head RUN.json...  gate base vs head", false },
	{ "report", cmd_report, "report [OPTIONS] FILE.json... -o report.html  one self-contained HTML report", false },
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

/* Ctrl-C, SIGTERM and SIGHUP end a profiling window, never clockprof
 * midway: blocked from main's first instruction, so one that comes while
 * clockprof starts up stays pending until the window's signalfd takes it
 * (profile.c), and the window cut short is written or reported. Commands
 * with no window (compare, report) get them back at once. */
static void block_stop_signals(sigset_t *saved)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, saved);
}

int main(int argc, char **argv)
{
	sigset_t saved;

	block_stop_signals(&saved);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (argc >= 2 && !strcmp(argv[1], subcommands[i].name)) {
			if (!subcommands[i].window)
				sigprocmask(SIG_SETMASK, &saved, NULL);
			return subcommands[i].fn(argc - 1, argv + 1);
		}
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (argc < 2)
		return usage(stderr), CP_EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("clockprof %s\n", CLOCKPROF_VERSION);
		return CP_EXIT_OK;
	}
	return cmd_error(CP_EXIT_USAGE,
			 "unknown command '%s'; run 'clockprof --help' for the list",
			 argv[1]);
}
