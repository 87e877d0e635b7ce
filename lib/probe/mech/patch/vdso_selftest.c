/* vdso_selftest.c - the vDSO patch proves itself before a target is
 * touched: a child of clockprof's own, with the same kernel's vDSO, is
 * patched by the same code path, makes a known number of reads through
 * each entry, and must be counted exactly; then it is restored and ends.
 * It fails where the patch would: a vDSO laid out otherwise, ptrace or
 * mprotect refused, code that does not count.
 *
 * The child is clockprof's program run again (a hidden argument), where
 * the program runs its hidden roles (patch_restorer_main.h), not a fork:
 * forking a clockprof with threads and its BPF objects copied its page
 * tables and made every page it then wrote fault (copy on write), ~170
 * page faults of an attach's ~750 with the child's own, each ~25 us where
 * the hypervisor keeps the page tables. A test tool forks. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "patch_restorer.h"
#include "patch_restorer_main.h"
#include "vdso_patch.h"

extern char **environ;

#define SELFTEST_READS 200	/* 100 clock_gettime, 50 gettimeofday, 50 time */

/* The child: says it is ready (run again, it starts as any program does,
 * its thread pointer set up by its C library after its entry point),
 * waits in read() until told (a syscall the hold restarts unseen: holding
 * it interrupts nothing, and it takes no CPU from clockprof's start
 * meanwhile), reads the clock, says so, and waits again until killed. */
_Noreturn static void child(int go, int done)
{
	struct timespec ts;
	struct timeval tv;
	char b;

	if (write(done, "r", 1) != 1 || read(go, &b, 1) != 1)
		_exit(1);
	for (int i = 0; i < SELFTEST_READS / 4; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		clock_gettime(CLOCK_REALTIME, &ts);
		gettimeofday(&tv, NULL);
		(void)time(NULL);
	}
	if (write(done, "d", 1) != 1)
		_exit(1);
	for (;;)
		if (read(go, &b, 1) <= 0)
			pause();
}

static int count_child(pid_t pid, const int go[2], const int done[2],
		       struct cp_vdso_patch_counts *c, struct cp_error *err)
{
	struct pollfd said = { .fd = done[0], .events = POLLIN };
	struct cp_vdso_patch *p;
	char b;
	int rc;

	if (poll(&said, 1, 5000) != 1 || read(done[0], &b, 1) != 1 || b != 'r')
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test's child did not start");
	if (cp_vdso_patch_attach(pid, &p, err))
		return -1;
	rc = write(go[1], "g", 1) == 1 && poll(&said, 1, 5000) == 1 ? cp_vdso_patch_read(p, c) : -1;
	if (cp_vdso_patch_detach(p, err) || rc)
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test could not read its child");
	return 0;
}

int cp_vdso_patch_subject_main(int argc, char **argv)
{
	/* Never outlive clockprof (a SIGKILL mid-test): a child left patched
	 * would read the clock on in a table nobody reads. */
	prctl(PR_SET_NAME, "cp-selftest", 0, 0, 0);
	if (argc < 3 || prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != (pid_t)atoi(argv[2]))
		return 1;
	child(3, 4);
}

/* The child run again from clockprof's program, its ends of the pipes
 * as descriptors 3 and 4, nothing else of clockprof's held. */
static pid_t spawn_subject(int go, int done)
{
	char parent[16], *argv[] = { "cp-selftest", CP_PATCH_SUBJECT_ARG, parent, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;

	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
	posix_spawn_file_actions_adddup2(&fa, 0, 1);
	posix_spawn_file_actions_adddup2(&fa, 0, 2);
	posix_spawn_file_actions_adddup2(&fa, go, 3);
	posix_spawn_file_actions_adddup2(&fa, done, 4);
	posix_spawn_file_actions_addclosefrom_np(&fa, 5);
	if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

/* The child, forked where the program runs no hidden roles (a test
 * tool), or spawned. */
static pid_t start_child(const int go[2], const int done[2])
{
	pid_t pid, parent = getpid();

	if (cp_patch_restorer_enabled())
		return spawn_subject(go[0], done[1]);
	if ((pid = fork()) == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		child(go[0], done[1]);
	}
	return pid;
}

int cp_vdso_patch_selftest(struct cp_vdso_patch_counts *c, struct cp_error *err)
{
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, rc;
	pid_t pid = -1;

	memset(c, 0, sizeof(*c));
	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		rc = cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test cannot start");
	else {
		pid = start_child(go, done);
		rc = pid < 0 ? cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test cannot start its child") :
		     count_child(pid, go, done, c, err);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (done[i] >= 0)
			close(done[i]);
	}
	if (!rc && (c->total != SELFTEST_READS ||
		    c->by_entry[CP_ENTRY_CLOCK_GETTIME] != SELFTEST_READS / 2))
		rc = cp_fail(err, CP_EXIT_PROFILE,
			     "the vDSO patch counted %llu of %d reads in its self-test",
			     (unsigned long long)c->total, SELFTEST_READS);
	return rc;
}
