/* compare.c - placeholder until the subcommand lands. */
#include "cmd.h"
#include "error.h"

int cmd_compare(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cmd_error(CP_EXIT_USAGE, "'compare' is not built yet");
}
