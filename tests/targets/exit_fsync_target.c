/* exit_fsync_target.c - a process that ends (returns from main) while
 * another of its threads waits in fsync for MB megabytes' writeback:
 * that thread sleeps uninterruptibly (state D) until the writeback is
 * done, so its main thread is a zombie for that long while the other
 * lives on, killed. The process is on its way out, not serving on.
 *
 *   exit_fsync_target FILE MB
 *
 * The main thread reads the clock every 3 ms until the other has written
 * FILE and entered fsync, then 20 ms more, and returns. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char **args;
static atomic_int syncing;

static void *syncer(void *unused)
{
	static char buf[1 << 20];
	int fd = open(args[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	(void)unused;
	memset(buf, 1, sizeof(buf));
	for (long i = 0; fd >= 0 && i < atol(args[2]); i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	atomic_store(&syncing, 1);
	if (fd >= 0)
		fsync(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec ts, tick = { 0, 3000000 };
	pthread_t t;

	if (argc != 3)
		return 2;
	args = argv;
	if (pthread_create(&t, NULL, syncer, NULL))
		return 1;
	for (int i = 0; !atomic_load(&syncing) || i < 7; i += atomic_load(&syncing)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		nanosleep(&tick, NULL);
	}
	return 0;
}
