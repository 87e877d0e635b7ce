/* exec_loop_target.c - a process that exec()s itself again and again,
 * keeping its pid: each image reads the clock 200 times, sleeps 0.5-3.5
 * ms and execs /proc/self/exe with its count plus one. Under `setarch -R`
 * (no address space randomization) every image has its vDSO at the same
 * address, so a clockprof that attaches while it execs sees the same
 * vDSO before and after (test_exec_mid_attach.py). Runs until killed.
 *
 *   exec_loop_target [K] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

int main(int argc, char **argv)
{
	long k = argc > 1 ? atol(argv[1]) : 0;
	struct timespec ts;
	char next[32];

	for (int i = 0; i < 200; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
	usleep(500 + (unsigned)(k * 7919 % 3000));
	snprintf(next, sizeof(next), "%ld", k + 1);
	execl("/proc/self/exe", argv[0], next, (char *)NULL);
	perror("exec_loop_target: exec");
	return 1;
}
