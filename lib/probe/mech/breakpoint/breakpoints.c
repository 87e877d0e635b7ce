/* breakpoints.c - see breakpoints.h. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "breakpoints.h"
#include "error.h"
#include "procfs.h"
#include "grow.h"
#include "target.h"

static int open_breakpoint(pid_t tid, uint64_t addr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(attr),
		.bp_type = HW_BREAKPOINT_X,
		.bp_addr = addr,
		.bp_len = sizeof(long),
		.sample_period = 1,
		.disabled = 1,
		.inherit = 1,
		.inherit_thread = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* One open breakpoint: a BPF link that owns its perf event, or a bare perf
 * event fd (a guard, no program). */
struct bp_slot {
	struct bpf_link *link;
	int fd;
};

static void close_slot(struct bp_slot *slot)
{
	if (slot->link)
		bpf_link__destroy(slot->link);
	else if (slot->fd >= 0)
		close(slot->fd);
	slot->link = NULL;
	slot->fd = -1;
}

static int keep_slot(struct cp_breakpoints *bp, const struct bp_slot *slot)
{
	if (cp_grow(&bp->slots, &bp->cap, bp->nslots + 1, sizeof(struct bp_slot)))
		return -1;
	((struct bp_slot *)bp->slots)[bp->nslots++] = *slot;
	return 0;
}

static int open_error(int e, pid_t tid, struct cp_error *err)
{
	if (e == EACCES || e == EPERM)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"not permitted to place breakpoints in thread %d: needs root or CAP_PERFMON (and CAP_BPF)",
			tid);
	if (e == ENOENT || e == EOPNOTSUPP || e == EINVAL)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"this kernel has no hardware breakpoint support (perf_event_open: %s)",
			strerror(e));
	if (e == ENOSPC)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"thread %d has no free debug register (is a debugger using hardware breakpoints?)",
			tid);
	return cp_fail(err, CP_EXIT_PROFILE, "cannot place a breakpoint in thread %d: %s", tid,
		       strerror(e));
}

/* Opens sequence[i] on tid into slot (prog attached unless i is a guard,
 * i >= naddrs); returns 0 or the errno. */
static int open_slot(pid_t tid, const uint64_t *sequence, int i, int naddrs,
		     struct bpf_program *prog, struct bp_slot *slot)
{
	int fd = open_breakpoint(tid, sequence[i]), e = errno;

	slot->link = NULL;
	slot->fd = fd;
	if (fd < 0)
		return e;
	if (i >= naddrs)
		return 0;
	slot->link = bpf_program__attach_perf_event(prog, fd);
	if (!slot->link) {
		e = errno;
		close(fd);
		slot->fd = -1;
		return e ? e : EINVAL;
	}
	return 0;
}

/* What opening the sequence on one thread found. */
enum bp_outcome {
	BP_ERROR = -1,
	BP_GONE,    /* the thread exited before we got to it */
	BP_OPENED,  /* it held none of ours: it has the whole set now */
	BP_FULL,    /* no register was free: it holds CP_BP_SLOTS already */
	BP_PARTIAL, /* some registers were taken, not all */
};

static int keep_slots(struct cp_breakpoints *bp, struct bp_slot *slot, struct cp_error *err)
{
	for (int i = 0; i < CP_BP_SLOTS; i++)
		if (keep_slot(bp, &slot[i])) {
			for (int j = i; j < CP_BP_SLOTS; j++)
				close_slot(&slot[j]);
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		}
	return 0;
}

/* Opens the whole sequence on tid, or nothing: what is taken already is
 * only counted (opened before ENOSPC), never completed, because a set a
 * thread inherited partly cannot be proven to carry the programs (see
 * cp_breakpoints_attach). */
static enum bp_outcome attach_thread(struct cp_breakpoints *bp, pid_t tid, const uint64_t *sequence,
				     int naddrs, struct bpf_program *prog, struct cp_error *err)
{
	/* closed until open_slot fills them */
	struct bp_slot slot[CP_BP_SLOTS] = { [0 ... CP_BP_SLOTS - 1] = { NULL, -1 } };
	int opened = 0, e = 0;

	for (; opened < CP_BP_SLOTS; opened++)
		if ((e = open_slot(tid, sequence, opened, naddrs, prog, &slot[opened])))
			break;
	if (!e)
		return keep_slots(bp, slot, err) ? BP_ERROR : BP_OPENED;
	for (int i = 0; i < opened; i++)
		close_slot(&slot[i]);
	if (e == ESRCH)
		return BP_GONE;
	if (e == ENOSPC)
		return opened == 0 ? BP_FULL : BP_PARTIAL;
	open_error(e, tid, err);
	return BP_ERROR;
}

/* Whole attempts before giving up: a partly inherited thread needs a
 * clone to land inside our few microseconds of opens on its creator, so
 * attempts that fail one after the other mean registers held by someone
 * else. */
#define MAX_ATTEMPTS 20

/* Books one thread's outcome in a scan: 0, -1 (error) or 1 (start again);
 * why a full thread is only proven ours after the first scan: see
 * attach_once. */
static int count_outcome(struct cp_breakpoints *bp, int round, enum bp_outcome outcome)
{
	switch (outcome) {
	case BP_ERROR: return -1;
	case BP_OPENED: bp->threads++; return 0;
	case BP_FULL:
		if (round == 0)
			return 1;
		bp->inherited++;
		return 0;
	case BP_PARTIAL: return 1;
	case BP_GONE: break;
	}
	return 0;
}

