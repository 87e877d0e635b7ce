/* syscall_names.h - x86_64 syscall numbers by name, for syscall:NAME request
 * boundaries. The table is generated at build time from the kernel headers
 * (asm/unistd_64.h), so it is complete for the headers we build against. */
#ifndef CP_SYSCALL_NAMES_H
#define CP_SYSCALL_NAMES_H

/* Returns the number of syscall `name` ("sendto", or "sys_sendto"), or -1. */
int cp_syscall_number(const char *name);
/* Returns the name of syscall nr, or NULL. */
const char *cp_syscall_name(int nr);
/* Fills out with up to max names closest to name (edit distance). */
int cp_syscall_suggest(const char *name, const char **out, int max);

#endif
