/* dpkg_owner.c - see dpkg_owner.h. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dpkg_owner.h"

/* Whether one of the file list's lines is path or its other spelling. */
static bool lists(FILE *f, const char *path, const char *other)
{
	char line[4096];

	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, path) || (other && !strcmp(line, other)))
			return true;
	}
	return false;
}

int cp_dpkg_owner(const char *admindir, const char *path, char *pkg, size_t size)
{
	char dir[4096], file[4096 + 256];
	const char *other = !strncmp(path, "/usr/", 5) ? path + 4 : NULL;
	struct dirent *d;
	DIR *dp;
	int rc = -1;

	snprintf(dir, sizeof(dir), "%s/info", admindir ? admindir : "/var/lib/dpkg");
	dp = opendir(dir);
	if (!dp)
		return -1;
	while (rc && (d = readdir(dp))) {
		size_t len = strlen(d->d_name);
		FILE *f;

		if (len < 6 || strcmp(d->d_name + len - 5, ".list"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, d->d_name);
		f = fopen(file, "re");
		if (!f)
			continue;
		if (lists(f, path, other)) {
			size_t name = strcspn(d->d_name, ":"); /* PKG:ARCH.list */

			snprintf(pkg, size, "%.*s", (int)(name < len - 5 ? name : len - 5),
				 d->d_name);
			rc = 0;
		}
		fclose(f);
	}
	closedir(dp);
	return rc;
}
