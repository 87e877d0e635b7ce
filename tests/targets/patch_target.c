/* patch_target.c - reads known by construction, for the vDSO patch tests
 * (tests/integration/test_vdso_patch.py).
 *
 *   patch_target THREADS          on "go K" (stdin) every thread makes K
 *                                 rounds of 5 reads, then "done" is printed
 *   patch_target THREADS check    every thread reads without end, checking
 *                                 each vDSO result against the raw syscall,
 *                                 and so does a SIGPROF handler, every
 *                                 200 us of the process's CPU time;
 *                                 "quit" (or EOF) ends it: exit 0 if every
 *                                 result was right, 1 if one was not
 *   patch_target THREADS epoll    one extra thread waits in epoll_wait and
 *                                 counts EINTR; "quit" prints "eintr N"
 *   patch_target THREADS fast     rounds of 5 reads the vDSO serves itself
 *                                 (MONOTONIC twice, REALTIME, gettimeofday,
 *                                 time): for timing a read, not a syscall
 *   patch_target THREADS fast-ENTRY  rounds of 5 reads of one entry
 *                                 (clock_gettime MONOTONIC, gettimeofday or
 *                                 time), each from its own call site: for
 *                                 timing one entry's reads
 *
 * With PATCH_TARGET_SECCOMP=container a filter like a container
 * runtime's default (a few syscalls fail with EPERM) is installed on every
 * thread before "ready"; with PATCH_TARGET_SECCOMP=kill-mmap one that
 * kills the process on any mmap. With PATCH_TARGET_MDWE=1 the process
 * denies itself memory that is both writable and executable, or that
 * becomes executable (prctl PR_SET_MDWE: what systemd's
 * MemoryDenyWriteExecute= sets where the kernel has it). With
 * PATCH_TARGET_THREAD_SECCOMP=kill-mmap each worker thread installs that
 * filter on itself alone (no TSYNC), the main thread none: a thread's own
 * filters, which the process's status does not show. With
 * PATCH_TARGET_SECCOMP_STACK=N, N filters that allow everything are
 * installed first, PATCH_TARGET_SECCOMP's on top of them: the newest of
 * more filters than a reader might expect.
 * filters, which the process's status does not show.
 * With PATCH_TARGET_VFORK_MS=N the main thread, once "ready" is said,
 * waits N ms in vfork() for a child that sleeps, then says "vforked": a
 * thread that a ptrace interrupt cannot stop meanwhile. With
 * PATCH_TARGET_VFORK_SAY=1 as well, the child first says "vfork child
 * PID": a process in its parent's memory, to attach to.
 * With PATCH_TARGET_FORKS=1 two more threads each fork a child every 10
 * ms (150 at most), each sleeping until the process ends: children
 * forked while clockprof's stub has the vDSO writable (two: the stub may
 * be sent through one). With =window they fork every 50 ms without end,
 * and only the children born with a writable vDSO stay; with
 * =window-stopped those stop themselves at once (SIGSTOP), as a child a
 * debugger forks does, and stay stopped.
 *
 * With PATCH_TARGET_CLONE_VM=1 a process made with clone(CLONE_VM), not a
 * thread, shares this one's memory (and the main thread's thread
 * pointer) and reads the clock without end; it dies with this process.
 *
 * With PATCH_TARGET_STOP_AT_USR1=N the process's Nth SIGUSR1 stops it
 * (its handler raises SIGSTOP; the others do nothing): a process stopped
 * as a signal is handled, here on top of clockprof's stub.
 *
 * On "seccomp KIND" (stdin) it installs PATCH_TARGET_SECCOMP's filter
 * KIND on every thread then, and says "seccomp".
 *
 * On "minimal 1" (stdin) every read of the fast modes is preceded by a
 * minimal count, on "minimal 0" no more; "minimal" is said: what the
 * least count of a read by thread and call site adds here, for the
 * benchmark (tests/bench/vdso_patch_cost.py) to print beside the
 * patch's cost.
 *
 * On "vdso r" (stdin) the process makes its own vDSO readable only (not
 * executable: as a sandbox may, its reads then made by syscall), on "vdso
 * rx" executable again; "vdso ..." is said when done. No "go" meanwhile.
 *
 * One round: clock_gettime MONOTONIC, REALTIME, PROCESS_CPUTIME_ID (the
 * vDSO's own syscall fallback), gettimeofday through a pointer from dlsym
 * (no PLT stub), time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
/* musl-gcc comes without the kernel's headers: no filters there. */
#if __has_include(<linux/audit.h>)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#define HAVE_SECCOMP 1
#else
#define SECCOMP_FILTER_FLAG_TSYNC 1
#endif

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long rounds, generation, finished;
static int nthreads;
static atomic_int stop, bad, eintr;
static int (*gtod)(struct timeval *, void *);
static int fast;
static const char *fast_entry;	/* fast-ENTRY: "clock_gettime", ... */

