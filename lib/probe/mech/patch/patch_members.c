/* patch_members.c - see patch_members.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mechanism.h"
#include "patch_members.h"
#include "patch_sites.h"
#include "procfs.h"
#include "session_probes.h"
#include "vdso_patch.h"

int cp_patch_members_open(struct cp_mech *m, const pid_t *pids, size_t n,
			  struct cp_patch_members *out)
{
	size_t refused = 0;

	memset(out, 0, sizeof(*out));
	if (n && !(out->v = calloc(n, sizeof(*out->v))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct cp_vdso_patch *p = NULL;
		struct cp_error err = { 0 };

		if (cp_vdso_patch_prepare(pids[i], false, &p, &err) == 0 &&
		    cp_vdso_patch_apply(p, &err) == 0) {
			out->v[out->n++] = (struct cp_patch_member){ pids[i], p };
			continue;
		}
		cp_vdso_patch_detach(p, &(struct cp_error){ 0 });
		if (!refused++)
			snprintf(m->warning, sizeof(m->warning), "process %d is not counted (%.180s)",
				 (int)pids[i], err.msg);
	}
	if (refused > 1)
		snprintf(m->warning + strlen(m->warning), sizeof(m->warning) - strlen(m->warning),
			 ", nor %zu other of the processes given", refused - 1);
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
	rc = cp_session_add_member(m->s, mb->pid, st.ppid, table, words, blocks);
	free(blocks);
	return rc;
}

void cp_patch_members_start(struct cp_mech *m, struct cp_patch_members *ms)
{
	for (size_t i = 0; i < ms->n; i++) {
		int e;

		if (cp_vdso_patch_mark(ms->v[i].patch) == 0 && hand_over(m, &ms->v[i]) == 0)
			continue;
		e = errno;
		snprintf(m->warning, sizeof(m->warning), "process %d is not counted: %s",
			 (int)ms->v[i].pid, e == EOPNOTSUPP ?
			 "counting several processes needs clockprof in the host's pid namespace" :
			 "its counters could not be read");
	}
}

struct cp_vdso_patch *cp_patch_members_find(const struct cp_patch_members *ms, pid_t pid)
{
	for (size_t i = 0; i < ms->n; i++)
		if (ms->v[i].pid == pid)
			return ms->v[i].patch;
	return NULL;
}

void cp_patch_members_close(struct cp_patch_members *ms)
{
	for (size_t i = 0; i < ms->n; i++)
		cp_vdso_patch_detach(ms->v[i].patch, &(struct cp_error){ 0 });
	free(ms->v);
	memset(ms, 0, sizeof(*ms));
}
