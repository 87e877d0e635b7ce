/* vdso_patch.c - see vdso_patch.h: the plan (vdso_plan.c) written into
 * the target, applied and undone by the stub (vdso_area.S) on one held
 * thread (hijack.c), and the counters read back. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include <linux/audit.h>
#include <sys/syscall.h>

#include "boundary_close.h"
#include "cgroup.h"
#include "redirect_place.h"
#include "syscall_count.h"
#include "error.h"
#include "monotonic.h"
#include "hijack.h"
#include "patch_owner.h"
#include "patch_requests.h"
#include "patch_sites.h"
#include "patch_table.h"
#include "seccomp_filter.h"
#include "stub_forks.h"
#include "table_place.h"
#include "tid_offset.h"
#include "test_hook.h"
#include "proc_maps.h"
#include "procfs.h"
#include "vdso_area.h"
#include "vdso_count.h"
#include "vdso_patch.h"
#include "vdso_plan.h"

#define STUB_TIMEOUT_S 5.0

struct cp_vdso_patch {
	pid_t pid;
	struct cp_vdso_plan plan;
	struct cp_patch_table table;
	bool give_fs;			/* the held thread has no thread pointer yet */
	uint64_t resume;		/* a round trip's: where the held thread was */
	uint64_t gen;			/* the stub's request in flight */
	bool patched;			/* the sites are (or are being) switched */
	bool owned;			/* its header names this clockprof (patch_owner.h) */
	bool locked;			/* the owner lock is held by the caller */
	struct cp_patch_rules rules;	/* to write once the table is mapped */
	struct cp_patch_rules hops;	/* frame-pointer hops (Go), the same */
	struct cp_redirect_place redirects[CP_VDSO_AREA_MAX_REDIRECTS];	/* functions redirected */
	size_t nredirects;
	struct cp_vdso_area_site inherited[CP_VDSO_AREA_MAX_REDIRECTS];	/* a fork's redirects,
						 * as its parent switched them */
	size_t ninherited;
	struct cp_stub_window window;	/* the last stub sent to a running target */
	bool window_open;		/* ... whose forks are not looked at yet */
	enum cp_vdso_area_cmd last_cmd;	/* ... and its request */
	bool last_sites;
	bool mend;			/* a fork's copy, mended (mend_forks) */
	struct cp_patch_requests_mark requests_mark;
	struct cp_patch_requests requests;	/* as last read, or settled */
	bool requests_known;
	struct cp_vdso_patch_info info;
};

/* A line "Key:\tvalue" of /proc/PID/status, copied into val. */
/* A field of /proc/PID/status, or of thread tid's own (tid 0: the
 * process's, its leader's: per-thread state such as a seccomp filter a
 * thread installed on itself is only in its own). */
static bool status_field_of(pid_t pid, pid_t tid, const char *key, char *val, size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, size, "%s", line + klen + 1);
			found = true;
		}
	fclose(f);
	return found;
}

static bool status_field(pid_t pid, const char *key, char *val, size_t size)
{
	return status_field_of(pid, 0, key, val, size);
}

/* Whether the process runs nothing until someone continues it: a thread
 * stopped by a signal, or its cgroup frozen (its threads then read S). */
bool cp_vdso_patch_runs_nothing(pid_t pid)
{
	return cp_proc_stopped_thread(pid) || cp_cgroup_frozen(pid);
}

/* What forbids the patch before anything is touched. */
/* Whether the kernel charges every private writable mapping to commit,
 * MAP_NORESERVE or not (vm.overcommit_memory=2, as PostgreSQL's
 * documentation recommends): the table would then be charged whole to
 * the target and again to each process it forks, which fail with ENOMEM
 * once the limit is reached. Tests only (test_hook.h):
 * CLOCKPROF_TEST_STRICT_OVERCOMMIT=1 says so on any host. */
static bool strict_overcommit(void)
{
	char mode[8] = "";
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "re");

	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = 0;
		fclose(f);
	}
	return atoi(mode) == 2 || cp_test_hook("CLOCKPROF_TEST_STRICT_OVERCOMMIT");
}

static int refuse_early(pid_t pid, bool held, struct cp_error *err)
{
	char val[128], path[64];
	unsigned char ident[EI_NIDENT];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, ident, sizeof(ident));

		close(fd);
		if (n == EI_NIDENT && ident[EI_CLASS] == ELFCLASS32)
			return cp_fail(err, CP_EXIT_PROFILE, "process %d is a 32-bit program", pid);
	}
	if (strict_overcommit())
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the kernel charges all private memory to commit (vm.overcommit_memory=2): the patch's %zu MiB counter table would be charged to process %d and to every process it forks",
			       (size_t)CP_VDSO_MAP_SIZE >> 20, pid);
	if (status_field(pid, "Seccomp", val, sizeof(val)) && atoi(val) == SECCOMP_MODE_STRICT)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d runs in seccomp's strict mode", pid);
	if (status_field(pid, "x86_Thread_features", val, sizeof(val)) && strstr(val, "shstk"))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d uses shadow stacks", pid);
	/* Not for a launched command: clockprof itself holds it. */
	if (!held && status_field(pid, "TracerPid", val, sizeof(val)) && atoi(val) != 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d is already under a debugger (traced by process %d)", pid,
			       atoi(val));
	/* At once, not after a hold that cannot come (one stopped while it
	 * is held is found by the hold: cp_hijack_thread). */
	if (!held && cp_vdso_patch_runs_nothing(pid))
		return cp_hijack_refuse_stopped(pid, err);
	return 0;
}

static int write_rules(struct cp_vdso_patch *p, struct cp_error *err);

/* clockprof's own vDSO, found once (clockprof's maps are long, ~0.7 ms
 * to read, and its vDSO never moves): its size, 0 when it has none;
 * sealed, when the kernel seals system mappings (mseal), every process's
 * vDSO then, so that the stub could not make the target's writable
 * (mprotect with the protection it has changes nothing, and is refused
 * when sealed). */
static struct {
	pthread_once_t once;
	size_t size;
	bool sealed;
} own_vdso = { PTHREAD_ONCE_INIT, 0, false };

static void find_own_vdso(void)
{
	uint64_t image = getauxval(AT_SYSINFO_EHDR), start, end;

	if (!image || cp_proc_maps_find_vdso(getpid(), &start, &end) || start != image)
		return;
	own_vdso.size = end - start;
	own_vdso.sealed = mprotect((void *)(uintptr_t)start, end - start, PROT_READ | PROT_EXEC) &&
			  errno == EPERM;
}

/* The own vDSO as it was before the self-test patched it, in the helper
 * that is then made the restorer (cp_vdso_patch_keep_pristine): its own
 * keeps the self-test's code in its unused end. */
static uint8_t *kept_image;

bool cp_vdso_patch_keep_pristine(void)
{
	pthread_once(&own_vdso.once, find_own_vdso);
	if (own_vdso.size && (kept_image = malloc(own_vdso.size)))
		memcpy(kept_image, (const void *)getauxval(AT_SYSINFO_EHDR), own_vdso.size);
	return kept_image != NULL;
}

