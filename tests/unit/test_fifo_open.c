/* test_fifo_open.c - an output FIFO with no reader: the wait is told, a
 * reader that comes gets the data, and SIGTERM ends the wait (before, the
 * open blocked in the kernel and only SIGKILL ended it). Each wait runs in
 * a child, so a wait that never ends fails the test instead of hanging it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fifo_open.h"
#include "unit.h"

static int notice_fd = -1;

static void tell(const char *path)
{
	(void)path;
	if (write(notice_fd, "w", 1) != 1)
		_exit(3);
}

/* In the child: opens fifo for writing, writes "data"; exits 0 when that
 * worked, 4 when a stop signal ended the wait, 1 otherwise. */
static pid_t start_writer(const char *fifo, int *told)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		notice_fd = pfd[1];
		int fd = cp_open_for_writing(fifo, O_TRUNC | O_CLOEXEC, 0, tell);

		if (fd < 0)
			_exit(errno == EINTR ? 4 : 1);
		_exit(write(fd, "data", 4) == 4 ? 0 : 1);
	}
	close(pfd[1]);
	*told = pfd[0];
	return pid;
}

/* waitpid, but a child still there after 30 s (a wait that never ends)
 * is killed and reported as -1: a guard against a hang, not a timing. */
static int reap(pid_t pid)
{
	int status;

	for (int i = 0; i < 3000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void scratch_fifo(char *dir, char *fifo, size_t size)
{
	strcpy(dir, "/tmp/cp-fifo-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return;
	}
	snprintf(fifo, size, "%s/out", dir);
	if (mkfifo(fifo, 0600))
		dir[0] = '\0';
}

/* A writer started on a new FIFO, past its notice: waiting for a reader. */
static pid_t writer_waiting(char *dir, char *fifo, size_t size)
{
	int told;
	char c;
	pid_t pid;

	scratch_fifo(dir, fifo, size);
	if (!dir[0] || (pid = start_writer(fifo, &told)) <= 0)
		return -1;
	/* The notice comes once the wait has begun. */
	if (read(told, &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(told);
	return pid;
}

TEST(fifo_open_stop_signal_ends_the_wait)
{
	char dir[64], fifo[96];
	pid_t pid = writer_waiting(dir, fifo, sizeof(fifo));

	CHECK(pid > 0);
	CHECK(kill(pid, SIGTERM) == 0);
	CHECK_INT(reap(pid), 4);
	unlink(fifo);
	rmdir(dir);
}

TEST(fifo_open_reader_that_comes_gets_the_data)
{
	char dir[64], fifo[96], buf[8] = "";
	pid_t pid = writer_waiting(dir, fifo, sizeof(fifo));
	int fd;

	CHECK(pid > 0);
	fd = open(fifo, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, 4) == 4);
	close(fd);
	CHECK_STR(buf, "data");
	CHECK_INT(reap(pid), 0);
	unlink(fifo);
	rmdir(dir);
}
