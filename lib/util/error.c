/* error.c - see error.h. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int cp_fail(struct cp_error *err, int exit_code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->exit_code = exit_code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}
