/* cpu_quota.h - the CPUs this process's cgroup lets it use. A container
 * given 2 CPUs of a 64-CPU host sees 64 in its affinity: the threads
 * clockprof starts for its work (parallel.h) would then outnumber what
 * it may run, and each be throttled in turn. */
#ifndef CP_CPU_QUOTA_H
#define CP_CPU_QUOTA_H

#include <stddef.h>

/* The least CPU limit of this process's cgroup and its ancestors (cgroup
 * v2's cpu.max, v1's cpu.cfs_quota_us over cpu.cfs_period_us), rounded
 * up to whole CPUs; 0 where none is set or none can be read. Read once. */
size_t cp_cpu_quota_cpus(void);

/* The same for the cgroup at root + path and its ancestors up to root
 * (root a hierarchy's mount point, path "/" or "/a/b"): the part that
 * reads the files, apart for its test. */
size_t cp_cpu_quota_below(const char *root, const char *path);

#endif
