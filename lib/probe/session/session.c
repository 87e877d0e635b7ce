/* session.c - see session.h. */
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
#include "exec_guard.h"
#include "session.h"
#include "session_internal.h"
#include "session_probes.h"
#include "unwind_table.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int verbose_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int load_error(int e, struct cp_error *err)
{
	if (e == EPERM || e == EACCES)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "not permitted to load BPF programs: run as root, or grant CAP_BPF and CAP_PERFMON");
	if (e == ENOSYS)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "this kernel has no BPF support (bpf() is not implemented)");
	return cp_fail(err, CP_EXIT_PROFILE,
		       "cannot load the BPF probes: %s (run with -v for the verifier's log)",
		       strerror(e));
}

/* Places uprobes at offsets[0..n) of path for pid: one uprobe_multi link
 * where the kernel has them, else one libbpf link per offset (n of out's
 * entries). Returns the number of entries of out filled, -1 with errno. */
static int attach_uprobes(const struct cp_session *s, struct bpf_program *prog, pid_t pid,
			  bool every_process, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t n, struct ulink *out)
{
	if (s->multi) {
		out[0].link = NULL;
		return cp_uprobe_link_attach(&out[0].multi, bpf_program__fd(prog), pid,
					     every_process, path, offsets, cookies, n) ? -1 : 1;
	}
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookies ? cookies[i] : 0);

		out[i].multi = (struct cp_uprobe_link){ .fd = -1 };
		out[i].link = bpf_program__attach_uprobe_opts(prog, every_process ? -1 : pid, path,
							      (size_t)offsets[i], &opts);
		if (!out[i].link) {
			int e = errno;

			for (size_t j = 0; j < i; j++)
				bpf_link__destroy(out[j].link);
			errno = e;
			return -1;
		}
	}
	return (int)n;
}

static int attach_uprobe(const struct cp_session *s, struct bpf_program *prog, pid_t pid,
			 const struct cp_uprobe_point *p, uint64_t cookie, struct ulink *out)
{
	return attach_uprobes(s, prog, pid, false, p->path, &p->offset, &cookie, 1, out) < 0 ?
	       -1 : 0;
}

/* The boundary and --probe functions, where every process that runs them
 * is counted when the target's forks are followed: a process the target
 * forks runs the target's code, breakpoints included, but a uprobe for
 * one pid fires in that pid alone. The program counts the followed ones
 * only; the window made sure no other process runs these files. */
static int attach_request_probe(const struct cp_session *s, struct bpf_program *prog,
				const struct cp_uprobe_point *p, uint64_t cookie,
				struct ulink *out)
{
	return attach_uprobes(s, prog, s->pid, s->follow, p->path, &p->offset, &cookie, 1,
			      out) < 0 ? -1 : 0;
}

static bool ulink_set(const struct ulink *u)
{
	return u->link || u->multi.fd >= 0;
}

/* Removes the links: libbpf ones in turn (the kernel serializes them
 * anyway), uprobe_multi ones together (uprobe_removal.h), which returns
 * once their breakpoints have left the target's code. wait: where they had
 * to be closed instead, return only once they are gone. Returns the number
 * of probed instructions of the target still holding a breakpoint. */
static size_t ulinks_destroy(struct ulink *u, size_t n, bool wait)
{
	struct cp_uprobe_link *multi = calloc(n ? n : 1, sizeof(*multi));
	size_t nmulti = 0, left;

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
	left = cp_uprobe_links_remove(multi, nmulti, wait);
	free(multi);
	return left;
}

/* The programs that go on uprobes take the uprobe_multi attach type. */
static void use_uprobe_multi(struct clockreads_bpf *skel)
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
static int attach_all(struct cp_session *s, const struct cp_session_config *cfg,
		      struct cp_error *err)
{
	struct clockreads_bpf *skel = s->skel;

	for (int i = 0; i < cfg->nprobes && i < CP_MAX_PROBES; i++)
		if (attach_request_probe(s, skel->progs.on_extra_probe, &cfg->probes[i],
					 (uint64_t)i, &s->probes[i]))
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot place the --probe uprobe in %s at 0x%llx: %s",
				       cfg->probes[i].path,
				       (unsigned long long)cfg->probes[i].offset,
				       strerror(errno));
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
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot place the request boundary uprobe in %s at 0x%llx: %s",
				       cfg->boundary_func->path,
				       (unsigned long long)cfg->boundary_func->offset,
				       strerror(errno));
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
	if (cp_grow(&s->file_links, &s->cap_file_links, s->nfile_links + n,
		    sizeof(*s->file_links)))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	added = attach_uprobes(s, prog, s->pid, false, path, offsets, cookies, n,
			       s->file_links + s->nfile_links);
	if (added < 0)
		return cp_fail(err, CP_EXIT_PROFILE, "cannot place a uprobe on %s in %s at 0x%llx: %s",
			       what, path, (unsigned long long)offsets[0], strerror(errno));
	s->nfile_links += (size_t)added;
	return 0;
}

