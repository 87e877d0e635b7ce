/* demangle.c - see demangle.h. */
#include <stddef.h>

#include "demangle.h"

/* Declared by <cxxabi.h> for C++; the symbol has C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

char *cp_demangle(const char *name)
{
	int status = 0;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	return __cxa_demangle(name, NULL, NULL, &status);
}
