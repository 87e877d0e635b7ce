/* session.c - see session.h. The BPF object opened, sized, configured
 * and loaded for one window, and closed; its probes are placed by
 * session_attach.c, its events read by session_events.c, its maps by
 * session_maps.c. */
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
#include "test_hook.h"
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
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"not permitted to load BPF programs: run as root, or grant CAP_BPF and CAP_PERFMON");
	if (e == ENOSYS)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "this kernel has no BPF support (bpf() is not implemented)");
	return cp_fail(err, CP_EXIT_PROFILE,
		       "cannot load the BPF probes: %s (run with -v for the verifier's log)",
		       strerror(e));
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
	struct {
		struct bpf_map *map;
		bool used;
	} room[] = {
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
	struct bpf_map *maps[] = { skel->maps.site_ids,	       skel->maps.unwind_rules,
				   skel->maps.dist_slots,      skel->maps.procs,
				   skel->maps.child_slots,     skel->maps.child_exit_sites,
				   skel->maps.patch_exit_sites };

	if (!kernel_allocates_on_insert())
		return;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		bpf_map__set_map_flags(maps[i], bpf_map__map_flags(maps[i]) | BPF_F_NO_PREALLOC);
}

/* Whether the kernel traces sched_prepare_exec (Linux 6.10+), without
 * attaching anything: a raw tracepoint program that reads a 12th argument
 * is refused by name where there is no such tracepoint (ENOENT), and for
 * its arguments where there is (EINVAL: it has two). Tests only (test_hook.h):
 * CLOCKPROF_TEST_NO_PREPARE_EXEC=1 says it does not, as on older kernels. */
static bool prepare_exec_traced(void)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_0,
		  .src_reg = BPF_REG_1,
		  .off = 11 * 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd, tp, e;

	if (cp_test_hook("CLOCKPROF_TEST_NO_PREPARE_EXEC"))
		return false;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	attr.insns = (__u64)(uintptr_t)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (__u64)(uintptr_t) "GPL";
	if ((fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr))) < 0)
		return false;
	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (__u64)(uintptr_t) "sched_prepare_exec";
	attr.raw_tracepoint.prog_fd = (__u32)fd;
	tp = (int)syscall(SYS_bpf, BPF_RAW_TRACEPOINT_OPEN, &attr, sizeof(attr));
	e = errno;
	if (tp >= 0) /* not expected: then it is there */
		close(tp);
	close(fd);
	return tp >= 0 || e == EINVAL;
}

/* --anatomy recorded by the session's program: a func: boundary that
 * traps (the vDSO patch logs its requests in the target instead). */
static bool anatomy_traps(const struct cp_session_config *cfg)
{
	return cfg->anatomy && cfg->boundary_func && !cfg->boundary_in_target;
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
	skel->bss->requests_checked = skel->rodata->boundary_wrapped ? CP_TOTALS_CHECKED :
								       CP_TOTALS_WINDOW;
	skel->rodata->follow_procs = cfg->follow_forks || cfg->nmembers;
	skel->rodata->selftest_tgid = (__u32)getpid();
	skel->rodata->vdso_hres = cfg->vdso_hres;
	skel->rodata->capture_stacks = cfg->stacks;
	skel->rodata->patch_tables = cfg->patch_tables;
	skel->rodata->anatomy = anatomy_traps(cfg);
	skel->rodata->exec_traced = (cfg->patch_tables || cfg->follow_forks || cfg->nmembers) &&
				    prepare_exec_traced();
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
	if (!anatomy_traps(cfg)) {
		bpf_program__set_autoload(skel->progs.on_anatomy_syscall, false);
		bpf_program__set_autoload(skel->progs.on_anatomy_sched, false);
	} else {
		bpf_map__set_max_entries(skel->maps.anatomy_ring, 1u << 22);
	}
	/* Attached only to follow processes or to sum the patch's table
	 * (watch_lifecycle, cp_session_set_patch_table): unloaded, the
	 * verifier's ~43,000 instructions of it are spared the other
	 * mechanisms' every start-up. */
	if (!cfg->follow_forks && !cfg->nmembers && !cfg->patch_tables)
		bpf_program__set_autoload(skel->progs.on_target_exit, false);
}

/* The target's (and followed processes') exec, fork and exit. Best
 * effort: without them an exec is counted on and forks unsaid. */
static void watch_lifecycle(struct cp_session *s, const struct cp_session_config *cfg)
{
	s->exec_watch = bpf_program__attach(s->skel->progs.on_target_exec);
	if (s->follow) { /* a followed process's exit and its table, its exec */
		s->exit_watch = bpf_program__attach(s->skel->progs.on_target_exit);
		cp_session_watch_prepare_exec(s);
	}
	/* before the first fork is followed: a process forked and exec()ed
	 * before the window opens is held until the mechanism takes it there */
	if (cfg->hold_execs && s->follow)
		cp_session_hold_execs(s, true);
	s->fork_watch = bpf_program__attach(s->skel->progs.on_target_fork);
	/* tried here, attached only in the window's bursts */
	if (anatomy_traps(cfg))
		s->anatomy_ok = !cp_session_anatomy_links(s, true) &&
				!cp_session_anatomy_links(s, false);
}

