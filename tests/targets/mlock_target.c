/* mlock_target.c - a process that locks its memory, present and future
 * (mlockall(MCL_CURRENT | MCL_FUTURE)), as a latency-bound daemon does
 * (chronyd -m, audio servers): every mapping made in it is populated
 * whole and locked. Says "ready PID", then for each line "go K" reads
 * the clock K times and says "done", until "quit"; exits 77 where it may not lock
 * (no CAP_IPC_LOCK and a small RLIMIT_MEMLOCK). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	char line[64];

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		return 77;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		struct timespec ts;
		long k = line[0] == 'g' ? atol(line + 3) : 0;

		if (line[0] == 'q')
			break;
		for (long i = 0; i < k; i++)
			clock_gettime(CLOCK_MONOTONIC, &ts);
		printf("done\n");
		fflush(stdout);
	}
	return 0;
}
