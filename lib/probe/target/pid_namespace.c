/* pid_namespace.c - see pid_namespace.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pid_namespace.h"

/* The initial pid namespace's inode, fixed by the kernel
 * (PROC_PID_INIT_INO, include/linux/proc_ns.h). */
#define CP_PID_INIT_INO 0xEFFFFFFCu

/* The pid /proc gives clockprof itself: its number in the namespace /proc
 * was mounted for, 0 when unknown. */
static pid_t proc_self_pid(void)
{
	char link[32];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);

	if (n <= 0)
		return 0;
	link[n] = '\0';
	return (pid_t)strtol(link, NULL, 10);
}

int cp_pid_ns_for(pid_t target, struct cp_pid_ns *ns, struct cp_error *err)
{
	struct stat self, other;
	char path[64];
	pid_t seen;

	*ns = (struct cp_pid_ns){ 0 };
	if (stat("/proc/self/ns/pid", &self) || self.st_ino == CP_PID_INIT_INO)
		return 0; /* the host's, or a kernel without pid namespaces */
	seen = proc_self_pid();
	if (seen != getpid())
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"clockprof runs in a pid namespace of its own but /proc is not mounted for it (it calls clockprof %d, which is %d in its namespace): mount one for it (unshare --mount-proc) or run clockprof on the host",
			(int)seen, (int)getpid());
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)target);
	if (stat(path, &other))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read %s: %s", path, strerror(errno));
	if (other.st_ino != self.st_ino || other.st_dev != self.st_dev)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d is in a pid namespace nested inside clockprof's, which is not the host's: clockprof counts only processes of its own pid namespace there; run it in the target's namespace or on the host",
			(int)target);
	ns->dev = (uint64_t)self.st_dev;
	ns->ino = (uint64_t)self.st_ino;
	return 0;
}
