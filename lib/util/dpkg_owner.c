/* dpkg_owner.c - see dpkg_owner.h.
 *
 * dpkg keeps no index from a file to its package: each package's list
 * is read until one lists the file. All ~1,000 lists of a server (~10
 * MB) take 12-25 ms, and a stripped module's hint waits for them after
 * the window, where they were the attach's last step. The lists whose
 * package name begins as the file's name does are read first: the
 * owner is most often among them (libjemalloc2 for libjemalloc.so.2,
 * redis-tools for the redis-check-rdb that redis-server links to,
 * python3.11-minimal), found in 0.2-2 ms. A file no package lists still
 * has every list read, unless it lies where no package installs any.
 * Each list is read whole and searched with one memmem, a little faster
 * than line by line. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpkg_owner.h"

/* A list read whole, between newlines, so that a line is found as
 * "\nLINE\n" by one memmem; kept for the next list. */
struct list_buf {
	char *data;
	size_t len, cap;
};

static bool read_list(struct list_buf *b, const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t got = -1;

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && st.st_size > 0) {
		size_t need = (size_t)st.st_size + 2;
		char *grown = need > b->cap ? realloc(b->data, need) : b->data;

		if (grown) {
			b->data = grown;
			b->cap = need > b->cap ? need : b->cap;
			got = read(fd, b->data + 1, (size_t)st.st_size);
		}
	}
	close(fd);
	if (got <= 0)
		return false;
	b->data[0] = '\n';
	b->data[got + 1] = '\n';
	b->len = (size_t)got + 2;
	return true;
}

static bool has_line(const struct list_buf *b, const char *line)
{
	char needle[4096 + 2];
	int n = snprintf(needle, sizeof(needle), "\n%s\n", line);

	return n > 0 && (size_t)n < sizeof(needle) && memmem(b->data, b->len, needle, (size_t)n);
}

/* Whether the list file lists path or its other spelling. */
static bool lists(struct list_buf *b, const char *file, const char *path, const char *other)
{
	return read_list(b, file) && (has_line(b, path) || (other && has_line(b, other)));
}

/* The start the owner's name most often shares with the file's: the
 * file's name up to its first '.', '-' or '_' ("redis" for the
 * redis-check-rdb that redis-server links to, of redis-tools). */
static size_t name_stem(const char *path, const char **stem)
{
	const char *base = strrchr(path, '/');

	*stem = base ? base + 1 : path;
	return strcspn(*stem, ".-_");
}

/* One pass over the lists: those whose name starts with the stem, or
 * the others. 0 with pkg set when one lists path. */
static int scan(DIR *dp, const char *dir, const char *path, bool stem_first, struct list_buf *b,
		char *pkg, size_t size)
{
	const char *other = !strncmp(path, "/usr/", 5) ? path + 4 : NULL, *stem;
	size_t stem_len = name_stem(path, &stem);
	char file[4096 + 256];
	struct dirent *d;

	rewinddir(dp);
	while ((d = readdir(dp))) {
		size_t len = strlen(d->d_name);

		if (len < 6 || strcmp(d->d_name + len - 5, ".list") ||
		    (stem_len && !strncmp(d->d_name, stem, stem_len)) != stem_first)
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, d->d_name);
		if (lists(b, file, path, other)) {
			size_t name = strcspn(d->d_name, ":"); /* PKG:ARCH.list */

			snprintf(pkg, size, "%.*s", (int)(name < len - 5 ? name : len - 5),
				 d->d_name);
			return 0;
		}
	}
	return -1;
}

/* Where no package installs a file (Debian policy: /usr/local is the
 * administrator's, and home, root's and temporary directories are no
 * package's): every list would be read for nothing, a program built
 * there being the common case. */
static bool no_package_there(const char *path)
{
	static const char *const dirs[] = { "/usr/local/", "/home/", "/root/", "/tmp/",
					    "/var/tmp/" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return true;
	return false;
}

int cp_dpkg_owner(const char *admindir, const char *path, char *pkg, size_t size)
{
	struct list_buf b = { 0 };
	char dir[4096];
	DIR *dp;
	int rc;

	if (no_package_there(path))
		return -1;
	snprintf(dir, sizeof(dir), "%s/info", admindir ? admindir : "/var/lib/dpkg");
	dp = opendir(dir);
	if (!dp)
		return -1;
	rc = scan(dp, dir, path, true, &b, pkg, size);
	if (rc)
		rc = scan(dp, dir, path, false, &b, pkg, size);
	closedir(dp);
	free(b.data);
	return rc;
}
