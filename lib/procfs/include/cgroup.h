/* cgroup.h - the processes of a cgroup v2, for `attach --cgroup`: the
 * natural handle on a service (a systemd unit) or a container, whose
 * processes come and go. */
#ifndef CP_CGROUP_H
#define CP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The cgroup spec names, as a directory: a path under the cgroup v2 mount
 * (/sys/fs/cgroup/system.slice/nginx.service), one relative to it
 * (system.slice/nginx.service), or a systemd unit's name (nginx.service,
 * found below the mount). The mount is where /proc/self/mounts has
 * cgroup2 (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
 * hierarchy). 0, or -1 with errno (ENOENT: no such cgroup; ENOTSUP: no
 * cgroup v2 mounted). */
int cp_cgroup_resolve(const char *spec, char *path, size_t size);

/* Every process in the cgroup at path and in the cgroups below it, by
 * pid (malloc'd, *n of them). -1 with errno when its cgroup.procs cannot
 * be read. */
int cp_cgroup_procs(const char *path, pid_t **out, size_t *n);

/* Whether the process's cgroup is frozen, or being frozen (cgroup v2's
 * cgroup.freeze, as `docker pause` and systemd's freeze set it; v1's
 * freezer): its threads run nothing until it is thawed, though their
 * state reads S, not T. */
bool cp_cgroup_frozen(pid_t pid);

#endif