/* One thread of ours (calibration): nothing to inherit, so any register
 * taken is someone else's. */
static int attach_own_thread(struct cp_breakpoints *bp, pid_t tid, const uint64_t *sequence,
			     int naddrs, struct bpf_program *prog, struct cp_error *err)
{
	switch (attach_thread(bp, tid, sequence, naddrs, prog, err)) {
	case BP_OPENED: bp->threads++; return 0;
	case BP_ERROR: return -1;
	case BP_GONE: return open_error(ESRCH, tid, err);
	default: return open_error(ENOSPC, tid, err);
	}
}

/* Lists pid's threads. A listing of /proc/PID/task ends early when the
 * thread it has just returned exits before the kernel steps to the next
 * one (next_tid() stops at a dead task), which looks like a normal end;
 * so a listing whose last thread is gone is taken again. A thread alive
 * after the listing was alive when the kernel stepped past it. */
static int list_threads(pid_t pid, pid_t **tids, size_t *n)
{
	for (int tries = 0;; tries++) {
		if (cp_proc_threads(pid, tids, n))
			return -1;
		if (*n == 0 || tries == 100 || syscall(SYS_tgkill, pid, (*tids)[*n - 1], 0) == 0 ||
		    errno != ESRCH)
			return 0;
		free(*tids);
	}
}

/* One attempt at giving every thread of pid the set, scanning until a
 * scan finds no thread not handled yet. Returns 0 (done), -1 (error in
 * err) or 1 (a thread's registers could not be proven to hold exactly our
 * set: start again).
 *
 * The race: the target creates threads while we open, and a new thread
 * inherits whatever its creator held at the clone, including a breakpoint
 * opened but not yet given its program (the kernel copies the program at
 * the clone only, and the later enable reaches the copy anyway: it would
 * fire and count nothing). So a thread found with some registers taken
 * cannot be completed safely: whether the last breakpoint it inherited
 * has its program is unknowable. A thread with all four taken is provably
 * covered when it was first seen in a later scan (born after our opens
 * began, so no stale or foreign breakpoint explains it; a debugger's are
 * not inherited) because the guard is opened last, after every entry had
 * its program: holding the guard means holding them all, programs
 * included. A full thread in the first scan, or any partial one, makes
 * us close everything, which removes every inherited copy too, and start
 * again. */
static int attach_once(struct cp_breakpoints *bp, pid_t pid, const uint64_t *sequence, int naddrs,
		       struct bpf_program *prog, struct cp_error *err)
{
	pid_t *seen = NULL, *tids = NULL;
	size_t nseen = 0, seen_cap = 0, ntids, added;
	int rc = 0;

	for (int round = 0; rc == 0; round++) {
		if (list_threads(pid, &tids, &ntids)) {
			rc = cp_fail(err, CP_EXIT_PROFILE, "process %d exited", pid);
			break;
		}
		if (cp_grow(&seen, &seen_cap, nseen + ntids, sizeof(*seen))) {
			free(tids);
			rc = cp_fail(err, CP_EXIT_PROFILE, "out of memory");
			break;
		}
		added = 0;
		for (size_t i = 0; i < ntids && rc == 0; i++) {
			if (cp_tid_in(seen, nseen, tids[i]))
				continue;
			seen[nseen++] = tids[i];
			added++;
			rc = count_outcome(bp, round,
					   attach_thread(bp, tids[i], sequence, naddrs, prog, err));
		}
		free(tids);
		if (added == 0)
			break;
	}
	free(seen);
	return rc;
}

int cp_breakpoints_attach(struct cp_breakpoints *bp, pid_t pid, pid_t tid, const uint64_t *addrs,
			  int naddrs, uint64_t guard, struct bpf_program *prog,
			  struct cp_error *err)
{
	uint64_t sequence[CP_BP_SLOTS];
	int rc = 1;

	memset(bp, 0, sizeof(*bp));
	if (naddrs < 1 || naddrs > CP_BP_SLOTS - 1)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "%d breakpoints do not fit the debug registers", naddrs);
	/* The entries, then guards up to every register: the guard last. */
	for (int i = 0; i < CP_BP_SLOTS; i++)
		sequence[i] = i < naddrs ? addrs[i] : guard;
	if (tid)
		return attach_own_thread(bp, tid, sequence, naddrs, prog, err);
	for (int attempt = 0; rc == 1 && attempt < MAX_ATTEMPTS; attempt++) {
		if (attempt)
			usleep(1000u * (unsigned)attempt);
		rc = attach_once(bp, pid, sequence, naddrs, prog, err);
		if (rc)
			cp_breakpoints_detach(bp);
	}
	if (rc == 1)
		return cp_fail(
			err, CP_EXIT_PROFILE,
			"threads of process %d have debug registers in use that are not ours (is a debugger using hardware breakpoints?)",
			pid);
	return rc;
}

void cp_breakpoints_detach(struct cp_breakpoints *bp)
{
	for (size_t i = 0; i < bp->nslots; i++)
		close_slot(&((struct bp_slot *)bp->slots)[i]);
	free(bp->slots);
	memset(bp, 0, sizeof(*bp));
}
