/* registrar.c - see registrar.h. The registrar is a child of a process
 * that may have threads: from the fork on it makes system calls only,
 * into static buffers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "own_code.h"
#include "registrar.h"
#include "test_hook.h"
#include "uprobe_multi.h"

/* A request: this head, then n offsets, then n cookies (none with
 * NO_COOKIES: all 0), the program's fd riding along (SCM_RIGHTS). One
 * SOCK_SEQPACKET message; the answer is an errno (0: the link's fd rides
 * along). */
struct request {
	int32_t prog_fd; /* the registrar's copy, once received */
	int32_t pid;
	uint32_t flags;
	uint32_t n;
	char path[PATH_MAX];
};

#define REQ_MULTI 1u
#define REQ_EVERY 2u
#define REQ_NO_COOKIES 4u
#define REQ_WARM_STOP 8u /* the head alone, no fd: stop the warm-up; no answer */

/* The warm-up's placements (warmup.h): one every WARM_EVERY_MS, for at
 * most WARM_MAX_MS or until clockprof says start-up is done. */
#define WARM_EVERY_MS 4
#define WARM_MAX_MS 1000

/* The perf PMU the kernel makes uprobes with (libbpf asks the same file). */
static int uprobe_pmu_type(void)
{
	char buf[16];
	int fd = open("/sys/bus/event_source/devices/uprobe/type", O_RDONLY | O_CLOEXEC);
	int type = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		type = type * 10 + (buf[i] - '0');
	return n > 0 ? type : -1;
}

/* A uprobe made through a perf event, as libbpf makes one (the event on
 * every CPU for one process, or on CPU 0 for every process), its program
 * run through a BPF link that holds the event. */
static int perf_link(const struct request *q, uint64_t offset, uint64_t cookie)
{
	struct perf_event_attr attr;
	union bpf_attr la;
	bool every = q->flags & REQ_EVERY;
	int type = uprobe_pmu_type(), pfd, link, e;

	if (type < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)q->path;
	attr.config2 = offset;
	pfd = (int)syscall(SYS_perf_event_open, &attr, every ? -1 : q->pid, every ? 0 : -1, -1,
			   PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -1;
	memset(&la, 0, sizeof(la));
	la.link_create.prog_fd = (uint32_t)q->prog_fd;
	la.link_create.target_fd = (uint32_t)pfd;
	la.link_create.attach_type = BPF_PERF_EVENT;
	la.link_create.perf_event.bpf_cookie = cookie;
	link = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &la, sizeof(la));
	e = errno;
	if (link >= 0)
		ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
	close(pfd);
	errno = e;
	return link;
}

/* The link q asks for: its fd, or -1 with errno set. */
static int make_link(const struct request *q, const uint64_t *offsets, const uint64_t *cookies)
{
	bool every = q->flags & REQ_EVERY;

	if (q->flags & REQ_MULTI)
		return cp_uprobe_multi_link_create(q->prog_fd, every ? 0 : q->pid, q->path, offsets,
						   cookies, q->n);
	return perf_link(q, offsets[0], cookies ? cookies[0] : 0);
}

/* The registrar's inbox: a request at its largest. */
static union {
	struct request q;
	uint64_t words[(sizeof(struct request) + 2 * 8 * CP_REGISTRAR_MAX_OFFSETS) / 8];
} inbox;

