/* patch_followed.h - the vDSO patch's side of following the processes the
 * target forks (run's default, cp_session_config.follow_forks): a forked
 * child runs its parent's patched vDSO and counts in its own copy of the
 * table (wiped at the fork, so from zero), at the same address. Its
 * counts are read here, from its table while it runs or from the sums the
 * BPF program took as its threads exited (probes/patch_reads.bpf.h), and
 * a child still running when the clock window ends is switched back as
 * the target is. The session knows the processes (its procs map). */
#ifndef CP_PATCH_FOLLOWED_H
#define CP_PATCH_FOLLOWED_H

#include <stdbool.h>
#include <stdint.h>

#include "clockreads.h"
#include "mechanism.h"
#include "patch_members.h"
#include "patch_sites.h"

/* Every followed process's reads added to t and kept in m->procs (for the
 * window's per-process rows), their sites added to into (to be
 * normalized: true when any were added); ms: the members, read through
 * their own patch; hres: as the session's. in_requests, when the
 * boundary is closed in the target (a fork runs it too, in its own
 * table): a running fork's requests, and its reads through syscall(),
 * read from its table and added to t, their reads by call site to
 * in_requests (an exited one's, the session's program summed as it
 * exited); NULL: the session's boundary counts them. syscalls: the
 * forks' tables hold their reads through syscall() (redirected with the
 * boundary), added to t even where in_requests is NULL (a syscall:
 * boundary that fell back to sys_enter). */
bool cp_patch_followed_read(struct cp_mech *m, const struct cp_patch_members *ms, bool hres,
			    struct cp_totals *t, struct cp_patch_sites *into,
			    struct cp_patch_sites *in_requests, bool syscalls);
/* Each followed process the target forked still running switched back
 * to the vDSO it was forked with (a failure said in
 * m->closing_warning); members are their own patch's to restore. */
void cp_patch_followed_restore(struct cp_mech *m);

#endif
