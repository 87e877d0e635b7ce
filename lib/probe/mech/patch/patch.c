/* patch.c - the patch mechanism: reads are counted inside the target, at
 * its vDSO's clock entries, with no trap (vdso_patch.h). A func: request
 * boundary is closed there too, and syscall() counted there, where they
 * can be (patch_boundary.h). Otherwise the session places what traps: the
 * request boundary, syscall() (direct clock syscalls do not pass the
 * vDSO); and always the dynamic linker's hook. At each boundary of the
 * session's, its program adds the reads the thread made in the target to
 * the request (probes/patch_reads.bpf.h, add_patch_reads).
 *
 * A running target (attach) is patched when the mechanism opens and
 * counted from the window's start. A launched one (run) is held under
 * clockprof's ptrace at its entry point when the window starts: its own
 * thread is sent through the stub as it is let go, so its first read is
 * counted (a static executable, whose thread pointer the thunks read comes
 * only after its entry point, is given one to zeros until it sets its own:
 * vdso_area.S). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock_points.h"
#include "error.h"
#include "mechanism.h"
#include "proc_maps.h"
#include "procfs.h"
#include "patch_boundary.h"
#include "patch_early.h"
#include "patch_execs.h"
#include "patch_followed.h"
#include "patch_forks_left.h"
#include "patch_members.h"
#include "patch_owner.h"
#include "patch_restorer.h"
#include "patch_sites.h"
#include "patch_table.h"
#include "session.h"
#include "test_hook.h"
#include "session_probes.h"
#include "vdso_patch.h"
#include "vdso_plan.h"

struct patch_state {
	struct cp_vdso_patch *patch;
	struct cp_patch_members members; /* attach -p PID,..., --tree, --cgroup */
	bool launched, hres;
	bool target_reimaged;		   /* the target exec()ed, followed: its old
					 * image's counts settled at the exec */
	struct cp_patch_sites sites;	   /* the window's, as last read */
	struct cp_patch_boundary boundary; /* a func: boundary closed in the target */
	pid_t restorer;			   /* patch_restorer.h; 0 none */
	bool restored;			   /* the sites switched back, or tried */
	bool handed_over;		   /* ... refused while stopped: the
					 * restorer's to make (kept running) */
	size_t unmended_said;		   /* forks_unmended (vdso_patch.h) said */
	bool closes_now;		   /* the read of the counts in patch_stop */
	bool stopped;			   /* ... taken: read gives it */
	int stop_rc;
	bool stop_requests_read;
	struct cp_vdso_patch_counts stop_counts;
};

static void note_pauses(struct cp_mech *m);
static void warn_unmended(struct cp_mech *m, bool closing);

/* An exec takes the target's counters away with its old image: the
 * session's program sums them at the C library's execve first; a
 * followed process is held at its exec for patch_execs. A func: boundary
 * that can be is closed in the target (no uprobe). The steps that need
 * no session start now, to run while it opens (patch_early.h). */
static int patch_configure(struct cp_session_config *cfg, struct cp_error *err)
{
	(void)err;
	cfg->patch_tables = true;
	cfg->watch_exec = true;
	cp_vdso_plan_set_anatomy(cfg->anatomy); /* before any plan is made */
	cfg->hold_execs = true;
	cp_patch_boundary_configure(cfg);
	cp_patch_early_start(cfg);
	return 0;
}

/* Its pids are its child's, not the target's: said as the self-test's. */
static int selftest_failed(struct cp_error *err)
{
	char msg[sizeof(err->msg)];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	return cp_fail(err, err->exit_code,
		       "the vDSO patch's self-test on a child of clockprof's own failed: %s", msg);
}

/* The steps that ran while the session opened (patch_early.h), taken:
 * the patch prepared and its restorer started, from the moment this
 * clockprof holds the patch, before the stub first runs. */
static int take_early(struct cp_mech *m, const struct cp_session_config *cfg, bool *applied,
		      struct cp_error *err)
{
	struct patch_state *st = m->state;
	struct cp_patch_early e;
	int rc = cp_patch_early_finish(&e, err);

