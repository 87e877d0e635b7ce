/* session.h - the probe session: the BPF object (probes/clockreads.bpf.c)
 * loaded for one target and attached to it, and nothing attached anywhere
 * else. Every attachment is a file descriptor (perf event or BPF link), so
 * the kernel removes all of them when clockprof exits, even by SIGKILL. */
#ifndef CP_SESSION_H
#define CP_SESSION_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "vdso.h"

struct cp_error;
struct cp_session;
struct cp_unwind_table;

/* A function to probe: a file we can open and the function's offset. */
struct cp_uprobe_point {
	char path[4096];
	uint64_t offset;
};

#define CP_MAX_SYSCALL_FUNCS 2

struct cp_session_config {
	pid_t pid;
	struct cp_vdso vdso;
	bool vdso_hres;				/* see cp_clocksource_in_vdso */
	int boundary_syscall;			/* -1: none (else sys_enter) */
	const struct cp_uprobe_point *boundary_func; /* NULL: none */
	const struct cp_uprobe_point *probes;	/* --probe entry points */
	int nprobes;
	/* syscall() of the C library (and of a static executable): where
	 * direct clock syscalls are seen. */
	struct cp_uprobe_point syscall_funcs[CP_MAX_SYSCALL_FUNCS];
	int nsyscall_funcs;
	bool stacks;				/* --stacks: whole user stacks */
	int verbose;				/* libbpf's messages to stderr */
};

struct cp_session_stats {
	size_t threads;		/* threads given breakpoints at attach */
	size_t inherited;	/* threads that were covered by inheritance */
};

int cp_session_open(struct cp_session **out, const struct cp_session_config *cfg,
		    struct cp_error *err);

/* Loads the rules for stepping out of clock wrappers (lib/unwind_table.h).
 * Until they are loaded, a read's call site is the wrapper it went through. */
int cp_session_set_unwind(struct cp_session *s, const struct cp_unwind_table *t,
			  struct cp_error *err);

/* One call site as counted by the BPF program. */
struct cp_site_count {
	struct cp_site_key key;
	struct cp_site_counts counts;
};

/* One distinct user stack (leaf first) and how many reads it had. */
struct cp_stack_count {
	struct cp_stack_key key;
	__u64 count;
};

/* Reads every stack counted so far (malloc'd array), with --stacks. */
int cp_session_read_stacks(struct cp_session *s, struct cp_stack_count **stacks,
			   size_t *n);

/* Reads every call site counted so far (malloc'd array). */
int cp_session_read_sites(struct cp_session *s, struct cp_site_count **sites,
			  size_t *n);
/* Removes every clock probe (breakpoints, syscall() and --probe uprobes),
 * keeping only the request boundary: the counter window. */
void cp_session_detach_clock_probes(struct cp_session *s);

/* Moves the BPF program to phase (enum cp_phase in clockreads.h): what it
 * counts from now on. */
void cp_session_set_phase(struct cp_session *s, enum cp_phase phase);

/* Per-request counter distribution: gives thread tid its own counter fd
 * (lib/counters.h cp_counter_open_own), read at its boundaries in the
 * counter window; -1 (fd closed) when all CP_DIST_MAX_THREADS slots are
 * taken. A thread that has exited gives its slot back with remove. */
int cp_session_dist_add_thread(struct cp_session *s, pid_t tid, int fd);
void cp_session_dist_remove_thread(struct cp_session *s, pid_t tid);
bool cp_session_dist_full(const struct cp_session *s);
/* The threads that have a counter now, into tids[CP_DIST_MAX_THREADS]. */
size_t cp_session_dist_tids(const struct cp_session *s, pid_t *tids);
int cp_session_read_dist(struct cp_session *s, struct cp_dist *sum);

/* Sums the per-CPU totals into *sum. */
int cp_session_read(struct cp_session *s, struct cp_totals *sum);
void cp_session_stats(const struct cp_session *s, struct cp_session_stats *st);
/* Detaches everything and frees the session (NULL is fine). */
void cp_session_close(struct cp_session *s);

/* Measures what one breakpoint hit with the session's BPF program attached
 * costs in this process, in ns (a short self-test, about 20 ms). */
double cp_session_probe_cost_ns(struct cp_session *s);

#endif
