/* run.c - placeholder until the subcommand lands. */
#include "cmd.h"
#include "error.h"

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error(CP_EXIT_USAGE, "'run' is not built yet");
}
