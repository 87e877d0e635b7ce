/* vdso_prepare.c - a patch made ready before anything runs in the target:
 * the refusals that need no stub, the plan from the pristine image, the
 * code written into the vDSO's unused end, the header claimed for this
 * clockprof; an earlier clockprof's patch found and taken over, or its
 * stub in flight waited for. See vdso_patch_internal.h. */
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
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/audit.h>
#include <sys/syscall.h>
#include "cgroup.h"
#include "redirect_place.h"
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
#include "vdso_patch_internal.h"
#include "vdso_plan.h"

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

/* The table may take at most this share of the room a cap on memory
 * leaves a process: 35 MiB of a 64 GiB ulimit -v is nothing to it, of
 * the last 64 MiB a malloc it could make before. */
#define CAPPED_ROOM_SHARE 32

/* Whether the target caps its address space or its data (RLIMIT_AS,
 * RLIMIT_DATA: ulimit -v, systemd's LimitAS=/LimitDATA=) so near what it
 * uses (VmSize, VmData) that the table would take more than a 32nd of
 * the room left: the table, a private writable mapping, counts against
 * both whatever its flags, and stays mapped after detach, and allocations
 * the process made within its budget before would fail; its forks inherit
 * the cap and the table alike. Which cap, said in words; NULL when none
 * is so near. */
const char *cp_vdso_capped_memory(pid_t pid, unsigned long long *mib)
{
	static const struct {
		int resource;
		const char *used, *name;
	} caps[] = {
		{ RLIMIT_AS, "VmSize", "its address space (RLIMIT_AS, ulimit -v)" },
		{ RLIMIT_DATA, "VmData", "its data (RLIMIT_DATA, ulimit -d)" },
	};
	unsigned long long used, room;
	struct rlimit r;
	char val[64];

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (prlimit(pid, caps[i].resource, NULL, &r) || r.rlim_cur == RLIM_INFINITY)
			continue;
		used = cp_proc_status_field(pid, 0, caps[i].used, val, sizeof(val)) ?
			       strtoull(val, NULL, 10) << 10 :
			       0;
		room = r.rlim_cur > used ? r.rlim_cur - used : 0;
		if (room / CAPPED_ROOM_SHARE < CP_VDSO_MAP_SIZE) {
			*mib = (unsigned long long)r.rlim_cur >> 20;
			return caps[i].name;
		}
	}
	return NULL;
}

#define KCMP_VM_ 1 /* <linux/kcmp.h>'s KCMP_VM */

/* Whether processes a and b share one address space (kcmp). */
static bool same_memory(pid_t a, pid_t b)
{
	return syscall(SYS_kcmp, a, b, KCMP_VM_, 0, 0) == 0;
}

/* Whether thread tid of pid waits in vfork() for its child's exec or
 * exit ('D' in kernel_clone, where the wait is). */
static long in_vfork(pid_t pid, pid_t tid, void *arg)
{
	char path[96], wchan[64];
	struct cp_proc_stat st;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)tid);
	if (cp_proc_read_text(path, wchan, sizeof(wchan)) <= 0 || !strstr(wchan, "clone"))
		return 0;
	return cp_proc_stat_read(tid, &st) == 0 && st.state == 'D';
}

/* A child of thread tid of pid that shares pid's memory and is not a
 * vfork() child; 0: none. */
static long sharing_child(pid_t pid, pid_t tid, void *arg)
{
	char path[96], kids[4096], *at, *next;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
	if (cp_proc_read_text(path, kids, sizeof(kids)) <= 0)
		return 0;
	for (at = kids; *at; at = next) {
		long kid = strtol(at, &next, 10);

		if (next == at)
			break;
		if (kid > 0 && same_memory(pid, (pid_t)kid) && !in_vfork(pid, tid, NULL))
			return kid;
	}
	return 0;
}

/* A process other than pid that shares its address space: one a thread
 * of pid made with clone(CLONE_VM) but not CLONE_THREAD, or the one that
 * made pid so; 0: none. A vfork() child of pid (pid's thread waits for
 * its exec or exit, and is held by none) is none: it reads no clock.
 * vfork: whether it is pid that is the vfork() child, its parent waiting:
 * the memory is the parent's, which would carry the patch after the
 * child's exec, with nothing to switch it back. */
static pid_t memory_sharer(pid_t pid, bool *vfork)
{
	struct cp_proc_stat st;

	*vfork = false;
	if (cp_proc_stat_read(pid, &st) == 0 && st.ppid > 1 && same_memory(pid, st.ppid)) {
		*vfork = cp_proc_thread_find(st.ppid, in_vfork, NULL) != 0;
		return st.ppid;
	}
	return (pid_t)cp_proc_thread_find(pid, sharing_child, NULL);
}

