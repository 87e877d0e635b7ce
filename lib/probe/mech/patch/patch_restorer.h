/* patch_restorer.h - a restorer for every patch, as the exec guard is for
 * execs (lib/probe/session/exec_guard.h): a process of its own (the
 * self-test's child, kept: the helper below) that waits
 * for clockprof's end (a pidfd of clockprof's) and, if clockprof ended
 * without switching the sites back (it was killed), switches them back
 * in the target and in the forks of the target that carry its patch
 * (patch_forks_left.h), and once in any other process whose vDSO names
 * the dead clockprof (one that left the target's tree: reparented), the
 * same way clockprof does: one thread sent
 * through the stub. Nothing is written into the vDSO from outside.
 *
 * It never harms: a target that exited (its pid reused: the start time
 * is checked), is stopped or frozen, or traced by another, or whose
 * patch a live clockprof holds now (patch_owner.h), is left as it is. It
 * is stopped by clockprof once clockprof has switched back itself, so it
 * never acts beside clockprof's own detach; one that outlives a clean
 * end finds nothing switched and exits. A target stopped or frozen when
 * clockprof ends (its restore refused: a stub sent into it would run
 * only later) is left to the restorer, which waits for it to run again,
 * as long as it lives, and switches it back then. It holds none of clockprof's
 * descriptors (an output pipe held open would keep a reader waiting),
 * has a process group of its own (a terminal's Ctrl-C or a kill of
 * clockprof's group spares it) and a name, cp-restorer, that
 * `pkill clockprof` does not take for clockprof's.
 *
 * If clockprof and its restorer both die (a cgroup's kill, the OOM
 * killer), the sites stay switched: the next attach switches them back
 * and says a leftover was found (docs/ARCHITECTURE.md). */
#ifndef CP_PATCH_RESTORER_H
#define CP_PATCH_RESTORER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The processes one restorer watches, at most: the target and the first
 * members of an attach -p, --tree, --cgroup. */
#define CP_PATCH_RESTORER_PIDS 64

/* The helper: clockprof's program run again (patch_restorer_main.h), one
 * process for two roles, spawned once (each start of that program costs
 * ~3 ms of CPU and ~110 page faults here, ~25 us each where the
 * hypervisor keeps the page tables): first the self-test's child
 * (vdso_selftest.c), then, handed the words below, the restorer. Its
 * pid and clockprof's ends of its pipes (-1: none). */
struct cp_patch_helper {
	pid_t pid;
	int to, from;
};

/* Spawns the helper with go (what it reads) and done (what it writes)
 * as its descriptors 3 and 4: its pid, or -1. */
pid_t cp_patch_helper_spawn(int go, int done);
/* After the self-test: reads the restorer's words from go, clears the
 * parent-death signal, shows them in argv's room (room, len), answers on
 * done and is the restorer until it is done; ends at once when go is
 * closed without them. */
_Noreturn void cp_patch_helper_serve(int go, int done, char *room, size_t len);
/* Ends a helper (killed, reaped), one never made a restorer or the
 * restorer cp_patch_restorer_stop ends, and closes its pipes. */
void cp_patch_helper_end(struct cp_patch_helper *h);

/* The restorer of the patch of pids[0..n) (the target and any members),
 * area the header's offset in their vDSO (cp_vdso_patch_area_offset):
 * the helper h (the self-test's child, kept) made it, h consumed; its
 * pid; 0 when this program enables none (a test tool); -1 when it
 * cannot be started. */
pid_t cp_patch_restorer_start(struct cp_patch_helper *h, const pid_t *pids, size_t n,
			      uint64_t area);
/* Whether this program runs clockprof's hidden roles (the restorer, the
 * self-test's child: patch_restorer_main.h). */
bool cp_patch_restorer_enabled(void);
/* Ends it (clockprof switched back itself). */
void cp_patch_restorer_stop(pid_t restorer);

#endif
