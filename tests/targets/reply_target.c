/* reply_target.c - a reference target for a syscall: boundary closed at
 * the C library's function for it: each request reads CLOCK_MONOTONIC K
 * times and then "replies" with a one-byte write to /dev/null, the
 * boundary -r syscall:write, made the HOW way:
 *
 *   reply_target HOW K REQUESTS [READS [fork]]   (REQUESTS 0: until killed)
 *
 *   write   through the C library's write()
 *   raw     by syscall(SYS_write): the kernel's write, not write()'s
 *   both    each way in turn
 *
 * A request is K reads, made READS way: vdso (the default) through the C
 * library's clock_gettime(), or mixed: its first by
 * syscall(SYS_clock_gettime), which passes no vDSO entry. The program
 * paces them with nanosleep (1 ms), a syscall that is no clock read and
 * no write. fork: a forked child serves them, and the program exits with
 * its status (a forked server's worker). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

int main(int argc, char **argv)
{
	const struct timespec gap = { 0, 1000000 };
	const char *how = argc > 1 ? argv[1] : "write";
	int k = argc > 2 ? atoi(argv[2]) : 1, fd = open("/dev/null", O_WRONLY);
	long requests = argc > 3 ? atol(argv[3]) : 0;
	int mixed = argc > 4 && !strcmp(argv[4], "mixed"), status;
	struct timespec ts;

	if (fd < 0)
		return 1;
	if (argc > 5 && !strcmp(argv[5], "fork")) {
		pid_t child = fork();

		if (child < 0)
			return 1;
		if (child > 0)
			return waitpid(child, &status, 0) == child && WIFEXITED(status) ?
			       WEXITSTATUS(status) : 1;
	}
	for (long i = 0; requests == 0 || i < requests; i++) {
		for (int r = 0; r < k; r++) {
			if (mixed && r == 0)
				syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
			else
				clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		if (!strcmp(how, "raw") || (!strcmp(how, "both") && i % 2))
			sink += syscall(SYS_write, fd, ".", 1);
		else
			sink += write(fd, ".", 1);
		nanosleep(&gap, NULL);
	}
	return 0;
}
