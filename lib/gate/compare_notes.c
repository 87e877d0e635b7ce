/* compare_notes.c - see compare_notes.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_notes.h"
#include "utf8.h"

void cp_compare_warnf(json_t *arr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	/* A long measure name cut mid-character must not lose the warning. */
	va_start(ap, fmt);
	json_array_append_new(arr, json_string(cp_utf8_vformat(buf, sizeof(buf), fmt, ap)));
	va_end(ap);
}

/* A measure's warnings array, made when its first warning is: most
 * measures have none, and 100,000 empty arrays were 13 MB. */
json_t *cp_compare_lazy_array(json_t **arr)
{
	if (!*arr)
		*arr = json_array();
	return *arr;
}

/* A measure's reason, as long as it is (most are a few words; the 320
 * bytes kept for each measure were half the result's memory). */
void cp_compare_set_reason(struct cp_measure_verdict *mv, const char *fmt, ...)
{
	char buf[CP_MEASURE_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(mv->reason);
	mv->reason = buf[0] ? strdup(buf) : NULL;
}
