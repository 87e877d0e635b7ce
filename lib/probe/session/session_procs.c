/* session_procs.c - the processes the session follows besides the target
 * (clockreads.h's procs map): those run follows as the target forks them,
 * and the members attach was given; listed for the mechanism and the
 * window, members handed over with their counts as the window opens, and
 * the exited ones moved out of the program's maps while the window is
 * open. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_guard.h"
#include "grow.h"
#include "map_walk.h"
#include "monotonic.h"
#include "procfs.h"
#include "session_internal.h"
#include "session_probes.h"

struct followed_list {
	struct cp_followed *v;
	size_t n, cap;
};

static int add_followed(const void *key, const void *proc, void *arg)
{
	struct followed_list *l = arg;

	if (cp_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -1;
	memcpy(&l->v[l->n].host_tgid, key, sizeof(l->v[l->n].host_tgid));
	memcpy(&l->v[l->n++].p, proc, sizeof(l->v->p));
	return 0;
}

int cp_session_followed(const struct cp_session *s, struct cp_followed **out, size_t *n)
{
	struct followed_list l = { 0 };

	if (s->ngone) { /* those drained, then those still in the map */
		if (cp_grow(&l.v, &l.cap, s->ngone, sizeof(*l.v)))
			return -1;
		memcpy(l.v, s->gone, s->ngone * sizeof(*l.v));
		l.n = s->ngone;
	}
	if (cp_map_walk(s->skel->maps.procs, sizeof(__u32), sizeof(struct cp_proc), add_followed,
			&l)) {
		free(l.v);
		return -1;
	}
	/* the requests sys_enter closed while the wrapper was checked: the
	 * run's once the check fell back (CP_TOTALS_CHECKED) */
	for (size_t i = 0; i < l.n && s->skel->bss->wrapper_check.fallback_ns; i++) {
		l.v[i].p.requests += l.v[i].p.checked_requests;
		l.v[i].p.in_requests += l.v[i].p.checked_in_requests;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

int cp_session_followed_one(const struct cp_session *s, uint32_t host_tgid, struct cp_proc *out)
{
	for (size_t i = 0; i < s->ngone; i++)
		if (s->gone[i].host_tgid == host_tgid) {
			*out = s->gone[i].p;
			return 0;
		}
	return bpf_map__lookup_elem(s->skel->maps.procs, &host_tgid, sizeof(host_tgid), out,
				    sizeof(*out), 0) ?
		       -1 :
		       0;
}

bool cp_session_still_followed(const struct cp_session *s, uint32_t host_tgid)
{
	struct cp_proc_stat st;
	struct cp_proc p;

	return cp_session_followed_one(s, host_tgid, &p) == 0 &&
	       cp_proc_stat_read((pid_t)host_tgid, &st) == 0 && st.start_time == p.start_ticks;
}

/* Whether tgid is among v[0..n). */
static bool has_tgid(const uint32_t *v, size_t n, uint32_t tgid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == tgid)
			return true;
	return false;
}

struct doomed_slots {
	const uint32_t *tgids;
	size_t ntgids;
	struct cp_child_slot_key *v;
	size_t n, cap;
};

static int note_doomed(const void *key, const void *value, void *arg)
{
	struct doomed_slots *d = arg;
	struct cp_child_slot_key k;

	(void)value;
	memcpy(&k, key, sizeof(k));
	if (has_tgid(d->tgids, d->ntgids, k.tgid) && !cp_grow(&d->v, &d->cap, d->n + 1, sizeof(k)))
		d->v[d->n++] = k;
	return 0;
}

/* The child_slots entries of the processes in tgids[0..n) deleted. */
static void forget_slots(struct cp_session *s, const uint32_t *tgids, size_t n)
{
	struct bpf_map *map = s->skel->maps.child_slots;
	struct doomed_slots d = { .tgids = tgids, .ntgids = n };

	cp_map_walk(map, sizeof(struct cp_child_slot_key), 0, note_doomed, &d);
	for (size_t i = 0; i < d.n; i++)
		bpf_map__delete_elem(map, &d.v[i], sizeof(d.v[i]), 0);
	free(d.v);
}

