/* breakpoint.c - the breakpoint mechanism: hardware execute breakpoints on
 * the vDSO's clock entries of every thread (breakpoints.h), running the
 * session's program. They see reads no file holds, but on some hosts the
 * kernel accepts them and they never fire: the self-test says so. Of the
 * target's files only syscall() is probed (through the session). */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "breakpoints.h"
#include "clock_points.h"
#include "error.h"
#include "mechanism.h"
#include "session_probes.h"

struct bp_state {
	struct cp_breakpoints target; /* the target's threads */
	struct cp_breakpoints own;    /* the self-test's, on this thread */
};

static int bp_configure(struct cp_session_config *cfg, struct cp_error *err)
{
	cfg->vdso_breakpoints = true;
	return cp_vdso_locate(cfg->pid, &cfg->vdso, err);
}

static int bp_open(struct cp_mech *m, const struct cp_session_config *cfg, struct cp_error *err)
{
	struct bp_state *st = calloc(1, sizeof(*st));
	uint64_t addrs[CP_ENTRY_MAX];
	int naddrs = 0;

	if (!st)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	m->state = st;
	for (int i = 0; i < CP_ENTRY_MAX; i++)
		if (cfg->vdso.entry[i])
			addrs[naddrs++] = cfg->vdso.entry[i];
	return cp_breakpoints_attach(&st->target, cfg->pid, 0, addrs, naddrs, cfg->vdso.start,
				     cp_session_vdso_program(m->s), err);
}

/* A breakpoint on fn on this thread, with a guard here: this function is
 * not executed again once the breakpoints are open. */
static int bp_place_own(struct cp_mech *m, const void *fn)
{
	struct bp_state *st = m->state;
	uint64_t addr = (uint64_t)(uintptr_t)fn;

	return cp_breakpoints_attach(&st->own, 0, (pid_t)syscall(SYS_gettid), &addr, 1,
				     (uint64_t)(uintptr_t)bp_place_own,
				     cp_session_vdso_program(m->s), NULL);
}

static void bp_remove_own(struct cp_mech *m)
{
	cp_breakpoints_detach(&((struct bp_state *)m->state)->own);
}

static void bp_stats(const struct cp_mech *m, struct cp_session_stats *st)
{
	const struct bp_state *bp = m->state;

	st->threads = bp->target.threads;
	st->inherited = bp->target.inherited;
}

static void bp_detach(struct cp_mech *m)
{
	cp_breakpoints_detach(&((struct bp_state *)m->state)->target);
}

/* Both sets of breakpoints off; cp_mech_close frees the state. */
static void bp_close(struct cp_mech *m)
{
	if (!m->state)
		return;
	bp_detach(m);
	bp_remove_own(m);
}

/* Breakpoints see reads whatever calls them, -fno-plt and function
 * pointers too, but CP_MECH_SEES_UNSTUBBED is left out as the warning was
 * given before the mechanisms had rooms: dropping it is a change of its
 * own, with its test. */
const struct cp_mechanism_ops cp_breakpoint_mechanism = {
	.name = "breakpoint",
	.what = "hardware breakpoints",
	.unfired_hint = "; use --mechanism uprobe",
	.caps = CP_MECH_STACKS | CP_MECH_TESTS_BREAKPOINTS,
	.configure = bp_configure,
	.open = bp_open,
	.attach_file = cp_mech_attach_syscall_only, /* the vDSO entries are probed */
	.place_own = bp_place_own,
	.remove_own = bp_remove_own,
	.stats = bp_stats,
	.detach = bp_detach,
	.close = bp_close,
};
