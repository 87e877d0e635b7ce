/* exec_guard.c - see exec_guard.h. The only state a SIGKILLed clockprof
 * could leave wrong in a process it follows is a SIGSTOP of the program's
 * that clockprof had no time to turn into its own ptrace stop (which the
 * kernel ends with clockprof): the guard is there for that moment. */
#include <bpf/bpf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clockreads.h"
#include "exec_guard.h"

/* When process tgid started (/proc/TGID/stat's field 22, clock ticks
 * after boot); 0 when gone. System calls only: the guard calls it. */
static uint64_t start_ticks(uint32_t tgid)
{
	char path[32] = "/proc/", digits[12], buf[1024];
	uint64_t v = 0;
	size_t k = 0, at = 6;
	ssize_t n;
	int fd, field = 2;

	do
		digits[k++] = (char)('0' + tgid % 10);
	while ((tgid /= 10) && k < sizeof(digits));
	while (k)
		path[at++] = digits[--k];
	memcpy(path + at, "/stat", 6);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* comm may hold spaces and ')': the fields resume after the last ')' */
	while (n > 0 && buf[n - 1] != ')')
		n--;
	for (ssize_t i = n; n > 0 && buf[i] && buf[i] != '\n'; i++) {
		if (buf[i] == ' ')
			field++;
		else if (field == 22 && buf[i] >= '0' && buf[i] <= '9')
			v = v * 10 + (uint64_t)(buf[i] - '0');
	}
	return v;
}

size_t cp_exec_held_release_one(int procs_fd, uint32_t host_tgid, uint32_t mark)
{
	struct cp_proc p;

	if (bpf_map_lookup_elem(procs_fd, &host_tgid, &p) || !(p.flags & CP_PROC_EXEC_HELD))
		return 0;
	p.flags = (p.flags & ~(__u32)CP_PROC_EXEC_HELD) | mark;
	bpf_map_update_elem(procs_fd, &host_tgid, &p, BPF_EXIST);
	/* gone while held: whoever has its pid now was never stopped */
	if (start_ticks(host_tgid) != p.start_ticks)
		return 0;
	return kill((pid_t)host_tgid, SIGCONT) == 0;
}

size_t cp_exec_held_release_all(int procs_fd, uint32_t mark)
{
	__u32 key, next;
	size_t n = 0;

	for (int more = !bpf_map_get_next_key(procs_fd, NULL, &next); more;
	     more = !bpf_map_get_next_key(procs_fd, &key, &next)) {
		key = next;
		n += cp_exec_held_release_one(procs_fd, key, mark);
	}
	return n;
}

/* The guard's life: wait for clockprof's end, let the held go, exit.
 * Only system calls from here (a child of a process with threads). Its
 * end is told by a pidfd, which says when the whole process is gone: a
 * parent-death signal would come when the thread that forked the guard
 * ends (a worker of clockprof's opens the session). */
static void guard(int procs_fd, pid_t parent)
{
	sigset_t all;
	int devnull = open("/dev/null", O_RDWR), pidfd;
	struct pollfd gone;

	/* Its own process group: a terminal's Ctrl-C or a kill of
	 * clockprof's group spares it. Its descriptors: only the map (an
	 * output pipe held open would keep a reader of clockprof's waiting). */
	setpgid(0, 0);
	/* a name `pkill clockprof` does not take for clockprof's */
	prctl(PR_SET_NAME, "cp-exec-guard", 0, 0, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (int fd = 0; fd < 3 && devnull >= 0; fd++)
		dup2(devnull, fd);
	if (procs_fd > 3)
		close_range(3, (unsigned int)procs_fd - 1, 0);
	close_range((unsigned int)procs_fd + 1, ~0U, 0);
	pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
	gone = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	if (pidfd >= 0 && getppid() == parent)
		while (poll(&gone, 1, -1) <= 0)
			;
	for (int round = 0; round < 4; round++) {
		cp_exec_held_release_all(procs_fd, CP_PROC_EXECED);
		usleep(50000);
	}
	_exit(0);
}

pid_t cp_exec_guard_start(int procs_fd)
{
	pid_t parent = getpid(), child = fork();

	if (child == 0)
		guard(procs_fd, parent);
	return child;
}

void cp_exec_guard_stop(pid_t guard)
{
	if (guard <= 0)
		return;
	kill(guard, SIGKILL);
	waitpid(guard, NULL, 0);
}
