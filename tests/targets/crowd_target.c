/* crowd_target.c - more threads alive at once than the vDSO patch's
 * table has slots for (CP_PATCH_SLOTS in probes/patch_layout.h), each
 * reading the clock exactly once:
 *
 *   crowd_target N
 *
 * N threads are started and wait at a barrier (so that every thread
 * pointer is distinct: none is an exited thread's, reused), read
 * CLOCK_MONOTONIC once, wait at a second barrier and exit. The main
 * thread reads nothing: N reads in all, by construction. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t started, read_done;

static void *one_read(void *arg)
{
	struct timespec ts;

	(void)arg;
	pthread_barrier_wait(&started);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_barrier_wait(&read_done);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5000;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;

	if (!t || n < 1)
		return 2;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&started, NULL, (unsigned)n);
	pthread_barrier_init(&read_done, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, one_read, NULL)) {
			perror("pthread_create");
			return 2;
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