/* The same kernel's image, never patched: clockprof's own vDSO, or in
 * the helper the copy it kept before its self-test. */
static int pristine_image(size_t size, const uint8_t **image, struct cp_error *err)
{
	pthread_once(&own_vdso.once, find_own_vdso);
	*image = kept_image ? kept_image : (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!own_vdso.size)
		return cp_fail(err, CP_EXIT_PROFILE, "clockprof has no vDSO of its own to compare with");
	if (own_vdso.size != size)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the target's vDSO is not this kernel's 64-bit one (%zu bytes, not %zu)",
			       size, own_vdso.size);
	if (own_vdso.sealed)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "this kernel seals the vDSO of every process (mseal): it cannot be patched");
	return 0;
}

/* Writes the plan's code that the target's image does not hold yet
 * (cp_vdso_plan_next_code): never run until a site points at it, and
 * bytes already equal (a leftover's code, perhaps running) left alone. */
static int write_code(struct cp_vdso_patch *p, const uint8_t *target)
{
	uint64_t from = 0, to;

	for (; cp_vdso_plan_next_code(&p->plan, target, &from, &to); from = to) {
		if (cp_proc_mem_write(p->pid, p->plan.base + from, p->plan.bytes + from, to - from))
			return -1;
		cp_patch_step();
	}
	return 0;
}

/* The stub's result for request gen in the table at table, if it is
 * there and says that request (with the area's magic: a mapping of the
 * target's own in a place the stub found taken is not read as one). */
static bool table_result(pid_t pid, uint64_t table, uint64_t gen, struct cp_vdso_stub_result *r)
{
	if (!table || cp_proc_mem_read(pid, table + CP_PATCH_STUB_OFF, r, sizeof(*r)))
		return false;
	return !memcmp(r->magic, CP_VDSO_AREA_MAGIC, sizeof(r->magic)) && r->gen == gen;
}

/* Whether the request header h posted is done, and its result: a failed
 * mmap's in the header, any other in the table. Nothing posted: done. */
static bool request_done(pid_t pid, const struct cp_vdso_area_header *h,
			 struct cp_vdso_stub_result *r)
{
	if (h->gen_done == h->gen_req) {
		*r = (struct cp_vdso_stub_result){ .gen = h->gen_done, .status = h->status,
						   .err = h->err };
		return true;
	}
	return table_result(pid, h->table ? h->table : h->table_at, h->gen_req, r);
}

/* The stub maps the table only where the header names none, and the
 * table's address is written there by clockprof (the stub cannot write
 * into a read-only vDSO): a table whose mapping request is done, its
 * code pages executable, is the header's, even when the clockprof that
 * asked died before it wrote so (the next request would find the place
 * taken). */
static void adopt_table(pid_t pid, struct cp_vdso_area_header *h)
{
	struct cp_vdso_stub_result r;

	if (!h->table && h->table_at && h->gen_done != h->gen_req &&
	    table_result(pid, h->table_at, h->gen_req, &r) &&
	    (r.status == CP_VDSO_STUB_OK || r.status == CP_VDSO_STUB_VDSO))
		h->table = h->table_at;
}

/* The header of an earlier clockprof's area in the target's image (where
 * the plan puts the area), if there is one. */
static bool leftover_header(pid_t pid, const struct cp_vdso_plan *plan, const uint8_t *target,
			    struct cp_vdso_area_header *h)
{
	if (plan->area + sizeof(*h) > plan->size)
		return false;
	memcpy(h, target + plan->area, sizeof(*h));
	if (memcmp(h->magic, CP_VDSO_AREA_MAGIC, 16))
		return false;
	adopt_table(pid, h);
	return true;
}

/* The table an earlier clockprof left: the one its stub mapped, else the
 * one it was to map (its thunks jump there: it died before the stub ran).
 * 0: none. */
static uint64_t leftover_table(pid_t pid, const struct cp_vdso_plan *plan, const uint8_t *target)
{
	struct cp_vdso_area_header h;

	if (!leftover_header(pid, plan, target, &h))
		return 0;
	return h.table ? h.table : h.table_at;
}

/* Whether the earlier clockprof's area that plan (made for its table)
 * describes never had its table mapped, its last stub done (its mmap
 * failed: EEXIST when the place was taken), and no site of it jumps to
 * its thunks: no thread can reach them, so they may be written again for
 * a table elsewhere. A stub still in flight may yet map the table there
 * and switch the sites to those thunks: not so. */
static bool leftover_unmapped(pid_t pid, const struct cp_vdso_plan *plan, const uint8_t *target)
{
	struct cp_vdso_area_header h;
	struct cp_vdso_stub_result r;
	uint64_t word;

	if (!leftover_header(pid, plan, target, &h) || h.table || !request_done(pid, &h, &r))
		return false;
	for (int i = 0; i < plan->nsites; i++) {
		memcpy(&word, target + plan->site[i].qword, 8);
		if (word == plan->site[i].patched)
			return false;
	}
	return true;
}

/* The plan for the table at table, or, when the target holds an earlier
 * clockprof's table elsewhere, for that one (a leftover's thunks jump to
 * its own table's code). A leftover whose table was never mapped, its
 * stub done, is not followed (leftover_unmapped): its place may be taken
 * (its mmap failed with EEXIST), and every later attach would fail there
 * again. Its area, once told ours (*judged), is planned for table. */
