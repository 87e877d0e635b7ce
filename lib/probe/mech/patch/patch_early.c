/* patch_early.c - see patch_early.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "patch_early.h"
#include "patch_restorer.h"

static struct {
	pthread_t thread;
	bool started, taken;
	/* the self-test over (passed or not), for cp_patch_early_await_selftest */
	pthread_mutex_t lock;
	pthread_cond_t tested;
	bool selftest_over;
	pid_t pids[CP_PATCH_RESTORER_PIDS];
	size_t npids;
	bool launched, apply;
	int rc;
	struct cp_patch_early out;
	struct cp_error err;
} early = { .taken = true, .lock = PTHREAD_MUTEX_INITIALIZER, .tested = PTHREAD_COND_INITIALIZER };

static void selftest_over(void)
{
	pthread_mutex_lock(&early.lock);
	early.selftest_over = true;
	pthread_cond_broadcast(&early.tested);
	pthread_mutex_unlock(&early.lock);
}

static void run_steps(void)
{
	struct cp_vdso_patch_counts c;
	struct cp_patch_helper helper;

	memset(&early.out, 0, sizeof(early.out));
	memset(&early.err, 0, sizeof(early.err));
	early.rc = cp_vdso_patch_selftest(&c, &helper, &early.err);
	selftest_over();
	if (early.rc) {
		early.out.selftest_failed = true;
		return;
	}
	early.rc = cp_vdso_patch_prepare(early.pids[0], early.launched, &early.out.patch,
					 &early.err);
	if (early.rc) {
		cp_patch_helper_end(&helper);
		return;
	}
	/* the self-test's child, made the restorer */
	early.out.restorer = cp_patch_restorer_start(&helper, early.pids, early.npids,
						     cp_vdso_patch_area_offset(early.out.patch));
	if (early.apply) {
		early.rc = cp_vdso_patch_apply(early.out.patch, &early.err);
		early.out.applied = !early.rc;
	}
}

static void *run_thread(void *unused)
{
	(void)unused;
	run_steps();
	return NULL;
}

void cp_patch_early_drop(void)
{
	struct cp_error ignored;

	if (early.started)
		pthread_join(early.thread, NULL);
	early.started = false;
	if (early.taken)
		return;
	cp_vdso_patch_detach(early.out.patch, &ignored);
	cp_patch_restorer_stop(early.out.restorer);
	early.taken = true;
}

void cp_patch_early_start(const struct cp_session_config *cfg)
{
	cp_patch_early_drop();
	early.npids = 0;
	early.pids[early.npids++] = cfg->pid;
	for (size_t i = 0; i < cfg->nmembers && early.npids < CP_PATCH_RESTORER_PIDS; i++)
		early.pids[early.npids++] = cfg->members[i];
	early.launched = cfg->launched;
	early.apply = !cfg->launched && !cfg->boundary_in_target;
	early.taken = false;
	early.selftest_over = false;
	early.started = pthread_create(&early.thread, NULL, run_thread, NULL) == 0;
}

void cp_patch_early_await_selftest(void)
{
	pthread_mutex_lock(&early.lock);
	while (early.started && !early.selftest_over)
		pthread_cond_wait(&early.tested, &early.lock);
	pthread_mutex_unlock(&early.lock);
}

int cp_patch_early_finish(struct cp_patch_early *out, struct cp_error *err)
{
	if (early.taken) {
		memset(out, 0, sizeof(*out));
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO patch was not configured");
	}
	if (early.started)
		pthread_join(early.thread, NULL);
	else
		run_steps(); /* not started: now */
	early.started = false;
	early.taken = true;
	*out = early.out;
	if (early.rc)
		*err = early.err;
	return early.rc;
}
