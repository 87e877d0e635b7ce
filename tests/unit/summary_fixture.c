/* summary_fixture.c - see summary_fixture.h. */
#include <stdio.h>

#include "profile.h"
#include "summary.h"
#include "summary_fixture.h"

char *summary_of(const struct cp_profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	cp_summary_print(out, p, 0);
	fclose(out);
	return text;
}