int cp_session_attach_file(struct cp_session *s, const char *path,
			   const struct cp_clock_points *pts, struct cp_error *err)
{
	/* The clock points the mechanism gives (lib/probe/mech/), syscall(),
	 * and where the vDSO patch wants to know of an exec. */
	size_t nclock = pts->n, nexec = 0;
	uint64_t exec_at[2];
	size_t n;
	uint64_t *offsets, *cookies;
	const char *what;
	int rc;

	for (int e = 0; e < 2 && s->watch_exec; e++)
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
	rc = attach_file_probes(s, s->skel->progs.on_clock_func, path, offsets, cookies, n,
				what, err);
	if (rc == 0)
		s->nclock_uprobes += nclock;
	free(offsets);
	free(cookies);
	return rc;
}

static int dl_event(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	((struct cp_session *)ctx)->dl_pending++;
	return 0;
}

static int stack_copy_event(void *ctx, void *data, size_t size)
{
	struct cp_session *s = ctx;
	const struct cp_stack_copy *c = data;

	/* A copy is as long as the bytes it holds (struct cp_stack_copy), and
	 * each piece no longer than its room: handed on only then. */
	if (s->on_copy && size >= offsetof(struct cp_stack_copy, bytes) &&
	    c->len[0] <= CP_STACK_COPY_BYTES && c->len[1] <= CP_STACK_COPY_FRAME_BYTES &&
	    size >= offsetof(struct cp_stack_copy, bytes) + (size_t)c->len[0] + c->len[1])
		s->on_copy(s->on_copy_arg, c);
	return 0;
}

/* A followed process held at its exec: kept for the mechanism to patch
 * its new image (cp_session_take_execs). */
static int exec_event(void *ctx, void *data, size_t size)
{
	struct cp_session *s = ctx;

	if (size < sizeof(uint32_t))
		return 0;
	if (cp_grow(&s->execs, &s->cap_execs, s->nexecs + 1, sizeof(*s->execs))) {
		cp_session_exec_unfollowed(s, *(uint32_t *)data);
		return 0;
	}
	s->execs[s->nexecs++] = *(uint32_t *)data;
	return 0;
}

/* The ring buffers user space reads while attached, behind one epoll fd;
 * the stack copies' joins when someone takes them. */
static int open_events(struct cp_session *s)
{
	s->events = ring_buffer__new(bpf_map__fd(s->skel->maps.dl_events), dl_event, s, NULL);
	if (s->events && ring_buffer__add(s->events, bpf_map__fd(s->skel->maps.exec_events),
					  exec_event, s)) {
		ring_buffer__free(s->events);
		s->events = NULL;
	}
	return s->events ? 0 : -1;
}

int cp_session_watch_dl(struct cp_session *s, const char *path, uint64_t offset,
			struct cp_error *err)
{
	struct cp_uprobe_point pt = { .offset = offset };

	snprintf(pt.path, sizeof(pt.path), "%s", path);
	if (ulink_set(&s->dl_hook))
		return 0;
	if (attach_uprobe(s, s->skel->progs.on_dl_change, s->pid, &pt, 0, &s->dl_hook))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "cannot watch the dynamic linker (%s at 0x%llx): %s", path,
			       (unsigned long long)offset, strerror(errno));
	return 0;
}

int cp_session_events_fd(const struct cp_session *s)
{
	return ring_buffer__epoll_fd(s->events);
}

int cp_session_consume_events(struct cp_session *s)
{
	int n;

	ring_buffer__consume(s->events);
	n = s->dl_pending;
	s->dl_pending = 0;
	return n;
}

int cp_session_on_stack_copy(struct cp_session *s,
			     void (*fn)(void *arg, const struct cp_stack_copy *c), void *arg,
			     struct cp_error *err)
{
	s->on_copy = fn;
	s->on_copy_arg = arg;
	/* Mapping the buffer into this process costs ~0.1 ms per MiB. */
	if (ring_buffer__add(s->events, bpf_map__fd(s->skel->maps.stack_copies),
			     stack_copy_event, s))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the stack copies: %s",
			       strerror(errno));
	return 0;
}

