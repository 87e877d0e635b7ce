/* patch_boundary.c - see patch_boundary.h. */
#include <stdio.h>
#include <string.h>

#include "clock_points.h"
#include "elf_program.h"
#include "elf_symbols.h"
#include "error.h"
#include "mechanism.h"
#include "patch_boundary.h"
#include "patch_requests.h"
#include "redirect_place.h"
#include "session_probes.h"
#include "vdso_patch.h"

/* What a syscall: boundary not closed in the target is, and costs. */
#define SYS_ENTER_BOUNDARY \
	"the request boundary is traced at sys_enter (which slows every process's syscalls), not closed at the C library's function: %s"

/* The functions whose entry closes a request: a func: boundary's, or a
 * syscall: boundary's C library wrappers (checked against the kernel's
 * syscalls as the target runs: on_boundary_syscall). How many. */
static int closing_functions(const struct cp_session_config *cfg,
			     const struct cp_uprobe_point **fns)
{
	if (cfg->boundary_func) {
		*fns = cfg->boundary_func;
		return 1;
	}
	*fns = cfg->boundary_wrappers;
	return cfg->boundary_syscall >= 0 ? cfg->nboundary_wrappers : 0;
}

/* How fn's entry is redirected to the close: at its straight-line start,
 * or else on both paths past its first branch (a syscall's C library
 * wrapper: redirect_plan.h). How many redirects (kinds[]), 0 with why. */
static int closing_redirects(pid_t pid, const struct cp_uprobe_point *fn,
			     enum cp_redirect_kind kinds[2], char *why, size_t whylen)
{
	struct cp_redirect_place place;
	char why_arms[256];

	kinds[0] = CP_REDIRECT_BOUNDARY;
	if (!cp_redirect_place(pid, kinds[0], fn->path, fn->offset, fn->size, 0, &place, why,
			       whylen))
		return 1;
	if (strncmp(why, CP_REDIRECT_NO_ROOM, strlen(CP_REDIRECT_NO_ROOM)))
		return 0; /* refused for what the paths would be refused for too */
	kinds[0] = CP_REDIRECT_BOUNDARY_UNTAKEN;
	kinds[1] = CP_REDIRECT_BOUNDARY_TAKEN;
	for (int i = 0; i < 2; i++)
		if (cp_redirect_place(pid, kinds[i], fn->path, fn->offset, fn->size, 0, &place,
				      why_arms, sizeof(why_arms))) {
			snprintf(why, whylen, "%s path past its first branch: %s",
				 i ? "the taken" : "the untaken", why_arms);
			return 0;
		}
	return 2;
}

/* A func: boundary in a program that the launched command does not map
 * (`run -- env prog`, `run -- sh -c prog`): closed in the image of each
 * followed process that execs it (cp_patch_boundary_exec), as it is held
 * there before its first instruction, rather than a uprobe on the file,
 * which would fire in every process that runs it (or, for the target's
 * pid alone, count nothing after the exec). Only where execs are followed
 * (forks followed, clockprof in the host's pid namespace: the session's
 * hold) and for a program, which an exec maps with the image: a library
 * is mapped later, by the dynamic linker, and stays a uprobe. Whether it
 * can be redirected is planned against the file (may_be_in_target). */
static bool closed_at_exec(const struct cp_session_config *cfg, const struct cp_uprobe_point *f)
{
	struct stat st;

	return cfg->boundary_func && cfg->launched && cfg->follow_forks && !cfg->pidns.ino &&
	       !stat(f->path, &st) && !cp_redirect_place_maps(cfg->pid, &st) &&
	       cp_elf_is_program(f->path);
}

/* Whether a boundary may close its requests in the target, and why
 * not. Not with members (attach -p PID,..., --tree, --cgroup: each has its
 * own patch, whose code is not the target's); the target's forks run it
 * too, each in its own table (patch_followed.c). */
