/* fork_tree_target.c - a reference target for following the processes a
 * target forks: a tree of processes whose every read and request is known
 * by construction.
 *
 *   fork_tree_target CHILDREN REQUESTS [linger]
 *
 * Every process serves requests through serve_one (the boundary, either
 * as func:serve_one or as syscall:getppid, which it calls first), each
 * request 3 reads: clock_gettime(CLOCK_MONOTONIC) twice and time() once.
 * The root serves REQUESTS, forks CHILDREN children, child i serving
 * (i + 1) * REQUESTS (child 0 first forks a grandchild that serves
 * REQUESTS), waits for them all and serves REQUESTS more. With "linger",
 * one more child serves REQUESTS (the root waits until it has), says
 * "linger PID" on stdout, lets go of stdin, stdout and stderr and waits
 * for SIGTERM: it outlives the root.
 * With "wait", the root itself waits for SIGTERM at the end (and then
 * serves REQUESTS more), the lingering child with it.
 * Nothing else in it reads the clock. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void serve_one(void)
{
	struct timespec ts;

	sink += getppid();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
	sink += time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
}

static void serve(int n)
{
	for (int i = 0; i < n; i++)
		serve_one();
}

/* Forks a child that serves n requests (and runs then, before exiting,
 * when given); -1 when fork failed. */
static pid_t child(int n, void (*then)(int), int arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (then)
			then(arg);
		serve(n);
		_exit(0);
	}
	return pid;
}

static void grandchild(int n)
{
	pid_t pid = child(n, NULL, 0);
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		_exit(1);
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The lingering child says it is done on this pipe: the root waits for
 * it, so every request the child serves is inside the root's life (the
 * window of a run). */
static int served[2];

static void linger(int n)
{
	int null = open("/dev/null", O_RDWR);

	signal(SIGTERM, on_term);
	serve(n);
	printf("linger %d\n", (int)getpid());
	fflush(stdout);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (write(served[1], "", 1) != 1)
		_exit(1);
	while (!stop)
		pause();
	_exit(0);
}

/* Starts the lingering child and waits until it has served. */
static int start_linger(int n)
{
	char c;

	if (pipe(served) || child(0, linger, n) < 0 || read(served[0], &c, 1) != 1)
		return -1;
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* About 1 ms of CPU here (a loop calibrated once, in the root). */
static long spin_per_ms;

static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int storm(int n, int ms, long turns)
{
	double *took = calloc(n > 0 ? n : 1, sizeof(*took)), t0;
	int status;

	if (!took)
		return 1;
	t0 = now_us();
	spin(turns ? 0 : 10000000);
	t0 = now_us() - t0;
	spin_per_ms = turns ? turns : (long)(10000000 / (t0 / 1000));
	for (int i = 0; i < n; i++) {
		double start = now_us();
		pid_t pid = fork();

		if (pid == 0) {
			serve_one();
			spin(spin_per_ms);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 1;
		took[i] = now_us() - start;
		usleep(ms > 1 ? (useconds_t)(ms - 1) * 1000 : 0);
	}
	qsort(took, n, sizeof(*took), by_value);
	printf("fork-to-exit p50 %.1f p90 %.1f us spin %ld\n", took[n / 2], took[n * 9 / 10],
	       spin_per_ms);
	free(took);
	return 0;
}

static volatile sig_atomic_t go, more;

static void on_usr(int sig)
{
	if (sig == SIGUSR1)
		go = 1;
	else
		more = 1;
}

static void say(const char *what)
{
	printf("%s %d\n", what, (int)getpid());
	fflush(stdout);
}

static int idle(int children, int n)
{
	sigset_t mask, old;

	signal(SIGTERM, on_term);
	signal(SIGUSR1, on_usr);
	signal(SIGUSR2, on_usr);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			break;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	say("ready");
	while (!stop) {
		while (!go && !more && !stop)
			sigsuspend(&old);
		if (go) {
			go = 0;
			serve(n);
			say("served");
		}
		if (more) {
			more = 0;
			if (fork() == 0) {
				serve(n);
				say("served");
				_exit(0);
			}
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	int children = argc > 2 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 0, status;
	pid_t pids[64];

	if (argc > 3 && !strcmp(argv[1], "idle"))
		return idle(atoi(argv[2]), atoi(argv[3]));
	if (argc > 3 && !strcmp(argv[1], "storm"))
		return storm(atoi(argv[2]), atoi(argv[3]), argc > 4 ? atol(argv[4]) : 0);
	if (argc < 3 || children < 0 || children > 64 || n < 0) {
		fprintf(stderr, "usage: fork_tree_target CHILDREN REQUESTS [linger]\n");
		return 2;
	}
	serve(n);
	for (int i = 0; i < children; i++)
		if ((pids[i] = child((i + 1) * n, i == 0 ? grandchild : NULL, n)) < 0)
			return 1;
	for (int i = 0; i < children; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || status)
			return 1;
	if (argc > 3 && !strcmp(argv[3], "linger") && start_linger(n))
		return 1;
	serve(n);
	if (argc > 3 && !strcmp(argv[3], "wait")) {
		signal(SIGTERM, on_term);
		printf("waiting\n");
		fflush(stdout);
		if (start_linger(n))
			return 1;
		while (!stop)
			pause();
		serve(n);
	}
	return 0;
}
