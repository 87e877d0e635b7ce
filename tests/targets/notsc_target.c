/* notsc_target.c - a program whose thread made rdtsc fault
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV), as record-and-replay tools make
 * their tracees do) and reads the clock only where the vDSO takes no
 * rdtsc: time() and CLOCK_MONOTONIC_COARSE. Unpatched it lives; code
 * clockprof writes into it must take no rdtsc the program does not.
 *
 *   notsc_target MODE REQUESTS (0: until killed)
 *
 * MODE "read": each request (handle_request) reads time() and the
 * coarse clock once each; "none": no read, only the boundary. A request
 * every 2 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;
static int reads;

__attribute__((noinline)) void handle_request(int i)
{
	struct timespec ts;

	if (reads) {
		sink += time(NULL);
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		sink += ts.tv_nsec;
	}
	sink += i;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 0;

	reads = argc > 1 && !strcmp(argv[1], "read");
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV) != 0) {
		perror("prctl(PR_SET_TSC)");
		return 3;
	}
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; n == 0 || i < n; i++) {
		handle_request(i);
		usleep(2000);
	}
	return 0;
}
