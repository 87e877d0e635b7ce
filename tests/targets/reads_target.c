/* reads_target.c - a reference target whose clock reads per request are
 * known by construction, one MODE per way a program can read the clock.
 *
 *   reads_target MODE K [REQUESTS [LATE_THREADS [DELAY_MS]]]
 *
 * Each request is one call of handle_request(), which reads the clock K
 * times the MODE's way (mix: one read of every kind, K ignored). Requests
 * are served at a bounded rate (one per millisecond at most) so probe hits
 * stay cheap. Every thread serves REQUESTS requests (0: until killed); the
 * program exits when all have. LATE_THREADS extra threads start DELAY_MS
 * (default 300) after start-up, i.e. after clockprof has attached. Nothing
 * else reads the clock. Reads per request by mode:
 *   clock_gettime   K  clock_gettime CLOCK_MONOTONIC, vdso
 *   clocks          6K clock_gettime REALTIME, MONOTONIC, MONOTONIC_RAW,
 *                      REALTIME_COARSE, MONOTONIC_COARSE, BOOTTIME, vdso
 *   gettimeofday    K  gettimeofday, vdso
 *   time            K  time, vdso
 *   timespec_get    K  clock_gettime CLOCK_REALTIME, vdso
 *   syscall         3K clock_gettime, gettimeofday, time, path syscall
 *   cputime         2K clock_gettime PROCESS_CPUTIME_ID + THREAD_CPUTIME_ID,
 *                      path syscall (the vDSO falls back)
 *   wrapper         K  clock_gettime CLOCK_MONOTONIC via my_now() (K calls)
 *   mix             6  clock_gettime MONOTONIC (vdso), gettimeofday (vdso),
 *                      time (vdso), timespec_get (REALTIME, vdso),
 *                      syscall clock_gettime REALTIME (syscall),
 *                      clock_gettime PROCESS_CPUTIME_ID (syscall)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static int k;
static volatile long sink;

__attribute__((noinline)) long my_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_nsec;
}

static void read_mix(void)
{
	struct timespec ts;
	struct timeval tv;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	gettimeofday(&tv, NULL);
	sink += time(NULL);
	timespec_get(&ts, TIME_UTC);
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	sink += ts.tv_nsec + tv.tv_usec;
}

static void read_once(void)
{
	static const clockid_t clocks[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
		CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
	};
	struct timespec ts = { 0, 0 };
	struct timeval tv = { 0, 0 };

	if (!strcmp(mode, "clock_gettime")) {
		clock_gettime(CLOCK_MONOTONIC, &ts); /* SITE:clock_gettime */
	} else if (!strcmp(mode, "clocks")) {
		for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
			clock_gettime(clocks[i], &ts);
	} else if (!strcmp(mode, "gettimeofday")) {
		gettimeofday(&tv, NULL);
	} else if (!strcmp(mode, "time")) {
		sink += time(NULL);
	} else if (!strcmp(mode, "timespec_get")) {
		timespec_get(&ts, TIME_UTC);
	} else if (!strcmp(mode, "syscall")) {
		syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
		syscall(SYS_gettimeofday, &tv, NULL);
		sink += syscall(SYS_time, NULL);
	} else if (!strcmp(mode, "cputime")) {
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} else if (!strcmp(mode, "wrapper")) {
		sink += my_now();
	}
	sink += ts.tv_nsec + tv.tv_usec;
}

__attribute__((noinline)) void handle_request(void)
{
	if (!strcmp(mode, "mix")) {
		read_mix();
		return;
	}
	for (int i = 0; i < k; i++)
		read_once(); /* SITE:read_once_call */
}

/* Paces requests with nanosleep: a syscall, never a clock read. */
static void serve(long requests)
{
	const struct timespec gap = { 0, 1000000 };

	for (long i = 0; requests == 0 || i < requests; i++) {
		handle_request();
		nanosleep(&gap, NULL);
	}
}

static long requests;

static void *late_thread(void *arg)
{
	(void)arg;
	serve(requests);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[64];
	struct timespec delay;
	long delay_ms;
	int late;

	if (argc < 3) {
		fprintf(stderr, "usage: reads_target MODE K [REQUESTS [LATE_THREADS]]\n");
		return 2;
	}
	mode = argv[1];
	k = atoi(argv[2]);
	requests = argc > 3 ? atol(argv[3]) : 0;
	late = argc > 4 ? atoi(argv[4]) : 0;
	delay_ms = argc > 5 ? atol(argv[5]) : 300;
	delay.tv_sec = delay_ms / 1000;
	delay.tv_nsec = delay_ms % 1000 * 1000000;
	if (late < 0 || late > 64)
		return 2;
	if (late > 0) {
		nanosleep(&delay, NULL);
		for (int i = 0; i < late; i++)
			pthread_create(&threads[i], NULL, late_thread, NULL);
	}
	serve(requests);
	for (int i = 0; i < late; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
