/* test_naming_reopen.c - a dlopen seen as the target exits: the call
 * sites' naming is read again (window_naming.c, cp_naming_reopen), and a
 * target whose memory is gone has nothing to read. The naming it had is
 * kept, so that its files' sites keep their names; dropping it had left
 * such a run with no call site at all ("call sites cannot be named: no
 * such process"). */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile.h"
#include "profile_window.h"
#include "symbolize.h"
#include "unit.h"

__attribute__((noinline)) static int named_here(void)
{
	return 7;
}

static int named(struct cp_naming *nm)
{
	struct cp_frame_info f;

	return cp_symbolize(nm->sym, (uint64_t)(uintptr_t)named_here, &f) == 0 && f.function &&
	       strstr(f.function, "named_here");
}

TEST(naming_reopen_keeps_names_of_a_target_gone)
{
	static struct cp_profile p; /* large: not on the stack */
	struct cp_naming nm = { 0 };
	siginfo_t si;
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(named_here());
	}
	CHECK(child > 0);
	memset(&p, 0, sizeof(p));
	p.target.pid = child;
	cp_naming_open(&nm, &p);
	CHECK(nm.sym != NULL);
	CHECK(named(&nm));
	/* Alive: read again, and still named. */
	CHECK(cp_naming_reopen(&nm, &p));
	CHECK(nm.sym != NULL && named(&nm));
	/* Gone (a zombie, not reaped: its pid still its own, its maps
	 * empty): the naming it had stays. */
	kill(child, SIGKILL);
	CHECK(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0);
	CHECK(!cp_naming_reopen(&nm, &p));
	CHECK(nm.sym != NULL && named(&nm));
	cp_naming_close(&nm);
	waitpid(child, NULL, 0);
	for (int i = 0; i < p.nwarnings; i++)
		free(p.warnings[i]);
}
