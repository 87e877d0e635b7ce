/* leader_exit_reader.c - a process whose main thread has exited, whose
 * two others block in read(): the first on a socket with a receive
 * timeout (SO_RCVTIMEO: a stop interrupts it with EINTR, signal(7)), the
 * second on a pipe (restarted unseen). A stub must be run on the second.
 *
 *   leader_exit_reader
 *
 * The main thread starts both, waits for a line on stdin, and exits. The
 * socket's reader ends the process with 3, saying "EINTR", if its read
 * fails; with 0 when a byte comes (the test writes none: it kills it). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int sock[2], pipefd[2];

static void *socket_reader(void *unused)
{
	char b;

	(void)unused;
	if (read(sock[0], &b, 1) < 0) {
		printf("%s\n", errno == EINTR ? "EINTR" : "error");
		fflush(stdout);
		exit(3);
	}
	exit(0);
}

static void *pipe_reader(void *unused)
{
	char b;

	(void)unused;
	for (;;)
		if (read(pipefd[0], &b, 1) == 0)
			pause();
}

int main(void)
{
	struct timeval long_wait = { 600, 0 };
	pthread_t a, b;
	char line[16];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sock) || pipe(pipefd) ||
	    setsockopt(sock[0], SOL_SOCKET, SO_RCVTIMEO, &long_wait, sizeof(long_wait)) ||
	    pthread_create(&a, NULL, socket_reader, NULL))
		return 1;
	usleep(10000); /* the socket's reader is the older of the two */
	if (pthread_create(&b, NULL, pipe_reader, NULL))
		return 1;
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	pthread_exit(NULL);
}
