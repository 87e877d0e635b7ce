/* plt_stubs.h - which imported function each PLT stub of an ELF file
 * jumps to, and which imports pass no stub at all.
 *
 * A call of an imported function goes `call name@plt`; the stub jumps
 * through the import's GOT slot. Stubs carry no symbol, so they are matched
 * to their relocation by the slot each one jumps through, which holds for
 * every layout (.plt alone, .plt + .plt.sec with IBT, .plt.got). The
 * uprobe mechanism probes the stubs of gettimeofday/time (their glibc
 * IFUNCs jump straight into the vDSO, where no uprobe can go), and the
 * symbolizer names addresses in stubs "name@plt". */
#ifndef CP_PLT_STUBS_H
#define CP_PLT_STUBS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

struct cp_plt_import {
	char name[128]; /* without a version */
	GElf_Addr got;	/* the slot its address is loaded into */
	GElf_Addr stub; /* the stub jumping through it, 0: none */
	bool jump_slot; /* lazily bound through a PLT stub; else
				 * GLOB_DAT or R_X86_64_64 (a pointer in data
				 * initialised with it): also reached without
				 * any stub */
};

/* Every JUMP_SLOT, GLOB_DAT and R_X86_64_64 import of an undefined
 * function (malloc'd in *out). 0, or -1 out of memory. */
int cp_plt_imports(Elf *elf, struct cp_plt_import **out, size_t *n);

/* The name of the import whose stub holds vaddr ("gettimeofday"), and the
 * stub's start; false when vaddr is in no PLT stub. */
bool cp_plt_stub_at(Elf *elf, GElf_Addr vaddr, char *name, size_t size, GElf_Addr *stub);

#endif
