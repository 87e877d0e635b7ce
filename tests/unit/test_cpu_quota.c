/* test_cpu_quota.c - a cgroup's CPU limit (cpu_quota.h), read from a
 * hierarchy laid out in a temporary directory as the kernel lays out
 * cgroup v2's and v1's files: the least limit on the way up, rounded up
 * to whole CPUs, and none where none is set. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_mount.h"
#include "cpu_quota.h"
#include "unit.h"

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

static void clean(const char *root, const char *const *dirs, size_t n)
{
	static const char *const files[] = { "cpu.max", "cpu.cfs_quota_us", "cpu.cfs_period_us" };
	char path[512];

	for (size_t i = n; i-- > 0;) {
		for (size_t k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "%s%s/%s", root, dirs[i], files[k]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		rmdir(path);
	}
}

TEST(cpu_quota_is_the_least_limit_on_the_way_up)
{
	char root[] = "/tmp/cp-quota-XXXXXX", dir[256];
	static const char *const dirs[] = { "", "/pod", "/pod/c1", "/pod/c1/leaf" };

	CHECK(mkdtemp(root) != NULL);
	for (size_t i = 1; i < 4; i++) {
		snprintf(dir, sizeof(dir), "%s%s", root, dirs[i]);
		mkdir(dir, 0700);
	}
	/* none set: no limit */
	CHECK_INT((int)cp_cpu_quota_below(root, "/pod/c1/leaf"), 0);
	snprintf(dir, sizeof(dir), "%s/pod", root);
	put(dir, "cpu.max", "150000 100000\n"); /* 1.5 CPUs: 2 */
	snprintf(dir, sizeof(dir), "%s/pod/c1/leaf", root);
	put(dir, "cpu.max", "max 100000\n");
	CHECK_INT((int)cp_cpu_quota_below(root, "/pod/c1/leaf"), 2);
	snprintf(dir, sizeof(dir), "%s/pod/c1", root);
	put(dir, "cpu.max", "50000 100000\n"); /* half a CPU: 1 */
	CHECK_INT((int)cp_cpu_quota_below(root, "/pod/c1/leaf"), 1);
	/* above the process's own cgroup is not looked at */
	CHECK_INT((int)cp_cpu_quota_below(root, "/pod"), 2);
	clean(root, dirs, 4);
}

TEST(cpu_quota_reads_cgroup_v1s_files)
{
	char root[] = "/tmp/cp-quota-XXXXXX", dir[256];
	static const char *const dirs[] = { "", "/docker" };

	CHECK(mkdtemp(root) != NULL);
	put(root, "cpu.cfs_quota_us", "-1\n");
	put(root, "cpu.cfs_period_us", "100000\n");
	CHECK_INT((int)cp_cpu_quota_below(root, "/"), 0);
	snprintf(dir, sizeof(dir), "%s/docker", root);
	mkdir(dir, 0700);
	put(dir, "cpu.cfs_quota_us", "300000\n");
	put(dir, "cpu.cfs_period_us", "100000\n");
	CHECK_INT((int)cp_cpu_quota_below(root, "/docker"), 3);
	clean(root, dirs, 2);
}

/* The path of line, as cp_cgroup_line_path gives it, or "-" for none. */
static const char *path_of(const char *line, const char *controller)
{
	static char path[256];
	char copy[256];

	snprintf(copy, sizeof(copy), "%s", line);
	return cp_cgroup_line_path(copy, controller, path, sizeof(path)) ? path : "-";
}

TEST(cgroup_lines_give_their_hierarchys_path)
{
	CHECK_STR(path_of("0::/\n", NULL), "/");
	CHECK_STR(path_of("0::/system.slice/x.service\n", NULL), "/system.slice/x.service");
	CHECK_STR(path_of("1:cpu:/cp-try\n", NULL), "-");
	CHECK_STR(path_of("1:cpu:/cp-try\n", "cpu"), "/cp-try");
	CHECK_STR(path_of("2:cpu,cpuacct:/docker/abc\n", "cpu"), "/docker/abc");
	CHECK_STR(path_of("3:cpuacct:/\n", "cpu"), "-");
	CHECK_STR(path_of("4:cpuset:/\n", "cpu"), "-");
	CHECK_STR(path_of("9:name=systemd:/\n", "cpu"), "-");
	CHECK_STR(path_of("0::/../elsewhere\n", NULL), "-"); /* outside its namespace */
	CHECK_STR(path_of("garbage\n", NULL), "-");
}