	st->patch = e.patch;
	st->restorer = e.restorer;
	*applied = e.applied;
	if (rc)
		return e.selftest_failed ? selftest_failed(err) : -1;
	if (st->restorer < 0)
		cp_mech_warn(
			m,
			"no restorer of the vDSO patch could be started: if clockprof is killed, process %d counts on in its own table, unread, until a later attach switches it back",
			cfg->pid);
	return 0;
}

/* A leftover of an earlier clockprof's, which neither it nor its
 * restorer switched back, said once apply has switched it back. */
static void note_leftover(struct cp_mech *m)
{
	struct patch_state *st = m->state;
	struct cp_vdso_patch_info info;

	cp_vdso_patch_info(st->patch, &info);
	if (info.leftover)
		cp_mech_warn(
			m,
			"process %d carried a leftover of the vDSO patch of a clockprof (process %d) that ended without switching it back, its restorer too (both killed?): its sites were switched back before this window",
			m->pid, (int)info.leftover);
}

static int patch_open(struct cp_mech *m, const struct cp_session_config *cfg, struct cp_error *err)
{
	struct patch_state *st;
	bool applied;

	if (!(st = m->state = calloc(1, sizeof(*st))))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	st->launched = cfg->launched;
	st->hres = cfg->vdso_hres;
	/* The patch proved itself before the target was touched (a child of
	 * clockprof's own, patched by the same code, 200 reads counted
	 * exactly): a failure refuses it while nothing is counted, where
	 * --mechanism auto can still fall back. */
	if (take_early(m, cfg, &applied, err))
		return -1;
	if (cp_patch_boundary_open(&st->boundary, m, st->patch, cfg, err) ||
	    (!st->launched && !applied && cp_vdso_patch_apply(st->patch, err)))
		return -1;
	note_leftover(m);
	if (!st->launched)
		cp_session_set_patch_table(m->s, cp_vdso_patch_table(st->patch));
	if (cp_patch_members_open(m, cfg->members, cfg->nmembers, &st->members))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	return 0;
}

/* The window's end, at the instant of the counts read in patch_stop: the
 * program's requests closed after it are left out (clockreads.h,
 * CP_PATCH_WINDOW_CLOSED). */
static void window_closes(void *arg)
{
	struct cp_mech *m = arg;
	const struct patch_state *st = m->state;

	if (st->closes_now)
		cp_session_set_patch_window(m->s, CP_PATCH_WINDOW_CLOSED);
}

/* The target's table marked (not a launched one's, held until the phase
 * opens), and the program's requests counted from right after, with no
 * gap (those it saw start before are left out by the window, which was
 * closed); when no member is marked after it: a member's requests keep
 * the phase's edges. Every request counted starts after the counts'
 * instant: a try of the mark made again (the counts moved) opens nothing
 * early. */
static int mark_target(struct cp_mech *m, struct patch_state *st)
{
	bool early = st->members.n == 0;

	cp_session_set_patch_window(m->s, CP_PATCH_WINDOW_CLOSED);
	if (early)
		cp_session_set_phase(m->s, CP_PHASE_CLOCK);
	if (cp_vdso_patch_mark(st->patch) == 0) {
		cp_session_set_patch_window(m->s, CP_PATCH_WINDOW_OPEN);
		return 0;
	}
	if (early)
		cp_session_set_phase(m->s, CP_PHASE_IDLE);
	return -1;
}

