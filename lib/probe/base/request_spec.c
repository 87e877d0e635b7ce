/* request_spec.c - see request_spec.h. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "request_spec.h"
#include "syscall_names.h"

/* The first ':' that is not half of a C++ "::". */
static const char *file_separator(const char *s)
{
	for (const char *p = strchr(s, ':'); p; p = strchr(p + 1, ':')) {
		if (p[1] == ':') {
			p++;
			continue;
		}
		if (p > s && p[-1] == ':')
			continue;
		return p;
	}
	return NULL;
}

int cp_func_spec_parse(const char *text, struct cp_func_spec *out, const char *what,
		       struct cp_error *err)
{
	const char *sep = file_separator(text);
	size_t flen;

	memset(out, 0, sizeof(*out));
	if (sep) {
		flen = (size_t)(sep - text);
		if (flen == 0 || flen >= sizeof(out->file))
			return cp_fail(err, CP_EXIT_USAGE,
				       "invalid %s '%s': FILE before ':' is empty or too long",
				       what, text);
		memcpy(out->file, text, flen);
		text = sep + 1;
	}
	if (!*text || strlen(text) >= sizeof(out->symbol))
		return cp_fail(
			err, CP_EXIT_USAGE,
			"invalid %s: the symbol name is empty or too long; use [FILE:]SYMBOL",
			what);
	snprintf(out->symbol, sizeof(out->symbol), "%s", text);
	return 0;
}

int cp_request_spec_parse(const char *text, struct cp_request_spec *out, struct cp_error *err)
{
	const char *suggestions[3];
	int n;

	memset(out, 0, sizeof(*out));
	out->syscall_nr = -1;
	snprintf(out->text, sizeof(out->text), "%s", text);
	if (!strncmp(text, "func:", 5)) {
		out->kind = CP_REQUEST_FUNC;
		return cp_func_spec_parse(text + 5, &out->func, "request spec", err);
	}
	if (!strncmp(text, "syscall:", 8)) {
		out->kind = CP_REQUEST_SYSCALL;
		out->syscall_nr = cp_syscall_number(text + 8);
		if (out->syscall_nr >= 0)
			return 0;
		n = cp_syscall_suggest(text + 8, suggestions, 3);
		return cp_fail(err, CP_EXIT_USAGE, "unknown syscall '%s' in request spec%s%s%s%s%s",
			       text + 8, n ? "; did you mean " : "", n > 0 ? suggestions[0] : "",
			       n > 1 ? ", " : "", n > 1 ? suggestions[1] : "", n ? "?" : "");
	}
	return cp_fail(
		err, CP_EXIT_USAGE,
		"invalid request spec '%s': use func:SYMBOL, func:FILE:SYMBOL or syscall:NAME",
		text);
}
