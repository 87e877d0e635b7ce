/* complete_names.c - the names bash completion offers after -r, which only
 * the binary knows: `clockprof --complete-functions PATH [PREFIX]` (the
 * function names func: takes in that executable) and `--complete-syscalls
 * [PREFIX]` (the names syscall: takes). Hidden options, called by the
 * completion script (lib/util/cli_completion.c); one name a line, those
 * starting with PREFIX. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "elf_symbols.h"
#include "error.h"
#include "request_spec.h"

static void print_name(const char *name, void *arg)
{
	const char *prefix = arg;

	/* The names come from the target's file: one with a newline would
	 * read as two. */
	if (!strncmp(name, prefix, strlen(prefix)) && !strchr(name, '\n'))
		printf("%s\n", name);
}

int cmd_complete_names(int argc, char **argv)
{
	if (argc <= 3 && !strcmp(argv[1], "--complete-syscalls")) {
		cp_request_syscall_names(print_name, (void *)(argc == 3 ? argv[2] : ""));
		return CP_EXIT_OK;
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "--complete-functions")) {
		if (cp_elf_function_names(argv[2], print_name, (void *)(argc == 4 ? argv[3] : "")))
			return cmd_error(CP_EXIT_USAGE, "%s: cannot read it as an ELF file",
					 argv[2]);
		return CP_EXIT_OK;
	}
	return cmd_error(CP_EXIT_USAGE, "usage: clockprof --complete-functions PATH [PREFIX] | "
					"--complete-syscalls [PREFIX]");
}