static int patch_start(struct cp_mech *m, struct cp_error *err)
{
	struct patch_state *st = m->state;
	unsigned gap_ms;

	/* The sites switched now, the wrappers' rules and frame hops written
	 * since open (a read before its wrapper's rule would claim its
	 * thread's site at the wrapper for good: cp_vdso_patch_switch). */
	if (!st->launched && cp_vdso_patch_switch(st->patch, err))
		return -1;
	cp_patch_boundary_start(&st->boundary, m);
	cp_vdso_patch_on_read(st->patch, window_closes, m);
	if (st->launched) {
		if (cp_vdso_patch_arm_held(st->patch, m->pid, err))
			return -1;
		cp_session_set_patch_window(m->s, CP_PATCH_WINDOW_OPEN); /* held */
		cp_session_set_patch_table(m->s, cp_vdso_patch_table(st->patch));
	} else {
		if (mark_target(m, st))
			return cp_fail(err, CP_EXIT_PROFILE,
				       "the counters of process %d cannot be read", m->pid);
		note_pauses(m);
		warn_unmended(m, false);
		cp_patch_members_start(m, &st->members);
	}
	cp_patch_execs_follow(m, &st->members, &st->boundary); /* those held before the window */
	/* CLOCKPROF_TEST_OPEN_GAP_MS: ms more from the mark to the window's
	 * phase, which a loaded host took 1.5 ms to reach */
	if ((gap_ms = cp_test_hook("CLOCKPROF_TEST_OPEN_GAP_MS")))
		usleep(gap_ms * 1000u);
	return 0;
}

static void patch_follow_execs(struct cp_mech *m)
{
	struct patch_state *st = m->state;

	cp_patch_execs_follow(m, &st->members, &st->boundary);
}

/* The patch's own proof (its self-test ran at open; a launched target's
 * sites read back as written), then the shared self-test, for what a trap
 * that is left (the boundary, syscall()) costs: a uprobe's. */
static int patch_prove(struct cp_mech *m, struct cp_error *err)
{
	struct patch_state *st = m->state;

	/* A command that is already gone (it ran briefly) was counted from its
	 * exit (patch_read): nothing of it is left to check. */
	if (st->launched && cp_vdso_patch_confirm(st->patch, err) < 0)
		return -1;
	return cp_mech_selftest_run(m, err);
}

/* Where file offset off of path (a /proc/PID/map_files/ link) is mapped
 * in pid; 0: nowhere. */
static uint64_t mapped_at(pid_t pid, const char *link, uint64_t off)
{
	struct cp_proc_map *maps;
	char path[PATH_MAX];
	ssize_t len = readlink(link, path, sizeof(path) - 1);
	uint64_t at = 0;
	size_t n;

	if (len <= 0 || cp_proc_maps_read(pid, &maps, &n))
		return 0;
	path[len] = 0;
	for (size_t i = 0; i < n && !at; i++)
		if (!strcmp(maps[i].path, path) && off >= maps[i].offset &&
		    off < maps[i].offset + (maps[i].end - maps[i].start))
			at = maps[i].start + (off - maps[i].offset);
	free(maps);
	return at;
}

static bool settle_from_exit(struct cp_mech *m);

/* The target's patch while the target runs the image patched; NULL once
 * it has exec()ed and is followed into its new image (as a process of
 * the session's, patch_execs.h): its table went with the old image, whose
 * counts are then settled from the sums taken at the exec. */
static struct cp_vdso_patch *patched_image(struct cp_mech *m)
{
	struct patch_state *st = m->state;

	if (st->patch && !st->target_reimaged && cp_session_target_followed_exec(m->s)) {
		st->target_reimaged = true;
		settle_from_exit(m);
		cp_vdso_patch_forget(st->patch);
	}
	return st->target_reimaged ? NULL : st->patch;
}

/* A file's syscall() as every mechanism probes it; and where Go's
 * runtime calls the vDSO from a frame-pointer function on another stack
 * (its frame points, lib/probe/points/go_clock_points.c), the return
 * address after that call, for the thunks' walk to hop out by rbp. */
static int patch_attach_file(struct cp_mech *m, const char *path, const struct cp_clock_points *pts,
			     struct cp_error *err)
{
	struct patch_state *st = m->state;
	struct cp_clock_points counted = *pts;
	uint64_t pcs[16];
	size_t n = 0;

