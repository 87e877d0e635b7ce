/* vdso_patch.c - see vdso_patch.h: the plan (vdso_plan.c) written into
 * the target, applied and undone by the stub (vdso_area.S) on one held
 * thread (hijack.c), and the counters read back. The steps it builds on
 * are vdso_prepare.c's, vdso_stub.c's and vdso_area_io.c's
 * (vdso_patch_internal.h). */
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
#include "redirect_code.h"
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

static int write_rules(struct cp_vdso_patch *p, struct cp_error *err);
static void inherit_redirects(struct cp_vdso_patch *p);

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
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the counter table of process %d",
			       p->pid);
	}
	for (i = 0; i < CP_PATCH_CODE_SIZE && !now[i]; i++)
		;
	/* A leftover's offset stays (its code may be running): found another
	 * way then (libc beside the dynamic linker, at an exec), it is no
	 * other version's code for that. */
	cp_vdso_count_set_tid_offset(p->plan.count, i < CP_PATCH_CODE_SIZE ?
							    cp_vdso_count_tid_offset(now) :
							    cp_tid_offset(p->pid));
	if (!memcmp(now, p->plan.count, CP_PATCH_CODE_SIZE))
		rc = 0;
	else if (i < CP_PATCH_CODE_SIZE)
		cp_fail(err, CP_EXIT_PROFILE,
			"the counter table of process %d holds code of another version of clockprof",
			p->pid);
	else if (cp_vdso_write(p, at, p->plan.count, CP_PATCH_CODE_SIZE))
		cp_fail(err, CP_EXIT_PROFILE, "cannot write into the counter table of process %d",
			p->pid);
	else
		rc = 0;
	cp_patch_step();
	free(now);
	return rc;
}

/* The sites a clockprof that ended without switching back left switched
 * (the vDSO's and its redirects'), switched back by one pass of the stub
 * before this one's rules are written: this window starts from the
 * original code, as a fresh one does (a read before its wrapper's rule
 * would otherwise claim its site at the wrapper: cp_vdso_patch_switch). */
/* The plan's sites switched toward the other variant of the paths and
 * back (vdso_plan.h: other_patched): a leftover may carry either. */
static void swap_variant(struct cp_vdso_patch *p)
{
	for (int i = 0; i < p->plan.nsites; i++) {
		uint64_t w = p->plan.site[i].patched;

		p->plan.site[i].patched = p->plan.site[i].other_patched;
		p->plan.site[i].other_patched = w;
	}
}

/* Sites a restore left switched, switched toward the other variant of
 * the paths (an --anatomy clockprof's, or a plain one's, seen by the
 * other: a restorer plans as plain), switched back by its words. */
static int restore_other_variant(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc;

	swap_variant(p);
	rc = cp_vdso_run_stub(p, CP_VDSO_CMD_RESTORE, true, err) || cp_vdso_wait_stub(p, err) ? -1 :
												0;
	swap_variant(p);
	return rc;
}

static int restore_leftover(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc = 0;

	inherit_redirects(p);
	if (cp_vdso_sites_read(p, false))
		p->info.leftover = 0; /* a record only: nothing was left switched */
	else
		rc = cp_vdso_run_stub(p, CP_VDSO_CMD_RESTORE, true, err) ||
				     cp_vdso_wait_stub(p, err) ?
			     -1 :
			     0;
	if (!rc && !cp_vdso_sites_read(p, false))
		rc = restore_other_variant(p, err);
	p->ninherited = 0; /* the dead one's: never switched again */
	return rc;
}

/* A fresh table is mapped by a first pass of the stub, its code written
 * and whatever rules are known; the sites are switched to it later
 * (cp_vdso_patch_switch), once the wrappers' rules are in. */
int cp_vdso_patch_apply(struct cp_vdso_patch *p, struct cp_error *err)
{
	if (!p->info.reused &&
	    (cp_vdso_run_stub(p, CP_VDSO_CMD_PATCH, false, err) || cp_vdso_wait_stub(p, err)))
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
	if (cp_vdso_run_stub(p, CP_VDSO_CMD_PATCH, true, err))
		return -1;
	rc = cp_vdso_patch_confirm(p, err);
	return rc > 0 ? cp_vdso_refuse_gone(p, err) : rc;
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
			    p->pid) :
		    0;
}

