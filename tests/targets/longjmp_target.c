/* longjmp_target.c - one thread that waits in read() on its stdin, and a
 * SIGUSR1 handler that leaves by siglongjmp() back to that loop, as a
 * program that gives up what it was doing on a signal does: a handler
 * that runs on top of clockprof's stub must not leave it half done.
 *
 *   longjmp_target      says "ready PID"; then, each read of stdin a
 *                       command: "clock" (reads the clock, says "ok"),
 *                       "quit" (says "jumps N", the handler's leaps, and
 *                       exits 0). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile sig_atomic_t jumps;

static void on_usr1(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(back, 1);
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	char line[64];

	sigaction(SIGUSR1, &sa, NULL);
	snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	say(line);
	sigsetjmp(back, 1);
	for (;;) {
		ssize_t n = read(0, line, sizeof(line) - 1);
		struct timespec ts;

		if (n <= 0 || !strncmp(line, "quit", 4))
			break;
		if (!strncmp(line, "clock", 5)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			say("ok\n");
		}
	}
	snprintf(line, sizeof(line), "jumps %d\n", (int)jumps);
	say(line);
	return 0;
}
