/* patch_restorer.c - see patch_restorer.h and patch_restorer_main.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "patch_forks_left.h"
#include "patch_owner.h"
#include "patch_restorer.h"
#include "patch_restorer_main.h"
#include "procfs.h"
#include "vdso_patch.h"

extern char **environ;

static bool enabled;

void cp_patch_restorer_enable(void)
{
	enabled = true;
}

bool cp_patch_restorer_enabled(void)
{
	return enabled;
}

/* Its descriptors: /dev/null for the standard ones, its pipes as 3 and
 * 4, nothing else (as the restorer it opens clockprof's pidfd itself:
 * one held here, even for an instant, would read as the window's own to
 * whoever watches clockprof's fds);
 * its own process group; the signals a terminal or a service manager
 * sends clockprof's group blocked. */
static void spawn_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at, int go, int done)
{
	sigset_t mask, def;

	posix_spawn_file_actions_init(fa);
	posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDWR, 0);
	posix_spawn_file_actions_adddup2(fa, 0, 1);
	posix_spawn_file_actions_adddup2(fa, 0, 2);
	posix_spawn_file_actions_adddup2(fa, go, 3);
	posix_spawn_file_actions_adddup2(fa, done, 4);
	posix_spawn_file_actions_addclosefrom_np(fa, 5);
	posix_spawnattr_init(at);
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					     POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(at, 0);
	sigemptyset(&mask);
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig != SIGBUS &&
		    sig != SIGILL && sig != SIGFPE && sig != SIGABRT && sig != SIGSYS)
			sigaddset(&mask, sig);
	posix_spawnattr_setsigmask(at, &mask);
	sigfillset(&def);
	posix_spawnattr_setsigdefault(at, &def);
}

/* The handover's words (clockprof's record as holder, the area's offset,
 * PID:START of each process watched), each at most this long, and room
 * for them in the helper's argv: there, once it is the restorer, they
 * show whom it watches (ps, /proc/PID/cmdline). */
#define WORD_MAX 48
#define NWORDS (CP_PATCH_RESTORER_PIDS + 3)
#define ARGV_ROOM (NWORDS * 36)

pid_t cp_patch_helper_spawn(int go, int done)
{
	static char room[ARGV_ROOM];
	char parent[16], *argv[] = { "cp-selftest", CP_PATCH_SUBJECT_ARG, parent, room, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	/* above 4: neither is overwritten by the other's dup2 */
	int g = fcntl(go, F_DUPFD_CLOEXEC, 5), d = fcntl(done, F_DUPFD_CLOEXEC, 5);
	pid_t child = -1;

	if (!room[0])
		memset(room, ' ', sizeof(room) - 1);
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	spawn_setup(&fa, &at, g, d);
	if (g < 0 || d < 0 || posix_spawn(&child, "/proc/self/exe", &fa, &at, argv, environ))
		child = -1;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (g >= 0)
		close(g);
	if (d >= 0)
		close(d);
	return child;
}

void cp_patch_helper_end(struct cp_patch_helper *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	if (h->to >= 0)
		close(h->to);
	if (h->from >= 0)
		close(h->from);
	*h = (struct cp_patch_helper){ .to = -1, .from = -1 };
}

/* The words, one line, to the helper; its answer awaited: it is the
 * restorer from then on, its parent-death signal cleared. */
static bool hand_over(const struct cp_patch_helper *h, char words[][WORD_MAX], size_t n)
{
	struct pollfd said = { .fd = h->from, .events = POLLIN };
	char line[NWORDS * WORD_MAX + 2];
	size_t len = 0;
	char b;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "",
					words[i]);
	line[len++] = '\n';
	return write(h->to, line, len) == (ssize_t)len && poll(&said, 1, 5000) == 1 &&
	       read(h->from, &b, 1) == 1 && b == 'a';
}