int cp_vdso_patch_add_frame_hops(struct cp_vdso_patch *p, const uint64_t *pcs, size_t n,
				 struct cp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct cp_patch_rule hop = { .pc = pcs[i],
					     .cfa_offset = 16,
					     .bp_offset = -16,
					     .via_base = CP_PATCH_VIA_KEEP |
							 CP_PATCH_RULE_BASE_BP };

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
	rc = cp_vdso_post_request(p, CP_VDSO_CMD_PATCH, false, err) ||
	     cp_hijack_held_round_trip(p->pid, tid, cp_vdso_header_addr(p) + CP_VDSO_STUB_OFFSET,
				       cp_vdso_header_addr(p) + CP_VDSO_STOP_OFFSET,
				       cp_vdso_header_addr(p) + CP_VDSO_STOP_SYSCALL_OFFSET,
				       cp_vdso_check_held, p, err) ||
	     cp_vdso_wait_stub(p, err);
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
	if (map_held(p, tid, err) || cp_vdso_post_request(p, CP_VDSO_CMD_PATCH, true, err) ||
	    cp_hijack_held(p->pid, tid, cp_vdso_header_addr(p) + CP_VDSO_STUB_OFFSET,
			   cp_vdso_check_held, p, &hj, err))
		return -1;
	p->patched = true;
	cp_vdso_note_held(p, &hj);
	return 0;
}

int cp_vdso_patch_confirm(struct cp_vdso_patch *p, struct cp_error *err)
{
	struct cp_vdso_area_header h;

	if (cp_vdso_read_header(p, &h))
		return 1; /* gone already: nothing left to confirm */
	if (cp_vdso_wait_stub(p, err))
		return cp_vdso_read_header(p, &h) ? 1 : -1;
	/* A command that ends at once (true) may be gone by each look. */
	if (cp_vdso_read_header(p, &h))
		return 1;
	if (h.table != p->plan.table)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no counter table", p->pid);
	if (!cp_vdso_sites_read(p, true))
		return cp_vdso_read_header(p, &h) ?
			       1 :
			       cp_fail(err, CP_EXIT_PROFILE,
				       "the vDSO of process %d changed while it was patched (another tool?)",
				       p->pid);
	return 0; /* the table was opened before the sites were switched */
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
	return cp_patch_requests_mark(p->pid, p->mem_pin, p->plan.table, t->words,
				      &p->requests_mark);
}

int cp_vdso_patch_mark(struct cp_vdso_patch *p)
{
	return cp_patch_table_mark(&p->table, mark_requests, p);
}

void cp_vdso_patch_on_read(struct cp_vdso_patch *p, void (*on_read)(void *arg), void *arg)
{
	p->table.on_read = on_read;
	p->table.on_read_arg = arg;
}

void cp_vdso_patch_mark_fresh(struct cp_vdso_patch *p)
{
	p->requests_mark = (struct cp_patch_requests_mark){ 0 };
	cp_patch_table_mark_zeros(&p->table);
}

