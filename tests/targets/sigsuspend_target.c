/* sigsuspend_target.c - one thread that waits in sigsuspend() for a
 * SIGUSR1, whose handler sets a flag: the way a program waits for a
 * signal. It says "ready", then "woke" and exits 0 once the handler has
 * run: a wakeup lost (the handler run, the call made again) leaves it
 * waiting for good. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t woken;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t block, none;

	sigemptyset(&none);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!woken)
		sigsuspend(&none);
	printf("woke\n");
	fflush(stdout);
	while (getchar() != EOF)
		;
	return 0;
}
