/* seccomp_filter.h - would the target's seccomp filters let the stub's
 * syscalls through? The filters are read from a held thread
 * (PTRACE_SECCOMP_GET_FILTER) and run here, on the exact syscalls the stub
 * makes: number, arguments, architecture and instruction pointer. A filter
 * that would kill, trap or fail one of them refuses the patch before
 * anything runs in the target (containers' default filters allow them). */
#ifndef CP_SECCOMP_FILTER_H
#define CP_SECCOMP_FILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The action one classic-BPF seccomp program returns for d
 * (SECCOMP_RET_KILL_PROCESS for a program the kernel would not run). */
uint32_t cp_seccomp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d);

/* One filter of a thread, as PTRACE_SECCOMP_GET_FILTER gives it. */
struct cp_seccomp_prog {
	struct sock_filter *insns;
	size_t n;
};

/* Whether every one of calls is allowed (ALLOW or LOG) by progs, a
 * thread's filters oldest first, all run on each call with the most
 * restrictive action winning, as the kernel does: 1 yes, 0 no (why names
 * the filter, counted as a user would, and the call). */
int cp_seccomp_judge(const struct cp_seccomp_prog *progs, size_t nprogs,
		     const struct seccomp_data *calls, size_t ncalls, char *why, size_t whylen);

/* cp_seccomp_judge on every filter of the held thread tid, however many:
 * 1 yes, 0 no (why says which and what), -1 the filters cannot be read. */
int cp_seccomp_allows(pid_t tid, const struct seccomp_data *calls, size_t ncalls, char *why,
		      size_t whylen);

/* Whether a system call the held thread tid makes from code in [lo, hi)
 * would be dispatched to the thread's own SIGSYS handler instead of made
 * (PR_SET_SYSCALL_USER_DISPATCH, as Wine runs a Windows program's code:
 * its handler takes it for the program's own call): the range outside
 * the thread's allowed one and its selector byte not reading ALLOW, as
 * read while it is held (only the thread itself changes it). false where
 * the kernel cannot say (before Linux 6.6). */
bool cp_syscalls_dispatched(pid_t tid, uint64_t lo, uint64_t hi);

#endif
