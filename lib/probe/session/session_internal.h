/* session_internal.h - the session as its own files share it
 * (session.c: the program loaded and closed; session_attach.c: its
 * probes; session_events.c: its ring buffer; session_maps.c: its counts;
 * session_procs.c: the processes it follows besides the target). Inside
 * lib/probe/session only. */
#ifndef CP_SESSION_INTERNAL_H
#define CP_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "clockreads.skel.h"
#include "session.h"
#include "uprobe_multi.h"
#include "uprobe_removal.h"

struct cp_error;
struct cp_uprobe_point;

/* One attachment: a libbpf link (a tracepoint), or a uprobe link. */
struct ulink {
	struct bpf_link *link;
	struct cp_uprobe_link multi;
};

struct cp_session {
	struct clockreads_bpf *skel;
	pid_t pid;
	bool multi;  /* uprobes as uprobe_multi links */
	bool follow; /* processes besides the target are counted:
					 * follow_forks, or members */
	/* Followed processes whose exit (or exec) the program has said: moved
	 * out of its maps (session_procs.c) so that a long run's forks never
	 * fill them; those marked are moved at the next drain. */
	struct cp_followed *gone;
	size_t ngone, cap_gone;
	uint32_t *marked;
	size_t nmarked, cap_marked;
	bool watch_exec; /* cp_session_config.watch_exec */
	/* uprobes in the target's files: clock points and syscall() */
	struct ulink *file_links;
	size_t nfile_links, cap_file_links, nclock_uprobes;
	/* cp_session_close_begin's removal, under way; removing: begun */
	struct cp_uprobe_removal removal;
	bool removing;
	struct ulink dl_hook;
	struct ulink selftest_link; /* kept: removing it costs a grace period */
	/* What the programs tell user space while attached: dynamic-linker
	 * events (counted in dl_pending) and, with --stacks, stack copies
	 * (handed to on_copy). */
	struct ring_buffer *events;
	int dl_pending;
	void (*on_copy)(void *arg, const struct cp_stack_copy *c);
	void *on_copy_arg;
	struct ulink boundary;
	struct ulink probes[CP_MAX_PROBES];
	struct bpf_link *exec_watch, *fork_watch; /* NULL where raw tracepoints are missing */
	bool anatomy_ok;			  /* they attach (then detached until a
					 * burst: cp_session_anatomy_links) */
	struct bpf_link *anatomy_links[2];	  /* --anatomy, a boundary that traps:
						 * sys_enter, sched_switch */
	struct bpf_link *exit_watch;		  /* the vDSO patch's: sums its table at exit */
	struct bpf_link *prepare_exec_watch;	  /* on_target_exit at sched_prepare_exec: a
						 * table summed at an exec */
	/* Followed processes held at their exec (exec_events), not yet taken
	 * by the mechanism; the child that lets them go if clockprof dies
	 * (exec_guard.h), 0: not holding. */
	uint32_t *execs;
	size_t nexecs, cap_execs;
	pid_t exec_guard;
	int ncpus;
	/* Per-request distribution: slot i holds thread dist_tids[i]'s counter
	 * dist_fds[i]; tid 0 marks a free slot below dist_slots_used. */
	__u32 dist_slots_used, dist_live;
	pid_t dist_tids[CP_DIST_MAX_THREADS];
	int dist_fds[CP_DIST_MAX_THREADS];
};

/* session_attach.c */
int cp_session_attach_uprobe(const struct cp_session *s, struct bpf_program *prog, pid_t pid,
			     const struct cp_uprobe_point *p, uint64_t cookie, struct ulink *out);
/* Removes u[0..n) together (wait: until their breakpoints have left the
 * target); the number of probed instructions still holding one. */
size_t cp_session_ulinks_destroy(struct ulink *u, size_t n, bool wait);
/* on_target_exit attached at sched_prepare_exec too (prepare_exec_watch),
 * where the kernel has it (rodata exec_traced); once. */
void cp_session_watch_prepare_exec(struct cp_session *s);
/* The same in two halves (uprobe_removal.h's): r holds the removal
 * between them. */
void cp_session_ulinks_destroy_begin(struct cp_uprobe_removal *r, struct ulink *u, size_t n,
				     bool wait);
size_t cp_session_ulinks_destroy_end(struct cp_uprobe_removal *r);
void cp_session_use_uprobe_multi(struct clockreads_bpf *skel);
/* The boundary, the --probe functions and the dynamic linker's hook. */
int cp_session_attach_all(struct cp_session *s, const struct cp_session_config *cfg,
			  struct cp_error *err);

/* session_events.c: the ring buffer made, its callbacks set. */
int cp_session_open_events(struct cp_session *s);

#endif
