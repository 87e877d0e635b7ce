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

bool cp_cgroup_own_path(const char *controller, char *path, size_t size)
{
	char line[PATH_MAX + 256], *list, *at;
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	/* "0::PATH" (v2), "N:CONTROLLERS:PATH" (v1) */
	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!(list = strchr(line, ':')) || !(at = strchr(++list, ':')))
			continue;
		*at++ = '\0';
		found = (controller ? listed(list, controller) : !strcmp(line, "0") && !*list) &&
			snprintf(path, size, "%s", at) < (int)size;
	}
	if (f)
		fclose(f);
	return found;
}
