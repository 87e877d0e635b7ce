/* clock_truth.so: an independent ground truth for the server tests.
 *
 * Loaded with LD_PRELOAD into a real server (redis, nginx, python, node,
 * java), it counts the process's own calls of the clock functions and of the
 * reply syscalls, forwarding each to the real function (dlsym RTLD_NEXT). It
 * uses none of clockprof's mechanisms (no uprobe, no breakpoint, no BPF): it
 * is plain symbol interposition, so the tests compare two independent counts.
 *
 * What it can see: calls that go through the dynamic linker (a PLT stub or a
 * GOT entry) from any object, to clock_gettime, gettimeofday, time and
 * syscall(SYS_clock_gettime | SYS_gettimeofday | SYS_time). What it cannot
 * see: calls made from inside libc to its own hidden aliases (e.g. timespec_get
 * or clock() calling __clock_gettime), calls of the vDSO made by the program
 * itself (Go, some JITs), and inlined raw syscalls. clockprof's uprobe on
 * libc's clock_gettime does see the libc-internal ones, so a test says so
 * where that matters.
 *
 * Requests are delimited exactly as clockprof does with -r syscall:NAME: on
 * each thread, the reads between two consecutive calls of the boundary
 * (CLOCK_TRUTH_BOUNDARY=write|writev|sendto|sendmsg) are one request, and the
 * thread's first, partial interval is not. send() is the sendto syscall.
 *
 * Counts live in a shared file (CLOCK_TRUTH_FILE) that the test maps and
 * reads while clockprof is attached: one slot per process (a forked child,
 * e.g. an nginx worker, claims its own), all counters 64-bit, updated with
 * relaxed atomics. The layout is read by tests/integration/truth.py. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define TRUTH_MAGIC 0x6874757274706300ull /* "\0cptruth" */
#define TRUTH_SLOTS 1024
#define TRUTH_HIST 64

enum call {
	C_CLOCK_GETTIME, C_GETTIMEOFDAY, C_TIME, C_SYSCALL_CLOCK,
	C_WRITE, C_WRITEV, C_SENDTO, C_SENDMSG,
	C_REALTIME, C_MONOTONIC, /* clock_gettime by clock id (the two usual) */
	NCALLS
};

struct slot {
	uint64_t pid;
	uint64_t calls[NCALLS];
	uint64_t requests;          /* complete requests (boundary to boundary) */
	uint64_t reads_in_requests; /* reads inside them */
	uint64_t hist[TRUTH_HIST];  /* requests by reads; the last bucket is ">=" */
};

struct shared {
	uint64_t magic, nslots, ncalls, nhist;
	struct slot slot[TRUTH_SLOTS];
};

static struct shared *shared;
static struct slot *mine;
static int boundary = -1; /* an enum call of the reply syscalls, or -1 */

static __thread uint64_t thread_reads __attribute__((tls_model("initial-exec")));
static __thread int thread_seen_boundary __attribute__((tls_model("initial-exec")));

static void add(uint64_t *p, uint64_t n)
{
	__atomic_fetch_add(p, n, __ATOMIC_RELAXED);
}

/* Claims a free slot for this process (after fork too). */
static void claim_slot(void)
{
	uint64_t pid = (uint64_t)getpid();

	mine = NULL;
	if (!shared)
		return;
	for (int i = 0; i < TRUTH_SLOTS; i++) {
		uint64_t expect = 0;
		if (__atomic_compare_exchange_n(&shared->slot[i].pid, &expect, pid, 0,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			mine = &shared->slot[i];
			return;
		}
	}
}

static void after_fork_child(void)
{
	claim_slot();
	thread_reads = 0;
	thread_seen_boundary = 0;
}

static int boundary_from_env(const char *name)
{
	static const struct { const char *name; int call; } names[] = {
		{ "write", C_WRITE }, { "writev", C_WRITEV },
		{ "sendto", C_SENDTO }, { "sendmsg", C_SENDMSG },
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name))
			return names[i].call;
	return -1;
}

__attribute__((constructor)) static void truth_init(void)
{
	const char *path = getenv("CLOCK_TRUTH_FILE");
	int fd;

	boundary = boundary_from_env(getenv("CLOCK_TRUTH_BOUNDARY"));
	if (!path)
		return;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (ftruncate(fd, sizeof(struct shared)) == 0) {
		void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, 0);
		if (p != MAP_FAILED)
			shared = p;
	}
	close(fd);
	if (!shared)
		return;
	/* The first process to load us writes the header; the file is fresh. */
	shared->nslots = TRUTH_SLOTS;
	shared->ncalls = NCALLS;
	shared->nhist = TRUTH_HIST;
	__atomic_store_n(&shared->magic, TRUTH_MAGIC, __ATOMIC_RELEASE);
	claim_slot();
	pthread_atfork(NULL, NULL, after_fork_child);
}

static void count_read(enum call c)
{
	if (!mine)
		return;
	add(&mine->calls[c], 1);
	thread_reads++;
}

static void count_reply(enum call c)
{
	if (!mine)
		return;
	add(&mine->calls[c], 1);
	if ((int)c != boundary)
		return;
	if (thread_seen_boundary) {
		add(&mine->requests, 1);
		add(&mine->reads_in_requests, thread_reads);
		add(&mine->hist[thread_reads < TRUTH_HIST ? thread_reads : TRUTH_HIST - 1], 1);
	}
	thread_seen_boundary = 1;
	thread_reads = 0;
}

/* The real function, looked up once (a race only looks it up twice). */
#define REAL(name) ({ \
	static __typeof__(&name) real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name); \
	real_##name; })

int clock_gettime(clockid_t id, struct timespec *ts)
{
	count_read(C_CLOCK_GETTIME);
	if (mine && id == CLOCK_REALTIME)
		add(&mine->calls[C_REALTIME], 1);
	else if (mine && id == CLOCK_MONOTONIC)
		add(&mine->calls[C_MONOTONIC], 1);
	return REAL(clock_gettime)(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	count_read(C_GETTIMEOFDAY);
	return REAL(gettimeofday)(tv, tz);
}

time_t time(time_t *t)
{
	count_read(C_TIME);
	return REAL(time)(t);
}

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_clock_gettime || nr == SYS_gettimeofday || nr == SYS_time)
		count_read(C_SYSCALL_CLOCK);
	return REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	count_reply(C_WRITE);
	return REAL(write)(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	count_reply(C_WRITEV);
	return REAL(writev)(fd, iov, n);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	count_reply(C_SENDTO);
	return REAL(send)(fd, buf, n, flags);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	count_reply(C_SENDTO);
	return REAL(sendto)(fd, buf, n, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	count_reply(C_SENDMSG);
	return REAL(sendmsg)(fd, msg, flags);
}