/* Opens the BPF object, with the build's cut of the kernel types for its
 * relocations when this is the build's kernel (lib/probe/session/core_btf.h). */
static struct clockreads_bpf *open_skeleton(int *core_btf_fd)
{
	char path[64];
	LIBBPF_OPTS(bpf_object_open_opts, opts);

	if (cp_core_btf_open(path, sizeof(path), core_btf_fd) == 0)
		opts.btf_custom_path = path;
	return clockreads_bpf__open_opts(&opts);
}

/* Marks every link and fd of a fresh session as not yet open. */
static void init_session_fds(struct cp_session *s)
{
	for (int i = 0; i < CP_MAX_PROBES; i++)
		s->probes[i].multi.fd = -1;
	s->dl_hook.multi.fd = s->selftest_link.multi.fd = s->boundary.multi.fd = -1;
}

/* Drops a session that failed before it was loaded, with its CO-RE BTF. */
static void abandon_open(struct cp_session *s, int core_btf_fd)
{
	cp_core_btf_close(core_btf_fd);
	cp_session_close(s);
}

/* --stacks: room for the stack copies made before every function's rules
 * are in place, ~2,000 of them. The rules take 20-100 ms to build (a Go
 * server's 57,000 under load: ~90 ms); the window's loop reads the copies
 * out meanwhile, but a server reading the clock 40,000 times a second on
 * two busy CPUs overran half of this. Creating it costs ~0.1 ms per MiB. */
#define STACK_COPY_RING_BYTES (16u << 20)

/* Sizes the stack maps for cfg->stacks; nonzero (errno set) on failure. */
static int size_stack_maps(struct clockreads_bpf *skel, const struct cp_session_config *cfg)
{
	if (cfg->stacks)
		return bpf_map__set_max_entries(skel->maps.stack_copies, STACK_COPY_RING_BYTES);
	/* Without --stacks the stack map is never written: no room for it. */
	return bpf_map__set_max_entries(skel->maps.stacks, 1);
}

/* The maps that hold what the programs read from the vDSO patch's tables
 * get room only where they are written: the goroutines' requests with a
 * boundary under the patch, the exits' sums under the patch, the
 * followed processes' slots and sites where processes are followed (an
 * attach to one process follows none). Room unused costs every start-up
 * its creation: the goroutines' LRU map, allocated whole, took 12 ms of
 * it here (strace -T, BPF_MAP_CREATE), the exits' preallocated sites
 * 3.5 ms, the followed slots' 64 Ki buckets ~1 ms. Nonzero (errno set)
 * on failure. */
static int size_patch_maps(struct clockreads_bpf *skel, const struct cp_session_config *cfg)
{
	bool requests = cfg->boundary_syscall >= 0 || cfg->boundary_func;
	bool follows = cfg->follow_forks || cfg->nmembers;
	struct { struct bpf_map *map; bool used; } room[] = {
		{ skel->maps.goroutines, cfg->patch_tables && requests },
		{ skel->maps.patch_exit_sites, cfg->patch_tables },
		{ skel->maps.child_slots, cfg->patch_tables && follows },
		{ skel->maps.child_exit_sites, cfg->patch_tables && follows },
	};

	for (size_t i = 0; i < sizeof(room) / sizeof(room[0]); i++)
		if (!room[i].used && bpf_map__set_max_entries(room[i].map, 1))
			return -1;
	return 0;
}

/* Whether this kernel lets every program type use hash maps that allocate
 * their entries as they are inserted (Linux 6.1, bpf_mem_alloc). Before,
 * the perf_event program of the breakpoint mechanism needed preallocated
 * ones. */
static bool kernel_allocates_on_insert(void)
{
	struct utsname u;
	int major, minor;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
	       (major > 6 || (major == 6 && minor >= 1));
}

/* The hash maps the programs rarely insert into (a new call site, the
 * wrappers' rules and the threads' counter slots, both from user space;
 * the sites of the patched threads that exit, from the programs)
 * allocate their entries on insert where the kernel can: preallocated,
 * creating them took ~4 ms of every start-up here (strace -T, BPF_MAP_CREATE
 * of 8,192 + 4,096 + 4,096 entries); lookups cost the same. */
static void allocate_on_insert(struct clockreads_bpf *skel)
{
	struct bpf_map *maps[] = { skel->maps.site_ids, skel->maps.unwind_rules,
				   skel->maps.dist_slots, skel->maps.procs,
				   skel->maps.child_slots, skel->maps.child_exit_sites,
				   skel->maps.patch_exit_sites };

	if (!kernel_allocates_on_insert())
		return;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_map_flags(maps[i], bpf_map__map_flags(maps[i]) | BPF_F_NO_PREALLOC);
}