	if (cp_patch_boundary_syscall(&st->boundary, m, patched_image(m), path, pts))
		counted.syscall_offset = 0; /* counted in the target: no uprobe */
	if (cp_mech_attach_syscall_only(m, path, &counted, err))
		return -1;
	for (size_t i = 0; i < pts->n && n < 16; i++) {
		uint64_t at = pts->points[i].site == CP_SITE_FRAME ?
				      mapped_at(m->pid, path, pts->points[i].offset) :
				      0;
		uint8_t call[3];

		/* call *reg: ff /2, with a REX.B prefix first for r8-r15 */
		if (!at || cp_proc_mem_read(m->pid, at, call, sizeof(call)))
			continue;
		if (call[0] == 0xff)
			pcs[n++] = at + 2;
		else if (call[0] == 0x41 && call[1] == 0xff)
			pcs[n++] = at + 3;
	}
	if (n)
		cp_patch_members_add_hops(&st->members, pcs, n);
	return n && patched_image(m) ? cp_vdso_patch_add_frame_hops(st->patch, pcs, n, err) : 0;
}

/* The wrapper rules go into the target's table for the thunks' walk. */
static int patch_set_unwind(struct cp_mech *m, const struct cp_unwind_table *t,
			    struct cp_error *err)
{
	struct patch_state *st = m->state;

	cp_patch_members_set_rules(&st->members, t);
	return patched_image(m) ? cp_vdso_patch_set_rules(st->patch, t, err) : 0;
}

/* The target is gone (or its image, at an exec): its counts and sites as
 * the BPF program summed them at its exit (or exec), if it could (true). */
static bool settle_from_exit(struct cp_mech *m)
{
	struct patch_state *st = m->state;
	uint64_t sums[CP_PATCH_SLOT_WORDS];
	struct cp_patch_sites sites = { 0 };

	if (!cp_session_patch_exit_sums(m->s, sums))
		return false;
	if (cp_session_patch_exit_sites(m->s, cp_patch_sites_add_to, &sites) == 0) {
		cp_patch_sites_normalize(&sites);
		cp_vdso_patch_settle(st->patch, sums, &sites);
	} else {
		cp_vdso_patch_settle(st->patch, sums, NULL);
	}
	cp_patch_sites_free(&sites);
	cp_patch_boundary_settle(&st->boundary, m, st->patch);
	return true;
}

/* The window's reads by call site; those the thunks found no site for
 * (a full block, a thread with no slot of its own) are unnamed. */
static void read_patch_sites(struct patch_state *st, uint64_t total, struct cp_totals *t)
{
	uint64_t named = 0;

	cp_patch_sites_free(&st->sites);
	if (cp_vdso_patch_sites(st->patch, &st->sites))
		return;
	for (size_t i = 0; i < st->sites.n; i++)
		named += st->sites.v[i].count;
	if (total > named)
		t->site_unnamed += total - named;
}

/* The counts read; closes: at the instant the table's window closes
 * (window_closes, called by the read right after the counts). */
static int read_counts(struct patch_state *st, struct cp_vdso_patch_counts *c, bool closes)
{
	int rc;

	st->closes_now = closes;
	rc = cp_vdso_patch_read(st->patch, c);
	st->closes_now = false;
	return rc;
}

/* The requests first: the counts are then a superset. Read again between
 * two reads of the counts while these moved, so that the reads through
 * syscall() the blocks hold are of the counts' instant (the window's
 * start is marked alike: cp_vdso_patch_mark). A re-read that fails keeps
 * the blocks read before. At the window's end (closing) the counts are
 * read once more, closing the program's requests at their instant
 * (window_closes): a read closing at each try would lose the requests
 * closed until the next opened them again, and a busy target makes every
 * try. */