static bool may_be_in_target(const struct cp_session_config *cfg, char *why, size_t whylen)
{
	const struct cp_uprobe_point *fns;
	int n = closing_functions(cfg, &fns), can = 0;
	enum cp_redirect_kind kinds[2];

	if (cfg->boundary_keep_uprobe || cfg->nprobes) {
		snprintf(
			why, whylen, "%s",
			cfg->nprobes ?
				"--probe's calls are counted per request at the boundary's uprobe" :
				"--per-request-counters reads a counter at each boundary");
		return false;
	}
	if (cfg->nmembers) {
		snprintf(why, whylen, "several processes are counted, each its own image");
		return false;
	}
	/* A launched command maps its C library later (add_pending) */
	if (!cfg->boundary_func && cfg->launched)
		return n > 0;
	if (closed_at_exec(cfg, fns)) /* planned as an exec will map it */
		return closing_redirects(0, fns, kinds, why, whylen) > 0;
	/* A syscall's wrapper that cannot be redirected is left out: the
	 * check against the kernel's syscalls finds it if it is called. */
	for (int i = 0; i < n; i++)
		can += closing_redirects(cfg->pid, &fns[i], kinds, why, whylen) > 0;
	return can > 0;
}

void cp_patch_boundary_configure(struct cp_session_config *cfg)
{
	const struct cp_uprobe_point *fns;

	cfg->boundary_not_in_target[0] = 0;
	cfg->boundary_in_target = closing_functions(cfg, &fns) &&
				  may_be_in_target(cfg, cfg->boundary_not_in_target,
						   sizeof(cfg->boundary_not_in_target));
}

int cp_patch_boundary_redirect(struct cp_vdso_patch *p, pid_t pid, const struct cp_uprobe_point *f,
			       char *why, size_t whylen)
{
	enum cp_redirect_kind kinds[2];
	int k = closing_redirects(pid, f, kinds, why, whylen);

	for (int j = 0; j < k; j++)
		if (cp_vdso_patch_add_redirect(p, kinds[j], f->path, f->offset, f->size, why,
					       whylen))
			return -1;
	return k ? 0 : 1;
}

/* The redirects of the n functions at f that close a request, added to
 * the patch of process pid: 0, or -1 with why. A syscall's wrapper that
 * cannot be redirected is left out (may_be_in_target), not all of them. */
static int add_closing(struct cp_vdso_patch *p, pid_t pid, const struct cp_uprobe_point *f, int n,
		       char *why, size_t whylen)
{
	int added = 0, rc;

	for (int i = 0; i < n; i++) {
		if ((rc = cp_patch_boundary_redirect(p, pid, &f[i], why, whylen)) < 0)
			return -1;
		added += rc == 0;
	}
	return added ? 0 : -1;
}

int cp_patch_boundary_open(struct cp_patch_boundary *b, struct cp_mech *m, struct cp_vdso_patch *p,
			   const struct cp_session_config *cfg, struct cp_error *err)
{
	const struct cp_uprobe_point *f;
	int n = closing_functions(cfg, &f);
	char why[512];

	b->syscall_alone = !cfg->follow_forks && !cfg->nmembers;
	if (!n)
		return 0;
	/* Said with the reason it had as the window was planned: a leftover
	 * of a killed clockprof switched back since made it closable, and
	 * the window's probes were placed by then (it was said with none). */
	if (!cfg->boundary_in_target) {
		cp_mech_warn(
			m,
			cfg->boundary_func ?
				"the request boundary is a uprobe (a trap per request): it cannot be closed in the target: %s" :
				SYS_ENTER_BOUNDARY,
			cfg->boundary_not_in_target);
		return 0;
	}
	b->in_target = true;
	b->wrapped = !cfg->boundary_func;
	b->func = cfg->boundary_func;
	if (stat(f->path, &b->file))
		memset(&b->file, 0, sizeof(b->file));
	if ((b->at_exec = closed_at_exec(cfg, f)))
		return 0;		   /* nothing of it in the target's own image */
	if (b->wrapped && cfg->launched) { /* its C library is not mapped yet */
		b->pending = f;
		b->npending = n;
		return 0;
	}
	if (add_closing(p, cfg->pid, f, n, why, sizeof(why)))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the request boundary cannot be closed in process %d: %s", cfg->pid,
			       why);
	return 0;
}

