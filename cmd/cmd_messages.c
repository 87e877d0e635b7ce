/* cmd_messages.c - what every subcommand says in the same words: an error
 * as one escaped line on stderr, the wait for an output FIFO's reader,
 * --help and --version. Apart from main.c, which only dispatches to the
 * subcommands that call these. */
#include <stdarg.h>
#include <stdio.h>

#include "cli_options.h"
#include "cmd.h"
#include "error.h"
#include "escape_display.h"
#include "version.h"

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

void cmd_wait_notice(const char *path)
{
	char shown[1024];

	cp_escape_display(shown, sizeof(shown), path, sizeof(shown));
	fprintf(stderr, "clockprof: waiting for a reader of %s (Ctrl-C to stop)\n", shown);
	fflush(stderr);
}

int cmd_version(void)
{
	printf("clockprof %s\n", CLOCKPROF_VERSION);
	return CP_EXIT_OK;
}

int cmd_option_exit(const struct cp_cli *cli, int id, const struct cp_error *err)
{
	if (id == CP_OPT_HELP) {
		cp_cli_help(stdout, cli->spec);
		return CP_EXIT_OK;
	}
	if (id == CP_OPT_VERSION)
		return cmd_version();
	if (id == CP_OPT_ERROR)
		return cmd_error(err->exit_code ? err->exit_code : CP_EXIT_USAGE, "%s", err->msg);
	return cmd_error(CP_EXIT_USAGE, "clockprof %s: option %d not handled", cli->spec->name, id);
}
