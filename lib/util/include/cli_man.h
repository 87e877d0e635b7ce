/* cli_man.h - the man page clockprof(1), written in roff from the same
 * option tables as --help (cli_options.h), so the two cannot disagree.
 * `clockprof --man` prints it; the build saves it as clockprof.1. */
#ifndef CP_CLI_MAN_H
#define CP_CLI_MAN_H

#include <stdio.h>

#include "cli_options.h"

void cp_cli_man(FILE *out, const struct cp_program_spec *prog);

#endif
