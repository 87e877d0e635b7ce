/* cmd.h - the clockprof subcommands. Each cmd_*() parses its own options,
 * from its own table (a struct cp_command_spec, lib/util/include/cli_options.h, which
 * also makes its --help, its part of the man page and its completion),
 * calls the library and prints; it returns the process exit code (enum
 * cp_exit in lib/util/include/error.h). main.c only dispatches;
 * cmd_messages.c says what all of them say alike. */
#ifndef CP_CMD_H
#define CP_CMD_H

#include "cli_options.h"

int cmd_attach(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Hidden `--complete-functions PATH` and `--complete-syscalls`: names for
 * bash completion, one a line (complete_names.c). */
int cmd_complete_names(int argc, char **argv);

extern const struct cp_command_spec cmd_attach_spec, cmd_run_spec, cmd_ab_spec, cmd_compare_spec,
	cmd_report_spec;

/* Prints "clockprof: <msg>" on stderr and returns code, for error paths:
 * `return cmd_error(CP_EXIT_USAGE, "...")`. */
int cmd_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For an id that cp_cli_next returned and the subcommand does not take
 * itself: --help and --version print (exit 0), CP_OPT_ERROR prints the
 * message in err (exit 2). Returns the exit code. */
int cmd_option_exit(const struct cp_cli *cli, int id, const struct cp_error *err);

/* Says on stderr that the output FIFO path waits for a reader (and how
 * to stop waiting): the cp_wait_notice of every command. */
void cmd_wait_notice(const char *path);

/* Prints "clockprof VERSION" on stdout; returns exit code 0. */
int cmd_version(void);

#endif