static int read_counts_and_requests(struct cp_mech *m, struct patch_state *st,
				    struct cp_vdso_patch_counts *c, bool *requests_read,
				    bool closing)
{
	struct cp_vdso_patch_counts before;
	int rc;

	*requests_read = cp_patch_boundary_read(&st->boundary, m, st->patch);
	cp_vdso_patch_test_gap(0);
	rc = read_counts(st, c, false);
	for (int try = 1; rc == 0 && *requests_read && try < CP_PATCH_INSTANT_TRIES; try++) {
		before = *c;
		if (!cp_patch_boundary_read(&st->boundary, m, st->patch))
			break;
		rc = read_counts(st, c, false);
		if (!memcmp(before.by_entry, c->by_entry, sizeof(c->by_entry)))
			break;
	}
	return rc == 0 && closing ? read_counts(st, c, true) : rc;
}

/* The target's reads join the session's (syscall() ones), and those of
 * the processes it forked, when followed. */
static int patch_read(struct cp_mech *m, struct cp_totals *t)
{
	struct patch_state *st = m->state;
	struct cp_vdso_patch_counts c;
	bool requests_read, exited = false;
	int rc;

	patched_image(m); /* settled at an exec followed */
	if (!st->patch)
		return 0;
	if (st->stopped) {
		c = st->stop_counts;
		requests_read = st->stop_requests_read;
		rc = st->stop_rc;
	} else
		rc = read_counts_and_requests(m, st, &c, &requests_read, false);
	if (rc < 0)
		return 0;
	if (rc == 1) {
		exited = settle_from_exit(m);
		rc = cp_vdso_patch_read(st->patch, &c);
	}
	read_patch_sites(st, c.total, t);
	cp_patch_boundary_add(&st->boundary, m, st->patch, requests_read, exited, st->hres, t);
	if (rc == 1)
		cp_mech_warn(
			m,
			"the target's memory was gone before its vDSO counts could be read (an exec made without the C library's execve, or a kernel that traces a process's exit after letting its memory go): its reads through the vDSO are missing");
	else if (cp_vdso_patch_undone(st->patch))
		cp_mech_warn(
			m,
			"process %d put its vDSO back as the kernel has it during the window (it gave the vDSO's pages back, madvise(MADV_DONTNEED), or rewrote them): its reads since were not counted",
			m->pid);
	cp_patch_counts_add(&c, st->hres, t);
	if (cp_patch_followed_read(m, &st->members, st->hres, t, &st->sites,
				   cp_patch_boundary_forks(&st->boundary),
				   cp_patch_boundary_counts_syscalls(&st->boundary)))
		cp_patch_sites_normalize(&st->sites);
	return 0;
}

/* The window's end: the counts and requests read as the table's window
 * closes (window_closes), before the phase does; patch_read gives them. */
static void patch_stop(struct cp_mech *m)
{
	struct patch_state *st = m->state;

	patched_image(m);
	if (!st->patch)
		return;
	st->stop_rc = read_counts_and_requests(m, st, &st->stop_counts, &st->stop_requests_read,
					       true);
	st->stopped = true;
}

/* The thunks' sites join the session's: the program credited their
 * in-request reads at the boundaries (under the same keys), or the
 * boundary closed in the target did; the table holds all of them. */
/* The target's counter table, for --anatomy's logs (0: none yet). */
static uint64_t patch_table(const struct cp_mech *m)
{
	const struct patch_state *st = m->state;

	return st && st->patch ? cp_vdso_patch_table(st->patch) : 0;
}

static int patch_read_sites(struct cp_mech *m, struct cp_site_count **sites, size_t *n)
{
	struct patch_state *st = m->state;
	struct cp_site_count *v;
	size_t have = *n;

	if (!st->sites.n)
		return 0;
	if (!(v = realloc(*sites, (have + st->sites.n) * sizeof(*v))))
		return -1;
	*sites = v;
	for (size_t i = 0; i < st->sites.n; i++) {
		uint64_t key = st->sites.v[i].key;
		struct cp_site_key k = { .pc = cp_patch_site_pc(key),
					 .via = cp_patch_site_via(key),
					 .entry = (__u8)cp_patch_site_entry(key),
					 .direct_syscall = cp_patch_site_direct(key) };
		size_t j = 0;

		while (j < have && memcmp(&v[j].key, &k, sizeof(k)))
			j++;
		if (j == have) {
			j = (*n)++;
			v[j] = (struct cp_site_count){ .key = k };
		}
		v[j].counts.all += st->sites.v[i].count;
		v[j].counts.in_requests += cp_patch_boundary_in_requests_at(&st->boundary,
									    st->patch, key);
	}
	return 0;
}

