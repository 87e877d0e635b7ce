/* elf_program.h - whether an ELF file is a program (what an exec maps as
 * its main executable) rather than a library that a program maps: a
 * request boundary in a program that a launched command execs is closed
 * in the image the exec maps (lib/probe/mech/patch/patch_boundary.h). */
#ifndef CP_ELF_PROGRAM_H
#define CP_ELF_PROGRAM_H

#include <stdbool.h>

/* True for an executable (ET_EXEC) or a position-independent one (DF_1_PIE,
 * or an interpreter and no DT_SONAME); false for a library (libc.so.6,
 * though it has an interpreter, has a DT_SONAME) or an unreadable file. */
bool cp_elf_is_program(const char *path);

#endif
