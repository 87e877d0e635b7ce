/* stub_forks.h - the processes a target forked while its stub ran (the
 * stub's window, vdso_area.S): each holds a copy of that instant, its
 * vDSO perhaps writable and executable, its sites half switched, and
 * vdso_stub.c sends it through the stub again to finish it. */
#ifndef CP_STUB_FORKS_H
#define CP_STUB_FORKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* When a stub was sent: the boot-time clock tick (what /proc/PID/stat's
 * start time counts in) and the last pid the kernel gave out. */
struct cp_stub_window {
	unsigned long long tick;
	long last_pid; /* -1: unknown */
};

void cp_stub_window_open(struct cp_stub_window *w);

/* The processes descended from pid that started since w opened, parents
 * before their children (malloc'd, *n of them): none at once when no
 * process or thread was created since (one read), or when no thread of
 * pid has a child (one read a thread: the hold's own thread of
 * clockprof's moves the pids on, and the listing of every process that
 * followed cost ~0.3 ms of each stub's round trip here), else only the
 * processes given a pid since are read (clockprof's own threads, a hold
 * each, are among them: a scan of every process each time cost ~1.5 ms
 * of an attach's CPU for 100 processes, on a host of thousands ~30 times
 * that). */
int cp_stub_window_forks(pid_t pid, const struct cp_stub_window *w, pid_t **out, size_t *n);

/* Whether pid has a mapping of code that is writable and executable:
 * its vDSO, or a file's page (a boundary's redirect); a JIT's anonymous
 * ones are its own business. */
bool cp_proc_has_wx(pid_t pid);

#endif
