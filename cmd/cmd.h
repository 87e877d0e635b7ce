/* cmd.h - the clockprof subcommands. Each cmd_*() parses its own options,
 * calls the library and prints; it returns the process exit code
 * (enum cp_exit in lib/util/error.h). main.c only dispatches. */
#ifndef CP_CMD_H
#define CP_CMD_H

int cmd_attach(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Prints "clockprof: <msg>" on stderr and returns code, for error paths:
 * `return cmd_error(CP_EXIT_USAGE, "...")`. */
int cmd_error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
