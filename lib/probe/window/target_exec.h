/* target_exec.h - an attach that meets its target's exec. A process that
 * exec()s while clockprof attaches keeps its pid, and everything read of
 * it before is of an image that is gone: an attach refused then failed
 * with whatever the step it was at met (the process "has exited", "has no
 * executable vDSO", a file to probe that no longer exists), and one that
 * went through counted the new image with nothing of it patched, the run
 * saying only that the target read no clock. The exec is told by the
 * random bytes the kernel gives each exec (cp_proc_exec_random), new even
 * where addresses are not randomized. Inside lib/probe/window only. */
#ifndef CP_TARGET_EXEC_H
#define CP_TARGET_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cp_error;
struct cp_profile;
struct cp_session;

struct cp_target_exec {
	pid_t pid;
	bool known; /* the bytes could be read */
	uint8_t random[16];
};

/* pid's image as the attach begins (an attach's only: a launched command
 * is held before its exec is done). */
void cp_target_exec_begin(struct cp_target_exec *e, pid_t pid);
/* Whether pid runs another image since (one it exec()ed). */
bool cp_target_exec_changed(const struct cp_target_exec *e);
/* An attach refused by err while pid exec()ed: said as that, err's own
 * words after. */
void cp_target_exec_refusal(const struct cp_target_exec *e, struct cp_error *err);
/* Said in p's warnings when pid exec()ed since with session s not
 * seeing it (before its watch of execs was in place): the image the
 * mechanism set up for is gone, and the new one's reads are not counted. */
void cp_target_exec_warn_unseen(const struct cp_target_exec *e, const struct cp_session *s,
				struct cp_profile *p);

#endif
