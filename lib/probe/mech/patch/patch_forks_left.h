/* patch_forks_left.h - the processes a patched target forked in a window
 * and nobody follows (attach follows no fork unless told): each runs its
 * own copy of the target's vDSO, switched as its parent's was at the
 * fork, and counts in its own copy of the table, which nobody reads. At
 * the window's end (and by the restorer, when clockprof died) they are
 * found among the target's descendants by the header copy they carry,
 * which names the clockprof that held the patch then, and switched back
 * (cp_vdso_patch_restore_copy). A fork whose parent exited before that
 * (reparented) is not found at the window's end: it counts on,
 * harmlessly, until it exits; a restorer looks at every process of the
 * host for it (root 1, once: patch_restorer.c). */
#ifndef CP_PATCH_FORKS_LEFT_H
#define CP_PATCH_FORKS_LEFT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vdso_area.h"

/* The descendants of root whose vDSO holds an area header at area (an
 * offset from the vDSO's start: cp_vdso_patch_area_offset) that names
 * owner, switched back. How many of those still alive could not be
 * (stopped, traced, ...): *first the first of them. */
size_t cp_patch_forks_restore(pid_t root, uint64_t area, const struct cp_vdso_area_owner *owner,
			      pid_t *first);

/* Whether pid's vDSO holds an area header at area, whoever's: a process
 * that holds none was never patched (a member refused), and nothing is
 * to be switched back or written there. */
bool cp_patch_carries_area(pid_t pid, uint64_t area);

#endif
