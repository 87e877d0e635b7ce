/* patch_early.h - the vDSO patch's steps that need no session, run on a
 * thread of their own while the session opens (its BPF programs load, the
 * target's modules are named): the self-test on a child of
 * clockprof's own (vdso_selftest.c), then, only if it passed, the
 * target's patch prepared (its code written into the unused end of the
 * target's vDSO, unreached), its restorer started (the self-test's
 * child, kept) and, for a running
 * target whose requests are not closed in it, its table mapped (apply).
 * What a boundary closed in the target adds (its redirects) comes after
 * those, at the mechanism's open, as before: the table is mapped then. */
#ifndef CP_PATCH_EARLY_H
#define CP_PATCH_EARLY_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "session.h"
#include "vdso_patch.h"

struct cp_patch_early {
	bool selftest_failed;	     /* err is the self-test's */
	struct cp_vdso_patch *patch; /* prepared; NULL when not */
	bool applied;		     /* its table mapped */
	pid_t restorer;		     /* cp_patch_restorer_start's */
};

/* Starts the steps for cfg (its pid and members are copied: cfg may
 * change meanwhile). One at a time: a second start first waits for the
 * first, whose patch is then detached (its result never taken). */
void cp_patch_early_start(const struct cp_session_config *cfg);

/* Waits until the self-test, the first step, is over (at once when no
 * steps run on their thread): for the session's load, where it would
 * otherwise share the host's CPUs with the self-test and naming
 * (cp_mech_await_early). */
void cp_patch_early_await_selftest(void);

/* A result never taken (the session failed to open, set-up was given
 * up): the steps waited for, their patch (which switched nothing yet)
 * detached, its restorer ended. Nothing when none is untaken. */
void cp_patch_early_drop(void);

/* Waits for the steps (or runs them now, if they could not be started)
 * and gives what they made: the caller owns out->patch and the restorer,
 * on failure too. 0, or CP_EXIT_PROFILE with err. */
int cp_patch_early_finish(struct cp_patch_early *out, struct cp_error *err);

#endif
