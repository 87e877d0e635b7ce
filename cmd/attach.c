/* attach.c - `clockprof attach [OPTIONS] PID`: profile a running process. */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "profile_command.h"

static const struct cp_option options[] = {
	{ .id = 'p', .short_name = 'p', .long_name = "pid", .value = "PID",
	  .help = "the process to profile (the same as giving PID as the operand)",
	  .complete = CP_COMPLETE_PID },
	PROFILE_WINDOW_OPTIONS,
	PROFILE_OUTPUT_OPTIONS,
	PROFILE_METRICS_OPTIONS,
	{ 0 },
};

const struct cp_command_spec cmd_attach_spec = {
	.name = "attach",
	.synopsis = { "[OPTIONS] PID", "[OPTIONS] -p PID" },
	.summary = "count the clock reads of a running process",
	.description =
		"Attaches to the running process PID (all its threads) and counts its "
		"clock reads until the window ends (-d, Ctrl-C, or the process exits), "
		"then prints a summary and writes the files asked for. Options may "
		"come before or after the PID.\n\n"
		"  clockprof attach -d 10 -r func:handle_request -o run.json 1234",
	.options = options,
	.exit_codes = "Exit codes: 0 profiled, 2 usage or bad input, 3 could not profile.",
	.order = CP_ORDER_PERMUTE,
	.operands = CP_COMPLETE_PID,
};

int cmd_attach(int argc, char **argv)
{
	struct profile_command pc;
	const char *arg;
	char *end;
	long pid;
	int rc = profile_command_parse(&pc, &cmd_attach_spec, argc, argv);

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	if (argc - pc.rest + !!pc.pid != 1)
		return cmd_error(CP_EXIT_USAGE, "attach takes one PID (as -p PID or after the options); "
				 "see 'clockprof attach --help'");
	arg = pc.pid ? pc.pid : argv[pc.rest];
	pid = strtol(arg, &end, 10);
	if (*end || end == arg || pid <= 0 || pid > 0x3fffffff)
		return cmd_error(CP_EXIT_USAGE, "invalid PID '%s': give a process id", arg);
	pc.opts.pid = (pid_t)pid;
	return profile_command_execute(&pc);
}
