/* profile_command.h - the options `attach` and `run` share, and the part of
 * both commands after the target is known: collect, print, write. */
#ifndef CP_PROFILE_COMMAND_H
#define CP_PROFILE_COMMAND_H

#include "profile.h"

struct profile_command {
	struct cp_profile_options opts;
	const char *output;	/* -o run.json */
	const char *html;	/* --html report.html */
	const char *folded;	/* --folded stacks.folded */
	const char *speedscope;	/* --speedscope stacks.speedscope.json */
	int quiet;
	int interrupted;	/* set by execute: a signal ended the window */
	int command_status;	/* set by execute: cp_profile_command_status() */
	char command_how[64];	/* "exit code 3", "killed by SIGSEGV", or "" */
};

/* Parses the shared options; argv[optind] onwards is left to the caller.
 * Returns -1 after --help (printed), or an exit code > 0 on error, or 0. */
int profile_command_parse(struct profile_command *pc, int argc, char **argv,
			  const char *usage);
/* Profiles, prints the summary and writes the files; returns the exit
 * code: clockprof's own failure, else the launched command's failure
 * (command_status), else 0. The run file is written either way. */
int profile_command_execute(struct profile_command *pc);

#endif