/* The forks of the target's made in the window that nobody followed
 * (patch_forks_left.h), switched back; those that cannot be, said. */
static void restore_forks_left(struct cp_mech *m)
{
	struct patch_state *st = m->state;
	struct cp_vdso_area_owner self;
	size_t failed;
	pid_t first;

	cp_patch_owner_self(&self);
	failed = cp_patch_forks_restore(m->pid, cp_vdso_patch_area_offset(st->patch), &self,
					&first);
	if (failed)
		cp_mech_warn_closing(
			m,
			"the vDSO of %zu process%s the target forked in the window and nobody followed (process %d%s) could not be switched back: it counts on in its own table, unread",
			failed, failed == 1 ? "" : "es", (int)first,
			failed > 1 ? " and others" : "");
}

/* Whether pid is stopped or frozen. A stopped thread that a refused hold
 * let go runs an instant on its way back into its group stop (the kernel
 * wakes it from its trace stop): seen running then, it is looked at again
 * for up to 100 ms (a CI run saw it so once). */
static bool stays_stopped(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		if (cp_vdso_patch_runs_nothing(pid))
			return true;
		if (!cp_proc_alive(pid))
			return false;
		usleep(1000);
	}
	return false;
}

/* The switch back of pid (the target, or a member) refused (err): one
 * stopped, frozen or traced by another that the restorer watches
 * (watched) is left to it, kept running, which makes it once pid runs
 * again untraced; else it counts on, unread. Said either way. */
static void unrestored(struct cp_mech *m, pid_t pid, bool watched, const struct cp_error *err)
{
	struct patch_state *st = m->state;

	if (st->restorer > 0 && watched && (cp_vdso_patch_tracer(pid) || stays_stopped(pid))) {
		st->handed_over = true;
		cp_mech_warn_closing(
			m,
			"%s: its restorer (process %d) switches it back once it runs again (continued, thawed, or no longer traced)",
			err->msg, (int)st->restorer);
	} else {
		cp_mech_warn_closing(
			m,
			"%s: it counts on in its own table, unread, until it exits or a later attach switches it back",
			err->msg);
	}
}

/* Whether the target exec()ed in the window, followed into its new
 * image or not: the image patched is gone, and with it all there was to
 * switch back (a switch back tried at the old image's addresses said the
 * process had exited and counted on, unread). */
static bool target_execed(struct cp_mech *m)
{
	unsigned forks, followed_execed, traced;
	bool execed;

	cp_session_lifecycle(m->s, &execed, &forks, &followed_execed, &traced);
	return execed || cp_session_target_followed_exec(m->s);
}

/* The sites back, once, in the target, its members, the forks followed
 * and those not; each refusal said (the process counts on, unread, where
 * nobody reads it). kept: the counts are read again later (the counter
 * window), not at the close (read as the clock window closed). */
static void restore_all(struct cp_mech *m, bool kept)
{
	struct patch_state *st = m->state;
	struct cp_error err = { 0 };

	if (st->restored || !st->patch)
		return;
	st->restored = true;
	if (target_execed(m)) /* its patched image went with the exec */
		cp_vdso_patch_forget(st->patch);
	if (cp_vdso_patch_restore(st->patch, kept, &err) && cp_proc_alive(m->pid))
		unrestored(m, m->pid, true, &err);
	for (size_t i = 0; i < st->members.n; i++) {
		struct cp_error merr = { 0 };
		pid_t pid = st->members.v[i].pid;

		if (cp_vdso_patch_restore(st->members.v[i].patch, kept, &merr) &&
		    cp_proc_alive(pid))
			unrestored(m, pid, st->members.v[i].watched, &merr);
	}
	cp_patch_followed_restore(m);
	restore_forks_left(m);
}

