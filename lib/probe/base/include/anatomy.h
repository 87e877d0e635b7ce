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

#define CP_ANATOMY_FRAMES 4 /* caller frames kept past a read's site */

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
	uint64_t pc;			     /* the call site: as cp_site_key.pc */
	uint16_t via;			     /* ... .via */
	uint8_t entry;			     /* ... .entry (enum cp_entry) */
	int32_t clock;			     /* clock id, or CP_ANATOMY_CLOCK_* */
	uint64_t callers[CP_ANATOMY_FRAMES]; /* return addresses out from
						 * the site's function, 0 past
						 * the last one known */
};

enum cp_anatomy_kind {
	CP_ANATOMY_READ,    /* what: index into reads[] */
	CP_ANATOMY_SYSCALL, /* what: the syscall's number */
	CP_ANATOMY_SWITCH,  /* what: 1 voluntary (the thread slept),
					 * 0 preempted */
};

struct cp_anatomy_event {
	uint64_t t_ns; /* the target's CLOCK_MONOTONIC, ns */
	uint32_t kind; /* enum cp_anatomy_kind */
	uint32_t what;
};

/* One sampled request: its thread's events from boundary to boundary,
 * in time order. */
struct cp_anatomy_request {
	int32_t pid, tid;
	uint64_t start_ns, end_ns;
	struct cp_anatomy_event *events;
	size_t nevents;
	bool truncated; /* more events than the log held: not
					 * used for shapes or the rule */
};

/* What the collection hands over. */
struct cp_anatomy_samples {
	struct cp_anatomy_read_id *reads;
	size_t nreads;
	struct cp_anatomy_request *requests;
	size_t nrequests;
	uint64_t requests_seen;	 /* complete requests in the window: the
					 * population sampled from */
	uint64_t outside_burst;	 /* logs dropped: not within one burst
					 * (anatomy_collect.h) */
	uint64_t untimed;	 /* logs dropped: no read time-stamped */
	bool gaps_exact;	 /* false where a trap stands in every gap
					 * (uprobes): no read is judged reusable */
	char why_not_exact[256]; /* "" when exact */
};

/* Releases what s holds and zeroes it (a zeroed s is fine). */
void cp_anatomy_samples_free(struct cp_anatomy_samples *s);

/* --- What the rule makes of them (run.json's "anatomy") --- */

/* A caller frame of a read, named. */
struct cp_anatomy_caller {
	char *function; /* "module+0x..." without a symbol */
	char *file;	/* NULL without debug info */
	int line;
};

/* One distinct read, as the collection gave it and, once named (the
 * window's naming, after it closes), as a person reads it. */
struct cp_anatomy_read {
	struct cp_anatomy_read_id id;
	char *function, *file, *module, *via; /* NULL until named */
	int line;
	/* Where function calls the helper inlined into it that reads (file
	 * NULL: function's own file; line 0: nothing inlined), and the
	 * read's place for a person as call sites say it ("FILE:LINE (inlined
	 * at line N)": cp_call_site_location); NULL unknown. Two reads of one
	 * inlined helper differ here only. */
	char *inlined_at_file;
	int inlined_at_line;
	char *location;
	struct cp_anatomy_caller callers[CP_ANATOMY_FRAMES]; /* outermost last */
	size_t ncallers;
};

#define CP_ANATOMY_STEP_SYSCALLS 8 /* distinct syscalls kept per step */
#define CP_ANATOMY_SHAPES 10	   /* shapes kept; the rest summed */

/* One read of a shape, in order. */
struct cp_anatomy_step {
	uint32_t read;	 /* index into reads[] */
	uint64_t at_ns;	 /* p50 since the request's first read */
	uint64_t gap_ns; /* p50 since the previous read; 0 first */
	/* In the shape's median request (by the span from its first read to
	 * its last): the syscalls since the previous read (the first step:
	 * since the request began), distinct, in order of their first call,
	 * and the switches then. */
	int32_t syscalls[CP_ANATOMY_STEP_SYSCALLS];
	unsigned nsyscalls;
	unsigned voluntary, preempted;
};

/* Requests whose reads came in one order. */
struct cp_anatomy_shape {
	uint64_t requests;
	double share; /* of the sampled requests */
	struct cp_anatomy_step *steps;
	size_t nsteps;
};

/* A read that could reuse the value of an earlier one (docs/anatomy.md). */
struct cp_anatomy_reuse {
	uint32_t read, reuses;		 /* indexes into reads[]: R, and E before it */
	uint64_t requests;		 /* sampled requests holding the pair */
	uint64_t held;			 /* ... in which the rule held at each time */
	uint64_t times;			 /* times the pair came in them */
	double share;			 /* held / requests */
	uint64_t gap_p50_ns, gap_p99_ns; /* R - E, over every time */
	double per_op;			 /* times / sampled requests */
};

struct cp_anatomy {
	bool on;		   /* --anatomy: the rest means something */
	unsigned sample_size;	   /* --anatomy=N */
	uint64_t sampled_requests; /* sampled whole (truncated ones not) */
	uint64_t truncated_requests;
	uint64_t outside_burst_requests; /* logged, not within one burst:
						 * dropped (docs/anatomy.md) */
	uint64_t untimed_requests;	 /* logged with no read time-stamped
					  * (time(), coarse clocks): dropped */
	uint64_t requests;		 /* complete requests in the window */
	bool every_request;		 /* every one of them sampled whole */
	uint64_t reuse_gap_ns;		 /* --reuse-gap */
	double reuse_share;		 /* --reuse-share */
	bool judged;			 /* false: no read judged (why below) */
	char not_judged_because[256];
	struct cp_anatomy_read *reads;
	size_t nreads;
	struct cp_anatomy_shape *shapes; /* most requests first */
	size_t nshapes;
	uint64_t other_requests;	   /* in shapes past CP_ANATOMY_SHAPES */
	struct cp_anatomy_reuse *reusable; /* largest saving (per_op) first */
	size_t nreusable;
	double reusable_per_op; /* sum of their per_op; 0 when none */
};

/* The shapes of in's whole requests and the reads among them that are
 * reusable (docs/anatomy.md): read R reusable with E, the latest earlier
 * read of the same clock in the same request, when no syscall and no
 * voluntary switch lies between them and R - E < reuse_gap_ns, in at
 * least reuse_share of the sampled requests holding that pair. Pure: out
 * (zeroed first; its settings and counts filled, its reads not named) is
 * released with cp_anatomy_free. Not judged (out->judged false, the
 * reason said, nothing reusable) where in's gaps are not exact or no
 * request was sampled whole. 0, or -1 when out of memory (out freed). */
int cp_anatomy_judge(const struct cp_anatomy_samples *in, uint64_t reuse_gap_ns, double reuse_share,
		     struct cp_anatomy *out);
void cp_anatomy_free(struct cp_anatomy *a);

/* A read's clock as run.json names it: "CLOCK_MONOTONIC", ...,
 * "gettimeofday", "time", or "clock N" for another id; in buf. */
const char *cp_anatomy_clock_name(int32_t clock, char *buf, size_t size);
/* Whether a read of clock is time-stamped in the log: its vDSO path
 * takes rdtsc itself (CP_ANATOMY_TSC_CLOCKS, gettimeofday). The rest are
 * placed in order but never judged reusable. */
bool cp_anatomy_clock_timed(int32_t clock);
/* A syscall's name ("read"), or NULL for a number not known. */
const char *cp_anatomy_syscall_name(int32_t nr);

#endif
