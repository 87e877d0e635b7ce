/* procfs.h - the few facts clockprof reads from /proc about a process
 * (its stat line, its threads, small text files), in one place so the
 * probe and the symbolizer share one reading of them. It sits under
 * both stages and knows nothing about profiling. */
#ifndef CP_PROCFS_H
#define CP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The fields of /proc/PID/stat that clockprof uses. */
struct cp_proc_stat {
	char state;		       /* R, S, D, ...; Z once it has exited */
	pid_t ppid;		       /* its parent */
	unsigned long flags;	       /* PF_* (PF_KTHREAD: a kernel thread) */
	unsigned long utime, stime;    /* CPU time, clock ticks */
	unsigned long long start_time; /* ticks after boot: with the pid, the
					 * process's identity */
};

/* Reads a small text file whole into buf (NUL-terminated, at most size-1
 * bytes); returns the length or -1 when it cannot be opened. */
ssize_t cp_proc_read_text(const char *path, char *buf, size_t size);

/* pid's command name (/proc/PID/comm, its newline taken off) into buf;
 * the length, or -1 (buf untouched) when it cannot be read. */
ssize_t cp_proc_comm(pid_t pid, char *buf, size_t size);

/* The file name pid's execve(2) was given (AT_EXECFN: the path the
 * program was started by, a symlink such as /usr/bin/redis-server where
 * /proc/PID/exe names the file it resolves to) into buf, from the
 * process's memory, where its rewritten command line does not reach; the
 * length, or -1 (buf empty) when it cannot be read. */
ssize_t cp_proc_execfn(pid_t pid, char *buf, size_t size);

/* Reads /proc/PID/stat; -1 when the process does not exist. */
int cp_proc_stat_read(pid_t pid, struct cp_proc_stat *st);

/* The value of a line "Key:\tvalue" of /proc/PID/status, copied into
 * val: the process's (tid 0: its main thread's), or thread tid's own
 * (per-thread state, such as a seccomp filter a thread installed on
 * itself or its pending signals, is only in its own). */
bool cp_proc_status_field(pid_t pid, pid_t tid, const char *key, char *val, size_t size);

/* process_vm_readv(2) and process_vm_writev(2) of pid's memory, made
 * again through a live thread (cp_proc_live_tid) when pid's own fails:
 * its main thread may have exited. */
ssize_t cp_proc_vm_read(pid_t pid, const struct iovec *local, unsigned long nlocal,
			const struct iovec *remote, unsigned long nremote);
ssize_t cp_proc_vm_write(pid_t pid, const struct iovec *local, unsigned long nlocal,
			 const struct iovec *remote, unsigned long nremote);

/* Reads len bytes at addr of pid's memory (/proc/PID/mem); 0, or -1 when
 * they cannot all be read. */
