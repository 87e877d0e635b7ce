/* inlined_copies.c - the other copies of a function that a func: boundary
 * does not see: where the compiler inlined it into its callers, and the
 * clones it made of it (GCC's .constprop, .isra, .part), called instead of
 * it. Read from the DWARF of the function's compile unit: each such copy
 * names the function's abstract definition as its DW_AT_abstract_origin,
 * as the out-of-line copy the boundary probes does. See elf_symbols.h. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "elf_symbols.h"

struct walk {
	uint64_t vaddr;	  /* the probed copy's address */
	Dwarf_Off origin; /* its abstract definition; 0: not found */
	bool found;	  /* pass 1 is done */
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf_Files *files;
	struct cp_inlined_copies *out;
};

static bool origin_of(Dwarf_Die *die, Dwarf_Off *off)
{
	Dwarf_Attribute a;
	Dwarf_Die o;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &a) || !dwarf_formref_die(&a, &o))
		return false;
	*off = dwarf_dieoffset(&o);
	return true;
}

/* Pass 1 (w->origin 0): finds the abstract origin of the subprogram at
 * w->vaddr, and stops there (w->found). Pass 2: counts the inlined
 * instances and the other out-of-line subprograms of that origin. */
static void walk(Dwarf_Die *first, struct walk *w, int depth)
{
	Dwarf_Die die = *first, child;
	Dwarf_Addr low;
	Dwarf_Off off;

	do {
		int tag = dwarf_tag(&die);

		if (tag == DW_TAG_subprogram && dwarf_lowpc(&die, &low) == 0 &&
		    origin_of(&die, &off)) {
			if (!w->origin && low == w->vaddr) {
				w->origin = off;
				w->found = true;
				return;
			}
			if (w->origin && low != w->vaddr && off == w->origin) {
				const char *name = dwfl_module_addrname(w->mod, low + w->bias);

				if (!w->out->clones++)
					snprintf(w->out->clone, sizeof(w->out->clone), "%s",
						 name ? name : "?");
			}
		} else if (tag == DW_TAG_inlined_subroutine && w->origin && origin_of(&die, &off) &&
			   off == w->origin && !w->out->inlined++) {
			Dwarf_Attribute a;
			Dwarf_Word file = 0, line = 0;
			const char *name = NULL;

			if (dwarf_attr(&die, DW_AT_call_file, &a))
				dwarf_formudata(&a, &file);
			if (dwarf_attr(&die, DW_AT_call_line, &a))
				dwarf_formudata(&a, &line);
			if (w->files && file)
				name = dwarf_filesrc(w->files, file, NULL, NULL);
			if (name) {
				const char *base = strrchr(name, '/');

				snprintf(w->out->file, sizeof(w->out->file), "%s",
					 base ? base + 1 : name);
			}
			w->out->line = (int)line;
		}
		if (depth < 64 && dwarf_child(&die, &child) == 0) {
			walk(&child, w, depth + 1);
			if (w->found)
				return;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

int cp_elf_inlined_copies(const char *path, uint64_t vaddr, struct cp_inlined_copies *out)
{
	Dwfl_Module *mod;
	Dwfl *dwfl = cp_elf_dwfl_offline(path, &mod);
	struct walk w = { .vaddr = vaddr, .mod = mod, .out = out };
	Dwarf_Die *cu, child;
	size_t nfiles;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!mod || !dwfl_module_getdwarf(mod, &w.bias))
		goto done;
	cu = dwfl_module_addrdie(mod, vaddr + w.bias, &w.bias);
	if (!cu || dwarf_child(cu, &child))
		goto done;
	rc = 0;
	walk(&child, &w, 0);
	if (!w.origin)
		goto done; /* never inlined nor cloned */
	w.found = false;
	if (dwarf_getsrcfiles(cu, &w.files, &nfiles))
		w.files = NULL;
	if (dwarf_child(cu, &child) == 0)
		walk(&child, &w, 0);
done:
	if (dwfl)
		dwfl_end(dwfl);
	return rc;
}