static int make_plan(struct cp_vdso_patch *p, const uint8_t *pristine, const uint8_t *target,
		     uint64_t start, size_t size, uint64_t table, bool *judged, char *why,
		     size_t whylen)
{
	uint64_t left, differs;

	*judged = false;
	if (cp_vdso_plan_make(pristine, size, start, table, &p->plan, why, whylen))
		return -1;
	left = leftover_table(p->pid, &p->plan, target);
	if (!left || left == table)
		return 0;
	cp_vdso_plan_free(&p->plan);
	if (cp_vdso_plan_make(pristine, size, start, left, &p->plan, why, whylen))
		return -1;
	if (!leftover_unmapped(p->pid, &p->plan, target) ||
	    cp_vdso_plan_classify(&p->plan, pristine, target, &differs) != CP_VDSO_OURS)
		return 0;
	cp_vdso_plan_free(&p->plan);
	*judged = true;
	return cp_vdso_plan_make(pristine, size, start, table, &p->plan, why, whylen);
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_TABLE_TAKEN=PID plans process
 * PID's table where its vDSO itself is, so that the stub's mmap fails
 * with EEXIST, as when the target maps that place first. */
static uint64_t table_place(pid_t pid, uint64_t start, uint64_t end)
{
	uint64_t at = cp_table_place(pid, start, end, CP_VDSO_MAP_SIZE);

	return at && cp_test_hook("CLOCKPROF_TEST_TABLE_TAKEN") == (unsigned)pid ? start : at;
}

/* How long an earlier clockprof's stub request in flight is waited for:
 * a stub runs for microseconds, a preempted one on a loaded host for
 * milliseconds. A request never sent (its clockprof died before it sent
 * a thread) costs the next attach this wait once: that attach's own
 * request brings the header's numbers level again. */
#define EARLIER_STUB_WAIT_S 0.5

/* Whether an earlier clockprof's request to its stub is in flight in the
 * target (target: its vDSO image): posted, not yet done. That clockprof
 * was killed while a thread of the target ran its stub, which goes on
 * alone: planned beside it, this one's table found its place taken
 * (EEXIST, seen on a loaded host), and two stubs at once would each make
 * the vDSO writable and read-only again under the other's writes. */
static bool earlier_request_in_flight(pid_t pid, const struct cp_vdso_plan *plan,
				     const uint8_t *target)
{
	struct cp_vdso_area_header h;
	struct cp_vdso_stub_result r;

	return leftover_header(pid, plan, target, &h) && !request_done(pid, &h, &r);
}

/* Refused while another clockprof that lives holds the patch (its
 * header, if the image has one, says who; a fork's copy names its
 * parent's): its window is counted from these counts and request blocks,
 * and its detach would switch back what this one switched. */
static int refuse_owned(const struct cp_vdso_patch *p, const uint8_t *target,
			struct cp_error *err)
{
	struct cp_vdso_area_header h;
	pid_t other;

	if (!leftover_header(p->pid, &p->plan, target, &h) ||
	    !(other = cp_patch_owner_live_other(&h.owner)))
		return 0;
	return cp_fail(err, CP_EXIT_PROFILE,
		       "process %d runs the vDSO patch of another clockprof (process %d), which one clockprof holds at a time",
		       p->pid, other);
}

static uint64_t header_addr(const struct cp_vdso_patch *p);

/* The clockprof the record o names when that is neither nobody (a
 * holder that let go: its sites are back) nor this one (a fork's copy of
 * its own record); 0 otherwise. refuse_owned has refused a live one. */
static pid_t dead_holder(const struct cp_vdso_area_owner *o)
{
	struct cp_vdso_area_owner self;

	cp_patch_owner_self(&self);
	if (!o->pid || !memcmp(o, &self, sizeof(self)) || o->pid > (uint64_t)INT32_MAX)
		return 0;
	return (pid_t)o->pid;
}

/* This clockprof named in the header (its code is written: the header
 * is there) as the patch's holder. */
static int claim(struct cp_vdso_patch *p)
{
	struct cp_vdso_area_owner self;

	cp_patch_owner_self(&self);
	if (cp_proc_mem_write(p->pid, header_addr(p) + offsetof(struct cp_vdso_area_header, owner),
			      &self, sizeof(self)))
		return -1;
	p->owned = true;
	return 0;
}

/* Reads the target's image, plans the patch from the pristine one and
 * writes the code; on the first try, 1 (nothing written) while an earlier
 * clockprof's stub request is in flight. */
static int prepare_once(struct cp_vdso_patch *p, bool first, struct cp_error *err)
{
	struct cp_vdso_area_header h;
	uint64_t start, end, table, differs = 0;
	const uint8_t *pristine;
	uint8_t *target;
	char why[256];
	bool judged;
	int rc = -1;

	if (cp_proc_maps_find_vdso(p->pid, &start, &end))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no vDSO mapped", p->pid);
	if (pristine_image(end - start, &pristine, err))
		return -1;
	if (!(target = malloc(end - start)) || cp_proc_mem_read(p->pid, start, target, end - start)) {
		free(target);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the vDSO of process %d", p->pid);
	}
	if (!(table = table_place(p->pid, start, end)))
		cp_fail(err, CP_EXIT_PROFILE,
			"process %d has no room for the counter table within a jump of its vDSO", p->pid);
	else if (make_plan(p, pristine, target, start, end - start, table, &judged, why,
			   sizeof(why)))
		cp_fail(err, CP_EXIT_PROFILE, "the vDSO cannot be patched: %s", why);
	else if (refuse_owned(p, target, err))
		;	/* err names the holder */
	else if (first && earlier_request_in_flight(p->pid, &p->plan, target))
		rc = 1;
	else if (!judged &&
		 cp_vdso_plan_classify(&p->plan, pristine, target, &differs) == CP_VDSO_FOREIGN)
		cp_fail(err, CP_EXIT_PROFILE,
			"the vDSO of process %d was changed by another tool, or by another version of clockprof (at +0x%llx)", p->pid,
			(unsigned long long)differs);
	else if (write_code(p, target) || claim(p))
		cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d", p->pid);
	else
		rc = 0;
	p->info.reused = !rc && leftover_header(p->pid, &p->plan, target, &h) && h.table;
	p->info.leftover = p->info.reused ? dead_holder(&h.owner) : 0;
	free(target);
	return rc;
}

/* The count's code in the table's code pages (vdso_count.h), before any
 * site jumps there: written when they are still zeros (a fresh table, or
 * one whose clockprof died before writing them), left alone when equal
 * (a leftover's, perhaps running), refused when different. */
static int write_count(struct cp_vdso_patch *p, struct cp_error *err)
{
	uint64_t at = p->plan.table + CP_PATCH_CODE_OFF;
	uint8_t *now = malloc(CP_PATCH_CODE_SIZE);
	int rc = -1;
	size_t i;

	if (!now || cp_proc_mem_read(p->pid, at, now, CP_PATCH_CODE_SIZE)) {
		free(now);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the counter table of process %d", p->pid);
	}
	for (i = 0; i < CP_PATCH_CODE_SIZE && !now[i]; i++)
		;
	/* A leftover's offset stays (its code may be running): found another
	 * way then (libc beside the dynamic linker, at an exec), it is no
	 * other version's code for that. */
	cp_vdso_count_set_tid_offset(p->plan.count, i < CP_PATCH_CODE_SIZE ?
				     cp_vdso_count_tid_offset(now) : cp_tid_offset(p->pid));
	if (!memcmp(now, p->plan.count, CP_PATCH_CODE_SIZE))
		rc = 0;
	else if (i < CP_PATCH_CODE_SIZE)
		cp_fail(err, CP_EXIT_PROFILE,
			"the counter table of process %d holds code of another version of clockprof", p->pid);
	else if (cp_proc_mem_write(p->pid, at, p->plan.count, CP_PATCH_CODE_SIZE))
		cp_fail(err, CP_EXIT_PROFILE, "cannot write into the counter table of process %d", p->pid);
	else
		rc = 0;
	cp_patch_step();
	free(now);
	return rc;
}

static uint64_t header_addr(const struct cp_vdso_patch *p)
{
	return p->plan.base + p->plan.area;
}

/* The header as it is, with a table adopted (adopt_table). */
static int read_header(const struct cp_vdso_patch *p, struct cp_vdso_area_header *h)
{
	if (cp_proc_mem_read(p->pid, header_addr(p), h, sizeof(*h)))
		return -1;
	adopt_table(p->pid, h);
	return 0;
}

/* Whether the stub of the request h posted may still run: a thread was
 * sent through it (clockprof says so once it is, in the header) and
 * lives, and the request is not done: that thread is stopped, or has not
 * been given the CPU yet. Another stub must not be sent then, nor the
 * area written (two at once each make the vDSO writable and read-only
 * again under the other's writes: the target died of SIGSEGV). A request
 * posted and never sent (its clockprof killed first) may not run. */
static bool stub_may_run(pid_t pid, const struct cp_vdso_area_header *h)
{
	struct cp_vdso_stub_result r;
	char task[64];

	if (request_done(pid, h, &r) || h->sites[0].spare != h->gen_req || !h->sites[1].spare)
		return false;
	snprintf(task, sizeof(task), "/proc/%d/task/%llu", pid, (unsigned long long)h->sites[1].spare);
	return access(task, F_OK) == 0;
}

/* Refused while a stub may still run (stub_may_run); its sites are taken
 * out of its request first: a stub that has not reached them switches
 * none when it runs (one past them has switched them all), so that a
 * stopped target continued after clockprof gave up is not left counting
 * where nobody reads. */
static int refuse_stub_running(const struct cp_vdso_patch *p, const struct cp_vdso_area_header *h,
			       struct cp_error *err)
{
	uint64_t none = 0;

	cp_proc_mem_write(p->pid, header_addr(p) + offsetof(struct cp_vdso_area_header, nsites),
			  &none, sizeof(none));
	return cp_fail(err, CP_EXIT_PROFILE,
		       "a stub clockprof sent through thread %llu of process %d has not run yet (the process is stopped, or the thread has not had the CPU): no other is sent while it may run, and it is to switch nothing",
		       (unsigned long long)h->sites[1].spare, p->pid);
}

/* The request posted, and the thread held to run its stub, said in the
 * header (stub_may_run) as that thread is sent, still held: before the
 * stub may run, so that this write never meets the stub's own. */
static void mark_sent(void *ctx, pid_t tid)
{
	const struct cp_vdso_patch *p = ctx;
	uint64_t sent[2] = { p->gen, (uint64_t)tid };

	for (int i = 0; i < 2; i++)
		cp_proc_mem_write(p->pid, header_addr(p) +
				  offsetof(struct cp_vdso_area_header, sites[i].spare),
				  &sent[i], sizeof(sent[i]));
}

/* An earlier clockprof's request in flight (earlier_request_in_flight)
 * waited for, EARLIER_STUB_WAIT_S at most. */
static void wait_earlier_request(const struct cp_vdso_patch *p)
{
	struct cp_vdso_area_header h;
	struct cp_vdso_stub_result r;

	for (double until = cp_monotonic_s() + EARLIER_STUB_WAIT_S; cp_monotonic_s() < until;
	     usleep(1000))
		if (read_header(p, &h) || request_done(p->pid, &h, &r))
			return;
}

/* The patch prepared, after an earlier clockprof's stub request in
 * flight, if any, is done. */
static int prepare(struct cp_vdso_patch *p, struct cp_error *err)
{
	int lock = p->locked ? -1 : cp_patch_owner_lock(p->pid);	/* the look and the claim, one step */
	int rc;

	/* Held past its wait by another, or by a name squatted on: never
	 * prepared beside another's look and claim (two stubs at once). */
	if (lock == -2)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "another clockprof is preparing the vDSO patch of process %d", p->pid);
	rc = prepare_once(p, true, err);

	if (rc == 1) {
		struct cp_vdso_area_header h;

		wait_earlier_request(p);
		if (read_header(p, &h) == 0 && stub_may_run(p->pid, &h))
			rc = refuse_stub_running(p, &h, err);
		else {
			cp_vdso_plan_free(&p->plan);
			rc = prepare_once(p, false, err);
		}
	}
	cp_patch_owner_unlock(lock);
	return rc;
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_STUB_PAUSE_MS=N: the stub
 * sleeps N ms with the vDSO writable and executable, so that a process
 * the target forks lands in that window (mend_forks). */
static unsigned pause_ms(const struct cp_vdso_patch *p)
{
	return p->mend ? 0 : cp_test_hook("CLOCKPROF_TEST_STUB_PAUSE_MS");
}

/* The stub's syscalls exactly as the target's seccomp filters will see
 * them: mprotect (writable), mmap (the table), mprotect (back), madvise
 * (the counters populated), madvise twice (the counters and site blocks
 * wiped on fork), mprotect (the code pages executable), arch_prctl
 * when the thread is given a thread pointer, the round trip's getpid,
 * the tests' nanosleep, the mprotects that say a failed mmap, the
 * munmap after a failed mprotect of the code pages, and a boundary's page
 * made writable and put back. How many. ip: the syscall's in
 * cp_vdso_stub_syscall_ips. */
#define STUB_CALLS (13 + 4 * CP_VDSO_AREA_MAX_REDIRECTS)	/* redirects and inherited */

/* A redirected function's page made writable for its site's switch, and
 * put back (prot): the two calls added to d[n...]; the new n. */
static size_t page_calls(const struct cp_vdso_patch *p, struct seccomp_data *d, size_t n,
			 uint64_t qword, uint64_t prot)
{
	for (int back = 0; back < 2; back++)
		d[n++] = (struct seccomp_data){ .nr = SYS_mprotect, .arch = AUDIT_ARCH_X86_64,
			.instruction_pointer = header_addr(p) + cp_vdso_stub_syscall_ips[9],
			.args = { qword & ~4095ul, 4096, back ? prot : 7 } };
	return n;
}
static size_t stub_syscalls(const struct cp_vdso_patch *p, struct seccomp_data d[STUB_CALLS])
{
	const struct { int nr, ip; uint64_t args[6]; } calls[13] = {
		{ SYS_mprotect, 0, { p->plan.base, p->plan.size, 7 } },
		{ SYS_mmap, 1, { p->plan.table, CP_VDSO_MAP_SIZE, 3, 0x104022, (uint64_t)-1, 0 } },
		{ SYS_mprotect, 2, { p->plan.base, p->plan.size, 5 } },
		{ SYS_madvise, 4, { p->plan.table, CP_PATCH_TABLE_SIZE, 23 /* MADV_POPULATE_WRITE */ } },
		{ SYS_madvise, 6, { p->plan.table, CP_PATCH_TABLE_SIZE, 18 /* MADV_WIPEONFORK */ } },
		{ SYS_madvise, 7, { p->plan.table + CP_PATCH_SITES_OFF,
				    CP_PATCH_MAP_USED - CP_PATCH_SITES_OFF, 18 } },
		{ SYS_mprotect, 5, { p->plan.table + CP_PATCH_CODE_OFF, CP_PATCH_CODE_SIZE, 5 } },
		{ SYS_arch_prctl, 3, { 0x1002, p->plan.table + CP_VDSO_ZERO_PAGE + 8 } },
		{ SYS_getpid, 8, { 0 } },	/* cp_vdso_stop's, on a round trip */
		{ SYS_nanosleep, 10, { header_addr(p) + offsetof(struct cp_vdso_area_header, pause) } },
		{ SYS_mprotect, 11, { p->plan.base, p->plan.size, 7 } },
		{ SYS_mprotect, 12, { p->plan.base, p->plan.size, 5 } },
		{ SYS_munmap, 13, { p->plan.table, CP_PATCH_MAP_USED } },
	};
	size_t n = 0;

	for (size_t i = 0; i < 13; i++) {
		if ((i == 7 && !p->give_fs) || (i == 8 && !p->resume) || (i == 9 && !pause_ms(p)))
			continue;
		d[n] = (struct seccomp_data){ .nr = calls[i].nr, .arch = AUDIT_ARCH_X86_64,
			.instruction_pointer = header_addr(p) + cp_vdso_stub_syscall_ips[calls[i].ip] };
		memcpy(d[n++].args, calls[i].args, sizeof(d[0].args));
	}
	for (size_t i = 0; i < p->nredirects; i++)
		n = page_calls(p, d, n, p->redirects[i].plan.qword, (uint64_t)p->redirects[i].prot);
	for (size_t i = 0; i < p->ninherited; i++)	/* a leftover's, a fork's */
		n = page_calls(p, d, n, p->inherited[i].qword, p->inherited[i].prot);
	return n;
}

/* While a thread is held: it must have a thread pointer (the thunks read
 * fs:0), and the target's seccomp filters must allow the stub. */
static int check_held(void *ctx, pid_t tid, struct cp_error *err)
{
	const struct cp_vdso_patch *p = ctx;
	struct user_regs_struct r;
	struct seccomp_data calls[STUB_CALLS];
	char why[160], mode[16];
	size_t n;
	int ok;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read thread %d's registers", tid);
	if (!r.fs_base && !p->give_fs)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d has no thread pointer yet (a static executable sets it up after its entry point)",
			       p->pid);
	/* Shadow stacks are enabled thread by thread: the stub's `ret` runs
	 * on this one. */
	if (status_field_of(p->pid, tid, "x86_Thread_features", why, sizeof(why)) &&
	    strstr(why, "shstk"))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d: its thread %d uses shadow stacks",
			       p->pid, tid);
	/* The held thread's own filters: a thread may have installed some
	 * on itself alone (no TSYNC), and the stub runs on this one. */
	if (!status_field_of(p->pid, tid, "Seccomp", mode, sizeof(mode)))
		return 0;
	if (atoi(mode) == SECCOMP_MODE_STRICT)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d: its thread %d runs in seccomp's strict mode",
			       p->pid, tid);
	if (atoi(mode) != SECCOMP_MODE_FILTER)
		return 0;
	n = stub_syscalls(p, calls);
	ok = cp_seccomp_allows(tid, calls, n, why, sizeof(why));
	if (ok < 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d runs under a seccomp filter that cannot be read (thread %d's)",
			       p->pid, tid);
	return ok ? 0 : cp_fail(err, CP_EXIT_PROFILE, "process %d: thread %d: %s", p->pid, tid, why);
}

