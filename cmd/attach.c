/* attach.c - placeholder until the subcommand lands. */
#include "cmd.h"
#include "error.h"

int cmd_attach(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error(CP_EXIT_USAGE, "'attach' is not built yet");
}
