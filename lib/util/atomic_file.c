/* atomic_file.c - see atomic_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* dirname() may modify its argument, so it works on a copy. */
static void dir_of(const char *path, char *dir, size_t size)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(dir, size, "%s", dirname(copy));
}

int cp_check_writable(const char *path, struct cp_error *err)
{
	char dir[PATH_MAX];
	struct stat st;

	if (strcmp(path, "-") == 0)
		return 0;
	if (!*path)
		return cp_fail(err, CP_EXIT_USAGE, "output path is empty");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: it is a directory; give a file name",
			       path);
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: directory %s does not exist",
			       path, dir);
	if (access(dir, W_OK) != 0)
		return cp_fail(err, CP_EXIT_USAGE,
			       "cannot write %s: directory %s is not writable (%s)",
			       path, dir, strerror(errno));
	return 0;
}

int cp_write_file_atomic(const char *path, const void *buf, size_t len,
			 struct cp_error *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	int fd, saved;

	if (strcmp(path, "-") == 0) {
		if (write_all(STDOUT_FILENO, buf, len) != 0)
			return cp_fail(err, CP_EXIT_USAGE,
				       "cannot write to standard output: %s",
				       strerror(errno));
		return 0;
	}
	dir_of(path, dir, sizeof(dir));
	snprintf(tmp, sizeof(tmp), "%s/.clockprof.XXXXXX", dir);
	fd = mkstemp(tmp);
	if (fd < 0)
		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
			       strerror(errno));
	if (write_all(fd, buf, len) != 0 || fchmod(fd, 0644) != 0 ||
	    fsync(fd) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
			       strerror(saved));
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		return cp_fail(err, CP_EXIT_USAGE, "cannot write %s: %s", path,
			       strerror(saved));
	}
	return 0;
}
