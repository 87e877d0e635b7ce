/* mech_choice.c - --mechanism auto: which mechanism counts, decided before
 * anything is counted. The patch counts with no trap per read, so it is
 * tried first; uprobes fire on every host, so they are what auto falls
 * back to, with the patch's own reason kept for run.json and the summary.
 * Only auto falls back: an explicit --mechanism stays strict (exit 3 with
 * the reason), so a run never counts otherwise than it was asked to. */
#include <stdio.h>

#include "error.h"
#include "mechanism.h"

enum cp_mechanism cp_mech_choose(enum cp_mechanism asked, bool stacks, char *reason, size_t size)
{
	if (size)
		reason[0] = '\0';
	if (asked != CP_MECHANISM_AUTO)
		return asked;
	/* Whole stacks are walked by the kernel at each read: a read counted
	 * inside the target gives it nothing to walk. */
	if (stacks && !cp_mechanism_has(CP_MECHANISM_PATCH, CP_MECH_STACKS)) {
		snprintf(reason, size,
			 "--stacks needs the kernel to walk each read's stack, which %s cannot",
			 cp_patch_mechanism.what);
		return CP_MECH_FALLBACK;
	}
	return CP_MECHANISM_PATCH;
}

bool cp_mech_may_fall_back(enum cp_mechanism asked, enum cp_mechanism kind,
			   const struct cp_error *err)
{
	/* Usage errors are the user's to fix whatever counts; a failure of
	 * the fallback itself has nothing further to fall to. */
	return asked == CP_MECHANISM_AUTO && kind != CP_MECH_FALLBACK &&
	       err->exit_code == CP_EXIT_PROFILE;
}