/* Tells the programs whom they count (the target and, apart, clockprof's
 * self-test, by their numbers in clockprof's pid namespace), the
 * boundary syscall and the clock syscalls' numbers. */
static void set_rodata(struct clockreads_bpf *skel, const struct cp_session_config *cfg)
{
	skel->rodata->pidns_dev = cfg->pidns.dev;
	skel->rodata->pidns_ino = cfg->pidns.ino;
	skel->rodata->target_tgid = (__u32)cfg->pid;
	skel->rodata->boottime_offset_ns = cp_proc_boottime_offset_ns();
	skel->rodata->follow_forks = cfg->follow_forks;
	skel->rodata->boundary_in_target = cfg->boundary_in_target;
	skel->rodata->boundary_wrapped = cfg->boundary_in_target && cfg->boundary_syscall >= 0;
	skel->rodata->follow_procs = cfg->follow_forks || cfg->nmembers;
	skel->rodata->selftest_tgid = (__u32)getpid();
	skel->rodata->vdso_hres = cfg->vdso_hres;
	skel->rodata->capture_stacks = cfg->stacks;
	for (int i = 0; i < CP_ENTRY_MAX; i++)
		skel->rodata->vdso_entry_addr[i] = cfg->vdso.entry[i];
	skel->rodata->boundary_syscall = cfg->boundary_syscall;
	skel->rodata->sys_clock_gettime = SYS_clock_gettime;
	skel->rodata->sys_gettimeofday = SYS_gettimeofday;
	skel->rodata->sys_time = SYS_time;
}

/* Only the programs this session attaches are loaded: each costs the
 * verifier a few ms before the window can open. */
static void choose_programs(struct clockreads_bpf *skel, const struct cp_session_config *cfg)
{
	if (cfg->boundary_syscall < 0)
		bpf_program__set_autoload(skel->progs.on_boundary_syscall, false);
	if (!cfg->boundary_func || cfg->boundary_in_target)
		bpf_program__set_autoload(skel->progs.on_boundary_func, false);
	if (cfg->nprobes <= 0)
		bpf_program__set_autoload(skel->progs.on_extra_probe, false);
	if (!cfg->vdso_breakpoints)
		bpf_program__set_autoload(skel->progs.on_vdso_entry, false);
	if (!cfg->follow_forks && !cfg->nmembers)
		bpf_program__set_autoload(skel->progs.on_target_prepare_exec, false);
}

/* The target's (and followed processes') exec, fork and exit. Best
 * effort: without them an exec is counted on and forks unsaid. */
static void watch_lifecycle(struct cp_session *s, const struct cp_session_config *cfg)
{
	s->exec_watch = bpf_program__attach(s->skel->progs.on_target_exec);
	if (s->follow) {	/* a followed process's exit and its table, its exec */
		s->exit_watch = bpf_program__attach(s->skel->progs.on_target_exit);
		s->prepare_exec_watch = bpf_program__attach(s->skel->progs.on_target_prepare_exec);
	}
	/* before the first fork is followed: a process forked and exec()ed
	 * before the window opens is held until the mechanism takes it there */
	if (cfg->hold_execs && s->follow)
		cp_session_hold_execs(s, true);
	s->fork_watch = bpf_program__attach(s->skel->progs.on_target_fork);
}

