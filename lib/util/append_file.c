/* append_file.c - see append_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "append_file.h"
#include "atomic_file.h"
#include "error.h"

int cp_append_text_file(const char *path, const char *text, struct cp_error *err)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	size_t len = strlen(text);

	if (fd < 0)
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s", path, strerror(errno));
	if (cp_write_all(fd, text, len) != 0) {
		int e = errno;

		close(fd);
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s", path, strerror(e));
	}
	if (close(fd))
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s", path, strerror(errno));
	return 0;
}
