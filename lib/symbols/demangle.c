/* demangle.c - see demangle.h. A thin door onto libiberty, so that callers
 * need not know its flags or which names it is given. */
#include <stddef.h>

#include <libiberty/demangle.h>

#include "demangle.h"

char *cp_demangle(const char *name)
{
	/* Only Itanium ("_Z", also Rust legacy) and Rust v0 ("_R") names:
	 * DMGL_AUTO would also turn a plain symbol such as
	 * "_GLOBAL__sub_I_main" or a D ("_D") name into prose, which would
	 * no longer match the symbol the user typed or sees in other tools. */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* DMGL_PARAMS: C++ parameter lists (overloads differ by them);
	 * DMGL_ANSI: const/volatile; no DMGL_VERBOSE, which would keep Rust's
	 * hash suffixes. */
	return cplus_demangle(name, DMGL_AUTO | DMGL_PARAMS | DMGL_ANSI);
}
