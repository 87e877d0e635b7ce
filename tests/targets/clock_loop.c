/* clock_loop.c - an unrelated process for the "others are not slowed" test
 * and the benchmarks: times N calls of a function and prints ns per call.
 *
 *   clock_loop vdso N      clock_gettime(CLOCK_MONOTONIC) through glibc
 *   clock_loop syscall N   getppid(), a syscall that is not a clock read
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	long n;
	double t0, best = 1e300;
	volatile long sink = 0;

	if (argc < 3)
		return 2;
	n = atol(argv[2]);
	/* Best of five rounds: the least disturbed by the other core. */
	for (int round = 0; round < 5; round++) {
		t0 = now_ns();
		if (!strcmp(argv[1], "syscall"))
			for (long i = 0; i < n; i++)
				sink += getppid();
		else
			for (long i = 0; i < n; i++) {
				clock_gettime(CLOCK_MONOTONIC, &ts);
				sink += ts.tv_nsec;
			}
		if ((now_ns() - t0) / n < best)
			best = (now_ns() - t0) / n;
	}
	printf("%.2f\n", best);
	return 0;
}