/* The least a count of a read by thread and call site does, entered and
 * left as the patch's path is, by two predicted control transfers (here
 * a call and its return), and with no wrapper's step: the thread pointer
 * hashed to its slot in a table, the slot's key compared and its counter
 * incremented; the caller's return address, loaded by the stack pointer
 * as the patch loads it, hashed to its home in the slot's block,
 * compared and incremented. vdso_count.S's common path does this and
 * more, at a patch site before the vDSO's rdtscp, which waits for every
 * load before it. A function, not code at each read: 20 copies of it
 * left the executable segment no room in its last page for a request
 * boundary's trampoline (redirect_place.c). */
static atomic_int minimal_counts;
/* 4096 slots of 128 bytes, then a 512-byte block of sites for each */
unsigned long patch_target_count_table[4096 * 16 + 4096 * 64] __attribute__((aligned(64)));

__asm__(".text\n"
	".p2align 4\n"
	"minimal_count:\n\t"
	"lea patch_target_count_table(%rip), %r11\n\t"
	"mov %fs:0, %rax\n\t"
	"movabs $0x9E3779B97F4A7C15, %rdx\n\t"
	"imul %rax, %rdx\n\t"
	"shr $45, %rdx\n\t"
	"and $(4095 * 128), %edx\n\t" /* the slot */
	"cmp %rax, (%r11, %rdx)\n\t"
	"incq 8(%r11, %rdx)\n\t"
	"lea 524288(%r11, %rdx, 4), %rdx\n\t" /* its block */
	"mov (%rsp), %rcx\n\t"		/* the caller's return address */
	"lea (%rcx, %rcx), %ecx\n\t"
	"and $62, %ecx\n\t" /* the site's home */
	"cmp %rax, (%rdx, %rcx, 8)\n\t"
	"incq 8(%rdx, %rcx, 8)\n\t"
	"ret\n");

/* (these functions make calls: no red zone of theirs for the call to
 * overwrite) */
#define COUNTED(read)                                                                      \
	do {                                                                               \
		if (atomic_load_explicit(&minimal_counts, memory_order_relaxed))             \
			__asm__ volatile("call minimal_count" ::: "rax", "rcx", "rdx", "r11", "cc", \
					 "memory");                                        \
		read;                                                                      \
	} while (0)

/* Five reads of one entry, from five call sites as a real program's are. */
static void one_entry_round(void)
{
	struct timespec ts;
	struct timeval tv;

	if (!strcmp(fast_entry, "clock_gettime")) {
		COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
		COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
		COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
		COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
		COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
	} else if (!strcmp(fast_entry, "gettimeofday")) {
		COUNTED(gtod(&tv, NULL));
		COUNTED(gtod(&tv, NULL));
		COUNTED(gtod(&tv, NULL));
		COUNTED(gtod(&tv, NULL));
		COUNTED(gtod(&tv, NULL));
	} else {
		COUNTED((void)time(NULL));
		COUNTED((void)time(NULL));
		COUNTED((void)time(NULL));
		COUNTED((void)time(NULL));
		COUNTED((void)time(NULL));
	}
}