/* Whether the process pidfd is gone (it cannot take a link then). */
static bool gone(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/* The fd riding along with message m (SCM_RIGHTS), -1 if none. */
static int fd_of(struct msghdr *m)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(m);
	int fd = -1;

	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* m made to carry fd along (SCM_RIGHTS), in ctl. */
static void carry(struct msghdr *m, char *ctl, size_t size, int fd)
{
	struct cmsghdr *c;

	memset(ctl, 0, size);
	m->msg_control = ctl;
	m->msg_controllen = size;
	c = CMSG_FIRSTHDR(m);
	if (!c) /* size below a header: not sent along */
		return;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

/* The answer to the request: its errno, and the link's fd (closed here
 * after: clockprof's copy is then its only reference). Not sent when
 * clockprof is gone, so that no link waits in a socket for nobody. */
static void answer(int sock, int pidfd, int fd, int32_t e)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &e, .iov_len = sizeof(e) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0)
		carry(&m, ctl, sizeof(ctl), fd);
	if (!gone(pidfd))
		sendmsg(sock, &m, MSG_NOSIGNAL);
	if (fd >= 0)
		close(fd);
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_REGISTRAR_HOLD_MS=N: each
 * link, once made, is held N ms before it is handed over, so that a test
 * can kill clockprof while the target has the breakpoints and clockprof
 * not the link. */
static void hold(unsigned ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (ms && nanosleep(&t, &t))
		;
}

/* Takes the next request into the inbox, its program's fd in q->prog_fd
 * (-1: none came). The message's size, 0 at clockprof's end. */
static ssize_t take(int sock)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &inbox, .iov_len = sizeof(inbox) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	ssize_t got = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);

	if (got >= (ssize_t)sizeof(inbox.q))
		inbox.q.prog_fd = fd_of(&m);
	else if (got > 0)
		close(fd_of(&m));
	return got;
}

/* Serves requests until clockprof's end: the end of its socket, or of
 * the process (pidfd); a warm-up stop closes *warm_stop (then -1). */
static void serve(int sock, int pidfd, unsigned hold_ms, int *warm_stop)
{
	struct request *q = &inbox.q;
	const uint64_t *offsets = inbox.words + sizeof(*q) / 8;

	for (;;) {
		struct pollfd p[2] = { { .fd = sock, .events = POLLIN },
				       { .fd = pidfd, .events = POLLIN } };
		ssize_t got;
		int fd, e;

		if (poll(p, pidfd >= 0 ? 2 : 1, -1) <= 0)
			continue;
		if (p[1].revents || (got = take(sock)) <= 0)
			return;
		if ((size_t)got == sizeof(*q) && (q->flags & REQ_WARM_STOP)) {
			if (q->prog_fd >= 0)
				close(q->prog_fd);
			if (*warm_stop >= 0)
				close(*warm_stop); /* its reader then stops */
			*warm_stop = -1;
			continue;
		}
		if ((size_t)got < sizeof(*q) || q->prog_fd < 0 || q->n > CP_REGISTRAR_MAX_OFFSETS ||
		    (size_t)got != sizeof(*q) + 8 * q->n * ((q->flags & REQ_NO_COOKIES) ? 1 : 2)) {
			if ((size_t)got >= sizeof(*q) && q->prog_fd >= 0)
				close(q->prog_fd);
			answer(sock, pidfd, -1, EINVAL);
			continue;
		}
		q->path[PATH_MAX - 1] = 0;
		fd = make_link(q, offsets, (q->flags & REQ_NO_COOKIES) ? NULL : offsets + q->n);
		e = fd < 0 ? errno : 0;
		close(q->prog_fd);
		hold(fd >= 0 ? hold_ms : 0);
		answer(sock, pidfd, fd, e);
	}
}

/* The fds 0-2 on /dev/null, every other fd but a and b closed: an output
 * pipe held open would keep a reader of clockprof's waiting. */
static void keep_only(int a, int b)
{
	int devnull = open("/dev/null", O_RDWR), lo = a < b ? a : b, hi = a < b ? b : a;

	for (int fd = 0; fd < 3 && devnull >= 0; fd++)
		if (fd != a && fd != b)
			dup2(devnull, fd);
	if (devnull > 2)
		close(devnull);
	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0U, 0);
}

/* The warm-up's uprobe (warmup.h): on a function of clockprof's never
 * called, placed as the registrar starts by a child of its own, in that
 * child's code, so that the grace period the first uprobe waits for
 * passes while clockprof loads its programs, without holding up the
 * requests. Found before the fork. */