int cp_vdso_patch_add_redirect(struct cp_vdso_patch *p, enum cp_redirect_kind kind,
			       const char *path, uint64_t off, uint64_t size, char *why,
			       size_t whylen)
{
	struct cp_redirect_place *r = &p->redirects[p->nredirects];
	uint64_t call = cp_redirect_code_addr(cp_redirect_code_of(kind), p->plan.table);

	if (p->nredirects == CP_VDSO_AREA_MAX_REDIRECTS) {
		snprintf(why, whylen, "clockprof redirects %d functions at most",
			 CP_VDSO_AREA_MAX_REDIRECTS);
		return -1;
	}
	if (cp_redirect_place(p->pid, kind, path, off, size, call, r, why, whylen))
		return -1;
	if ((!r->written && cp_vdso_write(p, r->plan.tramp, r->plan.code, sizeof(r->plan.code))) ||
	    (r->plan.jump_len == 2 &&
	     cp_vdso_write(p, r->plan.springboard, r->plan.springboard_code,
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
	    cp_proc_vm_read(p->pid, &local, 1, &remote, 1) != (ssize_t)CP_PATCH_TABLE_SIZE ||
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
	p->owned = false; /* its header went with the image */
}

bool cp_vdso_patch_undone(const struct cp_vdso_patch *p)
{
	uint64_t word;

	for (int i = 0; p->patched && i < p->plan.nsites; i++)
		if (!cp_proc_mem_read(p->pid, p->plan.base + p->plan.site[i].qword, &word,
				      sizeof(word)) &&
		    word == p->plan.site[i].original)
			return true;
	return false;
}

int cp_vdso_patch_restore(struct cp_vdso_patch *p, bool kept, struct cp_error *err)
{
	struct cp_vdso_patch_counts last;

	if (!p->patched || kill(p->pid, 0) != 0)
		return 0;
	if (kept)
		cp_patch_table_read(&p->table, &last); /* the last counts, kept */
	p->patched = false;
	/* Sites as they were, and no writable and executable copy of the
	 * vDSO (a fork of a stub's window, whose clockprof died before
	 * mending it, has one): nothing to do. */
	if (cp_vdso_sites_read(p, false) && !cp_proc_has_wx(p->pid))
		return 0;
	if (cp_vdso_run_stub(p, CP_VDSO_CMD_RESTORE, true, err) || cp_vdso_wait_stub(p, err))
		return -1;
	if (!cp_vdso_sites_read(p, false) && restore_other_variant(p, err))
		return -1;
	if (!cp_vdso_sites_read(p, false) && kill(p->pid, 0) == 0)
		return cp_fail(err, CP_EXIT_PROFILE, "the vDSO of process %d could not be restored",
			       p->pid);
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

	if (!p->info.reused || cp_vdso_read_header(p, &h))
		return;
	for (uint64_t i = (uint64_t)p->plan.nsites; i < h.nsites && i < CP_VDSO_AREA_MAX_SITES; i++)
		if (h.sites[i].prot && p->ninherited < CP_VDSO_AREA_MAX_REDIRECTS)
			p->inherited[p->ninherited++] = (struct cp_vdso_area_site){
				h.sites[i].qword, h.sites[i].original, h.sites[i].patched, 0,
				h.sites[i].prot
			};
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
	if (cp_vdso_prepare_new(pid, false, true, &p, err) == 0) {
		p->patched = p->info.reused; /* its sites are its parent's, switched */
		inherit_redirects(p);
		rc = cp_vdso_patch_restore(p, false, err);
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

	if (!p->owned || cp_vdso_read_header(p, &h) || memcmp(h.magic, CP_VDSO_AREA_MAGIC, 16))
		return;
	cp_patch_owner_self(&self);
	if (!memcmp(&h.owner, &self, sizeof(self)))
		cp_vdso_write(p,
			      cp_vdso_header_addr(p) + offsetof(struct cp_vdso_area_header, owner),
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
	cp_proc_mem_unpin(p->mem_pin);
	free(p);
}

/* A new patch, not a switch back (cp_vdso_patch_restore_copy): only a
 * new one may map the table, and only a table not mapped yet (an earlier
 * attach's is reused, already in what the process uses) is weighed
 * against a cap; refused, the patch is released before it ran a stub. */
int cp_vdso_patch_prepare(pid_t pid, bool held, struct cp_vdso_patch **out, struct cp_error *err)
{
	unsigned long long mib;
	const char *capped;

	*out = NULL;
	if (cp_vdso_refuse_shared_memory(pid, err) ||
	    cp_vdso_prepare_new(pid, held, false, out, err))
		return -1;
	if ((*out)->info.reused || !(capped = cp_vdso_capped_memory(pid, &mib)))
		return 0;
	cp_vdso_patch_free(*out);
	*out = NULL;
	return cp_fail(
		err, CP_EXIT_PROFILE,
		"process %d caps %s at %llu MiB, near what it uses: the patch's %zu MiB counter table would count against it for the process's life",
		pid, capped, mib, ((size_t)CP_VDSO_MAP_SIZE + (1 << 20) - 1) >> 20);
}

int cp_vdso_patch_attach(pid_t pid, bool fresh, struct cp_vdso_patch **out, struct cp_error *err)
{
	struct cp_error ignored;

	/* clockprof's own child (the self-test), no target: a cap on memory
	 * clockprof was started under is no reason to refuse it */
	*out = NULL;
	if (cp_vdso_refuse_shared_memory(pid, err) ||
	    cp_vdso_prepare_new(pid, false, false, out, err))
		return -1;
	if (cp_vdso_patch_apply(*out, err) || cp_vdso_patch_switch(*out, err) ||
	    (fresh ? (cp_vdso_patch_mark_fresh(*out), 0) : cp_vdso_patch_mark(*out))) {
		cp_vdso_patch_detach(*out, &ignored);
		*out = NULL;
		if (!err->msg[0])
			cp_fail(err, CP_EXIT_PROFILE, "the counters of process %d cannot be read",
				pid);
		return -1;
	}
	return 0;
}

int cp_vdso_patch_detach(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc = p ? cp_vdso_patch_restore(p, false, err) : 0; /* p freed: none follows */

	cp_vdso_patch_free(p);
	return rc;
}