/* A launched command's wrappers not redirected after all: the boundary is
 * sys_enter's from the start, and syscall() is not redirected either (its
 * reads are then in sys_enter's requests). */
static void pending_to_sys_enter(struct cp_patch_boundary *b, struct cp_mech *m, const char *why)
{
	b->in_target = false;
	b->npending = 0;
	cp_session_wrapper_fall_back(m->s);
	cp_mech_warn(m, SYS_ENTER_BOUNDARY, why);
}

/* A launched command's C library, as its dynamic linker maps it (before
 * the command is let go): the syscall: boundary's wrappers redirected
 * there, or else the boundary is sys_enter's from the start. */
static void add_pending(struct cp_patch_boundary *b, struct cp_mech *m, struct cp_vdso_patch *p,
			const char *path)
{
	struct stat st;
	char why[512];

	if (!b->npending || stat(path, &st) || st.st_dev != b->file.st_dev ||
	    st.st_ino != b->file.st_ino)
		return;
	if (!p)
		pending_to_sys_enter(b, m, "the target runs another image");
	else if (add_closing(p, m->pid, b->pending, b->npending, why, sizeof(why)))
		pending_to_sys_enter(b, m, why);
	b->npending = 0;
}

/* With the boundary closed in the target, or the target counted alone,
 * the file's syscall() (a C library's, a static executable's) counts its
 * clock reads there (syscall_count.S): a request then holds them, no call
 * of syscall() traps, and the target holds no uprobe of clockprof's to
 * wait for at the end. One that cannot be keeps the uprobe, said only
 * where a boundary closed in the target misses its reads. */
bool cp_patch_boundary_syscall(struct cp_patch_boundary *b, struct cp_mech *m,
			       struct cp_vdso_patch *p, const char *path,
			       const struct cp_clock_points *pts)
{
	struct cp_elf_function fn = { .size = 0 };
	struct cp_error ignored;
	char why[512];

	if (!b->started)
		add_pending(b, m, p, path);
	/* closed at an exec: the image exec'd counts none of syscall() */
	if (!(b->in_target || b->syscall_alone) || b->at_exec || !pts->syscall_offset || !p)
		return false;
	if (cp_elf_find_function(path, path, "syscall", &fn, &ignored) ||
	    fn.offset != pts->syscall_offset)
		fn.size = 0;
	if (b->started)
		snprintf(why, sizeof(why), "mapped after the window started");
	else if (!cp_vdso_patch_add_redirect(p, CP_REDIRECT_SYSCALL, path, pts->syscall_offset,
					     fn.size, why, sizeof(why))) {
		b->syscall_counted = true;
		return true;
	}
	if (b->in_target)
		cp_mech_warn(
			m,
			"syscall() in %s is a uprobe: its clock reads are in no request closed in the target (%s)",
			path, why);
	return false;
}

void cp_patch_boundary_start(struct cp_patch_boundary *b, struct cp_mech *m)
{
	if (b->npending) /* the command never mapped the wrappers' file */
		pending_to_sys_enter(
			b, m, "the command did not map the C library clockprof resolved them in");
	b->started = true;
}

int cp_patch_boundary_exec(const struct cp_patch_boundary *b, struct cp_vdso_patch *p, pid_t pid,
			   char *why, size_t whylen)
{
	if (!b->in_target || !b->func || !b->file.st_ino || !cp_redirect_place_maps(pid, &b->file))
		return 0;
	return cp_patch_boundary_redirect(p, pid, b->func, why, whylen) ? -1 : 0;
}

