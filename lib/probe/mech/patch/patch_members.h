/* patch_members.h - the processes clockprof was given besides the target
 * (attach -p PID,PID..., --tree, --cgroup): each is patched as the target
 * is, with a counter table of its own, and counted from the window's
 * start; the session follows it as it follows a process the target
 * forked (CP_PROC_MEMBER), so its requests, its exit and its own forks
 * are seen the same way (patch_followed.h reads them all). */
#ifndef CP_PATCH_MEMBERS_H
#define CP_PATCH_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cp_mech;
struct cp_unwind_table;
struct cp_vdso_patch;

struct cp_patch_member {
	pid_t pid;
	struct cp_vdso_patch *patch;
	/* Its code is where the target's is (a fork of the same image): the
	 * target's wrapper rules and call-site names hold for it. Else its
	 * sites are not kept (CP_PROC_NO_SITES): read, they would be named as
	 * the target's addresses. */
	bool same_code;
	char *exe;    /* /proc/PID/exe as it was patched (malloc'd) */
	bool watched; /* by the restorer: among the first members given */
};

struct cp_patch_members {
	struct cp_patch_member *v;
	size_t n, cap;
};

/* Patches each of pids[0..n) (their tables mapped, their vDSO switched
 * at start, after the rules: nothing counted yet);
 * one that cannot be is left out, said with cp_mech_warn. -1 out of memory. */
int cp_patch_members_open(struct cp_mech *m, const pid_t *pids, size_t n,
			  struct cp_patch_members *out);
/* A process patched by the caller (a followed one, in the image it has
 * exec()ed: patch_execs.h) joins them, its code its own; -1 out of
 * memory. */
int cp_patch_members_add(struct cp_patch_members *ms, pid_t pid, struct cp_vdso_patch *patch);
/* The target's wrapper rules (t) and frame hops (pcs) given to each
 * member whose code is where the target's is. */
void cp_patch_members_set_rules(const struct cp_patch_members *ms, const struct cp_unwind_table *t);
void cp_patch_members_add_hops(const struct cp_patch_members *ms, const uint64_t *pcs, size_t n);
/* The window opens: each member switched (one that cannot be is left
 * out, said) and counted from now on, handed to the session with its
 * counts now (where its threads' exits count from). */
void cp_patch_members_start(struct cp_mech *m, struct cp_patch_members *ms);
/* The member that is process pid; NULL: none. */
const struct cp_patch_member *cp_patch_members_find(const struct cp_patch_members *ms, pid_t pid);
/* Every member switched back, and what clockprof holds of them released. */
void cp_patch_members_close(struct cp_patch_members *ms);

#endif