int cp_proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* The value of entry type (AT_ENTRY, AT_RANDOM, ...) of pid's auxiliary
 * vector (/proc/PID/auxv, a 64-bit program's); 0, or -1 when it has none
 * or cannot be read. */
int cp_proc_auxv(pid_t pid, uint64_t type, uint64_t *value);
/* The 16 random bytes the kernel gave pid's program at its exec
 * (AT_RANDOM): new at every exec, with or without address randomization,
 * so that two reads that differ tell an exec between them. 0, or -1. */
int cp_proc_exec_random(pid_t pid, uint8_t out[16]);
/* Writes len bytes at addr of pid's memory through /proc/PID/mem: the
 * kernel's forced write, which also reaches read-only mappings (a private
 * copy of the page is made for pid alone). Pinned (cp_proc_mem_pin), it
 * reaches only the program pinned, and fails once that one is gone. */
int cp_proc_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* Pins the program pid runs now as the one its writes reach, until
 * cp_proc_mem_unpin(the token returned): after an exec (or its exit, and
 * the pid given to another process) they fail, where they would have
 * landed in the new program at the same address. A pid pinned twice
 * writes through its newest pin. -1: not pinned (writes open anew). */
int cp_proc_mem_pin(pid_t pid);
void cp_proc_mem_unpin(int token);
/* As cp_proc_mem_write, through the pin token (cp_proc_mem_pin's, of
 * pid): only that pin's program, though pid was pinned anew since (its
 * exec followed, the new program patched). A token not pid's, or -1 (a
 * pin refused): opened anew, never through another program's pin. */
int cp_proc_mem_write_pinned(int token, pid_t pid, uint64_t addr, const void *buf, size_t len);

/* The processes descended from pid now, children first (malloc'd, *n of
 * them; none is not an error). */
int cp_proc_descendants(pid_t pid, pid_t **out, size_t *n);
/* The same, of the processes the kernel gave a pid after it gave out
 * `after` (a reading of cp_proc_last_pid): only theirs are read, not
 * every process's (a process created since has a pid given out since,
 * and so have its children). after < 0: every process. */
int cp_proc_descendants_born(pid_t pid, long after, pid_t **out, size_t *n);
/* Whether a thread of pid has a child now (/proc/PID/task/TID/children):
 * without one, pid has no descendant, and a walk of every process
 * (cp_proc_descendants) finds none. True when it cannot be told (a
 * kernel without those files). */
bool cp_proc_has_children(pid_t pid);
/* The last pid the kernel gave out in clockprof's pid namespace
 * (ns_last_pid: every process and thread created anywhere below it is
 * given one there too); -1 when it cannot be read. */
long cp_proc_last_pid(void);

/* Lists the process's thread ids (malloc'd). */
int cp_proc_threads(pid_t pid, pid_t **tids, size_t *n);

/* fn(pid, tid, arg) for each thread of the process until one returns
 * nonzero: that value; 0 when none does, or the threads cannot be
 * listed. */
long cp_proc_thread_find(pid_t pid, long (*fn)(pid_t pid, pid_t tid, void *arg), void *arg);

/* A thread's scheduler state letter ('R' running, 'S' asleep, 'T'
 * stopped by a signal, 't' stopped by its tracer) from
 * /proc/PID/task/TID/stat; 0 when it is gone. */
char cp_proc_thread_state(pid_t pid, pid_t tid);
/* Whether the program pid runs is a 32-bit one (ia32): its executable's
 * ELF class. */
bool cp_proc_runs_32_bit(pid_t pid);
/* Whether the thread is there and not a zombie (exited, not reaped). */
bool cp_proc_thread_alive(pid_t pid, pid_t tid);

/* The thread that shows pid's memory: pid itself, or, once its main
 * thread has exited while others run on (pthread_exit in main: the
 * leader a zombie, whose maps read empty, whose root, map_files and mem
 * are gone), a thread still live, whose own are the process's. */
pid_t cp_proc_live_tid(pid_t pid);
/* Its /proc directory, into buf: /proc/PID, or /proc/PID/task/TID. */
void cp_proc_live_dir(pid_t pid, char *buf, size_t size);
/* Whether the process lives: its main thread, or once that one has
 * exited (a zombie), another thread (cp_proc_live_tid). */
bool cp_proc_alive(pid_t pid);
/* Whether its main thread has exited while another thread runs on: one
 * alive, not exiting and not killed, for 15 ms of looking (where it
 * seems so). Not a process on its way out, whose main thread went first
 * while a thread blocked at the exit (an fsync's writeback) has yet to
 * follow: cp_proc_live_tid still finds that one. */
bool cp_proc_leaderless(pid_t pid);

/* The first of the process's threads stopped by a signal (SIGSTOP,
 * SIGTSTP: state 'T'), 0 when none is: such a thread runs nothing until
 * a SIGCONT, whoever sends it and whenever. */
pid_t cp_proc_stopped_thread(pid_t pid);

/* The boottime offset of this process's time namespace, in ns
 * (/proc/self/timens_offsets): /proc/PID/stat's start times are shifted
 * by it. 0 in the host's, or without time namespaces. */
int64_t cp_proc_boottime_offset_ns(void);

/* Whether tid is among tids[0..n). */
bool cp_tid_in(const pid_t *tids, size_t n, pid_t tid);

#endif
