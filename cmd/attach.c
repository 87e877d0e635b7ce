/* attach.c - `clockprof attach [OPTIONS] PID`: profile a running process. */
#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "error.h"
#include "profile_command.h"

int cmd_attach(int argc, char **argv)
{
	struct profile_command pc;
	char *end;
	long pid;
	int rc = profile_command_parse(&pc, argc, argv, "clockprof attach [OPTIONS] PID");

	if (rc)
		return rc < 0 ? CP_EXIT_OK : rc;
	if (optind != argc - 1)
		return cmd_error(CP_EXIT_USAGE, "attach takes exactly one PID; see --help");
	pid = strtol(argv[optind], &end, 10);
	if (*end || end == argv[optind] || pid <= 0 || pid > 0x3fffffff)
		return cmd_error(CP_EXIT_USAGE, "invalid PID '%s': give a process id",
				 argv[optind]);
	pc.opts.pid = (pid_t)pid;
	return profile_command_execute(&pc);
}