/* A member's slot (0 shared, else index + 1) and its site entries as
 * they are now, where its exits count from. */
static int member_base(struct cp_session *s, pid_t pid, uint32_t slot, const uint64_t *words,
		       const uint64_t *block)
{
	struct cp_child_slot_key k = { .tgid = (__u32)pid, .slot = slot };
	struct cp_child_slot_seen v;

	memset(&v, 0, sizeof(v));
	memcpy(v.words, words, sizeof(v.words));
	for (int e = 0; block && e < CP_PATCH_SITE_ENTRIES; e++)
		v.sites[e] = block[2 * e + 1];
	return bpf_map__update_elem(s->skel->maps.child_slots, &k, sizeof(k), &v, sizeof(v),
				    BPF_ANY);
}

int cp_session_add_member(struct cp_session *s, pid_t pid, pid_t ppid, uint64_t table,
			  const uint64_t *words, const uint64_t *blocks, bool sites)
{
	struct cp_proc p = { .pid = (__u32)pid,
			     .ppid = (__u32)ppid,
			     .table = table,
			     .flags = CP_PROC_MEMBER | (sites ? 0 : CP_PROC_NO_SITES),
			     .start_ns = (__u64)(cp_monotonic_s() * 1e9) };
	__u32 key = (__u32)pid;
	struct cp_proc_stat st;
	size_t used = 0;

	if (s->skel->rodata->pidns_ino) {
		errno = EOPNOTSUPP;
		return -1;
	}
	for (uint32_t slot = 0; slot <= CP_PATCH_SLOTS; slot++) {
		const uint64_t *w = words + (size_t)slot * CP_PATCH_SLOT_WORDS;

		if (slot && !w[0])
			continue;
		if (member_base(s, pid, slot, w,
				slot ? blocks + used++ * 2 * CP_PATCH_SITE_ENTRIES : NULL))
			return -1;
	}
	cp_proc_comm(pid, p.comm, sizeof(p.comm));
	if (cp_proc_stat_read(pid, &st))
		return -1;
	p.start_ticks = st.start_time;
	return bpf_map__update_elem(s->skel->maps.procs, &key, sizeof(key), &p, sizeof(p), BPF_ANY);
}

/* A followed process that exited or exec'd: moved out at the next drain. */
static int mark_ended(const void *key, const void *proc, void *arg)
{
	struct cp_session *s = arg;
	const struct cp_proc *p = proc;

	if ((p->flags & (CP_PROC_EXITED | CP_PROC_EXECED)) &&
	    !cp_grow(&s->marked, &s->cap_marked, s->nmarked + 1, sizeof(*s->marked)))
		memcpy(&s->marked[s->nmarked++], key, sizeof(*s->marked));
	return 0;
}

void cp_session_drain_followed(struct cp_session *s)
{
	struct bpf_map *map = s->skel->maps.procs;
	uint32_t *moved = NULL;
	size_t nmoved = 0, cap = 0;

	/* Those marked at the last drain: every thread's exit has added what
	 * it read by now (a second or more later). */
	for (size_t i = 0; i < s->nmarked; i++) {
		struct cp_followed f = { .host_tgid = s->marked[i] };

		if (bpf_map__lookup_elem(map, &f.host_tgid, sizeof(f.host_tgid), &f.p, sizeof(f.p),
					 0) ||
		    cp_grow(&s->gone, &s->cap_gone, s->ngone + 1, sizeof(*s->gone)) ||
		    cp_grow(&moved, &cap, nmoved + 1, sizeof(*moved)))
			continue;
		s->gone[s->ngone++] = f;
		moved[nmoved++] = f.host_tgid;
		bpf_map__delete_elem(map, &f.host_tgid, sizeof(f.host_tgid), 0);
	}
	if (nmoved)
		forget_slots(s, moved, nmoved);
	free(moved);
	s->nmarked = 0;
	cp_map_walk(map, sizeof(__u32), sizeof(struct cp_proc), mark_ended, s);
}