pid_t cp_patch_restorer_start(struct cp_patch_helper *h, const pid_t *pids, size_t n, uint64_t area)
{
	char words[NWORDS][WORD_MAX];
	struct cp_vdso_area_owner self;
	pid_t restorer = h->pid;
	size_t k = 0;

	if (!enabled || h->pid <= 0) {
		cp_patch_helper_end(h);
		return enabled ? -1 : 0;
	}
	cp_patch_owner_self(&self);
	snprintf(words[k++], WORD_MAX, "%" PRIu64, self.pid);
	snprintf(words[k++], WORD_MAX, "%" PRIu64, self.start);
	snprintf(words[k++], WORD_MAX, "%" PRIu64, area);
	for (size_t i = 0; i < n && i < CP_PATCH_RESTORER_PIDS; i++) {
		struct cp_proc_stat st;

		if (cp_proc_stat_read(pids[i], &st) == 0)
			snprintf(words[k++], WORD_MAX, "%d:%llu", (int)pids[i], st.start_time);
	}
	if (!hand_over(h, words, k))
		restorer = -1;
	else
		h->pid = 0; /* kept: it is the restorer now */
	cp_patch_helper_end(h);
	return restorer;
}

void cp_patch_restorer_stop(pid_t restorer)
{
	cp_patch_helper_end(&(struct cp_patch_helper){ .pid = restorer, .to = -1, .from = -1 });
}

/* Whether pid is still the process that started at start: alive, its
 * main thread or, once that one exited (a zombie), another. */
static bool same_process(pid_t pid, unsigned long long start)
{
	struct cp_proc_stat st;

	return cp_proc_stat_read(pid, &st) == 0 && st.start_time == start &&
	       (st.state != 'Z' || cp_proc_live_tid(pid) != pid);
}

/* A restore refused is tried again while the process is stopped, frozen
 * or traced by another (it may be continued, thawed or let go:
 * clockprof, which found it so at its end, left the switch back to this
 * restorer), every RETRY_US, for as long as
 * it lives; while it runs, for RUNNING_RETRY_S more (a stub sent before
 * clockprof died may still be finishing: its thread had no CPU yet, or
 * the tests' hook holds it in its window); then given up. Every process
 * watched is tried in each round: one that stays stopped never holds the
 * others back. */
#define RETRY_US 200000
#define RUNNING_RETRY_S 10

/* One process the dead clockprof patched, as its word (PID:START) said. */
struct watched {
	pid_t pid;
	unsigned long long start;
	int running; /* rounds refused while it ran */
	bool held;   /* last refused while stopped, frozen or traced */
	bool done;
};

/* One try at w: switched back with the forks it made in the window, or
 * given up (not the same process any more, never patched: a member
 * refused, or refused while it ran for too long); else tried again in
 * the next round. What forbids it (stopped, traced, held by a live
 * clockprof) is prepare's to refuse (cp_vdso_patch_restore_copy). */
static void try_one(struct watched *w, uint64_t area, const struct cp_vdso_area_owner *dead)
{
	struct cp_error err = { 0 };
	pid_t first;

	if (!same_process(w->pid, w->start) || !cp_patch_carries_area(w->pid, area)) {
		w->done = true; /* gone, or never patched */
		return;
	}
	if (cp_vdso_patch_restore_copy(w->pid, &err) &&
	    ((w->held = cp_vdso_patch_runs_nothing(w->pid) || cp_vdso_patch_tracer(w->pid)) ||
	     ++w->running <= RUNNING_RETRY_S * 1000000 / RETRY_US))
		return;
	cp_patch_forks_restore(w->pid, area, dead, &first);
	w->done = true;
}

/* The processes the dead clockprof patched that are in no watched
 * process's tree any more (a daemon's double fork, the child of a
 * process that exited: reparented; clockprof's own end switched those it
 * followed back, and they counted on, unread, for good after its kill),
 * found among all the host's by their header naming it: switched back
 * once, as the forks are. */
static void restore_strays(uint64_t area, const struct cp_vdso_area_owner *dead)
{
	pid_t first;

	cp_patch_forks_restore(1, area, dead, &first);
}

/* Whether every process watched is done, or waits only to be continued,
 * thawed or let go (which may never come). */
