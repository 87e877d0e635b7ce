/* cpu_quota.c - see cpu_quota.h. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_mount.h"
#include "cpu_quota.h"

/* quota / period, rounded up; 0: no limit. */
static size_t cpus_of(long long quota, long long period)
{
	return quota > 0 && period > 0 ? (size_t)((quota + period - 1) / period) : 0;
}

/* The smaller of two limits, 0 being none. */
static size_t least(size_t a, size_t b)
{
	return a && (!b || a < b) ? a : b;
}

/* The first line of dir/name, or false. */
static bool first_line(const char *dir, const char *name, char *line, size_t size)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    !(f = fopen(path, "re")))
		return false;
	ok = fgets(line, (int)size, f) != NULL;
	fclose(f);
	return ok;
}

/* The limit set on the cgroup at dir alone: v2's "QUOTA PERIOD" ("max
 * PERIOD": none), v1's quota (-1: none) and period. */
static size_t limit_at(const char *dir)
{
	char a[64], b[64];
	long long quota, period;

	if (first_line(dir, "cpu.max", a, sizeof(a)))
		return sscanf(a, "%lld %lld", &quota, &period) == 2 ? cpus_of(quota, period) : 0;
	if (first_line(dir, "cpu.cfs_quota_us", a, sizeof(a)) &&
	    first_line(dir, "cpu.cfs_period_us", b, sizeof(b)) && sscanf(a, "%lld", &quota) == 1 &&
	    sscanf(b, "%lld", &period) == 1)
		return cpus_of(quota, period);
	return 0;
}

size_t cp_cpu_quota_below(const char *root, const char *path)
{
	char dir[2 * PATH_MAX];
	size_t lowest = 0, root_len = strlen(root);

	if (snprintf(dir, sizeof(dir), "%s%s", root, strcmp(path, "/") ? path : "") >=
	    (int)sizeof(dir))
		return 0;
	for (;;) {
		char *slash;

		lowest = least(limit_at(dir), lowest);
		if (strlen(dir) <= root_len || !(slash = strrchr(dir, '/')) ||
		    (size_t)(slash - dir) < root_len)
			return lowest;
		*slash = '\0';
	}
}

/* The least of a hierarchy's limit and the one before (0: none). */
static size_t least_of(size_t before, const char *controller)
{
	char root[PATH_MAX], path[PATH_MAX];

	if (!cp_cgroup_mount(controller, root, sizeof(root)) ||
	    !cp_cgroup_own_path(controller, path, sizeof(path)))
		return before;
	return least(cp_cpu_quota_below(root, path), before);
}

static size_t quota;
static pthread_once_t quota_once = PTHREAD_ONCE_INIT;

static void read_quota(void)
{
	quota = least_of(least_of(0, NULL), "cpu");
}

size_t cp_cpu_quota_cpus(void)
{
	pthread_once(&quota_once, read_quota);
	return quota;
}