/* How a sharer must last to be believed: seen, the same process, at
 * SHARER_LOOKS looks in a row SHARER_LOOK_US apart, within at most
 * SHARER_LOOKS_MAX looks. A vfork() child is told by its parent's wait,
 * which a parent preempted right after the clone has not reached yet: a
 * loaded host refused a program that spawns /bin/true (posix_spawn) so.
 * A child that shares the memory for a moment only (it execs or exits)
 * is no sharer either: the reads of one made in the window go to its
 * parent's slot all the same (docs/patch.md). */
#define SHARER_LOOKS 10
#define SHARER_LOOK_US 2000
#define SHARER_LOOKS_MAX 50

/* memory_sharer's answer, where it lasts; 0: none lasted. */
static pid_t lasting_sharer(pid_t pid, bool *vfork)
{
	pid_t other = memory_sharer(pid, vfork), again;
	int same = 0;

	for (int looks = 1; other && same < SHARER_LOOKS; looks++, other = again) {
		if (looks == SHARER_LOOKS_MAX)
			return 0;
		usleep(SHARER_LOOK_US);
		again = memory_sharer(pid, vfork);
		same = again == other ? same + 1 : 0;
	}
	return other;
}

int cp_vdso_refuse_shared_memory(pid_t pid, struct cp_error *err)
{
	bool vfork;
	pid_t other = lasting_sharer(pid, &vfork);

	if (other && vfork)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d is a vfork() child, in its parent %d's memory until it execs or exits: the patch would be written into the parent, and stay there after the child's exec",
			pid, other);
	return other ? cp_fail(err, CP_EXIT_PROFILE,
			       "process %d shares its memory with process %d (clone(CLONE_VM) without CLONE_THREAD): the patch's counters would count that process's reads as its own",
			       pid, other) :
		       0;
}

/* What forbids the patch before anything is touched. */
static int refuse_early(pid_t pid, bool held, struct cp_error *err)
{
	char val[128];
	pid_t tracer;

	if (cp_proc_runs_32_bit(pid))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d is a 32-bit program", pid);
	if (strict_overcommit())
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"the kernel charges all private memory to commit (vm.overcommit_memory=2): the patch's %zu MiB counter table would be charged to process %d and to every process it forks",
			(size_t)CP_VDSO_MAP_SIZE >> 20, pid);
	if (cp_proc_status_field(pid, 0, "Seccomp", val, sizeof(val)) &&
	    atoi(val) == SECCOMP_MODE_STRICT)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d runs in seccomp's strict mode",
			       pid);
	if (cp_proc_status_field(pid, 0, "x86_Thread_features", val, sizeof(val)) &&
	    strstr(val, "shstk"))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d uses shadow stacks", pid);
	/* Not for a launched command: clockprof itself holds it. */
	if (!held && (tracer = cp_vdso_patch_tracer(pid)))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d is already under a debugger (traced by process %d)", pid,
			       (int)tracer);
	/* At once, not after a hold that cannot come (one stopped while it
	 * is held is found by the hold: cp_hijack_thread). */
	if (!held && cp_vdso_patch_runs_nothing(pid))
		return cp_hijack_refuse_stopped(pid, err);
	return 0;
}

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

void cp_vdso_patch_warm(void)
{
	pthread_once(&own_vdso.once, find_own_vdso);
	cp_patch_table_warm();
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
		return cp_fail(err, CP_EXIT_PROFILE,
			       "clockprof has no vDSO of its own to compare with");
	if (own_vdso.size != size)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"the target's vDSO is not this kernel's 64-bit one (%zu bytes, not %zu)",
			size, own_vdso.size);
	if (own_vdso.sealed)
		return cp_fail(
			err, CP_EXIT_PROFILE,
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
		if (cp_vdso_write(p, p->plan.base + from, p->plan.bytes + from, to - from))
			return -1;
		cp_patch_step();
	}
	return 0;
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
	cp_vdso_adopt_table(pid, h);
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

	if (!leftover_header(pid, plan, target, &h) || h.table ||
	    !cp_vdso_request_done(pid, &h, &r))
		return false;
	for (int i = 0; i < plan->nsites; i++) {
		memcpy(&word, target + plan->site[i].qword, 8);
		if (word == plan->site[i].patched || word == plan->site[i].other_patched)
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

	return leftover_header(pid, plan, target, &h) && !cp_vdso_request_done(pid, &h, &r);
}

