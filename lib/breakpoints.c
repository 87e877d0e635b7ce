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

	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
			    PERF_FLAG_FD_CLOEXEC);
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
		return cp_fail(err, CP_EXIT_PROFILE,
			       "not permitted to place breakpoints in thread %d: needs root or CAP_PERFMON (and CAP_BPF)",
			       tid);
	if (e == ENOENT || e == EOPNOTSUPP || e == EINVAL)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "this kernel has no hardware breakpoint support (perf_event_open: %s)",
			       strerror(e));
	if (e == ENOSPC)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "thread %d has no free debug register (is a debugger using hardware breakpoints?)",
			       tid);
	return cp_fail(err, CP_EXIT_PROFILE,
		       "cannot place a breakpoint in thread %d: %s", tid, strerror(e));
}

/* Opens sequence[i] on tid into slot (prog attached unless it is the
 * guard, index 0); returns 0 or the errno. */
static int open_slot(pid_t tid, const uint64_t *sequence, int i,
		     struct bpf_program *prog, struct bp_slot *slot)
{
	int fd = open_breakpoint(tid, sequence[i]), e = errno;

	slot->link = NULL;
	slot->fd = fd;
	if (fd < 0)
		return e;
	if (i == 0)
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

/* Gives thread tid the whole sequence (CP_BP_SLOTS addresses: the guard,
 * then the entries), except what it already inherited.
 *
 * A thread born while we attach may have inherited a prefix of the
 * sequence from its creator: all of it, or only the first k breakpoints if
 * it was cloned while its creator's were being opened. The sequence fills
 * every debug register, so our opens on such a thread fail with ENOSPC
 * after 4 - k of them: that says k, the inherited prefix. Ours for the
 * prefix are closed (no double count) and the rest opened (no miss). The
 * guard makes k >= 1 whenever anything was inherited, so the case is never
 * silent. 1: attached, 0: thread gone or fully inherited, -1: error. */
static int attach_thread(struct cp_breakpoints *bp, pid_t tid, int rescan,
			 const uint64_t *sequence, struct bpf_program *prog,
			 struct cp_error *err)
{
	struct bp_slot slot[CP_BP_SLOTS];
	int opened = 0, inherited = 0, e = 0;

	for (int i = 0; i < CP_BP_SLOTS; i++)
		slot[i] = (struct bp_slot){ NULL, -1 };
	for (; opened < CP_BP_SLOTS; opened++)
		if ((e = open_slot(tid, sequence, opened, prog, &slot[opened])))
			break;
	if (e == ENOSPC && rescan) {
		inherited = CP_BP_SLOTS - opened;
		for (int i = 0; i < inherited && i < opened; i++)
			close_slot(&slot[i]);
		for (int i = opened > inherited ? opened : inherited; i < CP_BP_SLOTS; i++)
			if ((e = open_slot(tid, sequence, i, prog, &slot[i])))
				break;
		if (!e)
			bp->inherited++;
	}
	if (e) {
		for (int i = 0; i < CP_BP_SLOTS; i++)
			close_slot(&slot[i]);
		return e == ESRCH ? 0 : open_error(e, tid, err);
	}
	for (int i = 0; i < CP_BP_SLOTS; i++)
		if (slot[i].fd >= 0 && keep_slot(bp, &slot[i])) {
			for (int j = i; j < CP_BP_SLOTS; j++)
				close_slot(&slot[j]);
			return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
		}
	if (!inherited)
		bp->threads++;
	return inherited == CP_BP_SLOTS ? 0 : 1;
}

int cp_breakpoints_attach(struct cp_breakpoints *bp, pid_t pid, pid_t tid,
			  const uint64_t *addrs, int naddrs, uint64_t guard,
			  struct bpf_program *prog, struct cp_error *err)
{
	pid_t *seen = NULL, *tids = NULL;
	size_t nseen = 0, seen_cap = 0, ntids, added;
	uint64_t sequence[CP_BP_SLOTS];
	int rc = 0;

	memset(bp, 0, sizeof(*bp));
	if (naddrs < 1 || naddrs > CP_BP_SLOTS - 1)
		return cp_fail(err, CP_EXIT_PROFILE, "%d breakpoints do not fit the debug registers",
			       naddrs);
	/* The guard first, the entries, more guards up to every register. */
	for (int i = 0; i < CP_BP_SLOTS; i++)
		sequence[i] = i >= 1 && i <= naddrs ? addrs[i - 1] : guard;
	if (tid)
		return attach_thread(bp, tid, 0, sequence, prog, err) < 0 ? -1 : 0;
	/* Repeat until a scan finds no thread we have not handled. */
	for (int round = 0;; round++) {
		if (cp_target_threads(pid, &tids, &ntids))
			return cp_fail(err, CP_EXIT_PROFILE, "process %d exited", pid);
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
			if (attach_thread(bp, tids[i], round > 0, sequence, prog, err) < 0)
				rc = -1;
		}
		free(tids);
		if (rc || added == 0)
			break;
	}
	free(seen);
	if (rc)
		cp_breakpoints_detach(bp);
	return rc;
}

void cp_breakpoints_detach(struct cp_breakpoints *bp)
{
	for (size_t i = 0; i < bp->nslots; i++)
		close_slot(&((struct bp_slot *)bp->slots)[i]);
	free(bp->slots);
	memset(bp, 0, sizeof(*bp));
}
