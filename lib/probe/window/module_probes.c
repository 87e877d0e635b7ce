/* module_probes.c - see module_probes.h. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_points.h"
#include "elf_symbols.h"
#include "error.h"
#include "grow.h"
#include "mechanism.h"
#include "module_probes.h"
#include "monotonic.h"
#include "proc_maps.h"
#include "procfs.h"
#include "session.h"

struct cp_module_seen {
	unsigned long dev_major, dev_minor, inode;
};

/* Where a file's code was seen mapped (its name as the target named it
 * then). */
struct cp_module_range {
	unsigned long lo, hi;
	struct cp_module_seen id;
	char file[256]; /* enough for a warning: cut, not dropped */
};

/* One line of /proc/PID/maps that maps a file with code. */
struct mapping {
	unsigned long lo, hi, dev_major, dev_minor, inode;
	char file[4096]; /* as the target names it */
	char path[4096]; /* its path there, without " (deleted)" */
};

/* A file mapped with code, as this file wants it. */
static bool file_with_code(const struct cp_proc_map *pm, struct mapping *m)
{
	if (pm->perms[2] != 'x' || !pm->ino || pm->path[0] != '/')
		return false;
	m->lo = pm->start;
	m->hi = pm->end;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	m->inode = pm->ino;
	cp_proc_map_shown_path(pm, m->file, sizeof(m->file));
	snprintf(m->path, sizeof(m->path), "%s", pm->path);
	return true;
}

static bool same_module(const struct cp_module_seen *a, const struct mapping *m)
{
	return a->inode == m->inode && a->dev_major == m->dev_major && a->dev_minor == m->dev_minor;
}

static bool seen_before(struct cp_module_probes *mp, const struct mapping *m)
{
	for (size_t i = 0; i < mp->n; i++)
		if (same_module(&mp->seen[i], m))
			return true;
	return false;
}

static void say(struct cp_module_probes *mp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct cp_module_probes *mp, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!mp->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mp->warn(mp->warn_arg, msg);
}

/* The dynamic linker announces every change of the loaded set by calling
 * _dl_debug_state (the r_brk debuggers break on): where to look again. */
static void watch_dynamic_linker(struct cp_module_probes *mp, struct cp_session *s,
				 const char *path, const char *file)
{
	struct cp_elf_function fn;
	const char *base = strrchr(file, '/');

	if (mp->dl_watched || !base || strncmp(base + 1, "ld-", 3) ||
	    cp_elf_find_function(path, file, "_dl_debug_state", &fn, NULL))
		return;
	if (cp_session_watch_dl(s, path, fn.offset, NULL) == 0)
		mp->dl_watched = true;
	else
		say(mp, "%s: cannot watch _dl_debug_state: libraries loaded later are not probed",
		    file);
}

/* m, a file newly seen: said if its code lies where another file's was
 * seen before, then its place recorded. */
static int note_place(struct cp_module_probes *mp, const struct mapping *m)
{
	struct cp_module_range *r;

	for (size_t i = 0; i < mp->nranges; i++) {
		const struct cp_module_range *was = &mp->ranges[i];

		if (was->lo < m->hi && m->lo < was->hi && !same_module(&was->id, m)) {
			say(mp,
			    "%s was mapped where %s was before it (a library unloaded and another loaded at its place): call sites there are named in %s, though reads made before may be %s's",
			    m->file, was->file, m->file, was->file);
			break; /* once a file */
		}
	}
	if (cp_grow(&mp->ranges, &mp->ranges_cap, mp->nranges + 1, sizeof(*mp->ranges)))
		return -1;
	r = &mp->ranges[mp->nranges++];
	*r = (struct cp_module_range){ m->lo, m->hi, { m->dev_major, m->dev_minor, m->inode }, "" };
	snprintf(r->file, sizeof(r->file), "%.*s", (int)sizeof(r->file) - 1, m->file);
	return 0;
}

static enum cp_points_want points_wanted(const struct cp_mech *mech)
{
	if (cp_mech_has(mech, CP_MECH_COUNTS_THE_VDSO))
		return CP_POINTS_C_LIBRARY;
	return cp_mech_has(mech, CP_MECH_SEES_UNSTUBBED) ? CP_POINTS_ALL : CP_POINTS_AT_STUBS;
}