/* Refused while another clockprof that lives holds the patch (its
 * header, if the image has one, says who; a fork's copy names its
 * parent's): its window is counted from these counts and request blocks,
 * and its detach would switch back what this one switched. */
static int refuse_owned(const struct cp_vdso_patch *p, const uint8_t *target, struct cp_error *err)
{
	struct cp_vdso_area_header h;
	pid_t other;

	if (!leftover_header(p->pid, &p->plan, target, &h) ||
	    !(other = cp_patch_owner_live_other(&h.owner)))
		return 0;
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"process %d runs the vDSO patch of another clockprof (process %d), which one clockprof holds at a time",
		p->pid, other);
}

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
	if (cp_vdso_write(p, cp_vdso_header_addr(p) + offsetof(struct cp_vdso_area_header, owner),
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
	if (!(target = malloc(end - start)) ||
	    cp_proc_mem_read(p->pid, start, target, end - start)) {
		free(target);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the vDSO of process %d", p->pid);
	}
	if (!(table = table_place(p->pid, start, end)))
		cp_fail(err, CP_EXIT_PROFILE,
			"process %d has no room for the counter table within a jump of its vDSO",
			p->pid);
	else if (make_plan(p, pristine, target, start, end - start, table, &judged, why,
			   sizeof(why)))
		cp_fail(err, CP_EXIT_PROFILE, "the vDSO cannot be patched: %s", why);
	else if (refuse_owned(p, target, err))
		; /* err names the holder */
	else if (first && earlier_request_in_flight(p->pid, &p->plan, target))
		rc = 1;
	else if (!judged &&
		 cp_vdso_plan_classify(&p->plan, pristine, target, &differs) == CP_VDSO_FOREIGN)
		cp_fail(err, CP_EXIT_PROFILE,
			"the vDSO of process %d was changed by another tool, or by another version of clockprof (at +0x%llx)",
			p->pid, (unsigned long long)differs);
	else if (write_code(p, target) || claim(p))
		cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d", p->pid);
	else
		rc = 0;
	p->info.reused = !rc && leftover_header(p->pid, &p->plan, target, &h) && h.table;
	p->info.leftover = p->info.reused ? dead_holder(&h.owner) : 0;
	free(target);
	return rc;
}

/* An earlier clockprof's request in flight (earlier_request_in_flight)
 * waited for, EARLIER_STUB_WAIT_S at most. */
static void wait_earlier_request(const struct cp_vdso_patch *p)
{
	struct cp_vdso_area_header h;
	struct cp_vdso_stub_result r;

	for (double until = cp_monotonic_s() + EARLIER_STUB_WAIT_S; cp_monotonic_s() < until;
	     usleep(1000))
		if (cp_vdso_read_header(p, &h) || cp_vdso_request_done(p->pid, &h, &r))
			return;
}

/* The patch prepared, after an earlier clockprof's stub request in
 * flight, if any, is done. */
static int prepare(struct cp_vdso_patch *p, struct cp_error *err)
{
	/* the look and the claim, one step */
	int lock = p->locked ? -1 : cp_patch_owner_lock(p->pid);
	int rc;

	/* Held past its wait by another, or by a name squatted on: never
	 * prepared beside another's look and claim (two stubs at once). */
	if (lock == -2)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "another clockprof is preparing the vDSO patch of process %d",
			       p->pid);
	rc = prepare_once(p, true, err);

	if (rc == 1) {
		struct cp_vdso_area_header h;

		wait_earlier_request(p);
		if (cp_vdso_read_header(p, &h) == 0 &&
		    cp_vdso_stub_may_run(p->pid, cp_vdso_header_addr(p), &h))
			rc = cp_vdso_refuse_stub_running(p, &h, err);
		else {
			cp_vdso_plan_free(&p->plan);
			rc = prepare_once(p, false, err);
		}
	}
	cp_patch_owner_unlock(lock);
	return rc;
}

int cp_vdso_prepare_new(pid_t pid, bool held, bool locked, struct cp_vdso_patch **out,
			struct cp_error *err)
{
	struct cp_vdso_patch *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	p->pid = pid;
	/* first: should the program exec another from here on, the patch's
	 * writes fail rather than land in the new one */
	p->mem_pin = cp_proc_mem_pin(pid);
	p->locked = locked;
	p->info.syscall = -1;
	if (refuse_early(pid, held, err) || prepare(p, err)) {
		cp_vdso_plan_free(&p->plan);
		cp_proc_mem_unpin(p->mem_pin);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}