static bool only_held_left(const struct watched *w, int k)
{
	for (int i = 0; i < k; i++)
		if (!w[i].done && !w[i].held)
			return false;
	return true;
}

/* Rounds over the processes watched (words: PID:START each) until every
 * one is done; the strays once none may still be finishing a stub. */
static void restore_all(char **words, int n, uint64_t area, const struct cp_vdso_area_owner *dead)
{
	struct watched w[CP_PATCH_RESTORER_PIDS];
	int k = 0, left;
	bool strays = false;

	for (int i = 0; i < n && k < CP_PATCH_RESTORER_PIDS; i++) {
		unsigned long long start;
		int pid;

		if (sscanf(words[i], "%d:%llu", &pid, &start) == 2 && pid > 0)
			w[k++] = (struct watched){ .pid = (pid_t)pid, .start = start };
	}
	for (;;) {
		left = 0;
		for (int i = 0; i < k; i++)
			if (!w[i].done && (try_one(&w[i], area, dead), !w[i].done))
				left++;
		if (!strays && only_held_left(w, k)) {
			restore_strays(area, dead);
			strays = true;
		}
		if (!left)
			return;
		usleep(RETRY_US);
	}
}

/* Until clockprof (its parent, pid) has ended. Its pidfd, then its
 * parenthood checked: while clockprof is its parent, the pid is
 * clockprof's; once it is not, clockprof has ended already. */
static void wait_for_end(pid_t pid)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd gone = { .fd = pidfd, .events = POLLIN };

	if (pidfd >= 0 && getppid() == pid)
		while (poll(&gone, 1, -1) <= 0 && errno == EINTR)
			;
	if (pidfd >= 0)
		close(pidfd);
}

/* The restorer's life: words as cp_patch_restorer_start hands them over. */
static int restorer_run(char **words, int n)
{
	struct cp_vdso_area_owner dead;
	uint64_t area;

	/* The tests' hook slows clockprof's stubs (test_hook.h), not its
	 * restorer's: a restore's own window would hold a fork of a target
	 * forking without pause, to be mended in a window of its own, ... */
	unsetenv("CLOCKPROF_TEST_STUB_PAUSE_MS");
	if (n < 3)
		return CP_EXIT_USAGE;
	dead.pid = strtoull(words[0], NULL, 10);
	dead.start = strtoull(words[1], NULL, 10);
	area = strtoull(words[2], NULL, 10);
	wait_for_end((pid_t)dead.pid);
	restore_all(words + 3, n - 3, area, &dead);
	return CP_EXIT_OK;
}

/* The words shown in argv's room, each its own argument, the program's
 * name first; what is left of the room, NULs. */
static void show_words(char *room, size_t len, char **words, int n)
{
	size_t at = 0;

	memset(room, 0, len);
	for (int i = -1; i < n; i++) {
		const char *w = i < 0 ? "cp-restorer" : words[i];
		size_t wl = strlen(w);

		if (at + wl + 1 >= len)
			break;
		memcpy(room + at, w, wl);
		at += wl + 1;
	}
}

_Noreturn void cp_patch_helper_serve(int go, int done, char *room, size_t len)
{
	static char line[NWORDS * WORD_MAX + 2];
	char *words[NWORDS], *save = NULL;
	size_t got = 0;
	int n = 0;

	while (!got || line[got - 1] != '\n') {
		ssize_t r = got < sizeof(line) - 1 ? read(go, line + got, sizeof(line) - 1 - got) :
						     0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			_exit(0); /* no restorer wanted, or clockprof gone */
		got += (size_t)r;
	}
	line[got - 1] = 0;
	for (char *w = strtok_r(line, " ", &save); w && n < NWORDS; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	prctl(PR_SET_PDEATHSIG, 0);
	/* named and shown before it answers: seen as the restorer at once */
	prctl(PR_SET_NAME, "cp-restorer", 0, 0, 0);
	show_words(room, len, words, n);
	if (write(done, "a", 1) != 1)
		_exit(1);
	close(go);
	close(done);
	_exit(restorer_run(words, n));
}