/* One round of reads; not inlined: the tool's --boundary one_round makes
 * each a request of ROUND reads. */
__attribute__((noinline)) void one_round(void)
{
	struct timespec ts;
	struct timeval tv;

	if (fast_entry) {
		one_entry_round();
		return;
	}
	COUNTED(clock_gettime(CLOCK_MONOTONIC, &ts));
	COUNTED(clock_gettime(CLOCK_REALTIME, &ts));
	COUNTED(clock_gettime(fast ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts));
	COUNTED(gtod(&tv, NULL));
	COUNTED((void)time(NULL));
}

static void *rounds_thread(void *arg)
{
	long seen = 0;

	(void)arg;
	for (;;) {
		long k;

		pthread_mutex_lock(&mu);
		while (generation == seen)
			pthread_cond_wait(&cv, &mu);
		seen = generation;
		k = rounds;
		pthread_mutex_unlock(&mu);
		for (long i = 0; i < k; i++)
			one_round();
		pthread_mutex_lock(&mu);
		if (++finished == nthreads)
			pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static long long ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* raw <= vDSO <= raw again: the patched entry still returns the time.
 * Returns x + 1: a request boundary redirected here (the tool's
 * --boundary check_once) must leave its argument, result and every
 * register as they were. Not inlined: it is a function to redirect. */
__attribute__((noinline)) long check_once(long x)
{
	struct timespec a, v, b;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_MONOTONIC, &v);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
	if (ns(&v) < ns(&a) || ns(&v) > ns(&b))
		atomic_fetch_add(&bad, 1);
	return x + 1;
}

/* check_branches(x): x + 1, for a negative x at once (the branch's taken
 * path), else through check_once (the path it falls through to). In
 * assembly for its layout: its first branch follows its first
 * instruction, so nothing before the branch can take a jump and a
 * boundary there (the tool's --boundary check_branches) is redirected on
 * both paths past it, as glibc's syscall wrappers are; each path's first
 * long instruction lies in one aligned word. */
long check_branches(long x);
__asm__(".text\n"
	".globl check_branches\n"
	".type check_branches, @function\n"
	".p2align 4\n"
	"check_branches:\n"
	"	testq %rdi, %rdi\n"
	"	js 1f\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	movl $0, %eax\n"		/* +9: the untaken path's jump */
	"	call check_once\n"
	"	popq %rbp\n"
	"	ret\n"
	".p2align 3\n"
	"1:	movl $1, %eax\n"		/* the taken path's jump, where js lands */
	"	addq %rdi, %rax\n"
	"	ret\n"
	".size check_branches, . - check_branches\n");

static void *check_thread(void *arg)
{
	(void)arg;
	for (long x = 0; !atomic_load(&stop); x++) {
		if (check_once(x) != x + 1 || check_branches(x) != x + 1 ||
		    check_branches(-x - 2) != -x - 1)
			atomic_fetch_add(&bad, 1);
		(void)time(NULL);
	}
	return NULL;
}

/* The handler runs anywhere, inside a boundary's trampoline or close too,
 * and passes the boundary itself. */
static void on_sigprof(int sig)
{
	int saved = errno;

	(void)sig;
	if (check_once(saved) != saved + 1)
		atomic_fetch_add(&bad, 1);
	errno = saved;
}

/* Signal frames on every thread's stack, interrupting it anywhere, also
 * inside the vDSO: a handler that reads the clock itself. */
static void start_sigprof(void)
{
	struct sigaction sa = { .sa_handler = on_sigprof, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 200 }, { 0, 200 } };

	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
}

static void *epoll_thread(void *arg)
{
	int ep = epoll_create1(0);
	struct epoll_event ev;

	(void)arg;
	while (!atomic_load(&stop))
		if (epoll_wait(ep, &ev, 1, 200) < 0 && errno == EINTR)
			atomic_fetch_add(&eintr, 1);
	return NULL;
}

