/* patch_owner.c - see patch_owner.h: the holder of a target's patch,
 * recorded, recognized alive, and the lock its look and claim take. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "monotonic.h"
#include "patch_owner.h"
#include "procfs.h"

/* How long another clockprof's look and claim are waited for: they take
 * milliseconds, a preempted one on a loaded host a few hundred. */
#define OWNER_LOCK_WAIT_S 2.0

/* pid's start time, 0 when it is not a live process (gone, or a zombie:
 * a SIGKILLed clockprof its parent has not reaped yet counts nothing). */
static uint64_t live_start(pid_t pid)
{
	struct cp_proc_stat st;

	if (pid <= 0 || cp_proc_stat_read(pid, &st) || st.state == 'Z' || st.state == 'X')
		return 0;
	return st.start_time;
}

/* Its start time read once a process (its /proc/PID/stat, at each
 * prepare, claim, handover and release): it never changes, each thread
 * that reads it finds the same, and a child forked from this process is
 * told by its own pid (the start stored before the pid it belongs to). */
void cp_patch_owner_self(struct cp_vdso_area_owner *o)
{
	static _Atomic uint64_t known_pid, known_start;
	pid_t self = getpid();
	uint64_t start = atomic_load(&known_pid) == (uint64_t)self ? atomic_load(&known_start) : 0;

	if (!start && (start = live_start(self))) {
		atomic_store(&known_start, start);
		atomic_store(&known_pid, (uint64_t)self);
	}
	*o = (struct cp_vdso_area_owner){ (uint64_t)self, start };
}

pid_t cp_patch_owner_live_other(const struct cp_vdso_area_owner *o)
{
	struct cp_vdso_area_owner self;

	if (!o->pid || o->pid > (uint64_t)INT32_MAX)
		return 0;
	cp_patch_owner_self(&self);
	if (o->pid == self.pid && o->start == self.start)
		return 0;
	/* A pid that a later process reuses has another start time. */
	return live_start((pid_t)o->pid) == o->start ? (pid_t)o->pid : 0;
}

int cp_patch_owner_lock(pid_t target)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	socklen_t len;
	bool busy;

	if (fd < 0)
		return -1;
	/* An abstract name: nothing on disk, freed when the socket closes,
	 * by the kernel too when its clockprof is killed. */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			  snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1,
				   "clockprof-patch-owner-%d", (int)target));
	for (double until = cp_monotonic_s() + OWNER_LOCK_WAIT_S;; usleep(1000)) {
		if (!bind(fd, (struct sockaddr *)&a, len))
			return fd;
		if (errno != EADDRINUSE || cp_monotonic_s() > until)
			break;
	}
	busy = errno == EADDRINUSE;
	close(fd);
	return busy ? -2 : -1;
}

void cp_patch_owner_unlock(int lock)
{
	if (lock >= 0)
		close(lock);
}
