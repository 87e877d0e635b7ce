/* session_attach.c - the session's probes placed and removed: uprobes at
 * the clock points of the target's files (one uprobe_multi link a file
 * where the kernel has them), the request boundary and --probe
 * functions, the dynamic linker's hook, the self-test's uprobe on
 * clockprof's own code; removed together so that their grace periods are
 * shared. See session.h and session_probes.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "clock_points.h"
#include "clockreads.skel.h"
#include "core_btf.h"
#include "error.h"
#include "grow.h"
#include "monotonic.h"
#include "own_code.h"
#include "procfs.h"
#include "registrar.h"
#include "exec_guard.h"
#include "session.h"
#include "session_internal.h"
#include "session_probes.h"
#include "unwind_table.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"

/* Places uprobes at offsets[0..n) of path for pid, by the registrar
 * (registrar.h): one uprobe_multi link where the kernel has them, else one
 * perf-event uprobe link per offset (n of out's entries). Returns the
 * number of entries of out filled, -1 with errno. */
static int attach_uprobes(const struct cp_session *s, struct bpf_program *prog, pid_t pid,
			  bool every_process, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t n, struct ulink *out)
{
	size_t nlinks = s->multi ? 1 : n, each = s->multi ? n : 1;

	for (size_t i = 0; i < nlinks; i++) {
		const uint64_t *at = offsets + i * each;
		int fd = cp_registrar_place(bpf_program__fd(prog), pid, every_process, s->multi,
					    path, at, cookies ? cookies + i * each : NULL, each);

		out[i].link = NULL;
		if (fd < 0 || cp_uprobe_link_adopt(&out[i].multi, fd, pid, path, at, each)) {
			int e = errno;

			out[i].multi = (struct cp_uprobe_link){ .fd = -1 };
			cp_session_ulinks_destroy(out, i, true);
			errno = e;
			return -1;
		}
	}
	return (int)nlinks;
}

int cp_session_attach_uprobe(const struct cp_session *s, struct bpf_program *prog, pid_t pid,
			     const struct cp_uprobe_point *p, uint64_t cookie, struct ulink *out)
{
	return attach_uprobes(s, prog, pid, false, p->path, &p->offset, &cookie, 1, out) < 0 ? -1 :
											       0;
}

/* The boundary and --probe functions, where every process that runs them
 * is counted when the target's forks are followed: a process the target
 * forks runs the target's code, breakpoints included, but a uprobe for
 * one pid fires in that pid alone. The program counts the followed ones
 * only; the window made sure no other process runs these files. */
static int attach_request_probe(const struct cp_session *s, struct bpf_program *prog,
				const struct cp_uprobe_point *p, uint64_t cookie, struct ulink *out)
{
	return attach_uprobes(s, prog, s->pid, s->follow, p->path, &p->offset, &cookie, 1, out) <
			       0 ?
		       -1 :
		       0;
}

static bool ulink_set(const struct ulink *u)
{
	return u->link || u->multi.fd >= 0;
}

/* Removes the links: libbpf ones (tracepoints) in turn, uprobe ones
 * together (uprobe_removal.h), which returns
 * once their breakpoints have left the target's code. wait: where they had
 * to be closed instead, return only once they are gone. Returns the number
 * of probed instructions of the target still holding a breakpoint. */
void cp_session_ulinks_destroy_begin(struct cp_uprobe_removal *r, struct ulink *u, size_t n,
				     bool wait)
{
	struct cp_uprobe_link *multi = calloc(n ? n : 1, sizeof(*multi));
	size_t nmulti = 0;

	for (size_t i = 0; i < n; i++) {
		bpf_link__destroy(u[i].link);
		if (u[i].multi.fd >= 0 && multi)
			multi[nmulti++] = u[i].multi;
		else if (u[i].multi.fd >= 0) {
			close(u[i].multi.fd);
			cp_uprobe_link_forget(&u[i].multi);
		}
		u[i] = (struct ulink){ .multi.fd = -1 };
	}
	cp_uprobe_links_remove_begin(r, multi, nmulti, wait);
	r->links = multi; /* freed at end, even when none */
}