/* The counter window: the sites go back, the counts stay. */
static void patch_detach(struct cp_mech *m)
{
	cp_session_hold_execs(m->s, false);
	restore_all(m, true);
}

/* The forks of a stub's window left with a writable and executable vDSO
 * (vdso_patch.h's forks_unmended), said once more grew: closing, after
 * the mechanism's warnings were taken, with the window's closing words. */
static void warn_unmended(struct cp_mech *m, bool closing)
{
	struct patch_state *st = m->state;
	struct cp_vdso_patch_info info;
	size_t n;

	cp_vdso_patch_info(st->patch, &info);
	if ((n = info.forks_unmended) == st->unmended_said)
		return;
	st->unmended_said = n;
	(closing ? cp_mech_warn_closing : cp_mech_warn)(
		m,
		"%zu process%s the target forked while clockprof's stub had its vDSO writable (process %d%s) could not be sent through the stub again (stopped, traced, or under a seccomp filter of its own that would not allow it): %s vDSO stays writable and executable",
		n, n == 1 ? "" : "es", (int)info.first_unmended, n > 1 ? " and others" : "",
		n == 1 ? "its" : "their");
}

/* The pauses the patch cost one thread of the target, and whether that
 * thread's syscall returned EINTR for it (every thread was waiting in
 * calls such as epoll_wait, which a stop interrupts). */
static void note_pauses(struct cp_mech *m)
{
	struct patch_state *st = m->state;
	struct cp_vdso_patch_info info;

	cp_vdso_patch_info(st->patch, &info);
	m->pause_ms[0] = info.attach_pause_ms > 0 ? info.attach_pause_ms : -1;
	m->pause_ms[1] = info.detach_pause_ms > 0 ? info.detach_pause_ms : -1;
	m->stops[0] = info.attach_stops;
	m->stops[1] = info.detach_stops;
	if (info.rules_unplaced)
		cp_mech_warn(
			m,
			"%zu of the target's clock wrappers' unwind rules could not be given to its thunks (no room in its table, or a frame the thunk does not follow): reads through them are named at the wrapper, not at their call site",
			info.rules_unplaced);
	if (info.eintr)
		cp_mech_warn(
			m,
			"thread %d of the target was held while it waited in syscall %d, which returned EINTR to it (every thread was waiting in a call a stop interrupts)",
			(int)info.tid, info.syscall);
}

static void patch_close(struct cp_mech *m)
{
	struct patch_state *st = m->state;

	if (!st)
		return;
	cp_session_hold_execs(m->s, false);
	if (st->patch) {
		restore_all(m, false);
		note_pauses(m);
		warn_unmended(m, true);
	}
	cp_patch_members_close(&st->members);
	cp_vdso_patch_free(st->patch);
	/* Only now: its restore never runs beside this one's (one handed
	 * over acts once clockprof has ended). */
	if (!st->handed_over)
		cp_patch_restorer_stop(st->restorer);
	cp_patch_sites_free(&st->sites);
	cp_patch_boundary_free(&st->boundary);
}

const struct cp_mechanism_ops cp_patch_mechanism = {
	.name = "patch",
	.caps = CP_MECH_SEES_UNSTUBBED | CP_MECH_FOLLOWS_FORKS | CP_MECH_LOOKS_FOR_LIBRARIES |
		CP_MECH_COUNTS_THE_VDSO,
	.configure = patch_configure,
	.await_early = cp_patch_early_await_selftest,
	.drop_early = cp_patch_early_drop,
	.open = patch_open,
	.attach_file = patch_attach_file, /* the vDSO entries count */
	.set_unwind = patch_set_unwind,
	.start = patch_start,
	.prove = patch_prove,
	.read = patch_read,
	.stop = patch_stop,
	.read_sites = patch_read_sites,
	.patch_table = patch_table,
	.follow_execs = patch_follow_execs,
	.detach = patch_detach,
	.close = patch_close,
};
