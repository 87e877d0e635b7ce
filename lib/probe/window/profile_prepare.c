/* profile_prepare.c - before the window opens: the target inspected, the
 * request boundary and --probe functions resolved to uprobe points, the
 * mechanism chosen (auto: mech_choice.c), and the session's configuration
 * filled in but for what the mechanism adds to it. See profile_window.h. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_symbols.h"
#include "error.h"
#include "mechanism.h"
#include "proc_maps.h"
#include "profile_window.h"
#include "syscall_look.h"
#include "syscall_names.h"
#include "vdso.h"

/* Where a library named without a path is looked up. A command held at
 * exec has not mapped its libraries yet; it runs in our mount namespace and
 * will map the ones we have mapped, unless its environment points it
 * elsewhere (then an absolute FILE is needed). */
static pid_t libraries_of(const struct cp_profile *p)
{
	return p->launched ? getpid() : p->target.pid;
}

/* The main executable as a path that names its directory too (where a
 * separate debug file may sit): /proc/PID/root/EXE, when that is still the
 * file the target runs, else /proc/PID/exe (deleted or replaced on disk). */
static void main_executable_path(const struct cp_profile *p, char *path, size_t size)
{
	struct stat via_root, running;

	if (snprintf(path, size, "/proc/%d/root%s", p->target.pid, p->target.exe) >= (int)size ||
	    stat(path, &via_root) || stat(p->target.exe_access, &running) ||
	    via_root.st_ino != running.st_ino || via_root.st_dev != running.st_dev)
		snprintf(path, size, "%s", p->target.exe_access);
}

/* Resolves a [FILE:]SYMBOL in the target to a uprobe point; fn: the
 * function found. */