struct exit_sites_walk {
	int (*each)(void *ctx, uint64_t key, uint64_t count);
	void *ctx;
};

static int pass_exit_site(const void *key, const void *count, void *arg)
{
	struct exit_sites_walk *w = arg;
	__u64 k, c;

	memcpy(&k, key, sizeof(k));
	memcpy(&c, count, sizeof(c));
	return w->each(w->ctx, k, c);
}

int cp_session_child_exit_sites(struct cp_session *s,
				int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx)
{
	struct exit_sites_walk w = { each, ctx };

	return cp_map_walk(s->skel->maps.child_exit_sites, sizeof(__u64), sizeof(__u64),
			   pass_exit_site, &w);
}

bool cp_session_hold_execs(struct cp_session *s, bool on)
{
	int procs_fd = bpf_map__fd(s->skel->maps.procs);

	if (on) {
		if (!s->exec_watch || !s->prepare_exec_watch || !s->skel->rodata->follow_procs ||
		    s->skel->rodata->pidns_ino)
			return false;
		if (!s->exec_guard && (s->exec_guard = cp_exec_guard_start(procs_fd)) < 0)
			s->exec_guard = 0;
		if (s->exec_guard)
			__atomic_store_n(&s->skel->bss->hold_execs, 1, __ATOMIC_SEQ_CST);
		return s->exec_guard != 0;
	}
	if (!s->exec_guard)
		return false;
	/* No new hold; one a program may be making as this runs is marked in
	 * procs before its event is sent: a moment later every mark is seen. */
	__atomic_store_n(&s->skel->bss->hold_execs, 0, __ATOMIC_SEQ_CST);
	usleep(1000);
	ring_buffer__consume(s->events);
	s->nexecs = 0;
	/* held as the window closed: nothing of their new image is in it */
	cp_exec_held_release_all(procs_fd, CP_PROC_EXEC_LATE);
	cp_exec_guard_stop(s->exec_guard);
	s->exec_guard = 0;
	return false;
}

size_t cp_session_take_execs(struct cp_session *s, uint32_t *out, size_t max)
{
	size_t n;

	ring_buffer__consume(s->events); /* what came since the last poll */
	n = s->nexecs < max ? s->nexecs : max;

	memcpy(out, s->execs, n * sizeof(*out));
	memmove(s->execs, s->execs + n, (s->nexecs - n) * sizeof(*out));
	s->nexecs -= n;
	return n;
}

int cp_session_reimage(struct cp_session *s, uint32_t host_tgid, uint64_t table)
{
	struct bpf_map *map = s->skel->maps.procs;
	struct cp_proc p;

	if (bpf_map__lookup_elem(map, &host_tgid, sizeof(host_tgid), &p, sizeof(p), 0) ||
	    !(p.flags & CP_PROC_EXEC_HELD))
		return -1;
	/* Its old image's slots: where its new table's exits count from is
	 * zero. Nothing of it runs meanwhile (held). */
	forget_slots(s, &host_tgid, 1);
	p.table = table;
	p.flags = (p.flags & ~(__u32)CP_PROC_EXEC_HELD) | CP_PROC_MEMBER | CP_PROC_REIMAGED;
	return bpf_map__update_elem(map, &host_tgid, sizeof(host_tgid), &p, sizeof(p), BPF_EXIST);
}

void cp_session_exec_unfollowed(struct cp_session *s, uint32_t host_tgid)
{
	if (!cp_exec_held_release_one(bpf_map__fd(s->skel->maps.procs), host_tgid, CP_PROC_EXECED))
		return;
	if (host_tgid == (uint32_t)s->pid) /* the target: counted up to its exec */
		__atomic_store_n(&s->skel->bss->target_execed, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->skel->bss->procs_execed, 1, __ATOMIC_RELAXED);
}

bool cp_session_target_followed_exec(const struct cp_session *s)
{
	return __atomic_load_n(&s->skel->bss->target_execed, __ATOMIC_RELAXED) == 2;
}