#ifdef HAVE_SECCOMP
/* A filter on every thread (flags SECCOMP_FILTER_FLAG_TSYNC) or on the
 * calling one (0): EPERM for reboot and kexec_load, or death on mmap. */
static void install_filter(const char *kind, unsigned flags)
{
	int kill_mmap = !strcmp(kind, "kill-mmap");
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kill_mmap ? SYS_mmap : SYS_reboot, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kexec_load, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, kill_mmap ? SECCOMP_RET_KILL_PROCESS :
			 SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog)) {
		perror("seccomp");
		exit(2);
	}
}
#else
static void install_filter(const char *kind, unsigned flags)
{
	(void)flags;
	fprintf(stderr, "no seccomp filter (%s) in this build\n", kind);
	exit(2);
}
#endif

/* N filters that allow every call, stacked on every thread. */
static void stack_filters(int n)
{
#ifdef HAVE_SECCOMP
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		n = -1;
	for (int i = 0; i < n; i++)
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog))
			n = -1;
	if (n >= 0)
		return;
	perror("seccomp stack");
	exit(2);
#else
	(void)n;
	install_filter("stack", 0);
#endif
}

/* PATCH_TARGET_TIGHT_STACK: a thread that spins with ROOM bytes of its
 * stack below its stack pointer (as a small coroutine or signal stack,
 * or a goroutine deep in nosplit calls, has little), and below them
 * either a page no one may touch ("guard": a stack of its own) or other
 * data of the program's, whose canary is checked at quit ("heap": a
 * coroutine's stack carved out of a malloc'd block; "pool": a fiber's
 * slice of a pool with one guard page for all, the slice below another
 * fiber's): a thread the stub must not be sent through. */
#define ROOM 160
#define CANARY 0xa5
static unsigned char *heap_block;
static atomic_int tight_spinning;

static void *tight_stack_thread(void *arg)
{
	char *top;

	if (!strcmp(arg, "heap")) {
		heap_block = malloc(16384);
		memset(heap_block, CANARY, 16384);
		top = (char *)heap_block + 8192 + ROOM;
	} else if (!strcmp(arg, "pool")) {	/* fibers' slices, one guard page */
		char *m = mmap(NULL, 4096 + 16384, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED || mprotect(m + 4096, 16384, PROT_READ | PROT_WRITE)) {
			perror("tight stack");
			exit(2);
		}
		heap_block = (unsigned char *)m + 4096;	/* the first slice */
		memset(heap_block, CANARY, 8192);
		top = m + 4096 + 8192 + ROOM;		/* the second's bottom */
	} else {
		char *m = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED || mprotect(m + 4096, 4096, PROT_READ | PROT_WRITE)) {
			perror("tight stack");
			exit(2);
		}
		top = m + 4096 + ROOM;
	}
	atomic_store(&tight_spinning, 1);	/* "ready" waits for it */
	__asm__ volatile("mov %0, %%rsp\n1: pause\n\tjmp 1b" : : "r"(top) : "memory");
	return NULL;
}

/* The heap block's bytes below the tight stack, as written. */
static void check_canary(void)
{
	for (int i = 0; heap_block && i < 8192; i++)
		if (heap_block[i] != CANARY) {
			fprintf(stderr, "heap block written at %d, below the tight stack\n", i);
			atomic_fetch_add(&bad, 1);
			return;
		}
}

/* Whether this process's vDSO is writable (a fork of a stub's window). */
static bool vdso_writable(void)
{
	char line[512];
	bool w = false;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			w = strchr(line, ' ')[2] == 'w';
	if (f)
		fclose(f);
	return w;
}

/* PATCH_TARGET_FORKS: a child every 10 ms, each dying with this
 * process (PR_SET_PDEATHSIG: with this thread, which never returns); 150
 * of them, or with =window without end, each child forked while this
 * process's vDSO is not writable exiting at once (reaped by the kernel):
 * those of a stub's window stay. */
