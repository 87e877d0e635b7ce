/* fallback_target.c - a reference target for a syscall: boundary whose
 * check against sys_enter falls back (docs/boundaries.md): THREADS
 * threads, thread k making requests of k % 3 + 1 clock_gettime reads
 * each followed by a one-byte write to /dev/null (-r syscall:write),
 * paced by a nanosleep of PACE_US (0: none):
 *
 *   fallback_target HOW THREADS WRITES PACE_US   (WRITES 0: until killed)
 *
 *   fifth    every fifth write by syscall(SYS_write) (the first of them
 *            first), the others through the C library's write()
 *   signal   through write() until a SIGUSR1, then every fifth write by
 *            syscall(SYS_write)
 *
 * Each thread's requests: WRITES - 1 (its first write opens the first),
 * of k % 3 + 1 reads. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;
static volatile sig_atomic_t raw_from_now;
static int fd, pace_us;
static long writes;

static void on_usr1(int sig)
{
	(void)sig;
	raw_from_now = 1;
}

static void *serve(void *arg)
{
	long k = (long)arg, raw = 0;
	struct timespec ts, gap = { 0, pace_us * 1000L };

	for (long i = 0; writes == 0 || i < writes; i++) {
		for (long r = 0; r <= k % 3; r++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += ts.tv_nsec;
		}
		if (raw_from_now && raw++ % 5 == 0)
			sink += syscall(SYS_write, fd, ".", 1);
		else
			sink += write(fd, ".", 1);
		if (pace_us)
			nanosleep(&gap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[64];

	if (argc < 5 || threads < 1 || threads > 64)
		return 2;
	writes = atol(argv[3]);
	pace_us = atoi(argv[4]);
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	if (!strcmp(argv[1], "fifth"))
		raw_from_now = 1;
	else
		signal(SIGUSR1, on_usr1);
	for (long k = 0; k < threads; k++)
		if (pthread_create(&t[k], NULL, serve, (void *)k))
			return 1;
	for (int k = 0; k < threads; k++)
		pthread_join(t[k], NULL);
	return 0;
}
