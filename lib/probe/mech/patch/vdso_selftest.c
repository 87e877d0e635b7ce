/* vdso_selftest.c - the vDSO patch proves itself before a target is
 * touched: a child of clockprof's own, with the same kernel's vDSO, is
 * patched by the same code path, makes a known number of reads through
 * each entry, and must be counted exactly; then it is restored, and it
 * ends or, kept, is made the patch's restorer (patch_restorer.h).
 * It fails where the patch would: a vDSO laid out otherwise, ptrace or
 * mprotect refused, code that does not count.
 *
 * The child is clockprof's program run again (a hidden argument), where
 * the program runs its hidden role (patch_restorer_main.h), not a fork:
 * forking a clockprof with threads and its BPF objects copied its page
 * tables and made every page it then wrote fault (copy on write), ~170
 * page faults of an attach's ~750 with the child's own, each ~25 us where
 * the hypervisor keeps the page tables. A test tool forks. */
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
#include "patch_restorer.h"
#include "patch_restorer_main.h"
#include "stub_forks.h"
#include "vdso_patch.h"
#include "vdso_patch_internal.h"

#define SELFTEST_READS 200 /* 100 clock_gettime, 50 gettimeofday, 50 time */

/* The child: says it is ready (run again, it starts as any program does,
 * its thread pointer set up by its C library after its entry point),
 * waits in read() until told (a syscall the hold restarts unseen: holding
 * it interrupts nothing, and it takes no CPU from clockprof's start
 * meanwhile), reads the clock, says so, and waits again: to be made the
 * restorer (spawned, room its argv's room), or killed. */
_Noreturn static void child(int go, int done, char *room, size_t len)
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
	if (room)
		cp_patch_helper_serve(go, done, room, len);
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

	cp_vdso_patch_warm(); /* while the child starts (a few ms) */
	if (poll(&said, 1, 5000) != 1 || read(done[0], &b, 1) != 1 || b != 'r')
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO patch self-test's child did not start");
	if (cp_vdso_patch_attach(pid, true, &p, err))
		return -1;
	rc = write(go[1], "g", 1) == 1 && poll(&said, 1, 5000) == 1 && read(done[0], &b, 1) == 1 &&
			     b == 'd' ?
		     cp_vdso_patch_read(p, c) :
		     -1;
	if (cp_vdso_patch_detach(p, err) || rc)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO patch self-test could not read its child");
	return 0;
}

int cp_vdso_patch_subject_main(int argc, char **argv)
{
	/* Never outlive clockprof while it may be patched (a SIGKILL mid-test):
	 * a child left patched would read the clock on in a table nobody
	 * reads. Made the restorer, it clears this. */
	prctl(PR_SET_NAME, "cp-selftest", 0, 0, 0);
	if (argc < 4 || prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != (pid_t)atoi(argv[2]) ||
	    !cp_vdso_patch_keep_pristine())
		return 1;
	/* argv's strings lie end to end: the room runs from the first's
	 * start to the last's end */
	child(3, 4, argv[0], (size_t)(argv[3] + strlen(argv[3]) + 1 - argv[0]));
}

/* The child, forked where the program runs no hidden roles (a test
 * tool), or spawned as the helper. */
static pid_t start_child(const int go[2], const int done[2])
{
	pid_t pid, parent = getpid();

	if (cp_patch_restorer_enabled())
		return cp_patch_helper_spawn(go[0], done[1]);
	if ((pid = fork()) == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(1);
		child(go[0], done[1], NULL, 0);
	}
	return pid;
}

static int judge(const struct cp_vdso_patch_counts *c, struct cp_error *err)
{
	if (c->total != SELFTEST_READS || c->by_entry[CP_ENTRY_CLOCK_GETTIME] != SELFTEST_READS / 2)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO patch counted %llu of %d reads in its self-test",
			       (unsigned long long)c->total, SELFTEST_READS);
	return 0;
}

int cp_vdso_patch_selftest(struct cp_vdso_patch_counts *c, struct cp_patch_helper *keep,
			   struct cp_error *err)
{
	int go[2] = { -1, -1 }, done[2] = { -1, -1 }, rc;
	struct cp_patch_helper h = { .pid = -1, .to = -1, .from = -1 };

	memset(c, 0, sizeof(*c));
	if (keep)
		*keep = (struct cp_patch_helper){ .to = -1, .from = -1 };
	if (pipe2(go, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		rc = cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch self-test cannot start");
	else {
		h.pid = start_child(go, done);
		rc = h.pid < 0 ? cp_fail(err, CP_EXIT_PROFILE,
					 "the vDSO patch self-test cannot start its child") :
				 count_child(h.pid, go, done, c, err);
	}
	if (!rc)
		rc = judge(c, err);
	/* restored, it is left as any target is: no writable code */
	if (!rc && cp_proc_has_wx(h.pid))
		rc = cp_fail(
			err, CP_EXIT_PROFILE,
			"the vDSO patch left its self-test's child with writable and executable code");
	h.to = go[1];
	h.from = done[0];
	if (go[0] >= 0)
		close(go[0]);
	if (done[1] >= 0)
		close(done[1]);
	if (!rc && keep && cp_patch_restorer_enabled())
		*keep = h;
	else
		cp_patch_helper_end(&h);
	return rc;
}
