/* uprobe.c - the uprobe mechanism (the default: uprobes fire on every
 * host). The vDSO cannot be uprobed, so each read is seen one step before
 * it, at the clock points of the target's files (lib/probe/points/): every
 * point of every file is placed through the session, whose links are
 * removed together so that their removals share one grace period. */
#include "clock_points.h"
#include "mechanism.h"
#include "session_probes.h"

static int uprobe_attach_file(struct cp_mech *m, const char *path,
			      const struct cp_clock_points *pts, struct cp_error *err)
{
	return cp_session_attach_file(m->s, path, pts, err);
}

const struct cp_mechanism_ops cp_uprobe_mechanism = {
	.name = "uprobe",
	.what = "uprobes",
	.caps = CP_MECH_STACKS | CP_MECH_PER_FILE,
	.attach_file = uprobe_attach_file,
};