/* A redirect's site as the stub is to switch it: the word as it is now
 * (another tool's uprobe at the function's entry may share it, and come
 * or go), with the replaced instruction's bytes or the jump. -1 when the
 * replaced bytes are neither (someone else wrote there): left alone. */
static int redirect_site(const struct cp_vdso_patch *p, const struct cp_redirect_place *r,
			 struct cp_vdso_area_site *site)
{
	const struct cp_redirect_plan *b = &r->plan;
	uint64_t jump = b->patched - b->original;	/* the two differ in the replaced bytes */
	uint64_t live, original;

	if (cp_proc_mem_read(p->pid, b->qword, &live, sizeof(live)))
		return -1;
	original = cp_redirect_plan_unpatched(b, live);
	if (live != original && live != original + jump)
		return -1;
	*site = (struct cp_vdso_area_site){ b->qword, original, original + jump, 0,
					    (uint64_t)r->prot };
	return 0;
}

/* The stub's request: cmd for every site (none: the table mapped only),
 * under a new number. */
static int post_request(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
			struct cp_error *err)
{
	struct cp_vdso_area_header h;

	if (read_header(p, &h))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid);
	h.table_size = CP_VDSO_MAP_SIZE;
	h.give_fs = p->give_fs;
	h.resume = p->resume;
	h.pause[0] = pause_ms(p) / 1000;
	h.pause[1] = pause_ms(p) % 1000 * 1000000ull;
	h.vdso_base = p->plan.base;
	h.vdso_len = p->plan.size;
	h.cmd = cmd;
	h.gen_req = p->gen = h.gen_req + 1;
	h.status = 0;
	h.nsites = sites ? (uint64_t)p->plan.nsites : 0;
	h.table_at = p->plan.table;
	for (int i = 0; i < p->plan.nsites; i++)
		h.sites[i] = (struct cp_vdso_area_site){ p->plan.base + p->plan.site[i].qword,
			p->plan.site[i].original, p->plan.site[i].patched, 0, 0 };
	for (size_t i = 0; sites && i < p->nredirects; i++)
		if (redirect_site(p, &p->redirects[i], &h.sites[h.nsites]) == 0)
			h.nsites++;
	for (size_t i = 0; sites && i < p->ninherited; i++)
		h.sites[h.nsites++] = p->inherited[i];
	if (cp_proc_mem_write(p->pid, header_addr(p) + 16, (char *)&h + 16, sizeof(h) - 16))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d", p->pid);
	cp_patch_step();
	return 0;
}

