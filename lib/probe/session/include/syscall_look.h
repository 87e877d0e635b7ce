/* syscall_look.h - a short look at the syscalls a process makes, so that a
 * func: boundary that cannot be found (an executable without a symbol
 * table) can be answered with the syscall: boundaries worth trying,
 * instead of leaving the user to strace. */
#ifndef CP_SYSCALL_LOOK_H
#define CP_SYSCALL_LOOK_H

#include <stddef.h>
#include <sys/types.h>

/* Counts process pid's syscalls for ms milliseconds and writes the most
 * frequent (at most max) to out as "sendmsg 1204, read 1204, epoll_wait
 * 38", most frequent first; "" when it made none. Returns -1 when the
 * look could not be taken (no BPF here): out is then "". */
int cp_syscall_look(pid_t pid, int ms, int max, char *out, size_t size);

#endif
