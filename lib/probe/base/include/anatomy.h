/* anatomy.h - the anatomy of a request (--anatomy): for a sample of
 * requests, the reads a request's thread made in order, with the syscalls
 * and switches between them, and from those the reads that told the
 * program nothing new (docs/anatomy.md).
 *
 * Two halves meet here. The collection (the patch mechanism's in-target
 * log and BPF's syscall and switch records) hands over raw sampled
 * requests, cp_anatomy_samples; cp_anatomy_judge() finds the shapes and
 * the reusable reads in them, cp_anatomy. Kept apart so the rule is
 * tested on constructed sequences, with no target. */
#ifndef CP_ANATOMY_H
#define CP_ANATOMY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CP_ANATOMY_FRAMES 4	/* caller frames kept past a read's site */

/* The options' defaults: --anatomy's sample, --reuse-gap, --reuse-share. */
#define CP_ANATOMY_SAMPLE_DEFAULT 200
#define CP_ANATOMY_GAP_DEFAULT_NS 1000
#define CP_ANATOMY_SHARE_DEFAULT 0.95

/* The clock a read read, as the rule compares them: clock_gettime's id,
 * or one of these for the other entries. */
#define CP_ANATOMY_CLOCK_GETTIMEOFDAY (-1)
#define CP_ANATOMY_CLOCK_TIME (-2)

/* One distinct read: its site and the frames that tell apart the callers
 * of a helper that reads. */
struct cp_anatomy_read_id {
	uint64_t pc;			/* the call site: as cp_site_key.pc */
	uint16_t via;			/* ... .via */
	uint8_t entry;			/* ... .entry (enum cp_entry) */
	int32_t clock;			/* clock id, or CP_ANATOMY_CLOCK_* */
	uint64_t callers[CP_ANATOMY_FRAMES];	/* return addresses out from
						 * the site's function, 0 past
						 * the last one known */
};

enum cp_anatomy_kind {
	CP_ANATOMY_READ,		/* what: index into reads[] */
	CP_ANATOMY_SYSCALL,		/* what: the syscall's number */
	CP_ANATOMY_SWITCH,		/* what: 1 voluntary (the thread slept),
					 * 0 preempted */
};

struct cp_anatomy_event {
	uint64_t t_ns;			/* the target's CLOCK_MONOTONIC, ns */
	uint32_t kind;			/* enum cp_anatomy_kind */
	uint32_t what;
};

/* One sampled request: its thread's events from boundary to boundary,
 * in time order. */
struct cp_anatomy_request {
	int32_t pid, tid;
	uint64_t start_ns, end_ns;
	struct cp_anatomy_event *events;
	size_t nevents;
	bool truncated;			/* more events than the log held: not
					 * used for shapes or the rule */
};

/* What the collection hands over. */
struct cp_anatomy_samples {
	struct cp_anatomy_read_id *reads;
	size_t nreads;
	struct cp_anatomy_request *requests;
	size_t nrequests;
	uint64_t requests_seen;		/* complete requests in the window: the
					 * population sampled from */
	bool gaps_exact;		/* false where a trap stands in every gap
					 * (uprobes): no read is judged reusable */
	char why_not_exact[256];	/* "" when exact */
};

void cp_anatomy_samples_free(struct cp_anatomy_samples *s);

#endif