static void note_held(struct cp_vdso_patch *p, const struct cp_hijack *hj)
{
	p->info.tid = hj->tid;
	p->info.syscall = hj->syscall;
	p->info.eintr |= hj->eintr;
}

/* The stub's result said as a refusal; 0 when it did what was asked. A
 * process that denies itself writable code (prctl PR_SET_MDWE) refuses
 * the code pages' mprotect, or the vDSO's, with EACCES: nothing in /proc
 * says so beforehand, the stub's own result does at once. */
static int stub_refusal(const struct cp_vdso_patch *p, const struct cp_vdso_stub_result *r,
			struct cp_error *err)
{
	long long e = -(long long)r->err;

	if (r->status == CP_VDSO_STUB_OK)
		return 0;
	if ((r->status == CP_VDSO_STUB_CODE || r->status == CP_VDSO_STUB_VDSO) && e == EACCES)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d denies itself writable code (memory-deny-write-execute: prctl PR_SET_MDWE, systemd's MemoryDenyWriteExecute=): its vDSO cannot be patched",
			       p->pid);
	if (r->status == CP_VDSO_STUB_CODE)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the counters' code could not be made executable in process %d (error %lld)",
			       p->pid, e);
	if (r->status == CP_VDSO_STUB_VDSO)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d could not be made writable (error %lld)", p->pid, e);
	return cp_fail(err, CP_EXIT_PROFILE, "the counters could not be mapped in process %d (error %lld)",
		       p->pid, e);
}

/* Tests only (test_hook.h): CLOCKPROF_TEST_STUB_WAITS_FD=N: a byte
 * written to descriptor N for each wait for the stub that runs out, so
 * that a test can say none did. */
static void note_timeout(void)
{
	int fd = (int)cp_test_hook("CLOCKPROF_TEST_STUB_WAITS_FD");

	if (fd > 2 && write(fd, "t", 1) < 0)
		return;
}

static void mend_forks(struct cp_vdso_patch *p);
static bool sites_read(const struct cp_vdso_patch *p, bool patched);