int cp_session_open(struct cp_session **out, const struct cp_session_config *cfg,
		    struct cp_error *err)
{
	struct cp_session *s;
	struct clockreads_bpf *skel;
	int core_btf_fd = -1;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	init_session_fds(s);
	libbpf_set_print(cfg->verbose ? verbose_print : quiet_print);
	s->ncpus = libbpf_num_possible_cpus();
	skel = s->skel = open_skeleton(&core_btf_fd);
	if (!skel || s->ncpus <= 0) {
		int e = errno;

		abandon_open(s, core_btf_fd);
		return load_error(e, err);
	}
	if (size_stack_maps(skel, cfg) || size_patch_maps(skel, cfg)) {
		abandon_open(s, core_btf_fd);
		return load_error(errno, err);
	}
	set_rodata(skel, cfg);
	choose_programs(skel, cfg);
	allocate_on_insert(skel);
	s->pid = cfg->pid;
	s->watch_exec = cfg->watch_exec;
	s->follow = cfg->follow_forks || cfg->nmembers;
	s->multi = cp_uprobe_multi_supported();
	if (s->multi)
		use_uprobe_multi(skel);
	if (clockreads_bpf__load(skel)) {
		int e = errno;

		abandon_open(s, core_btf_fd);
		return load_error(e, err);
	}
	cp_core_btf_close(core_btf_fd);
	if (open_events(s)) {
		int e = errno;

		cp_session_close(s);
		return load_error(e, err);
	}
	watch_lifecycle(s, cfg);
	if (attach_all(s, cfg, err)) {
		cp_session_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* Reads one entry of a per-CPU map: s->ncpus values of size bytes, one
 * per CPU, into *percpu (malloc'd; free() it). */
static int read_percpu(struct cp_session *s, const struct bpf_map *map, const void *key,
		       size_t key_size, size_t size, void **percpu)
{
	void *v = calloc((size_t)s->ncpus, size);
	int rc;

	*percpu = NULL;
	if (!v)
		return -1;
	rc = bpf_map__lookup_elem(map, key, key_size, v, (size_t)s->ncpus * size, 0);
	if (rc) {
		free(v);
		return rc;
	}
	*percpu = v;
	return 0;
}

/* The per-CPU values' reducers, one per type: counts add up, a maximum
 * takes the largest. A field added to one of these types needs its line
 * here; the sizes below fail to compile until it has one. */
_Static_assert(sizeof(struct cp_totals) ==
	       2 * sizeof(struct cp_read_counts) + (10 + CP_HIST_SLOTS) * sizeof(__u64),
	       "every field of struct cp_totals has its line in totals_add");
_Static_assert(sizeof(struct cp_dist) == (3 + CP_DIST_BUCKETS) * sizeof(__u64),
	       "every field of struct cp_dist has its line in dist_add");

static void max_into(__u64 *max, __u64 v)
{
	if (v > *max)
		*max = v;
}

static void totals_add(void *total, const void *one)
{
	struct cp_totals *sum = total;
	const struct cp_totals *v = one;

	cp_read_counts_add(&sum->all, &v->all);
	cp_read_counts_add(&sum->in_requests, &v->in_requests);
	sum->requests += v->requests;
	sum->boundary_hits += v->boundary_hits;
	sum->trap_hits += v->trap_hits;
	max_into(&sum->max_reads_per_request, v->max_reads_per_request);
	sum->site_unnamed += v->site_unnamed;
	sum->site_uncredited += v->site_uncredited;
	sum->stack_drops += v->stack_drops;
	sum->stack_copy_drops += v->stack_copy_drops;
	sum->stacks_preempted += v->stacks_preempted;
	sum->counter_boundaries += v->counter_boundaries;
	for (int i = 0; i < CP_HIST_SLOTS; i++)
		sum->hist[i] += v->hist[i];
}

static void dist_add(void *total, const void *one)
{
	struct cp_dist *sum = total;
	const struct cp_dist *v = one;

	sum->count += v->count;
	max_into(&sum->max, v->max);
	sum->sum += v->sum;
	for (int i = 0; i < CP_DIST_BUCKETS; i++)
		sum->bucket[i] += v->bucket[i];
}

/* Reads one entry of a per-CPU map into sum (size bytes), its CPUs'
 * values reduced by add, the reducer of its type. */
static int read_reduced(struct cp_session *s, const struct bpf_map *map, const void *key,
			size_t key_size, void *sum, size_t size,
			void (*add)(void *sum, const void *one))
{
	void *raw;
	int rc;

	memset(sum, 0, size);
	rc = read_percpu(s, map, key, key_size, size, &raw);
	for (int c = 0; rc == 0 && c < s->ncpus; c++)
		add(sum, (const char *)raw + (size_t)c * size);
	free(raw);
	return rc;
}

int cp_session_read(struct cp_session *s, struct cp_totals *sum)
{
	__u32 zero = 0;

	return read_reduced(s, s->skel->maps.totals, &zero, sizeof(zero), sum, sizeof(*sum),
			    totals_add);
}

void cp_session_wrapper_check(const struct cp_session *s, struct cp_wrapper_check *c)
{
	const volatile struct cp_wrapper_check *w = &s->skel->bss->wrapper_check;

	c->checked = w->checked;
	c->mismatched = w->mismatched;
	c->fallback_ns = w->fallback_ns;
}

void cp_session_wrapper_fall_back(struct cp_session *s)
{
	/* CLOCK_MONOTONIC: bpf_ktime_get_ns's clock */
	s->skel->bss->wrapper_check.fallback_ns = (uint64_t)(cp_monotonic_s() * 1e9);
}

void cp_session_end_wrapper_check(struct cp_session *s)
{
	struct cp_wrapper_check c;

	cp_session_wrapper_check(s, &c);
	if (c.fallback_ns || !s->boundary.link)
		return;
	bpf_link__destroy(s->boundary.link);
	s->boundary.link = NULL;
}

/* Puts table t's rules in map fd; 0, or -1 with errno set. */
static int load_rules(int fd, const struct cp_unwind_table *t)
{
	__u32 count = (__u32)t->n;
	__u64 *keys = malloc(t->n * sizeof(*keys) + 1);
	struct cp_unwind_rule *values = malloc(t->n * sizeof(*values) + 1);
	int e = 0;

	if (!keys || !values) {
		e = ENOMEM;
	} else {
		for (size_t i = 0; i < t->n; i++) {
			keys[i] = t->entries[i].pc;
			values[i] = t->entries[i].rule;
		}
		/* One syscall for all rules where the kernel batches, else one each. */
		if (count && bpf_map_update_batch(fd, keys, values, &count, NULL))
			for (size_t i = 0; i < t->n && !e; i++)
				if (bpf_map_update_elem(fd, &keys[i], &values[i], BPF_ANY))
					e = errno;
	}
	free(keys);
	free(values);
	errno = e;
	return e ? -1 : 0;
}

/* --stacks: a map sized to t's rules, holding them, put in the programs'
 * slot in one step (a walk sees the old table or the new one); the slot
 * keeps it, and the old one goes once no program uses it. */
static int swap_stack_rules(struct cp_session *s, const struct cp_unwind_table *t)
{
	__u32 zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "stack_unwind", sizeof(__u64),
				sizeof(struct cp_unwind_rule), t->n ? (__u32)t->n : 1, NULL);
	int rc, e;

	if (fd < 0)
		return -1;
	rc = load_rules(fd, t) ||
	     bpf_map__update_elem(s->skel->maps.stack_unwind_rules, &zero, sizeof(zero),
				  &fd, sizeof(fd), BPF_ANY);
	e = errno;
	close(fd);
	errno = e;
	return rc ? -1 : 0;
}

int cp_session_set_unwind(struct cp_session *s, const struct cp_unwind_table *t,
			  struct cp_error *err)
{
	if (load_rules(bpf_map__fd(s->skel->maps.unwind_rules), t))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot load the unwind rules: %s",
			       strerror(errno));
	return 0;
}

int cp_session_set_stack_rules(struct cp_session *s, const struct cp_unwind_table *t,
			       struct cp_error *err)
{
	if (swap_stack_rules(s, t))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot load the stack unwind rules: %s",
			       strerror(errno));
	return 0;
}

