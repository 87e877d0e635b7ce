/* pid_namespace.h - which pid namespace the pids clockprof knows are in.
 *
 * getpid(), /proc and the PID a user gives are numbers in clockprof's own
 * pid namespace, while bpf_get_current_pid_tgid() gives a task's numbers in
 * the host's. Inside a container (unshare --pid) they differ: the BPF
 * program compared one with the other and counted nothing, its self-test
 * included ("uprobes do not fire on this host"). There the program asks
 * for the numbers in clockprof's namespace instead
 * (bpf_get_ns_current_pid_tgid), which it can give only for tasks of that
 * very namespace. */
#ifndef CP_PID_NAMESPACE_H
#define CP_PID_NAMESPACE_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* A pid namespace as bpf_get_ns_current_pid_tgid() names it: the device
 * and inode of /proc/self/ns/pid. ino 0: the host's (initial) namespace,
 * whose numbers bpf_get_current_pid_tgid() gives. */
struct cp_pid_ns {
	uint64_t dev, ino;
};

/* clockprof's pid namespace, checked for what the BPF program can count
 * from it: /proc must be mounted for it (its pids are the ones clockprof
 * is given), and the target must be in it, not in one nested inside it.
 * CP_EXIT_PROFILE saying which when not. */
int cp_pid_ns_for(pid_t target, struct cp_pid_ns *ns, struct cp_error *err);

#endif
