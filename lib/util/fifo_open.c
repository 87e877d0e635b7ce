/* fifo_open.c - see fifo_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "fifo_open.h"

/* A writer's O_NONBLOCK open of a FIFO fails with ENXIO while nobody
 * reads it, and succeeds once someone does: there is no call that waits
 * for a reader and a signal both, so the open is retried between waits
 * for the signals (50 ms: far below a person's notice, and a few system
 * calls a second). */
static int wait_for_reader(const char *path, int flags, mode_t mode, cp_wait_notice notice)
{
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	sigset_t stop, saved;
	int fd, saved_errno;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	/* Blocked, so that sigtimedwait takes the one that comes (a
	 * command without a window has them unblocked). */
	sigprocmask(SIG_BLOCK, &stop, &saved);
	/* Told after the signals are blocked: one sent on seeing the notice
	 * ends the wait, never clockprof midway. */
	if (notice)
		notice(path);
	while ((fd = open(path, flags, mode)) < 0 && errno == ENXIO) {
		if (sigtimedwait(&stop, NULL, &tick) > 0) {
			errno = EINTR;
			break;
		}
	}
	saved_errno = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	errno = saved_errno;
	return fd;
}

int cp_open_for_writing(const char *path, int flags, mode_t mode, cp_wait_notice notice)
{
	int fd, fl;

	flags |= O_WRONLY | O_NONBLOCK;
	fd = open(path, flags, mode);
	if (fd < 0 && errno == ENXIO)
		fd = wait_for_reader(path, flags, mode, notice);
	if (fd < 0)
		return -1;
	/* O_NONBLOCK was for the open: writes wait for a slow reader. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int saved_errno = errno;

		close(fd);
		errno = saved_errno;
		return -1;
	}
	return fd;
}