int cp_session_read_sites(struct cp_session *s, struct cp_site_count **sites,
			  size_t *n)
{
	struct bpf_map *ids = s->skel->maps.site_ids;
	struct cp_site_counts counts;
	struct cp_site_key key, next, *prev = NULL;
	size_t cap = 0;
	__u32 id;

	*sites = NULL;
	*n = 0;
	while (bpf_map__get_next_key(ids, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		/* site_counts is shared by the CPUs: one value per site. */
		if (bpf_map__lookup_elem(ids, &key, sizeof(key), &id, sizeof(id), 0) ||
		    bpf_map__lookup_elem(s->skel->maps.site_counts, &id, sizeof(id), &counts,
					 sizeof(counts), 0))
			continue;
		if (cp_grow(sites, &cap, *n + 1, sizeof(**sites)))
			return -1;
		(*sites)[*n].key = key;
		(*sites)[(*n)++].counts = counts;
	}
	return 0;
}

int cp_session_read_stacks(struct cp_session *s, struct cp_stack_count **stacks,
			   size_t *n)
{
	struct bpf_map *map = s->skel->maps.stacks;
	struct cp_stack_key key, next, *prev = NULL;
	size_t cap = 0;

	*stacks = NULL;
	*n = 0;
	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		__u64 count;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &count, sizeof(count), 0))
			continue;
		if (cp_grow(stacks, &cap, *n + 1, sizeof(**stacks)))
			return -1;
		(*stacks)[*n].key = key;
		(*stacks)[(*n)++].count = count;
	}
	return 0;
}

static bool dist_free_slot(const struct cp_session *s, __u32 *slot)
{
	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (!s->dist_tids[i]) {
			*slot = i;
			return true;
		}
	*slot = s->dist_slots_used;
	return s->dist_slots_used < CP_DIST_MAX_THREADS;
}

