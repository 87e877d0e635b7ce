/* run_boundary.c - what an op is in a run, as one text per field, so that
 * compare can refuse runs whose per-op figures count different things
 * (docs/run-json.md, request.boundary). Spelling does not count:
 * func:handle_request and func:./server:handle_request are one boundary;
 * func:handle_request and func:libc:clock_gettime are not. */
#include <stdio.h>
#include <string.h>

#include "request_spec.h"
#include "run_file.h"

/* A library by its file name: base and head builds may sit in different
 * directories; the main executable by its role, whatever its path. */
static const char *file_key(const char *file, int in_main)
{
	const char *base;

	if (in_main || !file || !*file)
		return "(main executable)";
	base = strrchr(file, '/');
	return base ? base + 1 : file;
}

/* Files written before request.boundary: only the spelling, read the way
 * clockprof read it (func:SYMBOL is in the main executable). */
static void from_spec(const char *spec, char *buf, size_t len)
{
	struct cp_func_spec f;

	if (!strncmp(spec, "syscall:", 8)) {
		spec += 8;
		snprintf(buf, len, "syscall:%s", strncmp(spec, "sys_", 4) ? spec : spec + 4);
	} else if (!strncmp(spec, "func:", 5) &&
		   !cp_func_spec_parse(spec + 5, &f, "request spec", NULL)) {
		snprintf(buf, len, "func:%s:%s", file_key(f.file, 0), f.symbol);
	} else {
		snprintf(buf, len, "%s", spec);
	}
}

const char *cp_run_boundary(const json_t *doc, char *buf, size_t len)
{
	const json_t *rq = json_object_get(doc, "request");
	const json_t *b = json_object_get(rq, "boundary");
	const char *kind = json_string_value(json_object_get(b, "kind"));
	const char *spec = json_string_value(json_object_get(rq, "spec"));

	if (kind && !strcmp(kind, "syscall"))
		snprintf(buf, len, "syscall:%s",
			 json_string_value(json_object_get(b, "syscall")) ?: "?");
	else if (kind)
		snprintf(buf, len, "%s:%s:%s", kind,
			 file_key(json_string_value(json_object_get(b, "file")),
				  json_is_true(json_object_get(b, "main_executable"))),
			 json_string_value(json_object_get(b, "symbol")) ?: "?");
	else if (spec)
		from_spec(spec, buf, len);
	else
		snprintf(buf, len, "none");
	return buf;
}

const char *cp_run_ops_source(const json_t *doc)
{
	const char *s = json_string_value(json_object_get(doc, "ops_source"));

	return s ? s : "none";
}
