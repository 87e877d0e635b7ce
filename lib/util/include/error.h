/* error.h - how the library reports failure to its callers.
 *
 * Library functions never print and never exit: they return -1 and fill a
 * struct cp_error with a one-line message and the process exit code that
 * docs/exit-codes.md assigns to that kind of failure. cmd/ prints and exits. */
#ifndef CP_ERROR_H
#define CP_ERROR_H

/* Exit codes (contract: docs/exit-codes.md). */
enum cp_exit {
	CP_EXIT_OK = 0,	     /* success, or gate passed */
	CP_EXIT_GATE = 1,    /* a measure regressed beyond its bound */
	CP_EXIT_USAGE = 2,   /* usage error, unreadable or invalid input */
	CP_EXIT_PROFILE = 3, /* could not profile: process, privileges, kernel */
};

struct cp_error {
	int exit_code;
	char msg[512];
};

/* Records the failure in err (which may be NULL) and returns -1, so that a
 * caller can write `return cp_fail(err, CP_EXIT_USAGE, "...", ...);`. */
int cp_fail(struct cp_error *err, int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