size_t cp_session_ulinks_destroy_end(struct cp_uprobe_removal *r)
{
	struct cp_uprobe_link *multi = r->links;
	size_t left = cp_uprobe_links_remove_end(r);

	free(multi);
	return left;
}

size_t cp_session_ulinks_destroy(struct ulink *u, size_t n, bool wait)
{
	struct cp_uprobe_removal r;

	cp_session_ulinks_destroy_begin(&r, u, n, wait);
	return cp_session_ulinks_destroy_end(&r);
}

/* The programs that go on uprobes take the uprobe_multi attach type. */
void cp_session_use_uprobe_multi(struct clockreads_bpf *skel)
{
	struct bpf_program *progs[] = { skel->progs.on_clock_func, skel->progs.on_dl_change,
					skel->progs.on_boundary_func, skel->progs.on_extra_probe };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_expected_attach_type(
			progs[i], (enum bpf_attach_type)CP_BPF_TRACE_UPROBE_MULTI);
}

/* Counting probes first, the boundary last: a request is only counted from
 * a boundary seen with every counting probe already in place, so the first
 * complete request is never missing reads that happened during attach.
 * The clock points in files come before this (cp_session_attach_file), and
 * a mechanism's own probes with it (lib/probe/mech/mechanism.h). */
int cp_session_attach_all(struct cp_session *s, const struct cp_session_config *cfg,
			  struct cp_error *err)
{
	struct clockreads_bpf *skel = s->skel;

	for (int i = 0; i < cfg->nprobes && i < CP_MAX_PROBES; i++)
		if (attach_request_probe(s, skel->progs.on_extra_probe, &cfg->probes[i],
					 (uint64_t)i, &s->probes[i]))
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot place the --probe uprobe in %s at 0x%llx: %s",
				       cfg->probes[i].path,
				       (unsigned long long)cfg->probes[i].offset, strerror(errno));
	if (cfg->boundary_syscall >= 0) {
		s->boundary.link = bpf_program__attach(skel->progs.on_boundary_syscall);
		if (!s->boundary.link)
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot attach to the sys_enter tracepoint: %s",
				       strerror(errno));
	}
	if (cfg->boundary_func && !cfg->boundary_in_target) {
		if (attach_request_probe(s, skel->progs.on_boundary_func, cfg->boundary_func, 0,
					 &s->boundary))
			return cp_fail(
				err, CP_EXIT_PROFILE,
				"cannot place the request boundary uprobe in %s at 0x%llx: %s",
				cfg->boundary_func->path,
				(unsigned long long)cfg->boundary_func->offset, strerror(errno));
	}
	return 0;
}

/* Probes offsets[0..n) of one file with prog, kept until the clock probes
 * are detached. */
static int attach_file_probes(struct cp_session *s, struct bpf_program *prog, const char *path,
			      const uint64_t *offsets, const uint64_t *cookies, size_t n,
			      const char *what, struct cp_error *err)
{
	int added;

	if (!n)
		return 0;
	if (cp_grow(&s->file_links, &s->cap_file_links, s->nfile_links + n, sizeof(*s->file_links)))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	added = attach_uprobes(s, prog, s->pid, false, path, offsets, cookies, n,
			       s->file_links + s->nfile_links);
	if (added < 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot place a uprobe on %s in %s at 0x%llx: %s", what, path,
			       (unsigned long long)offsets[0], strerror(errno));
	s->nfile_links += (size_t)added;
	return 0;
}

