/* metrics_serve.c - see metrics_serve.h. The parent binds, forks and
 * waits for the child's word (a status pipe: "" on success, else why it
 * could not stand); then it sends each new text as a frame (a 32-bit
 * length, the bytes) on a Unix socket, with MSG_NOSIGNAL so that a child
 * gone is an error returned, not SIGPIPE. The child keeps the latest
 * text under a mutex for libmicrohttpd's thread; its main thread reads
 * frames until end of file, then exits. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "metrics_serve.h"
#include "metrics_text.h"
#include "serve_sandbox.h"

/* The child's fds, moved here before every other one is closed. */
enum { FD_LISTEN = 3, FD_DATA = 4, FD_STATUS = 5 };
/* A text larger than this is refused by the child (a frame gone wrong). */
#define MAX_TEXT (256u << 20)

struct cp_metrics_server {
	pid_t pid;
	int fd; /* the parent's end of the data socket */
};

/* libmicrohttpd, loaded in the child only. */
static struct {
	__typeof__(MHD_start_daemon) *start;
	__typeof__(MHD_stop_daemon) *stop;
	__typeof__(MHD_create_response_from_buffer) *response;
	__typeof__(MHD_add_response_header) *header;
	__typeof__(MHD_queue_response) *queue;
	__typeof__(MHD_destroy_response) *destroy;
} mhd;

/* The child's latest text. */
static pthread_mutex_t text_lock = PTHREAD_MUTEX_INITIALIZER;
static char *text;
static size_t text_len;

static int load_mhd(char *why, size_t size)
{
	void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(why, size, "--serve needs libmicrohttpd (Debian libmicrohttpd12): %s",
			 dlerror());
		return -1;
	}
	mhd.start = (__typeof__(mhd.start))dlsym(h, "MHD_start_daemon");
	mhd.stop = (__typeof__(mhd.stop))dlsym(h, "MHD_stop_daemon");
	mhd.response = (__typeof__(mhd.response))dlsym(h, "MHD_create_response_from_buffer");
	mhd.header = (__typeof__(mhd.header))dlsym(h, "MHD_add_response_header");
	mhd.queue = (__typeof__(mhd.queue))dlsym(h, "MHD_queue_response");
	mhd.destroy = (__typeof__(mhd.destroy))dlsym(h, "MHD_destroy_response");
	if (mhd.start && mhd.stop && mhd.response && mhd.header && mhd.queue && mhd.destroy)
		return 0;
	snprintf(why, size, "--serve: libmicrohttpd.so.12 lacks a function it needs");
	return -1;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *r = mhd.response(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	mhd.header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = mhd.queue(c, status, r);
	mhd.destroy(r);
	return rc;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static const char not_found[] = "not found: clockprof serves /metrics\n";
	enum MHD_Result rc;

	(void)cls, (void)version, (void)upload, (void)upload_size, (void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "", 0, "text/plain");
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof(not_found) - 1, "text/plain");
	pthread_mutex_lock(&text_lock);
	rc = reply(c, MHD_HTTP_OK, text ? text : "", text_len, CP_METRICS_CONTENT_TYPE);
	pthread_mutex_unlock(&text_lock);
	return rc;
}

