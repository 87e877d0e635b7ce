/* elf_pages.h - the memory a scan of an ELF file's image took, given back.
 *
 * libelf maps a file it reads whole (libdwfl opens every module of the
 * target so, and its debug file) and a scan of its symbol table brings in
 * every page it reads; they stay in clockprof's RSS for as long as the
 * image stays mapped, which for the symbolizer is the whole run. Once a
 * scan is done its pages can go: the mapping stays, and what is read again
 * later is faulted in again from the page cache, the same bytes. */
#ifndef CP_ELF_PAGES_H
#define CP_ELF_PAGES_H

#include <gelf.h>

/* Gives back the pages of elf's image (MADV_DONTNEED), when libelf mapped
 * it from a file and no page of it has a private copy (one written to,
 * which the file could not give back). Nothing for an image libelf read
 * into memory, or one made with elf_memory: their bytes are nowhere else.
 * elf may be NULL. 0 when given back, -1 when left as it was. */
int cp_elf_release_pages(Elf *elf);

#endif
