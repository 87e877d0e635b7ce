/* run.c - `clockprof run [OPTIONS] -- CMD [ARG...]`: launch CMD held until
 * the probes are attached, so its first clock read is counted. */
#include <getopt.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "profile_command.h"

int cmd_run(int argc, char **argv)
{
	struct profile_command pc;
	int rc = profile_command_parse(&pc, argc, argv,
				       "clockprof run [OPTIONS] -- COMMAND [ARG...]");

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	if (optind >= argc)
		return cmd_error(CP_EXIT_USAGE, "run needs a command: clockprof run [OPTIONS] -- COMMAND");
	pc.opts.command = argv + optind;
	return profile_command_execute(&pc);
}