/* Waits until the stub says it is done with the request in flight. */
static int wait_stub(struct cp_vdso_patch *p, struct cp_error *err)
{
	for (double until = cp_monotonic_s() + STUB_TIMEOUT_S; cp_monotonic_s() < until; usleep(200)) {
		struct cp_vdso_area_header now;
		struct cp_vdso_stub_result r;

		if (read_header(p, &now))
			return cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid);
		now.gen_req = p->gen;
		if (!request_done(p->pid, &now, &r))
			continue;
		cp_patch_step();
		mend_forks(p);
		return stub_refusal(p, &r, err);
	}
	note_timeout();
	/* Stopped or frozen as its thread was sent: the stub runs when it
	 * is continued (said so, not blamed on what follows). */
	if (cp_vdso_patch_runs_nothing(p->pid))
		return cp_hijack_refuse_stopped(p->pid, err);
	return cp_fail(err, CP_EXIT_PROFILE,
		       "thread %d of process %d did not finish clockprof's stub within %.0f s",
		       p->info.tid, p->pid, STUB_TIMEOUT_S);
}

/* Whether a process forked in the stub's window still holds its copy of
 * that instant wrong: a writable and executable mapping (the vDSO, or a
 * boundary's page), or a site not as the request wants. */
static bool fork_wrong(const struct cp_vdso_patch *c, const struct cp_vdso_patch *p)
{
	return cp_proc_has_wx(c->pid) ||
	       (p->last_sites && !sites_read(c, p->last_cmd == CP_VDSO_CMD_PATCH));
}

static int run_stub(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
		    struct cp_error *err);

/* A process the target forked while its stub ran holds a copy of that
 * instant: its vDSO perhaps writable and executable for life (nothing
 * else would put it back), its sites half switched. Each one whose copy
 * is of that request (not exec'd since) and is wrong is sent through the
 * stub for the same request: a site already switched is left, the rest
 * are, and its vDSO is read-only again. Its own forks meanwhile, the
 * same way (its wait_stub). */