bool cp_session_dist_full(const struct cp_session *s)
{
	return s->dist_live == CP_DIST_MAX_THREADS;
}

int cp_session_dist_add_thread(struct cp_session *s, pid_t tid, int fd)
{
	__u32 slot, key = (__u32)tid;

	if (!dist_free_slot(s, &slot) ||
	    bpf_map__update_elem(s->skel->maps.dist_events, &slot, sizeof(slot), &fd,
				 sizeof(fd), BPF_ANY) ||
	    bpf_map__update_elem(s->skel->maps.dist_slots, &key, sizeof(key), &slot,
				 sizeof(slot), BPF_ANY)) {
		close(fd);
		return -1;
	}
	s->dist_tids[slot] = tid;
	s->dist_fds[slot] = fd;
	s->dist_live++;
	if (slot == s->dist_slots_used)
		s->dist_slots_used++;
	return 0;
}

void cp_session_dist_remove_thread(struct cp_session *s, pid_t tid)
{
	__u32 key = (__u32)tid;

	for (__u32 i = 0; i < s->dist_slots_used; i++) {
		if (s->dist_tids[i] != tid)
			continue;
		bpf_map__delete_elem(s->skel->maps.dist_slots, &key, sizeof(key), 0);
		bpf_map__delete_elem(s->skel->maps.dist_events, &i, sizeof(i), 0);
		close(s->dist_fds[i]);
		s->dist_tids[i] = 0;
		s->dist_live--;
		return;
	}
}

size_t cp_session_dist_tids(const struct cp_session *s, pid_t *tids)
{
	size_t n = 0;

	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (s->dist_tids[i])
			tids[n++] = s->dist_tids[i];
	return n;
}

void cp_session_set_patch_table(struct cp_session *s, uint64_t addr)
{
	__atomic_store_n(&s->skel->bss->patch_table, addr, __ATOMIC_SEQ_CST);
	if (!s->exit_watch)
		s->exit_watch = bpf_program__attach(s->skel->progs.on_target_exit);
}

bool cp_session_patch_exit_sums(struct cp_session *s, uint64_t sums[CP_PATCH_SLOT_WORDS])
{
	struct cp_patch_exit e;
	__u32 zero = 0;

	if (!s->exit_watch ||
	    bpf_map__lookup_elem(s->skel->maps.patch_exit, &zero, sizeof(zero), &e, sizeof(e), 0) ||
	    !e.done)
		return false;
	memcpy(sums, e.sums, sizeof(e.sums));
	return true;
}

/* Each call site of the last whole pass over the target's table, with
 * its reads (in: inside requests closed in the target, else all). */
static int each_exit_site(struct cp_session *s, bool in,
			  int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx)
{
	struct bpf_map *map = s->skel->maps.patch_exit_sites;
	__u64 gen = s->skel->bss->patch_exit_gen_done, key, next;
	struct cp_patch_exit_site v;
	int rc = 0;

	for (int more = !bpf_map__get_next_key(map, NULL, &next, sizeof(next)); more && !rc;
	     more = !bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		key = next;
		if (!bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0) && v.gen == gen &&
		    (in ? v.in_requests : v.count))
			rc = each(ctx, key, in ? v.in_requests : v.count);
	}
	return rc;
}

int cp_session_patch_exit_requests(struct cp_session *s, struct cp_request_sums *out,
				   int (*each)(void *ctx, uint64_t key, uint64_t in_requests),
				   void *ctx)
{
	__u32 zero = 0;

	if (!s->exit_watch || !s->skel->bss->patch_exit_gen_done ||
	    bpf_map__lookup_elem(s->skel->maps.patch_exit_requests, &zero, sizeof(zero), out,
				 sizeof(*out), 0) || out->gen != s->skel->bss->patch_exit_gen_done)
		return -1;
	return each_exit_site(s, true, each, ctx);
}

int cp_session_patch_exit_sites(struct cp_session *s,
				int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx)
{
	if (!s->exit_watch || !s->skel->bss->patch_exit_gen_done)
		return -1;
	return each_exit_site(s, false, each, ctx);
}

void cp_session_set_phase(struct cp_session *s, enum cp_phase phase)
{
	/* A plain store the programs read on their next run; one still
	 * running on another CPU finishes in the phase it started in. */
	__atomic_store_n(&s->skel->bss->phase, (__u32)phase, __ATOMIC_SEQ_CST);
}

