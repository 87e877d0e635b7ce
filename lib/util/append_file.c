/* append_file.c - see append_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "append_file.h"
#include "error.h"

int cp_append_text_file(const char *path, const char *text,
			struct cp_error *err)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	size_t len = strlen(text), off = 0;

	if (fd < 0)
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s", path,
			       strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;

			close(fd);
			return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s",
				       path, strerror(e));
		}
		off += (size_t)n;
	}
	if (close(fd))
		return cp_fail(err, CP_EXIT_USAGE, "%s: cannot append: %s", path,
			       strerror(errno));
	return 0;
}
