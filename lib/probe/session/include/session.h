/* session.h - the probe session: the BPF object (probes/clockreads.bpf.c)
 * loaded for one target and attached to it, and nothing attached anywhere
 * else. Every attachment is a file descriptor (perf event or BPF link), so
 * the kernel removes all of them when clockprof exits, even by SIGKILL.
 *
 * The session holds what every mechanism shares: the program, the request
 * boundary, --probe, syscall() in the target's files, the dynamic linker's
 * hook and the counts. The mechanisms that see clock reads
 * (docs/mechanisms.md) are rooms of their own (lib/probe/mech/): they
 * place their probes through this session and prove themselves
 * (lib/probe/mech/mechanism.h); the session knows none of them by name. */
#ifndef CP_SESSION_H
#define CP_SESSION_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "pid_namespace.h"
#include "vdso.h"

struct cp_clock_points;
struct cp_error;
struct cp_session;
struct cp_unwind_table;

/* A function to probe: a file we can open and the function's offset. */
struct cp_uprobe_point {
	char path[4096];
	uint64_t offset;
	uint64_t size; /* the function's (its symbol's); 0: not known */
};

struct cp_session_config {
	pid_t pid;
	bool launched;	       /* a command run launched, held under
						 * clockprof's ptrace until the window opens */
	bool vdso_breakpoints; /* load the program they run */
	bool follow_forks;     /* count the processes the target
						 * forks too, and theirs */
	const pid_t *members;  /* processes counted besides the
						 * target (attach -p, --tree,
						 * --cgroup): the patch only */
	size_t nmembers;
	bool watch_exec;				 /* uprobe each file's execve/execveat
						 * (the vDSO patch sums its counters
						 * there) */
	bool hold_execs;				 /* following: hold a process at its
						 * exec from the start, for the
						 * mechanism to follow it there
						 * (cp_session_hold_execs) */
	bool patch_tables;				 /* the vDSO patch counts in the
						 * target: the programs read its
						 * tables (at exits, boundaries) */
	struct cp_pid_ns pidns;				 /* whose numbers pid and tids are */
	struct cp_vdso vdso;				 /* breakpoints: the entries */
	bool vdso_hres;					 /* see cp_clocksource_in_vdso */
	int boundary_syscall;				 /* -1: none (else sys_enter) */
	const struct cp_uprobe_point *boundary_func;	 /* NULL: none */
	bool boundary_keep_uprobe;			 /* --per-request-counters: the BPF
						 * program reads a counter at each
						 * boundary */
	bool boundary_in_target;			 /* the mechanism closes boundary_func's
						 * requests in the target: no uprobe;
						 * or boundary_syscall's, at its C
						 * library wrappers (checked against
						 * sys_enter: cp_session_wrapper_check) */
	char boundary_not_in_target[256];		 /* why not, as it was planned */
	const struct cp_uprobe_point *boundary_wrappers; /* syscall: the C library's
						 * functions that make it */
	int nboundary_wrappers;
	const struct cp_uprobe_point *probes; /* --probe entry points */
	int nprobes;
	bool stacks;  /* --stacks: whole user stacks */
	bool anatomy; /* --anatomy: the vDSO patch's entries
						 * jump to its logging paths */
	int verbose;  /* libbpf's messages to stderr */
};

/* Set-up figures: the session's uprobes, and the breakpoint mechanism's
 * threads (cp_mech_stats). */
struct cp_session_stats {
	size_t threads;	  /* threads given breakpoints at attach */
	size_t inherited; /* threads that were covered by inheritance */
	size_t uprobes;	  /* clock uprobes placed in the target's files */
};

/* The start-up self-test of the mechanism. */
struct cp_selftest {
	unsigned long calls; /* calls of clockprof's own probed function */
	unsigned long hits;  /* of them, counted by the BPF program */
	double cost_ns;	     /* what one hit cost; < 0 unknown */
};

/* Loads the program and attaches --probe and the boundary. The clock
 * points in the target's files come with cp_session_attach_file; the
 * mechanism's own probes and self-test come from it (mechanism.h). */
int cp_session_open(struct cp_session **out, const struct cp_session_config *cfg,
		    struct cp_error *err);

/* Whether the target exec()ed since the session opened and is not
 * counted after that (the probes were placed in the old image; run
 * follows it into its new image where it can), how many
 * processes it (or a followed one) started that are not counted (not
 * following, or too many), and how many followed ones exec()ed another
 * program (counted no more from then on), of which *traced were traced
 * by another process (a debugger, strace) and so not held there. */
void cp_session_lifecycle(const struct cp_session *s, bool *execed, unsigned *forks,
			  unsigned *followed_execed, unsigned *traced);

/* A process followed besides the target (follow_forks): what the program
 * knows of it (clockreads.h). */
struct cp_followed {
	uint32_t host_tgid; /* its number in the host's pid namespace */
	struct cp_proc p;
};

/* Every process followed so far, in no order (malloc'd array); -1 out of
 * memory. */