static int read_full(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* Frames until the parent closes its end (or dies). */
static void serve_frames(void)
{
	uint32_t len;

	while (!read_full(FD_DATA, &len, sizeof(len)) && len <= MAX_TEXT) {
		char *t = malloc(len + 1), *old;

		if (!t || read_full(FD_DATA, t, len)) {
			free(t);
			return;
		}
		t[len] = '\0';
		pthread_mutex_lock(&text_lock);
		old = text;
		text = t;
		text_len = len;
		pthread_mutex_unlock(&text_lock);
		free(old);
	}
}

/* The child keeps listen, data and status at FD_LISTEN.., stdin and
 * stdout on /dev/null (stdout may be the parent's -o -), stderr, and
 * closes every other fd it inherited. */
static int keep_fds(int listen_fd, int data_fd, int status_fd)
{
	int keep[3] = { listen_fd, data_fd, status_fd }, null = open("/dev/null", O_RDWR);

	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		if ((keep[i] = fcntl(keep[i], F_DUPFD, 10)) < 0)
			return -1;
	for (int i = 0; i < 3; i++)
		if (dup2(keep[i], FD_LISTEN + i) < 0)
			return -1;
	return close_range(FD_STATUS + 1, ~0U, 0);
}

static void say(const char *msg)
{
	if (cp_write_all(FD_STATUS, msg, strlen(msg)) == 0)
		close(FD_STATUS);
}

/* The child, from the fork to its exit. */
static __attribute__((noreturn)) void child(int listen_fd, int data_fd, int status_fd, int family,
					    uid_t uid, gid_t gid, pid_t parent)
{
	char why[300] = "2";
	struct MHD_Daemon *d;

	if (keep_fds(listen_fd, data_fd, status_fd)) {
		snprintf(why, sizeof(why), "3setting up the --serve child's files: %s",
			 strerror(errno));
		say(why);
		_exit(1);
	}
	/* A client gone mid-answer must not end the server; Ctrl-C on the
	 * terminal is clockprof's to answer (it then ends this child). */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	/* The library is loaded once nothing is left to take: its own
	 * start-up code (GnuTLS's) runs unprivileged too. */
	why[0] = '3';
	if (cp_serve_sandbox(uid, gid, why + 1, sizeof(why) - 1)) {
		say(why);
		_exit(1);
	}
	why[0] = '2';
	if (load_mhd(why + 1, sizeof(why) - 1)) {
		say(why);
		_exit(1);
	}
	/* Set after the user changed: a change of credentials clears it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	d = mhd.start(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
			      (family == AF_INET6 ? MHD_USE_IPv6 : 0),
		      0, NULL, NULL, answer, NULL, MHD_OPTION_LISTEN_SOCKET, FD_LISTEN,
		      MHD_OPTION_CONNECTION_LIMIT, 32u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
		      MHD_OPTION_END);
	if (!d) {
		say("2libmicrohttpd could not start its server");
		_exit(1);
	}
	say("+");
	serve_frames();
	mhd.stop(d);
	_exit(0);
}

static int listen_on(const struct cp_serve_address *a, struct cp_error *err)
{
	int one = 1, fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return cp_fail(err, CP_EXIT_USAGE, "--serve: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->sa, a->len) || listen(fd, 64)) {
		cp_fail(err, CP_EXIT_USAGE, "--serve: cannot listen on %s: %s", a->shown,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The child's word: "+" it stands, else an exit code's digit and why it
 * could not; -1 with err. */
static int hear_child(int status_fd, pid_t pid, struct cp_error *err)
{
	char msg[512];
	ssize_t n, got = 0;

	while ((n = read(status_fd, msg + got, sizeof(msg) - 1 - (size_t)got)) > 0 ||
	       (n < 0 && errno == EINTR))
		got += n > 0 ? n : 0;
	msg[got] = '\0';
	if (got && msg[0] == '+')
		return 0;
	waitpid(pid, NULL, 0);
	if (got > 1 && (msg[0] == '2' || msg[0] == '3'))
		return cp_fail(err, msg[0] - '0', "%s", msg + 1);
	return cp_fail(err, CP_EXIT_PROFILE, "the --serve child ended before it could serve");
}

static int lookup_user(const char *user, uid_t *uid, gid_t *gid, struct cp_error *err)
{
	struct passwd *pw = getpwnam(user);

	if (!pw)
		return cp_fail(err, CP_EXIT_USAGE, "--serve-user: no such user '%s'", user);
	if (!pw->pw_uid || !pw->pw_gid)
		return cp_fail(err, CP_EXIT_USAGE,
			       "--serve-user '%s' is root: the server must "
			       "hold no privilege",
			       user);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

struct cp_metrics_server *cp_metrics_serve_start(const struct cp_serve_address *a, const char *user,
						 struct cp_error *err)
{
	int lfd, sv[2], st[2] = { -1, -1 };
	uid_t uid = 0;
	gid_t gid = 0;
	pid_t parent = getpid();
	struct cp_metrics_server *s;

	if (lookup_user(user, &uid, &gid, err) || (lfd = listen_on(a, err)) < 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		close(lfd);
		free(s);
		cp_fail(err, CP_EXIT_PROFILE, "--serve: %s", strerror(errno));
		return NULL;
	}
	if (pipe2(st, O_CLOEXEC) || (s->pid = fork()) < 0) {
		cp_fail(err, CP_EXIT_PROFILE, "--serve: %s", strerror(errno));
		s->pid = -1;
	} else if (s->pid == 0) {
		child(lfd, sv[1], st[1], a->sa.ss_family, uid, gid, parent);
	}
	close(lfd);
	close(sv[1]);
	s->fd = sv[0];
	if (st[1] >= 0)
		close(st[1]);
	if (s->pid < 0 || hear_child(st[0], s->pid, err)) {
		if (st[0] >= 0)
			close(st[0]);
		close(s->fd);
		free(s);
		return NULL;
	}
	close(st[0]);
	return s;
}

int cp_metrics_serve_send(struct cp_metrics_server *s, const char *t, size_t len)
{
	uint32_t n = (uint32_t)len;

	if (!s || s->fd < 0 || len > MAX_TEXT)
		return -1;
	if (send(s->fd, &n, sizeof(n), MSG_NOSIGNAL) != (ssize_t)sizeof(n))
		goto gone;
	for (size_t sent = 0; sent < len;) {
		ssize_t w = send(s->fd, t + sent, len - sent, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto gone;
		sent += (size_t)w;
	}
	return 0;
gone:
	close(s->fd);
	s->fd = -1;
	return -1;
}

pid_t cp_metrics_serve_pid(const struct cp_metrics_server *s)
{
	return s ? s->pid : -1;
}

void cp_metrics_serve_stop(struct cp_metrics_server *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	waitpid(s->pid, NULL, 0);
	free(s);
}