__attribute__((noinline)) static void never_called(void)
{
	__asm__ volatile("" ::: "memory");
}

static struct {
	char path[PATH_MAX];
	uint64_t offset;
	bool found;
} warm;

/* A bpffs of this process's own mount namespace, mounted on the first of
 * dirs that takes it, to pin links in: its path, or NULL. */
static const char *pin_dir(void)
{
	static const char *const dirs[] = { "/sys/fs/bpf", "/tmp", "/dev" };

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return NULL;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!mount("bpf", dirs[i], "bpf", 0, NULL))
			return dirs[i];
	return NULL;
}

/* Hands link over to the kernel's workqueue, as uprobe_removal.h does
 * (pinned in dir, closed, unpinned): its removal waits for grace periods
 * nobody waits for. Without dir, closed here. */
static void hand_over(int link, const char *dir)
{
	char pin[32];
	union bpf_attr a;

	if (dir) {
		strcpy(pin, dir);
		strcat(pin, "/warm-up");
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)pin;
		a.bpf_fd = (uint32_t)link;
		if (syscall(SYS_bpf, BPF_OBJ_PIN, &a, sizeof(a)) == 0) {
			close(link);
			unlink(pin);
			return;
		}
	}
	close(link);
}

/* The warm-up's child: its pid, 0 if none. It places the uprobe and
 * hands it back every WARM_EVERY_MS until stop (a pipe's read end) says
 * its writer closed: clockprof's start-up is done, or the registrar
 * ended. */
static pid_t warm_up(int sock, int pidfd, const int stop[2])
{
	pid_t child = warm.found ? fork() : -1;
	struct pollfd p = { .fd = stop[0], .events = POLLIN };
	const char *dir;
	int prog, link;

	if (child != 0)
		return child > 0 ? child : 0;
	close(sock);
	close(pidfd);
	close(stop[1]);
	prog = cp_uprobe_multi_noop_prog();
	dir = prog < 0 ? NULL : pin_dir();
	for (int turn = 0; prog >= 0 && turn < WARM_MAX_MS / WARM_EVERY_MS; turn++) {
		link = cp_uprobe_multi_link_create(prog, getpid(), warm.path, &warm.offset, NULL,
						   1);
		if (link < 0)
			break;
		hand_over(link, dir);
		if (poll(&p, 1, WARM_EVERY_MS) != 0)
			break;
	}
	_exit(0);
}

static void registrar(int sock, pid_t parent, unsigned hold_ms)
{
	sigset_t all;
	pid_t warming;
	int pidfd, warm_pipe[2] = { -1, -1 };

	/* Its own process group: a terminal's Ctrl-C or a kill of
	 * clockprof's group spares it; a name of its own for ps. */
	setpgid(0, 0);
	prctl(PR_SET_NAME, "cp-registrar", 0, 0, 0);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
	if (pidfd < 0 || getppid() != parent)
		_exit(0);
	keep_only(sock, pidfd);
	if (pipe2(warm_pipe, O_CLOEXEC))
		warm.found = false;
	warming = warm_up(sock, pidfd, warm_pipe);
	close(warm_pipe[0]);
	serve(sock, pidfd, hold_ms, &warm_pipe[1]);
	if (warm_pipe[1] >= 0)
		close(warm_pipe[1]);
	/* nothing of it outlives the registrar (long gone by now, mostly) */
	if (warming)
		waitpid(warming, NULL, 0);
	_exit(0);
}

