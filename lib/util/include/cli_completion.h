/* cli_completion.h - bash completion for clockprof, written from the
 * option tables (cli_options.h): subcommands, every option of each, the
 * values they take (files, PIDs, fixed words) and the operands (PIDs,
 * files, a command after `--`). `clockprof --completion bash` prints it;
 * the build saves it and `make install` installs it. */
#ifndef CP_CLI_COMPLETION_H
#define CP_CLI_COMPLETION_H

#include <stdio.h>

#include "cli_options.h"

void cp_cli_bash_completion(FILE *out, const struct cp_program_spec *prog);

#endif