static int resolve_func(const struct cp_profile *p, const struct cp_func_spec *f,
			struct cp_uprobe_point *pt, char *shown, size_t shown_size,
			const char *what, struct cp_elf_function *fn, struct cp_error *err)
{
	if (!f->file[0]) {
		main_executable_path(p, pt->path, sizeof(pt->path));
		snprintf(shown, shown_size, "%s", p->target.exe);
	} else if (cp_target_resolve_file(libraries_of(p), f->file, pt->path, sizeof(pt->path),
					  shown, shown_size, err)) {
		return -1;
	}
	if (cp_elf_find_function(pt->path, shown, f->symbol, fn, err))
		return -1;
	if (fn->ifunc)
		return cp_fail(
			err, CP_EXIT_USAGE,
			"%s '%s' in %s is an IFUNC: a probe there fires only when it is resolved, never for calls",
			what, f->symbol, shown);
	pt->offset = fn->offset;
	pt->size = fn->size;
	return 0;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void count_name(const char *name, void *arg)
{
	(void)name;
	++*(size_t *)arg;
}

/* A func: boundary in a file with no symbol table (Debian's memcached):
 * no name to suggest, so the message says what to try instead, with the
 * syscalls a running target makes in a second's look. */
static void hint_without_symbols(const struct cp_profile *p, const char *path, struct cp_error *err)
{
	char seen[256];
	size_t n = 0, len;

	if (!err || cp_elf_function_names(path, count_name, &n) || n)
		return;
	len = strlen(err->msg);
	if (p->launched)
		snprintf(
			err->msg + len, sizeof(err->msg) - len,
			"; try -r syscall:NAME (attach to it running: clockprof lists the syscalls it makes) or --ops N");
	else if (cp_syscall_look(p->target.pid, 1000, 5, seen, sizeof(seen)) == 0 && seen[0])
		snprintf(err->msg + len, sizeof(err->msg) - len,
			 "; try -r syscall:NAME (in 1 s it made %s) or --ops N", seen);
	else
		snprintf(err->msg + len, sizeof(err->msg) - len,
			 "; try -r syscall:NAME (it made no syscall in a 1 s look) or --ops N");
}

/* Those of the n functions names[] that path (shown so) defines, into
 * wrappers[] (aliases once): how many. */
static int wrappers_in(const char *path, const char *shown, const char **names, int n,
		       struct cp_uprobe_point *wrappers, struct cp_error *why)
{
	int found = 0;

	for (int i = 0; i < n; i++) {
		struct cp_elf_function fn;

		if (cp_elf_find_function(path, shown, names[i], &fn, why) || fn.ifunc)
			continue;
		snprintf(wrappers[found].path, sizeof(wrappers[found].path), "%s", path);
		wrappers[found].offset = fn.offset;
		wrappers[found].size = fn.size;
		found += !(found && wrappers[0].offset == fn.offset); /* an alias */
	}
	return found;
}

/* A syscall: boundary's functions, for the patch to close its requests
 * there (patch_boundary.h), checked against the
 * kernel's syscalls as the target runs: the executable's own where it
 * defines them (a static one: its C library is in it; calls bind to the
 * executable's first), else its C library's. None: it is traced at
 * sys_enter, and the warning says why. */
static void resolve_wrappers(struct cp_profile *p, int nr, struct cp_session_config *cfg,
			     struct cp_uprobe_point *wrappers)
{
	const char *names[CP_SYSCALL_WRAPPERS_MAX];
	int n = cp_syscall_wrappers(nr, names), found;
	char shown[256], path[sizeof(wrappers->path)];
	struct cp_error why = { 0 };

	main_executable_path(p, path, sizeof(path));
	found = wrappers_in(path, p->target.exe, names, n, wrappers, &why);
	if (!found && n &&
	    !cp_target_resolve_file(libraries_of(p), "libc", path, sizeof(path), shown,
				    sizeof(shown), &why))
		found = wrappers_in(path, shown, names, n, wrappers, &why);
	if (!found) {
		cp_profile_warn(
			p,
			"%s is traced at sys_enter, which slows every process's syscalls while attached: no C library function of the target's makes it (%s); prefer func:SYMBOL",
			p->request_text, why.msg[0] ? why.msg : "no such syscall");
		return;
	}
	cfg->boundary_wrappers = wrappers;
	cfg->nboundary_wrappers = found;
}

/* A func: boundary's (or a --probe's) symbol is one copy of the
 * function: calls the compiler inlined into their callers, or sent to a
 * clone it made of it (GCC's .constprop, .isra, .part), never reach it,
 * so a "request" then runs over several calls and its reads per op are a
 * multiple of the function's (a --probe's calls/op fall short). Said,
 * from the DWARF of the function's compile unit; probe: the --probe's
 * symbol, NULL for the boundary. */
static void warn_other_copies(struct cp_profile *p, const char *path,
			      const struct cp_elf_function *fn, const char *probe)
{
	struct cp_inlined_copies c;
	char inl[400] = "", cl[400] = "";

	if (cp_elf_inlined_copies(path, fn->vaddr, &c) || (!c.inlined && !c.clones))
		return;
	if (c.inlined)
		snprintf(inl, sizeof(inl), "inlined into its callers at %d place(s) (%s:%d%s)",
			 c.inlined, c.file[0] ? c.file : "?", c.line, c.inlined > 1 ? ", ..." : "");
	if (c.clones)
		snprintf(cl, sizeof(cl), "%scloned by the compiler %d time(s) (%s%s)",
			 c.inlined ? " and " : "", c.clones, c.clone, c.clones > 1 ? ", ..." : "");
	if (probe)
		cp_profile_warn(
			p,
			"--probe %s is %s%s: calls there are not counted, so calls.%s/op falls short of its calls; mark it __attribute__((noinline, noclone))",
			probe, inl, cl, probe);
	else
		cp_profile_warn(
			p,
			"%s is %s%s: calls there pass no boundary, so a request may span several calls of it and its reads per op count them together; mark it __attribute__((noinline, noclone)) or pick another boundary",
			p->request_text, inl, cl);
}

/* The request boundary resolved, and recorded as resolved: two spellings
 * of one function (func:handle_request, func:./server:handle_request) are
 * one boundary to compare. */
static int resolve_boundary(const struct cp_request_spec *rq, struct cp_profile *p,
			    struct cp_session_config *cfg, struct cp_uprobe_point *boundary,
			    struct cp_error *err)
{
	struct cp_elf_function fn;
	const char *name;

	if (rq->kind == CP_REQUEST_SYSCALL) {
		cfg->boundary_syscall = rq->syscall_nr;
		name = cp_syscall_name(rq->syscall_nr);
		snprintf(p->request_symbol, sizeof(p->request_symbol), "%s",
			 name ? name : rq->text + 8);
		return 0;
	}
	if (resolve_func(p, &rq->func, boundary, p->request_file, sizeof(p->request_file),
			 "request boundary", &fn, err)) {
		if (boundary->path[0])
			hint_without_symbols(p, boundary->path, err);
		return -1;
	}
	snprintf(p->request_symbol, sizeof(p->request_symbol), "%s", fn.name);
	warn_other_copies(p, boundary->path, &fn, NULL);
	p->request_in_main = !rq->func.file[0] || same_file(boundary->path, p->target.exe_access);
	cfg->boundary_func = boundary;
	return 0;
}

void cp_profile_check_follow(struct cp_profile *p, struct cp_session_config *cfg)
{
	const struct cp_uprobe_point *files[1 + CP_MAX_PROBES];
	size_t n = 0;

	if (cfg->boundary_func && !cfg->boundary_in_target)
		files[n++] = cfg->boundary_func;
	for (int i = 0; i < cfg->nprobes && n < sizeof(files) / sizeof(files[0]); i++)
		files[n++] = &cfg->probes[i];
	for (size_t i = 0; i < n && (cfg->follow_forks || cfg->nmembers); i++) {
		/* a process the followed target forked since its tree was
		 * listed (attach --tree) is one of its own, not another's */
		pid_t other = cp_proc_maps_other_user(files[i]->path, cfg->pid, cfg->members,
						      cfg->nmembers, cfg->follow_forks);

		if (!other)
			continue;
		if (cfg->nmembers) {
			cp_profile_warn(p,
					"process %d, not one of those given, also runs %s: its "
					"boundary or --probe uprobe traps it too (counted only in "
					"the processes given)",
					(int)other, files[i]->path);
			return;
		}
		cfg->follow_forks = false;
		cp_profile_warn(p,
				"the processes the target forks are not followed: process %d, "
				"not the target's, also runs %s, whose boundary or --probe uprobe "
				"would trap it too (give --no-inherit to count the target alone)",
				(int)other, files[i]->path);
	}
}

int cp_profile_prepare(const struct cp_profile_options *o, struct cp_profile *p,
		       struct cp_session_config *cfg, struct cp_uprobe_point *boundary,
		       struct cp_uprobe_point *wrappers, struct cp_uprobe_point *probes,
		       struct cp_error *err)
{
	/* First: with /proc of another namespace, pid is not the target. */
	if (cp_pid_ns_for(cfg->pid, &cfg->pidns, err) ||
	    cp_target_inspect(cfg->pid, &p->target, err))
		return -1;
	cp_host_inspect(&p->host);
	snprintf(p->request_text, sizeof(p->request_text), "%s",
		 o->request.kind == CP_REQUEST_NONE ? "" : o->request.text);
	cfg->boundary_syscall = -1;
	if (o->request.kind != CP_REQUEST_NONE &&
	    resolve_boundary(&o->request, p, cfg, boundary, err))
		return -1;
	for (int i = 0; i < o->nprobes && i < CP_MAX_PROBES; i++) {
		struct cp_probe_info *info = &p->probes[p->nprobes++];
		struct cp_elf_function fn;

		snprintf(info->symbol, sizeof(info->symbol), "%s", o->probes[i].symbol);
		if (resolve_func(p, &o->probes[i], &probes[i], info->file, sizeof(info->file),
				 "--probe", &fn, err))
			return -1;
		warn_other_copies(p, probes[i].path, &fn, info->symbol);
	}
	cfg->probes = probes;
	cfg->nprobes = p->nprobes;
	cfg->vdso_hres = cp_clocksource_in_vdso(p->host.clocksource);
	cfg->stacks = o->stacks;
	cfg->anatomy = o->anatomy_on;
	cfg->launched = p->launched;
	cfg->follow_forks = o->follow_forks;
	cfg->boundary_keep_uprobe = o->per_request_counters;
	cfg->members = o->members;
	cfg->nmembers = o->nmembers;
	cfg->verbose = o->verbose;
	/* Which mechanism opens first; the window configures the session for
	 * it, and falls back from it while nothing is counted yet (profile.c). */
	p->requested_mechanism = o->mechanism;
	p->mechanism = cp_mech_choose(o->mechanism, o->stacks, p->fallback_reason,
				      sizeof(p->fallback_reason));
	/* only the patch closes a syscall: boundary at its functions */
	if (o->request.kind == CP_REQUEST_SYSCALL && p->mechanism == CP_MECHANISM_PATCH)
		resolve_wrappers(p, o->request.syscall_nr, cfg, wrappers);
	return 0;
}
