/* clockreads.h - the layout shared by probes/clockreads.bpf.c and lib/:
 * what the BPF side counts and how user space reads it. Every counter here
 * is exact (one increment per event, never a sample). */
#ifndef CP_CLOCKREADS_H
#define CP_CLOCKREADS_H

#ifndef __bpf__
#include <linux/types.h>	/* BPF programs get __u64 from vmlinux.h */
#endif

/* How a read entered: the vDSO entry point, or the matching syscall. */
enum cp_entry {
	CP_ENTRY_CLOCK_GETTIME,
	CP_ENTRY_GETTIMEOFDAY,
	CP_ENTRY_TIME,
	CP_ENTRY_MAX,
};

/* Which path served it: the vDSO alone, or a syscall (made directly, or by
 * the vDSO falling back for a clock it cannot serve). */
enum cp_path {
	CP_PATH_VDSO,
	CP_PATH_SYSCALL,
	CP_PATH_MAX,
};

/* Clock ids 0..CP_CLOCK_OTHER-1 are counted by id (CLOCK_REALTIME = 0 ...
 * CLOCK_TAI = 11); dynamic clocks (negative ids: per-process/thread CPU
 * clocks, PTP fds) and anything larger land in CP_CLOCK_OTHER. */
#define CP_CLOCK_OTHER 12
#define CP_CLOCK_SLOTS 13

/* --probe FILE:SYMBOL extra entry points, counted apart from clock reads. */
#define CP_MAX_PROBES 8

/* Reads-per-request histogram: exact up to CP_HIST_SLOTS-2 reads, the last
 * slot holds requests with more (their exact maximum is kept too). */
#define CP_HIST_SLOTS 512

/* One set of counts; a union so BPF and user space can add sets field by
 * field without naming every field. */
struct cp_read_counts {
	__u64 reads;
	__u64 by_entry[CP_ENTRY_MAX];
	__u64 by_path[CP_PATH_MAX];
	__u64 by_clock[CP_CLOCK_SLOTS];
	__u64 probe_calls[CP_MAX_PROBES];
};
#define CP_READ_COUNTS_WORDS (sizeof(struct cp_read_counts) / sizeof(__u64))

/* Per-CPU totals (a BPF_MAP_TYPE_PERCPU_ARRAY with one element); user space
 * sums the CPUs. */
struct cp_totals {
	struct cp_read_counts all;	  /* every read in the window */
	struct cp_read_counts in_requests; /* reads inside complete requests */
	__u64 requests;		  /* complete requests (boundary to boundary) */
	__u64 boundary_hits;	  /* boundary events, partial intervals too */
	__u64 trap_hits;	  /* breakpoint and uprobe hits: what costs */
	__u64 max_reads_per_request;
	__u64 hist[CP_HIST_SLOTS];
};

/* Per-thread state, keyed by tid: the reads of the request in progress. */
struct cp_thread {
	__u64 seen_boundary;
	struct cp_read_counts cur;
};

#endif
