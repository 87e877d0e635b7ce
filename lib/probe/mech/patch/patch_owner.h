/* patch_owner.h - one clockprof at a time holds a target's patch. The
 * counts and the request blocks are one set per target: a second
 * clockprof that marked its own window there would move the requests'
 * epoch under the first (its requests counted from zero again) and, at
 * its detach, switch the first's sites back. So the holder is recorded in
 * the area's header (struct cp_vdso_area_owner: its pid and start time)
 * from its prepare to its free, and another clockprof that finds a live
 * holder there is refused before it writes anything. A holder that is
 * gone (its pid exited, a zombie, or reused by a process that started
 * later: a SIGKILLed clockprof) refuses nothing: its leftover is taken
 * over, as ever. A process forked in the holder's window carries a copy
 * of the header, and is refused alike while the holder lives: the holder
 * may follow it (run does), reading its table from zero.
 *
 * The record is read and written through /proc/PID/mem, which has no
 * compare-and-swap: the look and the claim are made under a lock of
 * this host's, an abstract socket's name bound for the target's pid
 * (released by the kernel however its holder ends). Clockprofs in
 * different network namespaces miss each other's lock, and in different
 * pid namespaces each other's pid: a limit, documented. */
#ifndef CP_PATCH_OWNER_H
#define CP_PATCH_OWNER_H

#include <sys/types.h>

#include "vdso_area.h"

/* This clockprof's record as a patch's holder. */
void cp_patch_owner_self(struct cp_vdso_area_owner *o);

/* The pid of the live clockprof other than this one that the record o
 * (read from a target's header) names; 0 when none (no record, a dead
 * holder, this clockprof). */
pid_t cp_patch_owner_live_other(const struct cp_vdso_area_owner *o);

/* The look-and-claim lock for target's record, waited for a short while
 * (another clockprof's prepare holds it for milliseconds); the handle to
 * unlock with; -2 when another held it all that while (the patch is then
 * refused: two prepares at once could send two stubs); -1 when it could
 * not be made (no socket: the look goes on without it). */
int cp_patch_owner_lock(pid_t target);
void cp_patch_owner_unlock(int lock);

#endif
