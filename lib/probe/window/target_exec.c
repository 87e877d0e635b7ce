/* target_exec.c - see target_exec.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "procfs.h"
#include "profile_window.h"
#include "session.h"
#include "target_exec.h"

/* Tries at the attach's start: a process in the middle of an exec has
 * its new image's bytes readable a moment later. */
#define BEGIN_TRIES 5

void cp_target_exec_begin(struct cp_target_exec *e, pid_t pid)
{
	e->pid = pid;
	e->known = false;
	for (int i = 0; pid > 0 && i < BEGIN_TRIES && !e->known; i++)
		if (!(e->known = cp_proc_exec_random(pid, e->random) == 0))
			usleep(200);
}

bool cp_target_exec_changed(const struct cp_target_exec *e)
{
	uint8_t now[16];

	if (!e->known)
		return false;
	if (cp_proc_exec_random(e->pid, now) == 0)
		return memcmp(now, e->random, sizeof(now)) != 0;
	/* unreadable: gone, or between the two halves of an exec */
	return cp_proc_thread_alive(e->pid, e->pid);
}

void cp_target_exec_refusal(const struct cp_target_exec *e, struct cp_error *err)
{
	char msg[sizeof(err->msg)];

	if (!cp_target_exec_changed(e))
		return;
	snprintf(msg, sizeof(msg), "%s", err->msg);
	cp_fail(err, err->exit_code,
		"process %d exec()ed another program while clockprof attached, and nothing of it is counted (%s)",
		(int)e->pid, msg);
}

void cp_target_exec_warn_unseen(const struct cp_target_exec *e, const struct cp_session *s,
				struct cp_profile *p)
{
	unsigned forks, followed_execed, traced;
	bool execed;

	cp_session_lifecycle(s, &execed, &forks, &followed_execed, &traced);
	if (!execed && cp_target_exec_changed(e))
		cp_profile_warn(
			p,
			"process %d exec()ed another program while clockprof attached, before the window: the image set up for is gone, and the new one's reads are not counted",
			(int)e->pid);
}
