/* profile_warnings.c - the warnings a profile keeps for its summary,
 * run.json and the report: each whole (formatted and allocated, never
 * cut), at most CP_MAX_WARNINGS, freed by cp_profile_release. Every step
 * of the window adds its own: apart from the steps' order (profile.c), so
 * that none of them calls back into it. */
#include <stdarg.h>
#include <stdio.h>

#include "profile.h"
#include "profile_window.h"

void cp_profile_warn(struct cp_profile *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->nwarnings == CP_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	n = vasprintf(&p->warnings[p->nwarnings], fmt, ap);
	va_end(ap);
	if (n >= 0)
		p->nwarnings++;
}
