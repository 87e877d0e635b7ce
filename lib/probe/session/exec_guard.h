/* exec_guard.h - letting go of the followed processes the session's
 * program held at their exec (a SIGSTOP before their new image's first
 * instruction: CP_PROC_EXEC_HELD in the procs map), for clockprof's
 * close and for a guard that outlives a clockprof killed in the moment
 * between that SIGSTOP and the ptrace stop that takes its place. */
#ifndef CP_EXEC_GUARD_H
#define CP_EXEC_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* SIGCONT to the process host_tgid if procs_fd (the procs map) still
 * marks it held, the mark replaced by mark (CP_PROC_EXECED: not counted
 * from its exec on; CP_PROC_EXEC_LATE); to every one so marked. The
 * number let go. */
size_t cp_exec_held_release_one(int procs_fd, uint32_t host_tgid, uint32_t mark);
size_t cp_exec_held_release_all(int procs_fd, uint32_t mark);

/* A child of clockprof's own, in a process group of its own, holding
 * nothing but procs_fd: when clockprof ends, however it ends (a pidfd of
 * clockprof's says so), it lets every held process go, a few times over a
 * fraction of a second (a program may be mid-hold as clockprof dies),
 * and exits. -1 when it cannot be started. stop ends it (clockprof let
 * them go itself). */
pid_t cp_exec_guard_start(int procs_fd);
void cp_exec_guard_stop(pid_t guard);

#endif