int cp_session_read_dist(struct cp_session *s, struct cp_dist *sum)
{
	__u32 zero = 0;

	return read_reduced(s, s->skel->maps.dist, &zero, sizeof(zero), sum, sizeof(*sum),
			    dist_add);
}

void cp_session_stats(const struct cp_session *s, struct cp_session_stats *st)
{
	*st = (struct cp_session_stats){ .uprobes = s->nclock_uprobes };
}

void cp_session_lifecycle(const struct cp_session *s, bool *execed, unsigned *forks,
			  unsigned *followed_execed, unsigned *traced)
{
	*execed = s->exec_watch && __atomic_load_n(&s->skel->bss->target_execed, __ATOMIC_RELAXED) == 1;
	*forks = s->fork_watch ? __atomic_load_n(&s->skel->bss->target_forks, __ATOMIC_RELAXED) : 0;
	*followed_execed = s->exec_watch ?
			   __atomic_load_n(&s->skel->bss->procs_execed, __ATOMIC_RELAXED) : 0;
	*traced = s->exec_watch ? __atomic_load_n(&s->skel->bss->procs_traced, __ATOMIC_RELAXED) : 0;
}

void cp_session_detach_clock_probes(struct cp_session *s)
{
	ulinks_destroy(s->probes, CP_MAX_PROBES, true);
	/* Each uprobe's removal waits for a grace period (~0.1 s here): the
	 * uprobe_multi links are closed together so that they share one. */
	ulinks_destroy(s->file_links, s->nfile_links, true);
	s->nfile_links = 0;
}

size_t cp_session_close(struct cp_session *s)
{
	size_t left;

	if (!s)
		return 0;
	/* Everything at once, so the removals share their grace periods. The
	 * kernel finishes them off clockprof's path; this returns once the
	 * target's code is free of breakpoints (uprobe_removal.h). Where the
	 * links have to be closed instead (no CAP_SYS_ADMIN), this waits for
	 * the closes: closes left to run while clockprof wrote its results and
	 * exited were seen to leave the boundary's and the dynamic linker
	 * hook's breakpoints in the target for good (kernel 6.18.44). */
	if (!cp_grow(&s->file_links, &s->cap_file_links,
		     s->nfile_links + CP_MAX_PROBES + 3, sizeof(*s->file_links))) {
		struct ulink *u = s->file_links + s->nfile_links;

		memcpy(u, s->probes, sizeof(s->probes));
		u[CP_MAX_PROBES] = s->dl_hook;
		u[CP_MAX_PROBES + 1] = s->selftest_link;
		u[CP_MAX_PROBES + 2] = s->boundary;
		s->nfile_links += CP_MAX_PROBES + 3;
	} else {
		ulinks_destroy(s->probes, CP_MAX_PROBES, true);
		ulinks_destroy(&s->dl_hook, 1, true);
		ulinks_destroy(&s->selftest_link, 1, false);
		ulinks_destroy(&s->boundary, 1, true);
	}
	left = ulinks_destroy(s->file_links, s->nfile_links, true);
	free(s->file_links);
	cp_session_hold_execs(s, false);
	ring_buffer__free(s->events);
	bpf_link__destroy(s->exec_watch);
	bpf_link__destroy(s->prepare_exec_watch);
	free(s->execs);
	bpf_link__destroy(s->fork_watch);
	free(s->gone);
	free(s->marked);
	bpf_link__destroy(s->exit_watch);
	clockreads_bpf__destroy(s->skel);
	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (s->dist_tids[i])
			close(s->dist_fds[i]);
	free(s);
	return left;
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
	return attach_uprobe(s, s->skel->progs.on_clock_func, getpid(), &pt,
			     CP_COOKIE(CP_ENTRY_CLOCK_GETTIME, CP_SITE_STACK_TOP, 1),
			     &s->selftest_link);
}

void cp_session_unprobe_own(struct cp_session *s)
{
	/* A uprobe_multi link on our own code is removed now, in the
	 * background: its grace periods pass during the window instead of
	 * adding to the removals at its end. A per-offset one would block: it
	 * stays (our own code only) and goes at close. */
	if (s->selftest_link.multi.fd >= 0)
		ulinks_destroy(&s->selftest_link, 1, false);
}

void cp_session_selftest_reset(struct cp_session *s)
{
	s->skel->bss->selftest_hits = 0;
}

unsigned long cp_session_selftest_hits(const struct cp_session *s)
{
	return (unsigned long)__atomic_load_n(&s->skel->bss->selftest_hits, __ATOMIC_SEQ_CST);
}