static void mend_forks(struct cp_vdso_patch *p)
{
	pid_t *kids;
	size_t n;

	if (!p->window_open)
		return;
	p->window_open = false;
	if (cp_stub_window_forks(p->pid, &p->window, &kids, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct cp_vdso_patch c = *p;	/* the same plan, in the child */
		struct cp_vdso_area_header h;
		struct cp_error err = { 0 };

		c.pid = kids[i];
		c.give_fs = false;
		c.resume = 0;
		c.mend = true;
		if (read_header(&c, &h) || memcmp(h.magic, CP_VDSO_AREA_MAGIC, 16) ||
		    h.gen_req != p->gen || !fork_wrong(&c, p))
			continue;
		if (run_stub(&c, p->last_cmd, p->last_sites, &err) == 0 && wait_stub(&c, &err) == 0)
			p->info.forks_mended++;
	}
	free(kids);
}

/* Whether every site's word reads as want (patched or original); a
 * redirect's by its replaced bytes alone (redirect_site). */
static bool sites_read(const struct cp_vdso_patch *p, bool patched)
{
	struct cp_vdso_area_site b;
	uint64_t word;

	for (int i = 0; i < p->plan.nsites; i++) {
		const struct cp_vdso_site *s = &p->plan.site[i];

		if (cp_proc_mem_read(p->pid, p->plan.base + s->qword, &word, sizeof(word)) ||
		    word != (patched ? s->patched : s->original))
			return false;
	}
	for (size_t i = 0; i < p->nredirects; i++)
		if (redirect_site(p, &p->redirects[i], &b) ||
		    cp_proc_mem_read(p->pid, b.qword, &word, sizeof(word)) ||
		    word != (patched ? b.patched : b.original))
			return false;
	for (size_t i = 0; i < p->ninherited; i++)
		if (cp_proc_mem_read(p->pid, p->inherited[i].qword, &word, sizeof(word)) ||
		    word != (patched ? p->inherited[i].patched : p->inherited[i].original))
			return false;
	return true;
}

static int prepare_new(pid_t pid, bool held, bool locked, struct cp_vdso_patch **out,
		       struct cp_error *err)
{
	struct cp_vdso_patch *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	p->pid = pid;
	p->locked = locked;
	p->info.syscall = -1;
	if (refuse_early(pid, held, err) || prepare(p, err)) {
		cp_vdso_plan_free(&p->plan);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int cp_vdso_patch_prepare(pid_t pid, bool held, struct cp_vdso_patch **out, struct cp_error *err)
{
	return prepare_new(pid, held, false, out, err);
}

/* The stub sent once through a thread of the running target for cmd
 * (sites: every site, or none: the table mapped only), and waited for. */
static int run_stub(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
		    struct cp_error *err)
{
	struct cp_hijack hj;
	struct cp_vdso_area_header h;

	if (read_header(p, &h) == 0 && stub_may_run(p->pid, &h))
		return refuse_stub_running(p, &h, err);
	p->last_cmd = cmd;
	p->last_sites = sites;
	cp_stub_window_open(&p->window);
	p->window_open = true;
	if (post_request(p, cmd, sites, err) ||
	    cp_hijack_thread(p->pid, header_addr(p) + CP_VDSO_STUB_OFFSET, check_held, mark_sent, p,
			     &hj, err))
		return -1;
	note_held(p, &hj);
	if (cmd == CP_VDSO_CMD_PATCH) {
		p->info.attach_pause_ms += hj.held_ms;
		p->info.attach_stops += hj.holds;
	} else {
		p->info.detach_pause_ms += hj.held_ms;
		p->info.detach_stops += hj.holds;
	}
	return 0;
}

static void inherit_redirects(struct cp_vdso_patch *p);

/* The sites a clockprof that ended without switching back left switched
 * (the vDSO's and its redirects'), switched back by one pass of the stub
 * before this one's rules are written: this window starts from the
 * original code, as a fresh one does (a read before its wrapper's rule
 * would otherwise claim its site at the wrapper: cp_vdso_patch_switch). */
static int restore_leftover(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc = 0;

	inherit_redirects(p);
	if (sites_read(p, false))
		p->info.leftover = 0;	/* a record only: nothing was left switched */
	else
		rc = run_stub(p, CP_VDSO_CMD_RESTORE, true, err) || wait_stub(p, err) ? -1 : 0;
	p->ninherited = 0;	/* the dead one's: never switched again */
	return rc;
}

/* A fresh table is mapped by a first pass of the stub, its code written
 * and whatever rules are known; the sites are switched to it later
 * (cp_vdso_patch_switch), once the wrappers' rules are in. */
int cp_vdso_patch_apply(struct cp_vdso_patch *p, struct cp_error *err)
{
	if (!p->info.reused && (run_stub(p, CP_VDSO_CMD_PATCH, false, err) || wait_stub(p, err)))
		return -1;
	if (p->info.leftover && restore_leftover(p, err))
		return -1;
	if (cp_patch_table_open(&p->table, p->pid, p->plan.table))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	return write_count(p, err) || write_rules(p, err) ? -1 : 0;
}

/* A read that comes before its wrapper's rule claims its site in its
 * thread's block at the wrapper, and every later read of that thread
 * there is counted at once where it was claimed (vdso_count.S): the
 * sites switched after the rules, each thread's reads are named at their
 * callers, as under run. The vDSO's sites and the redirects planned so
 * far are switched by one pass of the stub. */
int cp_vdso_patch_switch(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc;

	p->patched = true;
	if (run_stub(p, CP_VDSO_CMD_PATCH, true, err))
		return -1;
	rc = cp_vdso_patch_confirm(p, err);
	return rc > 0 ? cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid) : rc;
}

/* The rules written where the table is, if it is mapped. */
static int write_rules(struct cp_vdso_patch *p, struct cp_error *err)
{
	struct cp_patch_rules all;
	size_t unplaced;
	int rc;

	if (!p->table.addr)
		return 0;
	/* A frame hop first: where a wrapper's rule has the same pc (Go's
	 * time.now calls the vDSO itself), the walk starts from the frame,
	 * as the uprobes' does. */
	if (cp_patch_rules_merge(&p->hops, &p->rules, &all))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	rc = cp_patch_rules_write(p->pid, p->table.addr, &all, &unplaced);
	p->info.rules = all.n - unplaced;
	p->info.rules_unplaced = unplaced + all.dropped;
	cp_patch_rules_free(&all);
	return rc ? cp_fail(err, CP_EXIT_PROFILE, "cannot write the wrapper rules into process %d",
			    p->pid) : 0;
}

int cp_vdso_patch_add_frame_hops(struct cp_vdso_patch *p, const uint64_t *pcs, size_t n,
				 struct cp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct cp_patch_rule hop = { .pc = pcs[i], .cfa_offset = 16, .bp_offset = -16,
					     .via_base = CP_PATCH_VIA_KEEP | CP_PATCH_RULE_BASE_BP };

		if (cp_patch_rules_add(&p->hops, &hop))
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	}
	return write_rules(p, err);
}

/* A held thread's table mapped before its first instruction (a launched
 * command's, or a followed process's just after its exec), the sites left
 * alone, and its code and the rules written into it: the thread goes
 * through the stub and comes back to clockprof by cp_vdso_stop (a reused
 * table is there already). */
static int map_held(struct cp_vdso_patch *p, pid_t tid, struct cp_error *err)
{
	struct user_regs_struct r;
	int rc;

	if (p->info.reused)
		return write_count(p, err) || write_rules(p, err) ? -1 : 0;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read thread %d's registers", tid);
	p->resume = r.rip;
	rc = post_request(p, CP_VDSO_CMD_PATCH, false, err) ||
	     cp_hijack_held_round_trip(p->pid, tid, header_addr(p) + CP_VDSO_STUB_OFFSET,
				       header_addr(p) + CP_VDSO_STOP_OFFSET,
				       header_addr(p) + CP_VDSO_STOP_SYSCALL_OFFSET, check_held, p, err) ||
	     wait_stub(p, err);
	p->resume = 0;
	return rc || write_count(p, err) || write_rules(p, err) ? -1 : 0;
}

int cp_vdso_patch_set_rules(struct cp_vdso_patch *p, const struct cp_unwind_table *t,
			    struct cp_error *err)
{
	cp_patch_rules_free(&p->rules);
	if (cp_patch_rules_from(t, &p->rules))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	return write_rules(p, err);
}

int cp_vdso_patch_sites(const struct cp_vdso_patch *p, struct cp_patch_sites *out)
{
	return cp_patch_table_sites(&p->table, out);
}

int cp_vdso_patch_arm_held(struct cp_vdso_patch *p, pid_t tid, struct cp_error *err)
{
	struct cp_hijack hj;
	struct user_regs_struct r;

	/* A static executable sets its thread pointer after its entry point,
	 * where it is held: until then the stub gives it one to zeros. */
	p->give_fs = !p->info.reused && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 && !r.fs_base;
	if (cp_patch_table_open(&p->table, p->pid, p->plan.table))
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	if (map_held(p, tid, err) ||
	    post_request(p, CP_VDSO_CMD_PATCH, true, err) ||
	    cp_hijack_held(p->pid, tid, header_addr(p) + CP_VDSO_STUB_OFFSET, check_held, p, &hj, err))
		return -1;
	p->patched = true;
	note_held(p, &hj);
	return 0;
}

int cp_vdso_patch_confirm(struct cp_vdso_patch *p, struct cp_error *err)
{
	struct cp_vdso_area_header h;

	if (read_header(p, &h))
		return 1;	/* gone already: nothing left to confirm */
	if (wait_stub(p, err))
		return read_header(p, &h) ? 1 : -1;
	/* A command that ends at once (true) may be gone by each look. */
	if (read_header(p, &h))
		return 1;
	if (h.table != p->plan.table)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no counter table", p->pid);
	if (!sites_read(p, true))
		return read_header(p, &h) ? 1 : cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d changed while it was patched (another tool?)", p->pid);
	return 0;	/* the table was opened before the sites were switched */
}

void cp_vdso_patch_test_gap(int try)
{
	unsigned ms = try ? 0 : cp_test_hook("CLOCKPROF_TEST_READ_GAP_MS");

	if (ms)
		usleep(ms * 1000u);
}

/* Between two reads of the counts at the window's start: the requests'
 * epoch moved (each try anew), so that every request counted is made of
 * reads the counts have, and the reads through syscall() its blocks hold
 * are of the counts' instant. Apart, a loaded host ran the target for ms
 * between them, and its vDSO reads there were counted without the
 * syscall() reads of their requests (reply_target mixed: 1216 and 606,
 * for twice). */
static int mark_requests(struct cp_patch_table *t, int try, void *arg)
{
	struct cp_vdso_patch *p = arg;

	cp_vdso_patch_test_gap(try);
	if (!p->nredirects)
		return 0;
	return cp_patch_requests_mark(p->pid, p->plan.table, t->words, &p->requests_mark);
}

int cp_vdso_patch_mark(struct cp_vdso_patch *p)
{
	return cp_patch_table_mark(&p->table, mark_requests, p);
}

void cp_vdso_patch_mark_fresh(struct cp_vdso_patch *p)
{
	p->requests_mark = (struct cp_patch_requests_mark){ 0 };
	cp_patch_table_mark_zeros(&p->table);
}

int cp_vdso_patch_add_redirect(struct cp_vdso_patch *p, enum cp_redirect_kind kind, const char *path,
			       uint64_t off, uint64_t size, char *why, size_t whylen)
{
	struct cp_redirect_place *r = &p->redirects[p->nredirects];
	uint64_t call = kind != CP_REDIRECT_SYSCALL ? cp_boundary_close_addr(p->plan.table) :
			cp_syscall_count_addr(p->plan.table);

	if (p->nredirects == CP_VDSO_AREA_MAX_REDIRECTS) {
		snprintf(why, whylen, "clockprof redirects %d functions at most", CP_VDSO_AREA_MAX_REDIRECTS);
		return -1;
	}
	if (cp_redirect_place(p->pid, kind, path, off, size, call, r, why, whylen))
		return -1;
	if ((!r->written &&
	     cp_proc_mem_write(p->pid, r->plan.tramp, r->plan.code, sizeof(r->plan.code))) ||
	    (r->plan.jump_len == 2 &&
	     cp_proc_mem_write(p->pid, r->plan.springboard, r->plan.springboard_code,
			       sizeof(r->plan.springboard_code)))) {
		snprintf(why, whylen, "its trampoline cannot be written");
		return -1;
	}
	cp_patch_step();
	p->nredirects++;
	return 0;
}

int cp_vdso_patch_read_requests(struct cp_vdso_patch *p)
{
	struct iovec local = { p->table.words, CP_PATCH_TABLE_SIZE };
	struct iovec remote = { (void *)(uintptr_t)p->plan.table, CP_PATCH_TABLE_SIZE };
	struct cp_patch_requests now;

	if (!p->nredirects || !p->table.words ||
	    process_vm_readv(p->pid, &local, 1, &remote, 1, 0) != (ssize_t)CP_PATCH_TABLE_SIZE ||
	    cp_patch_requests_read(p->pid, p->plan.table, &p->requests_mark, p->table.words, &now))
		return -1;
	cp_patch_requests_free(&p->requests);
	p->requests = now;
	p->requests_known = true;
	return 0;
}

const struct cp_patch_requests *cp_vdso_patch_requests(const struct cp_vdso_patch *p)
{
	return p->requests_known ? &p->requests : NULL;
}

void cp_vdso_patch_add_requests(const struct cp_vdso_patch *p, bool hres, bool requests,
				struct cp_totals *t)
{
	if (p->requests_known)
		cp_patch_requests_add(&p->requests, &p->requests_mark, hres, requests, t);
}

void cp_vdso_patch_settle_requests(struct cp_vdso_patch *p, const struct cp_request_sums *at_exit,
				   struct cp_patch_sites *sites)
{
	cp_patch_requests_settle(&p->requests, at_exit, &p->requests_mark, sites);
	p->requests_known = true;
}

int cp_vdso_patch_read(struct cp_vdso_patch *p, struct cp_vdso_patch_counts *c)
{
	return cp_patch_table_read(&p->table, c);
}

void cp_vdso_patch_info(const struct cp_vdso_patch *p, struct cp_vdso_patch_info *info)
{
	*info = p->info;
}

void cp_vdso_patch_settle(struct cp_vdso_patch *p, const uint64_t sums[CP_PATCH_SLOT_WORDS],
			  struct cp_patch_sites *sites)
{
	cp_patch_table_settle(&p->table, sums, sites);
}

uint64_t cp_vdso_patch_table(const struct cp_vdso_patch *p)
{
	return p->table.addr;
}

const uint64_t *cp_vdso_patch_marked(const struct cp_vdso_patch *p)
{
	return p->table.words;
}

void cp_vdso_patch_forget(struct cp_vdso_patch *p)
{
	p->patched = false;
	p->owned = false;	/* its header went with the image */
}

int cp_vdso_patch_restore(struct cp_vdso_patch *p, struct cp_error *err)
{
	struct cp_vdso_patch_counts last;

	if (!p->patched || kill(p->pid, 0) != 0)
		return 0;
	cp_patch_table_read(&p->table, &last);	/* the last counts, kept */
	p->patched = false;
	/* Sites as they were, and no writable and executable copy of the
	 * vDSO (a fork of a stub's window, whose clockprof died before
	 * mending it, has one): nothing to do. */
	if (sites_read(p, false) && !cp_proc_has_wx(p->pid))
		return 0;
	if (run_stub(p, CP_VDSO_CMD_RESTORE, true, err) || wait_stub(p, err))
		return -1;
	if (!sites_read(p, false) && kill(p->pid, 0) == 0)
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO of process %d could not be restored", p->pid);
	return 0;
}

uint64_t cp_vdso_patch_area_offset(const struct cp_vdso_patch *p)
{
	return p->plan.area;
}

/* A fork's redirected functions (its code is its parent's): the sites
 * its parent's stub switched, as its header copy says, switched back with
 * the vDSO's. */
static void inherit_redirects(struct cp_vdso_patch *p)
{
	struct cp_vdso_area_header h;

	if (!p->info.reused || read_header(p, &h))
		return;
	for (uint64_t i = (uint64_t)p->plan.nsites; i < h.nsites && i < CP_VDSO_AREA_MAX_SITES; i++)
		if (h.sites[i].prot && p->ninherited < CP_VDSO_AREA_MAX_REDIRECTS)
			p->inherited[p->ninherited++] = (struct cp_vdso_area_site){ h.sites[i].qword,
				h.sites[i].original, h.sites[i].patched, 0, h.sites[i].prot };
}

/* Under the owner lock from the look to the release: the claim this
 * restore makes (prepare's) is never seen by another clockprof, which
 * waits for the lock instead of being refused by a holder that is only
 * switching back (a restorer, patch_restorer.h). */
int cp_vdso_patch_restore_copy(pid_t pid, struct cp_error *err)
{
	int lock = cp_patch_owner_lock(pid);
	struct cp_vdso_patch *p;
	int rc = -1;

	if (lock == -2)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "another clockprof is preparing the vDSO patch of process %d", pid);
	if (prepare_new(pid, false, true, &p, err) == 0) {
		p->patched = p->info.reused;	/* its sites are its parent's, switched */
		inherit_redirects(p);
		rc = cp_vdso_patch_restore(p, err);
		cp_vdso_patch_free(p);
	}
	cp_patch_owner_unlock(lock);
	return rc;
}