static void *forking_thread(void *arg)
{
	pid_t parent = getpid();
	bool window = !strncmp(getenv("PATCH_TARGET_FORKS"), "window", 6);
	bool stop = !strcmp(getenv("PATCH_TARGET_FORKS"), "window-stopped");

	(void)arg;
	for (int i = 0; window || i < 150; i++) {
		/* Judged by the parent as it forks: a child on a loaded host
		 * may first run after the window's fork was made right. */
		bool born_in_window = window && vdso_writable();
		pid_t kid = fork();

		if (kid == 0) {
			if (window && !born_in_window)
				_exit(0);
			/* no pipe of the test's held open by a child (its reader
			 * would wait for it), and none left behind by a parent
			 * that exited before the prctl */
			int null = open("/dev/null", O_RDWR);

			dup2(null, 0);
			dup2(null, 1);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			if (stop)
				raise(SIGSTOP);
			for (;;)
				sleep(10);
		}
		usleep(window ? 50000 : 10000);
	}
	for (;;)	/* the children's parent thread: it outlives them */
		pause();
	return NULL;
}

static void *(*worker)(void *);

static void *filtered_worker(void *arg)
{
	install_filter(getenv("PATCH_TARGET_THREAD_SECCOMP"), 0);
	return worker(arg);
}

/* "fork": a child that reads the clock once and waits for its parent's
 * end or a SIGTERM, its pid said ("child PID"): what a fork of a patched
 * process is charged. */
static void fork_idle(void)
{
	pid_t child = fork();

	if (child == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		for (;;)
			pause();
	}
	printf("child %d\n", (int)child);
	fflush(stdout);
}

/* PATCH_TARGET_CLONE_VM: the process that shares this one's memory; raw
 * system calls but for its reads (the C library's state is the main
 * thread's). */
static int memory_sharer(void *arg)
{
	pid_t parent = (pid_t)(long)arg;
	struct timespec ts;

	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	for (int fd = 0; fd < 3; fd++)
		syscall(SYS_close, fd);
	if (syscall(SYS_getppid) != parent)
		syscall(SYS_exit, 0);
	for (;;)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return 0;
}

static void share_memory(void)
{
	static char stack[65536] __attribute__((aligned(16)));

	if (clone(memory_sharer, stack + sizeof(stack), CLONE_VM | SIGCHLD,
		  (void *)(long)getpid()) < 0) {
		perror("clone");
		exit(2);
	}
}

/* "vdso r" / "vdso rx": this process's vDSO made readable only, or
 * executable again. */
static void vdso_protect(bool exec)
{
	char line[512];
	unsigned long start = 0, end = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &start, &end);
	if (f)
		fclose(f);
	if (!start || mprotect((void *)start, end - start, PROT_READ | (exec ? PROT_EXEC : 0))) {
		perror("vdso");
		exit(2);
	}
	printf("vdso %s\n", exec ? "rx" : "r");
	fflush(stdout);
}

static void command_loop(void)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4)) {
		if (!strncmp(line, "fork", 4)) {
			fork_idle();
			continue;
		}
		if (!strncmp(line, "vdso ", 5)) {
			vdso_protect(line[6] == 'x');
			continue;
		}
		if (!strncmp(line, "seccomp ", 8)) {
			line[strcspn(line, "\n")] = '\0';
			install_filter(line + 8, SECCOMP_FILTER_FLAG_TSYNC);
			printf("seccomp\n");
			fflush(stdout);
			continue;
		}
		if (!strncmp(line, "minimal ", 8)) {
			atomic_store(&minimal_counts, line[8] == '1');
			printf("minimal\n");
			fflush(stdout);
			continue;
		}
		if (strncmp(line, "go ", 3))
			continue;
		pthread_mutex_lock(&mu);
		rounds = atol(line + 3);
		finished = 0;
		generation++;
		pthread_cond_broadcast(&cv);
		while (finished < nthreads)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		printf("done\n");
		fflush(stdout);
	}
}