/* The registrar of this process: none while sock is -1. */
static struct cp_registrar {
	pid_t pid;
	int sock;
	pthread_mutex_t lock; /* one request at a time */
} reg = { .sock = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

int cp_registrar_start(void)
{
	unsigned hold_ms = cp_test_hook("CLOCKPROF_TEST_REGISTRAR_HOLD_MS");
	pid_t parent = getpid(), child;
	int sv[2], e;

	if (reg.sock >= 0)
		return 0;
	warm.found = !cp_own_code_offset((const void *)never_called, warm.path, sizeof(warm.path),
					 &warm.offset);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	child = fork();
	if (child == 0)
		registrar(sv[1], parent, hold_ms);
	e = errno;
	close(sv[1]);
	if (child < 0) {
		close(sv[0]);
		errno = e;
		return -1;
	}
	pthread_mutex_lock(&reg.lock);
	reg.pid = child;
	reg.sock = sv[0];
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

/* Sends q with its arrays and takes the answer: the link's fd, or -1
 * with errno set. */
static int ask(struct request *q, const uint64_t *offsets, const uint64_t *cookies)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec out[3] = { { q, sizeof(*q) },
				{ (void *)offsets, 8 * q->n },
				{ (void *)cookies, cookies ? 8 * q->n : 0 } };
	int32_t e = EPIPE;
	struct iovec in = { &e, sizeof(e) };
	struct msghdr m = { .msg_iov = out, .msg_iovlen = 3 };
	ssize_t got = -1;
	int fd = -1;

	carry(&m, ctl, sizeof(ctl), q->prog_fd);
	pthread_mutex_lock(&reg.lock);
	if (reg.sock < 0) {
		/* No registrar (none could be started, or it has ended): placed
		 * here, as before. */
		pthread_mutex_unlock(&reg.lock);
		return make_link(q, offsets, cookies);
	}
	while ((got = sendmsg(reg.sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (got >= 0) {
		m = (struct msghdr){ .msg_iov = &in,
				     .msg_iovlen = 1,
				     .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		while ((got = recvmsg(reg.sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
			;
	}
	e = got < 0 ? errno : e;
	if (got == 0 || (got < 0 && (e == EPIPE || e == ECONNRESET))) {
		/* the registrar was killed: what it made went with it */
		close(reg.sock);
		reg.sock = -1;
		pthread_mutex_unlock(&reg.lock);
		return make_link(q, offsets, cookies);
	}
	pthread_mutex_unlock(&reg.lock);
	fd = got > 0 ? fd_of(&m) : -1;
	if (got != (ssize_t)sizeof(e) || e || fd < 0) {
		if (fd >= 0)
			close(fd);
		errno = got < 0 || (got == (ssize_t)sizeof(e) && e) ? e : EPIPE;
		return -1;
	}
	return fd;
}

int cp_registrar_place(int prog_fd, pid_t pid, bool every_process, bool multi, const char *path,
		       const uint64_t *offsets, const uint64_t *cookies, size_t n)
{
	struct request q = { .prog_fd = prog_fd, .pid = pid, .n = (uint32_t)n };

	if (n == 0 || n > CP_REGISTRAR_MAX_OFFSETS || (!multi && n != 1) ||
	    strlen(path) >= sizeof(q.path)) {
		errno = n > CP_REGISTRAR_MAX_OFFSETS ? E2BIG : EINVAL;
		return -1;
	}
	memcpy(q.path, path, strlen(path) + 1);
	q.flags = (multi ? REQ_MULTI : 0) | (every_process ? REQ_EVERY : 0) |
		  (cookies ? 0 : REQ_NO_COOKIES);
	return ask(&q, offsets, cookies);
}

void cp_registrar_warm_stop(void)
{
	struct request q = { .prog_fd = -1, .flags = REQ_WARM_STOP };

	pthread_mutex_lock(&reg.lock);
	if (reg.sock >= 0)
		send(reg.sock, &q, sizeof(q), MSG_NOSIGNAL);
	pthread_mutex_unlock(&reg.lock);
}

void cp_registrar_stop(void)
{
	pthread_mutex_lock(&reg.lock);
	if (reg.sock >= 0)
		close(reg.sock);
	reg.sock = -1;
	pthread_mutex_unlock(&reg.lock);
	/* it exits at once */
	if (reg.pid > 0)
		waitpid(reg.pid, NULL, 0);
	reg.pid = 0;
}