int cp_session_followed(const struct cp_session *s, struct cp_followed **out, size_t *n);
/* Moves the processes that have exited (or exec()ed) out of the
 * program's maps, kept here: a long run's forks never fill them (at
 * most CP_MAX_PROCS at once). Once a second or so, while the window is
 * open. */
void cp_session_drain_followed(struct cp_session *s);
/* One of them as it is now; -1 when not followed. */
int cp_session_followed_one(const struct cp_session *s, uint32_t host_tgid, struct cp_proc *out);

/* Probes one file the target maps (path: one we can open, e.g. through
 * /proc/PID/map_files): its syscall() function and the clock points in
 * pts (none unless the mechanism counts with them). CP_EXIT_PROFILE names
 * the file and offset of a probe that cannot be placed. */
int cp_session_attach_file(struct cp_session *s, const char *path,
			   const struct cp_clock_points *pts, struct cp_error *err);

/* Watches the dynamic linker's debugger hook (_dl_debug_state at offset
 * of the file at path) of the target: cp_session_consume_events then
 * counts the times libraries were loaded or unloaded. */
int cp_session_watch_dl(struct cp_session *s, const char *path, uint64_t offset,
			struct cp_error *err);
/* What the programs tell user space while attached: the fd to poll, and
 * reading what came, which returns the dynamic-linker events seen and,
 * from the call below on, hands --stacks' stack copies to fn (on the
 * consuming thread). The copies wait in the kernel until then. */
int cp_session_events_fd(const struct cp_session *s);
int cp_session_consume_events(struct cp_session *s);
/* --anatomy with a func: boundary that traps: the ring buffer of the
 * requests' records (anatomy_record.h; anatomy_hooks.bpf.h); -1 none. */
int cp_session_anatomy_ring(const struct cp_session *s);
/* ... its sys_enter and sched_switch programs attached (on) or detached,
 * for a burst (docs/anatomy.md, "Bursts"); -1: they could not be. */
int cp_session_anatomy_links(struct cp_session *s, bool on);
int cp_session_on_stack_copy(struct cp_session *s,
			     void (*fn)(void *arg, const struct cp_stack_copy *c), void *arg,
			     struct cp_error *err);

/* Loads the rules for stepping out of clock wrappers (lib/symbols/include/unwind_table.h).
 * Until they are loaded, a read's call site is the wrapper it went through. */
int cp_session_set_unwind(struct cp_session *s, const struct cp_unwind_table *t,
			  struct cp_error *err);
/* --stacks: puts every function's rules (cp_unwind_table_build_all with
 * all_code) in place, whole; until the first are, the program copies each
 * read's stack instead of walking it. Safe from another thread than the
 * one reading events. */
int cp_session_set_stack_rules(struct cp_session *s, const struct cp_unwind_table *t,
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
int cp_session_read_stacks(struct cp_session *s, struct cp_stack_count **stacks, size_t *n);

/* Reads every call site counted so far (malloc'd array). */
int cp_session_read_sites(struct cp_session *s, struct cp_site_count **sites, size_t *n);
/* Removes the session's clock probes (uprobes, syscall() and --probe),
 * keeping only the request boundary: the counter window (a mechanism's
 * own go first: cp_mech_detach). */
void cp_session_detach_clock_probes(struct cp_session *s);
/* Whether it counts through uprobes limited to the target: its files'
 * clock points or syscall(), --probe functions (a boundary is its
 * caller's to tell; the dynamic linker's hook counts nothing). */
bool cp_session_holds_uprobes(const struct cp_session *s);

/* Moves the BPF program to phase (enum cp_phase in clockreads.h): what it
 * counts from now on. */
void cp_session_set_phase(struct cp_session *s, enum cp_phase phase);

/* Per-request counter distribution: gives thread tid its own counter fd
 * (lib/probe/counters/include/counters.h cp_counter_open_own), read at its boundaries in the
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
/* A syscall: boundary closed at its wrappers: what the check against the
 * kernel's syscalls found so far (zeros without one). */
void cp_session_wrapper_check(const struct cp_session *s, struct cp_wrapper_check *c);
/* ... or given up before it began (the wrappers could not be placed):
 * sys_enter is the boundary. */
void cp_session_wrapper_fall_back(struct cp_session *s);
/* ... and the check ended, sys_enter let go (every process's syscalls
 * run untraced again), where it found every syscall a wrapper's. */
void cp_session_end_wrapper_check(struct cp_session *s);
void cp_session_stats(const struct cp_session *s, struct cp_session_stats *st);
/* Detaches everything and frees the session (NULL is fine), after the
 * mechanism is closed (cp_mech_close). Returns once
 * the target's code is free of its breakpoints: the number of probed
 * instructions that still held one 2 s later (0: none; more
 * only while something else probes them too). */
size_t cp_session_close(struct cp_session *s);
/* Its first half, where the mechanism's close has work of its own (the
 * patch's switch back): the uprobes handed to the kernel for removal,
 * which goes on meanwhile (its grace period); the session's maps and
 * programs stay until cp_session_close, which waits for the removal.
 * Counting is over: nothing the mechanism's close does needs a uprobe. */
void cp_session_close_begin(struct cp_session *s);

#endif