/* PATCH_TARGET_VFORK_MS: the parent waits in vfork() (a wait that only a
 * fatal signal ends) while its child sleeps ms, then exits. */
static void vfork_wait(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	bool say = getenv("PATCH_TARGET_VFORK_SAY") != NULL;

	if (vfork() == 0) {
		char line[32];
		int n = say ? snprintf(line, sizeof(line), "vfork child %ld\n",
				       (long)syscall(SYS_getpid)) : 0;

		if (n > 0)
			syscall(SYS_write, 1, line, (size_t)n);
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	printf("vforked\n");
	fflush(stdout);
}

static atomic_int usr1s;

static void on_usr1(int sig)
{
	const char *at = getenv("PATCH_TARGET_STOP_AT_USR1");

	(void)sig;
	if (atomic_fetch_add(&usr1s, 1) + 1 == atoi(at))
		raise(SIGSTOP);
}

static void stop_at_usr1(void)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };

	if (getenv("PATCH_TARGET_STOP_AT_USR1"))
		sigaction(SIGUSR1, &sa, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "rounds";
	void *(*fn)(void *) = !strcmp(mode, "rounds") || !strncmp(mode, "fast", 4) ?
			      rounds_thread : check_thread;
	pthread_t t;

	nthreads = argc > 1 ? atoi(argv[1]) : 1;
	fast = !strncmp(mode, "fast", 4);
	if (!strncmp(mode, "fast-", 5))
		fast_entry = mode + 5;
	/* A static executable has no dynamic symbols to look up. */
	gtod = (int (*)(struct timeval *, void *))dlsym(RTLD_DEFAULT, "gettimeofday");
	if (!gtod)
		gtod = (int (*)(struct timeval *, void *))gettimeofday;
	worker = fn;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t, NULL, getenv("PATCH_TARGET_THREAD_SECCOMP") ? filtered_worker : fn,
			       NULL);
	if (getenv("PATCH_TARGET_TIGHT_STACK"))
		pthread_create(&t, NULL, tight_stack_thread, getenv("PATCH_TARGET_TIGHT_STACK"));
	while (getenv("PATCH_TARGET_TIGHT_STACK") && !atomic_load(&tight_spinning))
		usleep(1000);
	if (getenv("PATCH_TARGET_FORKS") && !strncmp(getenv("PATCH_TARGET_FORKS"), "window", 6))
		signal(SIGCHLD, SIG_IGN);
	for (int i = 0; getenv("PATCH_TARGET_FORKS") && i < 2; i++)
		pthread_create(&t, NULL, forking_thread, NULL);
	if (!strcmp(mode, "epoll"))
		pthread_create(&t, NULL, epoll_thread, NULL);
	if (!strcmp(mode, "check"))
		start_sigprof();
	if (getenv("PATCH_TARGET_SECCOMP_STACK"))
		stack_filters(atoi(getenv("PATCH_TARGET_SECCOMP_STACK")));
	if (getenv("PATCH_TARGET_SECCOMP"))
		install_filter(getenv("PATCH_TARGET_SECCOMP"), SECCOMP_FILTER_FLAG_TSYNC);
	if (getenv("PATCH_TARGET_CLONE_VM"))
		share_memory();
	stop_at_usr1();
	if (getenv("PATCH_TARGET_MDWE") && prctl(65 /* PR_SET_MDWE */, 1 /* REFUSE_EXEC_GAIN */, 0, 0, 0)) {
		perror("PR_SET_MDWE");
		exit(2);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (getenv("PATCH_TARGET_VFORK_MS"))
		vfork_wait(atoi(getenv("PATCH_TARGET_VFORK_MS")));
	command_loop();
	atomic_store(&stop, 1);
	setitimer(ITIMER_PROF, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
	usleep(300000);
	check_canary();
	printf("eintr %d bad %d\n", atomic_load(&eintr), atomic_load(&bad));
	fflush(stdout);
	return atomic_load(&bad) ? 1 : 0;
}
