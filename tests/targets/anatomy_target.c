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
 *   coroutine  M, then M on a coroutine's stack (swapcontext) with rbp
 *              pointing into a guard page (PROT_NONE) that lies above
 *              that stack, 64 KiB or less from it, and below the stack
 *              the request's boundary had: code without frame pointers
 *              may hold any value in rbp, and --anatomy's read of the
 *              callers must not follow it there (the target would die)
 * Nothing else reads the clock. Built with frame pointers.
 * With ANATOMY_TARGET_EXEC=PATH in its environment, it says "serving"
 * as it starts, and a SIGUSR1 makes it exec() PATH after the request
 * under way. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
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

/* CLOCK_MONOTONIC read with rbp = fp, whatever it points at (in assembly:
 * the compiler keeps rbp the frame pointer); the seconds. */
long read_with_rbp(const void *fp);
__asm__(".text\n"
	".globl read_with_rbp\n"
	".type read_with_rbp, @function\n"
	"read_with_rbp:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	sub $16, %rsp\n"
	"	.cfi_def_cfa_offset 32\n"
	"	mov %rdi, %rbp\n"
	"	mov $1, %edi\n"		/* CLOCK_MONOTONIC */
	"	mov %rsp, %rsi\n"
	"	call clock_gettime@PLT\n"
	"	mov (%rsp), %rax\n"
	"	add $16, %rsp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size read_with_rbp, .-read_with_rbp\n");

/* The coroutine: from low to high, its stack (16 KiB), a guard page, and
 * a page of another mapping; each switch to it reads the clock once with
 * rbp in the guard page, and switches back. */
#define CO_STACK 16384
static ucontext_t co_main, co_ctx;
static char *co_area;

static void co_body(void)
{
	for (;;) {
		sink += read_with_rbp(co_area + CO_STACK + 64);
		swapcontext(&co_ctx, &co_main);
	}
}

static int co_setup(void)
{
	co_area = mmap(NULL, CO_STACK + 2 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (co_area == MAP_FAILED || mprotect(co_area + CO_STACK, 4096, PROT_NONE) ||
	    getcontext(&co_ctx))
		return -1;
	co_ctx.uc_stack.ss_sp = co_area;
	co_ctx.uc_stack.ss_size = CO_STACK;
	co_ctx.uc_link = NULL;
	makecontext(&co_ctx, co_body, 0);
	return 0;
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
	} else if (!strcmp(mode, "coroutine")) {
		if (swapcontext(&co_main, &co_ctx))
			exit(1);
	} else {	/* threads */
		sink += now_ns();
	}
}

static long requests;
static volatile sig_atomic_t exec_asked;

static void ask_exec(int sig)
{
	(void)sig;
	exec_asked = 1;
}

static void *serve(void *unused)
{
	struct timespec pause = { 0, 2000000 };

	(void)unused;
	for (long i = 0; !requests || i < requests; i++) {
		handle_request();
		nanosleep(&pause, NULL);
		if (exec_asked) {
			const char *path = getenv("ANATOMY_TARGET_EXEC");

			execl(path, path, (char *)NULL);
			exit(1);
		}
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
	if (getenv("ANATOMY_TARGET_EXEC")) {
		signal(SIGUSR1, ask_exec);
		puts("serving");
		fflush(stdout);
	}
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
	if (!strcmp(mode, "coroutine") && co_setup())
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
