/* run.c - `clockprof run [OPTIONS] -- CMD [ARG...]`: launch CMD held until
 * the probes are attached, so its first clock read is counted. */
#include "cmd.h"
#include "error.h"
#include "profile_command.h"

/* An option table: each option's fields on the rows they were written
 * in (clang-format would give every field a line of its own). */
/* clang-format off */
static const struct cp_option options[] = {
	PROFILE_WINDOW_OPTIONS,
	CP_OPTION_FLAG(PC_OPT_NO_INHERIT, "no-inherit",
	  "count COMMAND's own process only, not the processes it forks (by " \
	  "default each is counted in its own copy of the patched vDSO, as perf stat " \
	  "follows children; a child that execs another program is not counted)"),
	PROFILE_OUTPUT_OPTIONS,
	PROFILE_METRICS_OPTIONS,
	{ 0 },
};
/* clang-format on */

const struct cp_command_spec cmd_run_spec = {
	.name = "run",
	.synopsis = { "[OPTIONS] -- COMMAND [ARG...]" },
	.summary = "launch a command and count its clock reads",
	.description = "Starts COMMAND held at its first instruction, attaches the probes, "
		       "lets it run and counts its clock reads until it exits or the window "
		       "ends (then it is sent SIGTERM, and SIGKILL two seconds later). Options "
		       "end at COMMAND; '--' before it is safest.\n\n"
		       "With an output on stdout ('-'), the command's stdout goes to "
		       "clockprof's stderr, so that stdout carries only that output.\n\n"
		       "  clockprof run -r func:handle_request -o run.json -- ./server --once",
	.options = options,
	.exit_codes = "Exit codes: 0 profiled and the command succeeded (or the window, "
		      "-d or Ctrl-C, ended it); the command's own status (its exit code, or "
		      "128 + the signal that killed it) when it failed by itself, after the run "
		      "is written; 2 usage or bad input, 3 could not profile.",
	.order = CP_ORDER_STOP,
	.operands = CP_COMPLETE_COMMAND,
};

int cmd_run(int argc, char **argv)
{
	struct profile_command pc;
	int rc = profile_command_parse(&pc, &cmd_run_spec, argc, argv);

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	if (pc.rest >= argc)
		return cmd_error(CP_EXIT_USAGE,
				 "run needs a command: clockprof run [OPTIONS] -- COMMAND");
	pc.opts.command = argv + pc.rest;
	pc.opts.follow_forks = !pc.no_inherit;
	return profile_command_execute(&pc);
}
