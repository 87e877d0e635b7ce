/* exec_race_target.c - threads that call execve at once: each of N
 * threads makes K requests of 1 read through syscall() and 2 through the
 * vDSO, then all of them exec /bin/true together (one exec wins, the
 * others die with the old image). Where the C library's execve is the
 * uprobe that sums the patch's table (no sched_prepare_exec), each call
 * starts a pass over it, at once.
 *
 *   exec_race_target N K */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;
static int requests;
static pthread_barrier_t together;

__attribute__((noinline)) void handle_request(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
}

static void *worker(void *arg)
{
	char *argv[] = { "/bin/true", NULL };

	(void)arg;
	for (int i = 0; i < requests; i++) {
		handle_request();
		if (i % 50 == 0)
			usleep(1000);
	}
	pthread_barrier_wait(&together);
	execv(argv[0], argv);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	pthread_t t;

	if (n < 1)
		return 2;
	requests = atoi(argv[2]);
	pthread_barrier_init(&together, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		pthread_create(&t, NULL, worker, NULL);
	for (;;)
		pause();
}