/* The header no longer names this clockprof, if it still does (a record
 * another wrote since is left alone): the next clockprof may patch. */
static void release(struct cp_vdso_patch *p)
{
	struct cp_vdso_area_owner self, none = { 0 };
	struct cp_vdso_area_header h;

	if (!p->owned || read_header(p, &h) || memcmp(h.magic, CP_VDSO_AREA_MAGIC, 16))
		return;
	cp_patch_owner_self(&self);
	if (!memcmp(&h.owner, &self, sizeof(self)))
		cp_proc_mem_write(p->pid, header_addr(p) + offsetof(struct cp_vdso_area_header, owner),
				  &none, sizeof(none));
	p->owned = false;
}

void cp_vdso_patch_free(struct cp_vdso_patch *p)
{
	if (!p)
		return;
	release(p);
	cp_patch_table_close(&p->table);
	cp_patch_requests_free(&p->requests);
	cp_patch_rules_free(&p->rules);
	cp_patch_rules_free(&p->hops);
	cp_vdso_plan_free(&p->plan);
	free(p);
}

int cp_vdso_patch_attach(pid_t pid, bool fresh, struct cp_vdso_patch **out,
			 struct cp_error *err)
{
	struct cp_error ignored;

	if (cp_vdso_patch_prepare(pid, false, out, err))
		return -1;
	if (cp_vdso_patch_apply(*out, err) || cp_vdso_patch_switch(*out, err) ||
	    (fresh ? (cp_vdso_patch_mark_fresh(*out), 0) : cp_vdso_patch_mark(*out))) {
		cp_vdso_patch_detach(*out, &ignored);
		*out = NULL;
		if (!err->msg[0])
			cp_fail(err, CP_EXIT_PROFILE, "the counters of process %d cannot be read", pid);
		return -1;
	}
	return 0;
}

int cp_vdso_patch_detach(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc = p ? cp_vdso_patch_restore(p, err) : 0;

	cp_vdso_patch_free(p);
	return rc;
}
