/* vdso_area_io.c - the patch's area in the target, read and written from
 * outside: its header (the stub's request and result, the table it
 * mapped), and the target's /proc status (per thread: a seccomp filter,
 * shadow stacks, a tracer), whether it runs at all. See
 * vdso_patch_internal.h. */
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

/* Whether the process runs nothing until someone continues it: a thread
 * stopped by a signal, or its cgroup frozen (its threads then read S). */
bool cp_vdso_patch_runs_nothing(pid_t pid)
{
	return cp_proc_stopped_thread(pid) || cp_cgroup_frozen(pid);
}

pid_t cp_vdso_patch_tracer(pid_t pid)
{
	pid_t live = cp_proc_live_tid(pid); /* a zombie main thread has none */
	char val[32];

	return cp_proc_status_field(pid, live == pid ? 0 : live, "TracerPid", val, sizeof(val)) ?
		       (pid_t)atoi(val) :
		       0;
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
bool cp_vdso_request_done(pid_t pid, const struct cp_vdso_area_header *h,
			  struct cp_vdso_stub_result *r)
{
	if (h->gen_done == h->gen_req) {
		*r = (struct cp_vdso_stub_result){ .gen = h->gen_done,
						   .status = h->status,
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
void cp_vdso_adopt_table(pid_t pid, struct cp_vdso_area_header *h)
{
	struct cp_vdso_stub_result r;

	if (!h->table && h->table_at && h->gen_done != h->gen_req &&
	    table_result(pid, h->table_at, h->gen_req, &r) &&
	    (r.status == CP_VDSO_STUB_OK || r.status == CP_VDSO_STUB_VDSO))
		h->table = h->table_at;
}

int cp_vdso_write(const struct cp_vdso_patch *p, uint64_t at, const void *buf, size_t len)
{
	return cp_proc_mem_write_pinned(p->mem_pin, p->pid, at, buf, len);
}

uint64_t cp_vdso_header_addr(const struct cp_vdso_patch *p)
{
	return p->plan.base + p->plan.area;
}

/* The header as it is, with a table adopted (cp_vdso_adopt_table). */
int cp_vdso_read_header(const struct cp_vdso_patch *p, struct cp_vdso_area_header *h)
{
	if (cp_proc_mem_read(p->pid, cp_vdso_header_addr(p), h, sizeof(*h)))
		return -1;
	cp_vdso_adopt_table(p->pid, h);
	return 0;
}

/* Whether addresses a and b of pid lie in one mapping. */
static bool same_mapping(pid_t pid, uint64_t a, uint64_t b)
{
	struct cp_proc_map *maps = NULL;
	bool same = false;
	size_t n = 0;

	if (cp_proc_maps_read(pid, &maps, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (maps[i].start <= a && a < maps[i].end)
			same = maps[i].start <= b && b < maps[i].end;
	free(maps);
	return same;
}

bool cp_vdso_stub_left(pid_t pid, uint64_t area, const struct cp_vdso_area_header *h, bool may_stop)
{
	uint64_t frame = h->sites[2].spare, sp, pc;
	pid_t tid = (pid_t)h->sites[1].spare;
	struct cp_vdso_area_header now;
	struct cp_vdso_stub_result r;

	if (!frame || tid <= 0 || h->sites[0].spare != h->gen_req ||
	    cp_hijack_peek(pid, tid, may_stop, &sp, &pc) ||
	    (area <= pc && pc < area + CP_VDSO_AREA_SIZE) || sp < frame + CP_HIJACK_STUB_FRAME ||
	    !same_mapping(pid, frame, sp))
		return false;
	/* Out of it, and its request still not done after that look: a stub
	 * that ran wrote its result before it returned. */
	if (cp_proc_mem_read(pid, area, &now, sizeof(now)))
		return false;
	cp_vdso_adopt_table(pid, &now);
	now.gen_req = h->gen_req;
	return !cp_vdso_request_done(pid, &now, &r);
}

/* Whether the stub of the request h posted (the area at area) may still
 * run: a thread was sent through it (clockprof says so once it is, in the
 * header) and lives, the request is not done, and the thread did not
 * leave it before it ran (cp_vdso_stub_left): that thread is stopped, has
 * not been given the CPU yet, or runs a handler on top of it. Another
 * stub must not be sent then, nor the area written (two at once each
 * make the vDSO writable and read-only again under the other's writes:
 * the target died of SIGSEGV). A request posted and never sent (its
 * clockprof killed first) may not run. */
bool cp_vdso_stub_may_run(pid_t pid, uint64_t area, const struct cp_vdso_area_header *h)
{
	struct cp_vdso_stub_result r;
	char task[64];

	if (cp_vdso_request_done(pid, h, &r) || h->sites[0].spare != h->gen_req ||
	    !h->sites[1].spare)
		return false;
	snprintf(task, sizeof(task), "/proc/%d/task/%llu", pid,
		 (unsigned long long)h->sites[1].spare);
	return access(task, F_OK) == 0 && !cp_vdso_stub_left(pid, area, h, true);
}

int cp_vdso_refuse_gone(const struct cp_vdso_patch *p, struct cp_error *err)
{
	if (cp_proc_alive(p->pid))
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"process %d no longer has the memory clockprof planned for (it exec'd another program, or unmapped its vDSO, meanwhile)",
			p->pid);
	return cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid);
}

void cp_vdso_take_sites_out(const struct cp_vdso_patch *p)
{
	uint64_t none = 0;

	cp_vdso_write(p, cp_vdso_header_addr(p) + offsetof(struct cp_vdso_area_header, nsites),
		      &none, sizeof(none));
}

/* Refused while a stub may still run (cp_vdso_stub_may_run); its sites
 * are taken out of its request first (cp_vdso_take_sites_out). */
int cp_vdso_refuse_stub_running(const struct cp_vdso_patch *p, const struct cp_vdso_area_header *h,
				struct cp_error *err)
{
	cp_vdso_take_sites_out(p);
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"a stub clockprof sent through thread %llu of process %d has not run yet (the process is stopped, the thread has not had the CPU, or it runs a signal handler on top of the stub): no other is sent while it may run, and it is to switch nothing",
		(unsigned long long)h->sites[1].spare, p->pid);
}
