/* anatomy_names.h - the reads of an anatomy (anatomy.h) named as call
 * sites are (call_sites.h: function, file, line, module, via) and their
 * callers by function, file and line. */
#ifndef CP_ANATOMY_NAMES_H
#define CP_ANATOMY_NAMES_H

#include "anatomy.h"

struct cp_symbolizer;
struct cp_unwind_table;

/* Names each of a->reads. sym NULL (the target's modules could not be
 * read): named by address ("0x401136") and the entry called. t names the
 * wrappers (may be NULL). A name that cannot be had stays NULL. */
void cp_anatomy_name(struct cp_symbolizer *sym, const struct cp_unwind_table *t,
		     struct cp_anatomy *a);

#endif