int cp_session_anatomy_links(struct cp_session *s, bool on)
{
	struct bpf_link **l = s->anatomy_links;

	if (on && !l[0])
		l[0] = bpf_program__attach(s->skel->progs.on_anatomy_syscall);
	if (on && !l[1])
		l[1] = bpf_program__attach(s->skel->progs.on_anatomy_sched);
	if (on && l[0] && l[1])
		return 0;
	bpf_link__destroy(l[0]); /* both, or neither: no request half seen */
	bpf_link__destroy(l[1]);
	l[0] = l[1] = NULL;
	return on ? -1 : 0;
}

int cp_session_anatomy_ring(const struct cp_session *s)
{
	return s->anatomy_ok ? bpf_map__fd(s->skel->maps.anatomy_ring) : -1;
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
		cp_session_use_uprobe_multi(skel);
	if (clockreads_bpf__load(skel)) {
		int e = errno;

		abandon_open(s, core_btf_fd);
		return load_error(e, err);
	}
	cp_core_btf_close(core_btf_fd);
	if (cp_session_open_events(s)) {
		int e = errno;

		cp_session_close(s);
		return load_error(e, err);
	}
	watch_lifecycle(s, cfg);
	if (cp_session_attach_all(s, cfg, err)) {
		cp_session_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

void cp_session_stats(const struct cp_session *s, struct cp_session_stats *st)
{
	*st = (struct cp_session_stats){ .uprobes = s->nclock_uprobes };
}

void cp_session_lifecycle(const struct cp_session *s, bool *execed, unsigned *forks,
			  unsigned *followed_execed, unsigned *traced)
{
	*execed = s->exec_watch &&
		  __atomic_load_n(&s->skel->bss->target_execed, __ATOMIC_RELAXED) == 1;
	*forks = s->fork_watch ? __atomic_load_n(&s->skel->bss->target_forks, __ATOMIC_RELAXED) : 0;
	*followed_execed = s->exec_watch ?
				   __atomic_load_n(&s->skel->bss->procs_execed, __ATOMIC_RELAXED) :
				   0;
	*traced = s->exec_watch ? __atomic_load_n(&s->skel->bss->procs_traced, __ATOMIC_RELAXED) :
				  0;
}

void cp_session_close_begin(struct cp_session *s)
{
	if (!s || s->removing)
		return;
	s->removing = true;
	/* Everything at once, so the removals share their grace periods. The
	 * kernel finishes them off clockprof's path; this returns once the
	 * target's code is free of breakpoints (uprobe_removal.h). Where the
	 * links have to be closed instead (no CAP_SYS_ADMIN), this waits for
	 * the closes: closes left to run while clockprof wrote its results and
	 * exited were seen to leave the boundary's and the dynamic linker
	 * hook's breakpoints in the target for good (kernel 6.18.44). */
	if (!cp_grow(&s->file_links, &s->cap_file_links, s->nfile_links + CP_MAX_PROBES + 3,
		     sizeof(*s->file_links))) {
		struct ulink *u = s->file_links + s->nfile_links;

		memcpy(u, s->probes, sizeof(s->probes));
		u[CP_MAX_PROBES] = s->dl_hook;
		u[CP_MAX_PROBES + 1] = s->selftest_link;
		u[CP_MAX_PROBES + 2] = s->boundary;
		s->nfile_links += CP_MAX_PROBES + 3;
	} else {
		cp_session_ulinks_destroy(s->probes, CP_MAX_PROBES, true);
		cp_session_ulinks_destroy(&s->dl_hook, 1, true);
		cp_session_ulinks_destroy(&s->selftest_link, 1, false);
		cp_session_ulinks_destroy(&s->boundary, 1, true);
	}
	cp_session_ulinks_destroy_begin(&s->removal, s->file_links, s->nfile_links, true);
}

size_t cp_session_close(struct cp_session *s)
{
	size_t left;

	if (!s)
		return 0;
	cp_session_close_begin(s);
	left = cp_session_ulinks_destroy_end(&s->removal);
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
	bpf_link__destroy(s->anatomy_links[0]);
	bpf_link__destroy(s->anatomy_links[1]);
	clockreads_bpf__destroy(s->skel);
	for (__u32 i = 0; i < s->dist_slots_used; i++)
		if (s->dist_tids[i])
			close(s->dist_fds[i]);
	free(s);
	return left;
}

void cp_session_selftest_reset(struct cp_session *s)
{
	s->skel->bss->selftest_hits = 0;
}

unsigned long cp_session_selftest_hits(const struct cp_session *s)
{
	return (unsigned long)__atomic_load_n(&s->skel->bss->selftest_hits, __ATOMIC_SEQ_CST);
}
