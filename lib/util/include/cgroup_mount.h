/* cgroup_mount.h - where a cgroup hierarchy is mounted, and where this
 * process stands in it: what both the cgroups clockprof follows (procfs)
 * and the CPUs its own cgroup allows it (cpu_quota.h) start from. */
#ifndef CP_CGROUP_MOUNT_H
#define CP_CGROUP_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

/* The mount point of the cgroup v2 hierarchy (controller NULL:
 * /sys/fs/cgroup, or /sys/fs/cgroup/unified in a hybrid one), or of the
 * v1 hierarchy that has controller ("cpu"), as /proc/self/mounts says;
 * false where there is none. */
bool cp_cgroup_mount(const char *controller, char *mount, size_t size);

/* This process's cgroup in that hierarchy ("/system.slice/x.service"), as
 * /proc/self/cgroup says; false where it says none. */
bool cp_cgroup_own_path(const char *controller, char *path, size_t size);

/* The same, of one line of /proc/PID/cgroup (changed in place): its path
 * where the line is the hierarchy's. */
bool cp_cgroup_line_path(char *line, const char *controller, char *path, size_t size);

#endif