int cp_session_attach_file(struct cp_session *s, const char *path,
			   const struct cp_clock_points *pts, struct cp_error *err)
{
	/* The clock points the mechanism gives (lib/probe/mech/), syscall(),
	 * and where the vDSO patch wants to know of an exec: the C library's
	 * execve, only where the kernel has no sched_prepare_exec to sum the
	 * table at (exec_traced), else a uprobe for nothing. */
	size_t nclock = pts->n, nexec = 0;
	uint64_t exec_at[2];
	size_t n;
	uint64_t *offsets, *cookies;
	const char *what;
	int rc;

	for (int e = 0; e < 2 && s->watch_exec && !s->skel->rodata->exec_traced; e++)
		if (pts->exec_offset[e] && (!nexec || exec_at[0] != pts->exec_offset[e]))
			exec_at[nexec++] = pts->exec_offset[e];
	n = nclock + (pts->syscall_offset ? 1 : 0) + nexec;
	if (!n)
		return 0;
	offsets = calloc(n, sizeof(*offsets));
	cookies = calloc(n, sizeof(*cookies));
	if (!offsets || !cookies) {
		free(offsets);
		free(cookies);
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	}
	for (size_t i = 0; i < nclock; i++) {
		const struct cp_clock_point *p = &pts->points[i];

		offsets[i] = p->offset;
		cookies[i] = CP_COOKIE(p->entry, p->site, p->clock);
	}
	if (pts->syscall_offset) {
		offsets[nclock] = pts->syscall_offset;
		cookies[nclock] = CP_COOKIE(CP_ENTRY_SYSCALL_FUNC, CP_SITE_STACK_TOP, 0);
	}
	for (size_t e = 0; e < nexec; e++) {
		offsets[n - nexec + e] = exec_at[e];
		cookies[n - nexec + e] = CP_COOKIE(CP_ENTRY_EXEC_FUNC, CP_SITE_STACK_TOP, 0);
	}
	what = n > 1 ? "its clock points" : nclock ? pts->points[0].what : "syscall()";
	rc = attach_file_probes(s, s->skel->progs.on_clock_func, path, offsets, cookies, n, what,
				err);
	if (rc == 0)
		s->nclock_uprobes += nclock;
	free(offsets);
	free(cookies);
	return rc;
}

int cp_session_watch_dl(struct cp_session *s, const char *path, uint64_t offset,
			struct cp_error *err)
{
	struct cp_uprobe_point pt = { .offset = offset };

	snprintf(pt.path, sizeof(pt.path), "%s", path);
	if (ulink_set(&s->dl_hook))
		return 0;
	if (cp_session_attach_uprobe(s, s->skel->progs.on_dl_change, s->pid, &pt, 0, &s->dl_hook))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot watch the dynamic linker (%s at 0x%llx): %s", path,
			       (unsigned long long)offset, strerror(errno));
	return 0;
}

void cp_session_detach_clock_probes(struct cp_session *s)
{
	cp_session_ulinks_destroy(s->probes, CP_MAX_PROBES, true);
	/* Each uprobe's removal waits for a grace period (~0.1 s here): the
	 * uprobe_multi links are closed together so that they share one. */
	cp_session_ulinks_destroy(s->file_links, s->nfile_links, true);
	s->nfile_links = 0;
}

bool cp_session_holds_uprobes(const struct cp_session *s)
{
	bool any = s->nfile_links > 0;

	for (int i = 0; i < CP_MAX_PROBES && !any; i++)
		any = ulink_set(&s->probes[i]);
	return any;
}

struct bpf_program *cp_session_vdso_program(struct cp_session *s)
{
	return s->skel->progs.on_vdso_entry;
}

int cp_session_probe_own(struct cp_session *s, const void *fn)
{
	struct cp_uprobe_point pt;

	if (cp_own_code_offset(fn, pt.path, sizeof(pt.path), &pt.offset))
		return -1;
	return cp_session_attach_uprobe(s, s->skel->progs.on_clock_func, getpid(), &pt,
					CP_COOKIE(CP_ENTRY_CLOCK_GETTIME, CP_SITE_STACK_TOP, 1),
					&s->selftest_link);
}

void cp_session_unprobe_own(struct cp_session *s)
{
	/* The uprobe on our own code is removed now, in the background: its
	 * grace periods pass during the window instead of adding to the
	 * removals at its end. */
	if (s->selftest_link.multi.fd >= 0)
		cp_session_ulinks_destroy(&s->selftest_link, 1, false);
}
