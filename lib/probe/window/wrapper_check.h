/* wrapper_check.h - a syscall: boundary closed in the target at the C
 * library's functions that make the syscall (write(), send() and
 * sendto(), ...), trusted only as far as the kernel agrees.
 *
 * Those functions are not always the syscall: glibc makes some syscalls
 * inline (its *_nocancel calls), a program can call syscall(2) or make
 * the syscall itself (Go), and the kernel restarts an interrupted one.
 * So while the window opens, sys_enter stays traced and its program
 * checks every such syscall of the target's against the thread's
 * boundaries passed in the target (probes/clockreads.bpf.c,
 * on_boundary_syscall). Once enough have matched, it is let go (tracing
 * sys_enter slows every process's syscalls); the first that does not
 * match makes sys_enter the boundary from then on, and what the target
 * closed is dropped (patch_boundary.h), with a warning that says when. */
#ifndef CP_WRAPPER_CHECK_H
#define CP_WRAPPER_CHECK_H

struct cp_profile;
struct cp_session;

/* The check ends, sys_enter let go, once it has run this long and this
 * many syscalls matched with none that did not. A server that makes
 * fewer is checked for the whole window. */
#define CP_WRAPPER_CHECK_S 1.0
#define CP_WRAPPER_CHECK_MIN 100

/* At the window's ticks, since_s into it: ends the check when it may. */
void cp_wrapper_check_tick(struct cp_profile *p, struct cp_session *s, double since_s);
/* As the clock window closes (start: its monotonic start): what the
 * check found, in p, and the boundary no longer in the target where a
 * syscall did not match (the warning says from when). */
void cp_wrapper_check_finish(struct cp_profile *p, struct cp_session *s, double start);

#endif
