/* elf_symbols.h - finding a function's file offset in an ELF file, which is
 * what a uprobe needs.
 *
 * We resolve offsets ourselves instead of letting libbpf look names up:
 * glibc exports one address under several names (clock_gettime@@GLIBC_2.17,
 * clock_gettime@GLIBC_2.2.5, __clock_gettime) and libbpf 1.1 refuses such a
 * name as ambiguous. Matches are deduplicated by file offset, so aliases
 * resolve to one probe, and one call counts once. */
#ifndef CP_ELF_SYMBOLS_H
#define CP_ELF_SYMBOLS_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cp_error;

struct cp_elf_function {
	char name[512];	 /* the symbol's name as found (mangled) */
	uint64_t vaddr;	 /* st_value */
	uint64_t offset; /* file offset: what a uprobe takes */
	uint64_t size;
	bool ifunc;  /* STT_GNU_IFUNC: a resolver, not the function */
	int aliases; /* other names found at the same offset */
};

/* Finds function `name` in the ELF file at path (both .symtab and .dynsym).
 * name matches a symbol exactly, without its @version, or its demangled
 * form with or without the parameter list. Fails (CP_EXIT_USAGE) when there
 * is no such function, suggesting close names, or when names match at
 * different offsets. `shown` is the file name used in messages. */
int cp_elf_find_function(const char *path, const char *shown, const char *name,
			 struct cp_elf_function *out, struct cp_error *err);

/* Calls fn once for each function name of the ELF file at path (or of its
 * separate debug file when it has none), as func:SYMBOL takes it and the
 * suggestions show it: demangled, without parameters or version; sorted,
 * each once. For bash completion of -r func:. Returns -1 when path is not
 * a readable ELF file. */
int cp_elf_function_names(const char *path, void (*fn)(const char *name, void *arg), void *arg);

/* Converts a virtual address of the file to its file offset (via PT_LOAD). */
int cp_elf_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *offset);
/* The same for an ELF file already open. */
int cp_elf_vaddr_to_offset_in(Elf *elf, uint64_t vaddr, uint64_t *offset);

/* Calls fn for each symbol of the file's .symtab and .dynsym, in their
 * order, with its name ("" when it has none), until fn returns nonzero:
 * that value is returned, else 0. The one walk of the symbol tables that
 * the callers' filters share. */
int cp_elf_each_symbol(Elf *elf, int (*fn)(const GElf_Sym *sym, const char *name, void *arg),
		       void *arg);

/* A libdwfl session over the ELF file at path alone, offline, its
 * separate debug file found the standard way (build-id under
 * /usr/lib/debug, then .gnu_debuglink next to the file, in .debug/ and
 * under /usr/lib/debug): the session (dwfl_end() it; NULL out of memory)
 * and in *mod the file's module, NULL when it cannot be read. */
Dwfl *cp_elf_dwfl_offline(const char *path, Dwfl_Module **mod);

/* The section called name (and its header in *sh), or NULL. */
Elf_Scn *cp_elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh);

/* The copies of a function a probe on its symbol does not see, from the
 * DWARF of its compile unit (the file's or its separate debug file's):
 * the places it is inlined into (the first: file name, line) and the
 * clones the compiler made of it (GCC's NAME.constprop.N, .isra.N,
 * .part.N; the first one's symbol). Calls there never reach the symbol.
 * Returns -1 when the file has no DWARF for vaddr (nothing said), else 0. */
struct cp_inlined_copies {
	int inlined;
	char file[256];
	int line;
	int clones;
	char clone[256];
};
int cp_elf_inlined_copies(const char *path, uint64_t vaddr, struct cp_inlined_copies *out);

#endif
