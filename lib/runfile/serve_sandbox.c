/* serve_sandbox.c - see serve_sandbox.h. The order matters: the bounding
 * set can only be emptied while CAP_SETPCAP is still held, and the groups
 * while CAP_SETGID is; setresuid away from root then clears the
 * permitted, effective and ambient sets, and the explicit capset clears
 * the inheritable one, which setuid keeps. Raw capset, not libcap: two
 * calls do not need a library. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "serve_sandbox.h"

static int fail(char *why, size_t size, const char *what)
{
	snprintf(why, size, "%s: %s", what, strerror(errno));
	return -1;
}

/* Empties the bounding set: every capability up to the kernel's last. */
static int drop_bounding(char *why, size_t size)
{
	for (int cap = 0; cap < 64; cap++) {
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
			break; /* past the last capability this kernel has */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return fail(why, size, "dropping the capability bounding set");
	}
	return 0;
}

static int caps_zero(char *why, size_t size)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d))
		return fail(why, size, "clearing the capabilities");
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return fail(why, size, "reading the capabilities");
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable) {
			snprintf(why, size, "capabilities still held after clearing them");
			return -1;
		}
	return 0;
}

int cp_serve_sandbox(uid_t uid, gid_t gid, char *why, size_t size)
{
	uid_t r, e, s;

	if (drop_bounding(why, size))
		return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return fail(why, size, "clearing the ambient capabilities");
	if (setgroups(0, NULL))
		return fail(why, size, "dropping the supplementary groups");
	if (setresgid(gid, gid, gid))
		return fail(why, size, "setting the group");
	if (setresuid(uid, uid, uid))
		return fail(why, size, "setting the user");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return fail(why, size, "setting no_new_privs");
	if (caps_zero(why, size))
		return -1;
	if (getresuid(&r, &e, &s) || r != uid || e != uid || s != uid || (uid && !setuid(0))) {
		snprintf(why, size, "the user did not change to %u for good", (unsigned)uid);
		return -1;
	}
	return 0;
}
