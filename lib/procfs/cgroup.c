/* cgroup.c - see cgroup.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_mount.h"
#include "grow.h"

#define UNIT_DEPTH 4 /* system.slice/x.service, user.slice/user-0.slice/... */

static bool is_cgroup(const char *path)
{
	char procs[PATH_MAX];

	return snprintf(procs, sizeof(procs), "%s/cgroup.procs", path) < (int)sizeof(procs) &&
	       access(procs, R_OK) == 0;
}

/* A directory named name below dir, depth levels at most: into path. */
static bool find_below(const char *dir, const char *name, int depth, char *path, size_t size)
{
	struct dirent *e;
	bool found = false;
	DIR *d;

	if (depth < 0 || !(d = opendir(dir)))
		return false;
	while (!found && (e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
			continue;
		if (!strcmp(e->d_name, name) && is_cgroup(sub))
			found = snprintf(path, size, "%s", sub) < (int)size;
		else
			found = find_below(sub, name, depth - 1, path, size);
	}
	closedir(d);
	return found;
}

int cp_cgroup_resolve(const char *spec, char *path, size_t size)
{
	char full[PATH_MAX], mount[PATH_MAX];

	if (!cp_cgroup_mount(NULL, mount, sizeof(mount))) {
		errno = ENOTSUP;
		return -1;
	}
	if ((spec[0] == '/' ? snprintf(full, sizeof(full), "%s", spec) :
			      snprintf(full, sizeof(full), "%.2047s/%.2047s", mount, spec)) >=
	    (int)sizeof(full)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (is_cgroup(full)) {
		if (snprintf(path, size, "%s", full) < (int)size)
			return 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!strchr(spec, '/') && find_below(mount, spec, UNIT_DEPTH, path, size))
		return 0;
	errno = ENOENT;
	return -1;
}

/* Adds the pids of dir's cgroup.procs and of every cgroup below it. */
static int add_procs(const char *dir, pid_t **out, size_t *n, size_t *cap)
{
	char path[PATH_MAX];
	struct dirent *e;
	long pid;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fscanf(f, "%ld", &pid) == 1)
		if (!cp_grow(out, cap, *n + 1, sizeof(**out)))
			(*out)[(*n)++] = (pid_t)pid;
	fclose(f);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			add_procs(path, out, n, cap);
	closedir(d);
	return 0;
}

int cp_cgroup_procs(const char *path, pid_t **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (add_procs(path, out, n, &cap) == 0)
		return 0;
	free(*out);
	*out = NULL;
	return -1;
}

/* Whether the file at dir/name holds a line that starts with what. */
static bool has_line(const char *dir, const char *name, const char *what)
{
	char path[PATH_MAX], line[256];
	bool found = false;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
	    !(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, what, strlen(what));
	fclose(f);
	return found;
}

/* Whether line (of /proc/PID/cgroup) names a cgroup of controller's
 * hierarchy (NULL: v2's) whose file has a line that starts with state or
 * with also (where not NULL). */
static bool in_state(const char *line, const char *controller, const char *file, const char *state,
		     const char *also)
{
	char copy[PATH_MAX], at[PATH_MAX], mount[PATH_MAX], dir[2 * PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", line);
	if (!cp_cgroup_line_path(copy, controller, at, sizeof(at)) ||
	    !cp_cgroup_mount(controller, mount, sizeof(mount)) ||
	    snprintf(dir, sizeof(dir), "%s%s", mount, at) >= (int)sizeof(dir))
		return false;
	return has_line(dir, file, state) || (also && has_line(dir, file, also));
}

bool cp_cgroup_frozen(pid_t pid)
{
	char path[64], line[PATH_MAX];
	bool frozen = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!frozen && fgets(line, sizeof(line), f))
		frozen = in_state(line, NULL, "cgroup.events", "frozen 1", NULL) ||
			 in_state(line, "freezer", "freezer.state", "FROZEN", "FREEZING");
	fclose(f);
	return frozen;
}
