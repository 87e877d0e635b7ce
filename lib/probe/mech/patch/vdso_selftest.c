/* vdso_selftest.c - the vDSO patch proves itself before a target is
 * touched: a child of clockprof's own, with the same kernel's vDSO, is
 * patched by the same code path, makes a known number of reads through
 * each entry, and must be counted exactly; then it is restored and ends.
 * It fails where the patch would: a vDSO laid out otherwise, ptrace or
 * mprotect refused, code that does not count. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "vdso_patch.h"

#define SELFTEST_READS 200	/* 100 clock_gettime, 50 gettimeofday, 50 time */

/* The child: waits in read() until told (a syscall the hold restarts
 * unseen: holding it interrupts nothing, and it takes no CPU from
 * clockprof's start meanwhile), reads the clock, says so, and waits again
 * until killed. */
_Noreturn static void child(int go, int done)
{
	struct timespec ts;
	struct timeval tv;
	char b;

	if (read(go, &b, 1) != 1)
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
	int rc;

	if (cp_vdso_patch_attach(pid, &p, err))
		return -1;
	rc = write(go[1], "g", 1) == 1 && poll(&said, 1, 5000) == 1 ? cp_vdso_patch_read(p, c) : -1;
	if (cp_vdso_patch_detach(p, err) || rc)
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test could not read its child");
	return 0;
}

int cp_vdso_patch_selftest(struct cp_vdso_patch_counts *c, struct cp_error *err)
{
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, rc;
	pid_t pid = -1, parent = getpid();

	memset(c, 0, sizeof(*c));
	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		rc = cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test cannot start");
	else if ((pid = fork()) == 0) {
		/* Never outlive clockprof (a SIGKILL mid-test): the child holds
		 * copies of its descriptors, BPF programs included. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		child(go[0], done[1]);
	} else {
		rc = pid < 0 ? cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test cannot fork") :
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
