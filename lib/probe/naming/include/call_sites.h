/* call_sites.h - from the BPF program's raw call sites (a return address,
 * the wrapper it went through, counts) to what a person reads: function,
 * file:line, inline chain, module. Sites that symbolize to the same place
 * are merged, so counts per site add up to the total and stay exact. */
#ifndef CP_CALL_SITES_H
#define CP_CALL_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

struct cp_symbolizer;
struct cp_unwind_table;

struct cp_call_site {
	char *function; /* demangled; "module+0x..." without a symbol */
	char *file;	/* NULL without debug info */
	int line;
	char **inlined; /* functions inlined at the site, outermost first */
	size_t ninlined;
	char *inlined_at_file; /* where function calls inlined[0]: the line of */
	int inlined_at_line;   /* its own that reads; 0 unknown, the file NULL
				 * where DWARF names none */
	char *comp_dir;	       /* what file and inlined_at_file are relative
				 * to when they are (DW_AT_comp_dir); NULL when
				 * both are absolute, or it is unknown */
	char *module;
	char *build_id;
	char *via;	      /* the wrapper called: "clock_gettime",
				 * "std::chrono::_V2::steady_clock::now", ... */
	uint64_t count;	      /* reads in the window */
	uint64_t in_requests; /* reads inside complete requests */
};

struct cp_call_sites {
	struct cp_call_site *sites; /* most reads first */
	size_t n;
};

/* Symbolizes and merges raw sites. t names the wrappers (may be NULL). */
int cp_call_sites_resolve(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
			  const struct cp_site_count *raw, size_t nraw, struct cp_call_sites *out);
void cp_call_sites_free(struct cp_call_sites *cs);
/* What makes two resolved sites one place (the merge above uses it):
 * function, file, line, via, module, the inlined chain and where it is
 * inlined (one helper inlined at two lines is two places), as one
 * malloc'd string; NULL when out of memory, or when c's function or via
 * is NULL (out of memory copying it). */
char *cp_call_site_place_key(const struct cp_call_site *c);
/* Where c is, for a person: "FILE:LINE", with " (inlined at line N)" (or
 * "at FILE:N" in another file) where its function calls a helper inlined
 * into it; the file, or the module, without a line; "" without either.
 * malloc'd; NULL when out of memory. */
char *cp_call_site_location(const struct cp_call_site *c);

#endif
