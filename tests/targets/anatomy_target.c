/* anatomy_target.c - requests whose reads, and what lies between them,
 * are known by construction, for --anatomy (tests/integration/
 * test_anatomy.py): one MODE a run, each request one call of
 * handle_request() (the boundary: func:handle_request).
 *
 *   anatomy_target MODE [REQUESTS [THREADS]]
 *
 * REQUESTS per thread (0: until killed), each followed by a 2 ms pause
 * (so that clockprof drains the sampled requests' logs between them).
 * The reads of a request, in order (M: CLOCK_MONOTONIC, R: REALTIME):
 *   helper     M M M, each through now_ns() from a line of its own
 *              (the 2nd and 3rd back to back after the 1st: reusable)
 *   pipe       M, read() of a byte from a pipe, M
 *   nanosleep  M, nanosleep 50 us, M
 *   futex      M, a futex wait that sleeps (another thread wakes it), M
 *   epoll      M, epoll_wait on a ready pipe (returns at once), M
 *   compute    M, ~50 us of arithmetic, M (a start and a stop)
 *   realtime   M then R at once
 *   threads    M M on each of 2 threads at once (THREADS ignored)
 * Nothing else reads the clock. Built with frame pointers. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static int pipefd[2], epfd;
static volatile uint32_t futex_word;
static volatile long sink;

__attribute__((noinline)) long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

__attribute__((noinline)) static long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_nsec;
}

/* ~50 us of arithmetic whatever the host's speed: a fixed count, long
 * enough (the tests' gap is 1 us) on any host this runs on. */
__attribute__((noinline)) static void compute(void)
{
	long x = sink;		/* not known when compiled: not folded */

	for (long i = 0; i < 200000; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	sink += x;
}

/* Another thread wakes the waiter's futex 200 us after it is told. */
static void *waker(void *unused)
{
	struct timespec d = { 0, 200000 };

	(void)unused;
	for (;;) {
		while (__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE) != 1)
			syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
		nanosleep(&d, NULL);
		__atomic_store_n(&futex_word, 2, __ATOMIC_RELEASE);
		syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

static void futex_sleep(void)
{
	__atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	while (__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE) != 2)
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
	__atomic_store_n(&futex_word, 0, __ATOMIC_RELEASE);
}

__attribute__((noinline)) void handle_request(void)
{
	struct timespec d = { 0, 50000 };
	struct epoll_event ev;
	char c = 'x';

	sink += now_ns();
	if (!strcmp(mode, "helper")) {
		sink += now_ns();
		sink += now_ns();
	} else if (!strcmp(mode, "pipe")) {
		if (write(pipefd[1], &c, 1) != 1 || read(pipefd[0], &c, 1) != 1)
			exit(1);
		sink += now_ns();
	} else if (!strcmp(mode, "nanosleep")) {
		nanosleep(&d, NULL);
		sink += now_ns();
	} else if (!strcmp(mode, "futex")) {
		futex_sleep();
		sink += now_ns();
	} else if (!strcmp(mode, "epoll")) {
		if (epoll_wait(epfd, &ev, 1, 1000) != 1)
			exit(1);
		sink += now_ns();
	} else if (!strcmp(mode, "compute")) {
		compute();
		sink += now_ns();
	} else if (!strcmp(mode, "realtime")) {
		sink += realtime_ns();
	} else {	/* threads */
		sink += now_ns();
	}
}

static long requests;

static void *serve(void *unused)
{
	struct timespec pause = { 0, 2000000 };

	(void)unused;
	for (long i = 0; !requests || i < requests; i++) {
		handle_request();
		nanosleep(&pause, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	pthread_t t[2];
	int threads;

	if (argc < 2) {
		fprintf(stderr, "usage: anatomy_target MODE [REQUESTS [THREADS]]\n");
		return 2;
	}
	mode = argv[1];
	requests = argc > 2 ? atol(argv[2]) : 0;
	threads = !strcmp(mode, "threads") ? 2 : 1;
	if (pipe(pipefd) || (epfd = epoll_create1(0)) < 0)
		return 1;
	/* epoll: a pipe of its own kept readable, so each wait returns at once */
	if (!strcmp(mode, "epoll")) {
		int ready[2];

		if (pipe(ready) || write(ready[1], "x", 1) != 1)
			return 1;
		ev.data.fd = ready[0];
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, ready[0], &ev))
			return 1;
	}
	if (!strcmp(mode, "futex") && pthread_create(&t[0], NULL, waker, NULL))
		return 1;
	if (threads == 1) {
		serve(NULL);
		return 0;
	}
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, serve, NULL))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