/* Whether the file's reads are counted by uprobes of its own, limited to
 * the target (CP_MECH_PER_FILE: the patch and the breakpoints count the
 * vDSO's entries themselves). */
static bool placed_by_uprobes(const struct cp_mech *mech, const struct cp_clock_points *pts)
{
	return cp_mech_has(mech, CP_MECH_PER_FILE) && (pts->n || pts->syscall_offset);
}

static int probe_module(struct cp_module_probes *mp, struct cp_mech *mech, struct cp_session *s,
			pid_t pid, const struct mapping *m, struct cp_error *err)
{
	char path[PATH_MAX + 96];
	struct cp_clock_points pts;
	struct cp_error why = { 0 };
	int rc;

	cp_proc_mapped_file(pid, m->lo, m->hi, m->path, (unsigned)m->dev_major,
			    (unsigned)m->dev_minor, m->inode, path, sizeof(path));
	if (cp_clock_points_find(path, points_wanted(mech), &pts, &why)) {
		say(mp, "%s cannot be read (%s): clock reads it makes itself are not counted",
		    m->file, why.msg);
		return 0;
	}
	if (placed_by_uprobes(mech, &pts) && cp_proc_leaderless(pid)) {
		if (!mp->leaderless_said)
			say(mp,
			    "%s was mapped after process %d's main thread exited: the kernel places no uprobe limited to a process whose main thread is gone (it checks that thread's memory), so reads the file makes itself are not counted; the patch (--mechanism patch) counts them",
			    m->file, pid);
		mp->leaderless_said = true;
		cp_clock_points_free(&pts);
		return 0;
	}
	if (pts.unseen[0] && !cp_mech_has(mech, CP_MECH_SEES_UNSTUBBED))
		say(mp,
		    "%s calls %s without a PLT stub (-fno-plt or a function pointer): those reads are not seen by uprobes; --mechanism breakpoint sees them where the host supports it",
		    m->file, pts.unseen);
	rc = cp_mech_attach_file(mech, path, &pts, err);
	cp_clock_points_free(&pts);
	if (!rc && !cp_mech_has(mech, CP_MECH_LOOKS_FOR_LIBRARIES))
		watch_dynamic_linker(mp, s, path, m->file);
	return rc;
}

int cp_module_probes_sync(struct cp_module_probes *mp, struct cp_mech *mech, struct cp_session *s,
			  pid_t pid, struct cp_error *err)
{
	struct cp_proc_map *maps;
	struct mapping m;
	size_t n;
	int added = 0;
	double t0 = cp_monotonic_s();

	if (cp_proc_maps_read(pid, &maps, &n))
		return errno == ESRCH ? 0 :
					cp_fail(err, CP_EXIT_PROFILE,
						"cannot read /proc/%d/maps (exited?)", pid);
	mp->read_s = cp_monotonic_s() - t0;
	for (size_t i = 0; i < n; i++) {
		if (!file_with_code(&maps[i], &m) || seen_before(mp, &m))
			continue;
		if (note_place(mp, &m) ||
		    cp_grow(&mp->seen, &mp->cap, mp->n + 1, sizeof(*mp->seen))) {
			free(maps);
			return -1;
		}
		/* seen even when it cannot be probed: said once, not at each
		 * look again (the patch looks every 50 ms) */
		mp->seen[mp->n++] = (struct cp_module_seen){ m.dev_major, m.dev_minor, m.inode };
		if (probe_module(mp, mech, s, pid, &m, err)) {
			free(maps);
			return -1;
		}
		added++;
	}
	free(maps);
	return added;
}

void cp_module_probes_free(struct cp_module_probes *mp)
{
	free(mp->ranges);
	free(mp->seen);
	/* nothing seen any more; the hook and whom to tell kept */
	*mp = (struct cp_module_probes){ .dl_watched = mp->dl_watched,
					 .warn = mp->warn,
					 .warn_arg = mp->warn_arg };
}
