/* patch_members.c - see patch_members.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "grow.h"
#include "mechanism.h"
#include "patch_members.h"
#include "patch_restorer.h"
#include "patch_sites.h"
#include "proc_maps.h"
#include "procfs.h"
#include "session_probes.h"
#include "vdso_patch.h"

/* pid's executable file mappings (malloc'd, *n of them); NULL unreadable. */
static struct cp_proc_map *code_maps(pid_t pid, size_t *n)
{
	struct cp_proc_map *maps;
	size_t all, k = 0;

	if (cp_proc_maps_read(pid, &maps, &all))
		return NULL;
	for (size_t i = 0; i < all; i++)
		if (maps[i].perms[2] == 'x' && maps[i].ino)
			maps[k++] = maps[i];
	*n = k;
	return maps;
}

static bool same_map(const struct cp_proc_map *a, const struct cp_proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->ino == b->ino &&
	       !strcmp(a->path, b->path);
}

/* Whether a mapping like m is among v[0..n) (same), or one overlaps it. */
static bool among(const struct cp_proc_map *v, size_t n, const struct cp_proc_map *m, bool same)
{
	for (size_t i = 0; i < n; i++)
		if (same ? same_map(&v[i], m) : v[i].start < m->end && m->start < v[i].end)
			return true;
	return false;
}

/* Whether pid's code is where root's is: each of root's code mappings is
 * pid's too (a fork of it, which may since have loaded more), and pid's
 * others overlap none of root's (its addresses are named as root's). */
static bool same_code(pid_t root, pid_t pid)
{
	size_t nr = 0, np = 0;
	struct cp_proc_map *r = code_maps(root, &nr), *p = code_maps(pid, &np);
	bool same = r && p;

	for (size_t i = 0; same && i < nr; i++)
		same = among(p, np, &r[i], true);
	for (size_t i = 0; same && i < np; i++)
		same = among(r, nr, &p[i], true) || !among(r, nr, &p[i], false);
	free(r);
	free(p);
	return same;
}

/* The file pid runs (malloc'd; NULL unknown). */
static char *exe_of(pid_t pid)
{
	char link[64], path[PATH_MAX];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	if ((len = readlink(link, path, sizeof(path) - 1)) <= 0)
		return NULL;
	path[len] = 0;
	return strdup(path);
}

int cp_patch_members_open(struct cp_mech *m, const pid_t *pids, size_t n,
			  struct cp_patch_members *out)
{
	size_t elsewhere = 0;

	memset(out, 0, sizeof(*out));
	if (n && cp_grow(&out->v, &out->cap, n, sizeof(*out->v)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct cp_vdso_patch *p = NULL;
		struct cp_error err = { 0 };

		if (kill(pids[i], 0) && errno == ESRCH)
			cp_fail(&err, CP_EXIT_PROFILE, "no such process");
		else if (cp_vdso_patch_prepare(pids[i], false, &p, &err) == 0 &&
			 cp_vdso_patch_apply(p, &err) == 0) {
			out->v[out->n++] = (struct cp_patch_member){
				pids[i], p, same_code(m->pid, pids[i]), exe_of(pids[i]),
				i + 1 < CP_PATCH_RESTORER_PIDS
			};
			continue;
		}
		cp_vdso_patch_detach(p, &(struct cp_error){ 0 });
		cp_mech_warn(m, "process %d is not counted (%s)", (int)pids[i], err.msg);
	}
	for (size_t i = 0; i < out->n; i++)
		elsewhere += !out->v[i].same_code;
	if (elsewhere)
		cp_mech_warn(
			m,
			"%zu of the processes given run code mapped elsewhere than the target's: "
			"their reads are counted, their call sites not named",
			elsewhere);
	return 0;
}

int cp_patch_members_add(struct cp_patch_members *ms, pid_t pid, struct cp_vdso_patch *patch)
{
	struct cp_patch_member *mb = (struct cp_patch_member *)cp_patch_members_find(ms, pid);
	bool watched = mb && mb->watched; /* a member given keeps its restorer */

	if (mb) { /* it exec()ed again: the image patched before is gone */
		cp_vdso_patch_free(mb->patch);
		free(mb->exe);
	} else if (cp_grow(&ms->v, &ms->cap, ms->n + 1, sizeof(*ms->v))) {
		return -1;
	} else {
		mb = &ms->v[ms->n++];
	}
	*mb = (struct cp_patch_member){ pid, patch, false, exe_of(pid), watched };
	return 0;
}

/* One member handed to the session: its counts at the mark, its site
 * blocks read right after. */
static int hand_over(struct cp_mech *m, const struct cp_patch_member *mb)
{
	const uint64_t *words = cp_vdso_patch_marked(mb->patch);
	uint64_t table = cp_vdso_patch_table(mb->patch), *blocks = NULL;
	struct cp_proc_stat st = { 0 };
	size_t nslots;
	int rc;

	if (!words || cp_patch_sites_read_blocks(mb->pid, table, words, &blocks, &nslots))
		return -1;
	cp_proc_stat_read(mb->pid, &st);
	rc = cp_session_add_member(m->s, mb->pid, st.ppid, table, words, blocks, mb->same_code);
	free(blocks);
	return rc;
}

/* Its sites switched, once the target's rules are written (as the
 * target's: cp_vdso_patch_switch); one that cannot be is left out. */
static bool switched(struct cp_mech *m, const struct cp_patch_member *mb)
{
	struct cp_error err = { 0 };

	if (cp_vdso_patch_switch(mb->patch, &err) == 0)
		return true;
	cp_vdso_patch_detach(mb->patch, &(struct cp_error){ 0 });
	free(mb->exe);
	cp_mech_warn(m, "process %d is not counted (%s)", (int)mb->pid, err.msg);
	return false;
}

void cp_patch_members_start(struct cp_mech *m, struct cp_patch_members *ms)
{
	size_t k = 0;

	for (size_t i = 0; i < ms->n; i++)
		if (switched(m, &ms->v[i]))
			ms->v[k++] = ms->v[i];
	ms->n = k;
	for (size_t i = 0; i < ms->n; i++) {
		int e;

		if (cp_vdso_patch_mark(ms->v[i].patch) == 0 && hand_over(m, &ms->v[i]) == 0)
			continue;
		e = errno;
		cp_mech_warn(
			m, "process %d is not counted: %s", (int)ms->v[i].pid,
			e == EOPNOTSUPP ?
				"counting several processes needs clockprof in the host's pid namespace" :
				"its counters could not be read");
	}
}

void cp_patch_members_set_rules(const struct cp_patch_members *ms, const struct cp_unwind_table *t)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->v[i].same_code)
			cp_vdso_patch_set_rules(ms->v[i].patch, t, &(struct cp_error){ 0 });
}

void cp_patch_members_add_hops(const struct cp_patch_members *ms, const uint64_t *pcs, size_t n)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->v[i].same_code)
			cp_vdso_patch_add_frame_hops(ms->v[i].patch, pcs, n,
						     &(struct cp_error){ 0 });
}

const struct cp_patch_member *cp_patch_members_find(const struct cp_patch_members *ms, pid_t pid)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->v[i].pid == pid)
			return &ms->v[i];
	return NULL;
}

void cp_patch_members_close(struct cp_patch_members *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		cp_vdso_patch_detach(ms->v[i].patch, &(struct cp_error){ 0 });
		free(ms->v[i].exe);
	}
	free(ms->v);
	memset(ms, 0, sizeof(*ms));
}
