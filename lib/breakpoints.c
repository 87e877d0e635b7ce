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

static int keep_link(struct cp_breakpoints *bp, struct bpf_link *link)
{
	if (bp->nlinks == bp->cap) {
		size_t cap = bp->cap ? 2 * bp->cap : 64;
		struct bpf_link **grown = realloc(bp->links, cap * sizeof(*grown));

		if (!grown)
			return -1;
		bp->links = grown;
		bp->cap = cap;
	}
	bp->links[bp->nlinks++] = link;
	return 0;
}

static void drop_links_from(struct cp_breakpoints *bp, size_t first)
{
	while (bp->nlinks > first)
		bpf_link__destroy(bp->links[--bp->nlinks]);
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

/* 1: attached, 0: thread gone or covered by inheritance, -1: error. */
static int attach_thread(struct cp_breakpoints *bp, pid_t tid, int rescan,
			 const uint64_t *addrs, int naddrs,
			 struct bpf_program *prog, struct cp_error *err)
{
	size_t first = bp->nlinks;

	for (int i = 0; i < naddrs; i++) {
		struct bpf_link *link;
		int fd = open_breakpoint(tid, addrs[i]), e = errno;

		if (fd < 0) {
			drop_links_from(bp, first);
			if (e == ESRCH)
				return 0;
			if (e == ENOSPC && rescan) {
				bp->inherited++;
				return 0;
			}
			return open_error(e, tid, err);
		}
		link = bpf_program__attach_perf_event(prog, fd);
		if (!link || keep_link(bp, link)) {
			e = errno;
			if (link)
				bpf_link__destroy(link);
			else
				close(fd);
			drop_links_from(bp, first);
			return cp_fail(err, CP_EXIT_PROFILE,
				       "cannot attach the BPF program to a breakpoint: %s",
				       strerror(e));
		}
	}
	bp->threads++;
	return 1;
}

static int seen_before(const pid_t *seen, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (seen[i] == tid)
			return 1;
	return 0;
}

int cp_breakpoints_attach(struct cp_breakpoints *bp, pid_t pid, pid_t tid,
			  const uint64_t *addrs, int naddrs,
			  struct bpf_program *prog, struct cp_error *err)
{
	pid_t *seen = NULL, *tids = NULL;
	size_t nseen = 0, ntids, added;
	int rc = 0;

	memset(bp, 0, sizeof(*bp));
	if (tid)
		return attach_thread(bp, tid, 0, addrs, naddrs, prog, err) < 0 ? -1 : 0;
	/* Repeat until a scan finds no thread we have not handled. */
	for (int round = 0;; round++) {
		if (cp_target_threads(pid, &tids, &ntids))
			return cp_fail(err, CP_EXIT_PROFILE, "process %d exited", pid);
		pid_t *grown = realloc(seen, (nseen + ntids) * sizeof(pid_t));

		if (!grown) {
			free(tids);
			rc = cp_fail(err, CP_EXIT_PROFILE, "out of memory");
			break;
		}
		seen = grown;
		added = 0;
		for (size_t i = 0; i < ntids && rc == 0; i++) {
			if (seen_before(seen, nseen, tids[i]))
				continue;
			seen[nseen++] = tids[i];
			added++;
			if (attach_thread(bp, tids[i], round > 0, addrs, naddrs, prog, err) < 0)
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
	drop_links_from(bp, 0);
	free(bp->links);
	memset(bp, 0, sizeof(*bp));
}