/* A syscall: boundary's wrappers were found to miss a syscall of the
 * kernel's (on_boundary_syscall): from then on the session's program
 * closed the requests, and what the target closed is not the run's. */
static bool wrappers_missed(struct cp_patch_boundary *b, struct cp_mech *m)
{
	struct cp_wrapper_check c;

	if (!b->wrapped || !b->in_target)
		return false;
	cp_session_wrapper_check(m->s, &c);
	if (!c.fallback_ns)
		return false;
	b->in_target = false;
	return true;
}

/* Whether the target's request blocks hold counts of the run's: its
 * requests, or its reads through syscall(). A boundary closed at an exec
 * has none in the target's own image (the image exec'd is a member's,
 * read as a fork's). */
static bool blocks_count(const struct cp_patch_boundary *b)
{
	return (b->in_target && !b->at_exec) || b->syscall_counted;
}

bool cp_patch_boundary_read(struct cp_patch_boundary *b, struct cp_mech *m, struct cp_vdso_patch *p)
{
	wrappers_missed(b, m);
	return blocks_count(b) && p && cp_vdso_patch_read_requests(p) == 0;
}

void cp_patch_boundary_settle(struct cp_patch_boundary *b, struct cp_mech *m,
			      struct cp_vdso_patch *p)
{
	struct cp_request_sums r;
	struct cp_patch_sites in = { 0 };

	wrappers_missed(b, m);
	if (!blocks_count(b) ||
	    cp_session_patch_exit_requests(m->s, &r, cp_patch_sites_add_to, &in))
		return;
	cp_patch_sites_normalize(&in);
	cp_vdso_patch_settle_requests(p, &r, &in);
	cp_patch_sites_free(&in);
}

void cp_patch_boundary_add(const struct cp_patch_boundary *b, struct cp_mech *m,
			   const struct cp_vdso_patch *p, bool now_read, bool exited, bool hres,
			   struct cp_totals *t)
{
	const struct cp_patch_requests *r;

	if (!blocks_count(b))
		return;
	if (!now_read && !exited)
		cp_mech_warn(
			m,
			b->in_target ?
				"the target's request blocks could not be read as it exited: the requests it closed after the last read are missing" :
				"the target's request blocks could not be read as it exited: its reads through syscall() after the last read are missing");
	if (!(r = cp_vdso_patch_requests(p)))
		return;
	cp_vdso_patch_add_requests(p, hres, b->in_target, t);
	if (b->in_target && r->sums.lost)
		cp_mech_warn(
			m,
			"%llu request boundaries were passed by threads that found no slot in the counter table: their requests are missing",
			(unsigned long long)r->sums.lost);
}

struct cp_patch_sites *cp_patch_boundary_forks(struct cp_patch_boundary *b)
{
	cp_patch_sites_free(&b->forks_in_requests);
	return b->in_target ? &b->forks_in_requests : NULL;
}

bool cp_patch_boundary_counts_syscalls(const struct cp_patch_boundary *b)
{
	return b->syscall_counted;
}

uint64_t cp_patch_boundary_in_requests_at(const struct cp_patch_boundary *b,
					  const struct cp_vdso_patch *p, uint64_t key)
{
	const struct cp_patch_requests *r = b->in_target && p ? cp_vdso_patch_requests(p) : NULL;
	uint64_t n = 0;

	for (size_t i = 0; r && i < r->sites.n; i++)
		n += r->sites.v[i].key == key ? r->sites.v[i].count : 0;
	for (size_t i = 0; i < b->forks_in_requests.n; i++)
		n += b->forks_in_requests.v[i].key == key ? b->forks_in_requests.v[i].count : 0;
	return n;
}

void cp_patch_boundary_free(struct cp_patch_boundary *b)
{
	cp_patch_sites_free(&b->forks_in_requests);
}
