/* syscall_names.h - x86_64 syscall numbers by name, for syscall:NAME request
 * boundaries. The table is generated at build time from the kernel headers
 * (asm/unistd_64.h), so it is complete for the headers we build against. */
#ifndef CP_SYSCALL_NAMES_H
#define CP_SYSCALL_NAMES_H

/* Returns the number of syscall `name` ("sendto", or "sys_sendto"), or -1. */
int cp_syscall_number(const char *name);
/* Returns the name of syscall nr, or NULL. */
const char *cp_syscall_name(int nr);
/* The C library's functions (glibc's, x86_64) that make syscall nr, for
 * a syscall: boundary closed at them: the syscall's own name, and the
 * other functions that make it (send: sendto). How many, at most
 * CP_SYSCALL_WRAPPERS_MAX. Whether they are all its callers is checked
 * as the target runs, not assumed. */
#define CP_SYSCALL_WRAPPERS_MAX 2
int cp_syscall_wrappers(int nr, const char *out[CP_SYSCALL_WRAPPERS_MAX]);
/* Fills out with up to max names closest to name (edit distance). */
int cp_syscall_suggest(const char *name, const char **out, int max);

#endif
