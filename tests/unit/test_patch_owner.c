/* The holder of a target's patch (lib/probe/mech/patch/patch_owner.h):
 * a live clockprof other than this one is named; no record, this
 * process, a pid that exited, a zombie and a pid whose start time
 * differs (reused) are not; and the look-and-claim lock is one holder's
 * at a time. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "patch_owner.h"
#include "procfs.h"
#include "unit.h"

static struct cp_vdso_area_owner record_of(pid_t pid)
{
	struct cp_proc_stat st = { 0 };

	cp_proc_stat_read(pid, &st);
	return (struct cp_vdso_area_owner){ (uint64_t)pid, st.start_time };
}

TEST(patch_owner_names_a_live_holder_only)
{
	struct cp_vdso_area_owner none = { 0 }, self, o;
	pid_t parent = getppid();

	cp_patch_owner_self(&self);
	CHECK_INT(cp_patch_owner_live_other(&none), 0);
	CHECK_INT(cp_patch_owner_live_other(&self), 0);
	o = record_of(parent);
	CHECK_INT(cp_patch_owner_live_other(&o), parent);
	o.start++; /* the pid reused */
	CHECK_INT(cp_patch_owner_live_other(&o), 0);
	o = self;
	o.start++; /* this pid, earlier */
	CHECK_INT(cp_patch_owner_live_other(&o), 0);
}

TEST(patch_owner_a_dead_holder_refuses_nothing)
{
	struct cp_vdso_area_owner o;
	struct cp_proc_stat st = { 0 };
	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	o = record_of(child);
	CHECK_INT(cp_patch_owner_live_other(&o), child);
	kill(child, SIGKILL);
	for (int i = 0; i < 60000 && (cp_proc_stat_read(child, &st) || st.state != 'Z'); i++)
		usleep(1000);
	CHECK(st.state == 'Z');
	CHECK_INT(cp_patch_owner_live_other(&o), 0); /* a zombie */
	waitpid(child, NULL, 0);
	CHECK_INT(cp_patch_owner_live_other(&o), 0); /* gone */
}

TEST(patch_owner_lock_is_one_holders)
{
	/* the lock's target: any pid, this test's own so that two runs of
	 * the tests at once never share its name */
	pid_t target = getpid(), child;
	int a = cp_patch_owner_lock(target), b;
	int status;

	CHECK(a >= 0);
	child = fork();
	if (child == 0) /* another process finds it busy (after its wait) */
		_exit(cp_patch_owner_lock(target) == -2 ? 0 : 1);
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	cp_patch_owner_unlock(a);
	b = cp_patch_owner_lock(target);
	CHECK(b >= 0);
	cp_patch_owner_unlock(b);
}
