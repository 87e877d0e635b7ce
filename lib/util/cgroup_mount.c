/* cgroup_mount.c - see cgroup_mount.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_mount.h"

/* Whether the comma-separated list holds word. */
static bool listed(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

bool cp_cgroup_mount(const char *controller, char *mount, size_t size)
{
	char dev[256], dir[PATH_MAX], type[64], opts[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	while (f && !found &&
	       fscanf(f, "%255s %4095s %63s %1023s %*[^\n]", dev, dir, type, opts) == 4)
		found = (controller ? !strcmp(type, "cgroup") && listed(opts, controller) :
				      !strcmp(type, "cgroup2")) &&
			snprintf(mount, size, "%s", dir) < (int)size;
	if (f)
		fclose(f);
	return found;
}

bool cp_cgroup_line_path(char *line, const char *controller, char *path, size_t size)
{
	char *list = strchr(line, ':'), *at;

	/* "0::PATH" (v2), "N:CONTROLLERS:PATH" (v1) */
	line[strcspn(line, "\n")] = '\0';
	if (!list || !(at = strchr(list + 1, ':')))
		return false;
	*list++ = '\0';
	*at++ = '\0';
	/* a cgroup outside this process's cgroup namespace ("/../x") is not
	 * below the hierarchy's mount */
	if (at[0] != '/' || !strncmp(at, "/..", 3))
		return false;
	return (controller ? listed(list, controller) : !strcmp(line, "0") && !*list) &&
	       snprintf(path, size, "%s", at) < (int)size;
}

bool cp_cgroup_own_path(const char *controller, char *path, size_t size)
{
	char line[PATH_MAX + 256];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = cp_cgroup_line_path(line, controller, path, size);
	if (f)
		fclose(f);
	return found;
}
