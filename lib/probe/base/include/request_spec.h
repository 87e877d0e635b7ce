/* request_spec.h - what marks a request (-r/--request SPEC) and where an
 * extra entry point lives (--probe FILE:SYMBOL).
 *
 *   func:SYMBOL        a function of the main executable
 *   func:FILE:SYMBOL   a function of FILE (a library or another binary)
 *   syscall:NAME       each such syscall by the target
 * SYMBOL may be mangled or demangled; C++ "::" is never taken for the FILE
 * separator. */
#ifndef CP_REQUEST_SPEC_H
#define CP_REQUEST_SPEC_H

#include <limits.h>

struct cp_error;

enum cp_request_kind {
	CP_REQUEST_NONE,
	CP_REQUEST_FUNC,
	CP_REQUEST_SYSCALL,
};

/* A function in a file; file is "" for the target's main executable. */
struct cp_func_spec {
	char file[PATH_MAX];
	char symbol[512];
};

struct cp_request_spec {
	enum cp_request_kind kind;
	char text[1024];	  /* as the user wrote it */
	struct cp_func_spec func; /* CP_REQUEST_FUNC */
	int syscall_nr;		  /* CP_REQUEST_SYSCALL */
};

int cp_request_spec_parse(const char *text, struct cp_request_spec *out, struct cp_error *err);

/* Parses "[FILE:]SYMBOL" (--probe, and the tail of func: specs). */
int cp_func_spec_parse(const char *text, struct cp_func_spec *out, const char *what,
		       struct cp_error *err);

/* Calls fn for each name syscall:NAME takes (bash completion). */
void cp_request_syscall_names(void (*fn)(const char *name, void *arg), void *arg);

#endif
