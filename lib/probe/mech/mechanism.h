/* mechanism.h - the one seam between the window (lib/probe/window/) and the
 * ways clock reads are seen. The window calls only the cp_mech_* functions
 * below; each mechanism is a room of its own under lib/probe/mech/ that
 * fills in a struct cp_mechanism_ops, and the window never sees it.
 *
 * A mechanism works with the session (lib/probe/session/): the session
 * holds what all share (the BPF program and its counts, the request
 * boundary, syscall() uprobes, the dynamic linker's hook), and the
 * mechanism adds how reads at the vDSO are seen: uprobes at the clock
 * points of each file (mech/uprobe), hardware breakpoints on each thread
 * (mech/breakpoint). One that counts elsewhere than the BPF program (in the
 * target's own memory) adds its counts where the window reads them
 * (read, read_sites) and proves itself its own way (prove).
 *
 * A new mechanism: a name in enum cp_mechanism (include/mechanism_name.h),
 * its ops in mechanism.c's table, a room of its own listed in the Makefile
 * (ROOMS_probe) and tests/check_layers.py. The window does not change. */
#ifndef CP_MECHANISM_H
#define CP_MECHANISM_H

#include <stdbool.h>
#include <stddef.h>

#include "mechanism_name.h"
#include "session.h"

struct cp_clock_points;
struct cp_unwind_table;
struct cp_error;
struct cp_mech;

/* What a mechanism can do, for the window to ask (cp_mechanism_has). */
enum cp_mech_cap {
	/* --stacks: whole stacks are walked by the kernel at each read. */
	CP_MECH_STACKS = 1u << 0,
	/* Clock probes are placed file by file: a file mapped in the window
	 * is counted from when it is probed (a few ms after dlopen). */
	CP_MECH_PER_FILE = 1u << 1,
	/* Reads through calls that pass no PLT stub (-fno-plt, function
	 * pointers) are seen: no warning about them. */
	CP_MECH_SEES_UNSTUBBED = 1u << 2,
	/* Its self-test tells whether hardware breakpoints fire here
	 * (run.json's host.breakpoints_fire). */
	CP_MECH_TESTS_BREAKPOINTS = 1u << 3,
	/* The processes the target forks are counted, each in its own copy
	 * of what counts (cp_session_config.follow_forks; m->procs). */
	CP_MECH_FOLLOWS_FORKS = 1u << 4,
	/* Libraries mapped in the window are found by a look at the
	 * target's maps every few tens of ms (window_wait.c), not by a
	 * uprobe on the dynamic linker: nothing of clockprof's traps in the
	 * target, and no uprobe's removal is waited for at the end. */
	CP_MECH_LOOKS_FOR_LIBRARIES = 1u << 5,
	/* Reads through the vDSO are counted by the mechanism itself: of a
	 * file, the session wants only the C library's syscall() and execve
	 * and Go's runtime callers (CP_POINTS_C_LIBRARY). */
	CP_MECH_COUNTS_THE_VDSO = 1u << 6,
};

struct cp_mechanism_ops {
	const char *name; /* --mechanism, run.json */
	/* What its self-test places (place_own), in messages ("uprobes"),
	 * and what follows "... do not fire on this host" (NULL: nothing);
	 * without place_own, the uprobe mechanism's. */
	const char *what;
	const char *unfired_hint;
	unsigned int caps; /* enum cp_mech_cap */
	/* Before the session opens: what the session must load and know for
	 * it (cfg->vdso_breakpoints, cfg->vdso). NULL: nothing. */
	int (*configure)(struct cp_session_config *cfg, struct cp_error *err);
	/* Where the session's load would share too few CPUs with what
	 * configure started and the naming of the modules: waits, before the
	 * load, for what suffers most from sharing them (the patch's
	 * self-test). NULL: nothing. */
	void (*await_early)(void);
	/* Set-up given up: what configure started and open did not take is
	 * undone (the patch's early steps). NULL: nothing. */
	void (*drop_early)(void);
	/* Once the session is open, before any file is probed: what is placed
	 * on the target as a whole (breakpoints on every thread). NULL: none. */
	int (*open)(struct cp_mech *m, const struct cp_session_config *cfg, struct cp_error *err);
	/* Each file the target maps, once (also those mapped in the window):
	 * the places found in it (lib/probe/points/); it decides which the
	 * session probes (syscall() always: cp_session_attach_file). */
	int (*attach_file)(struct cp_mech *m, const char *path, const struct cp_clock_points *pts,
			   struct cp_error *err);
	/* The rules for stepping out of the target's clock wrappers, each
	 * time they are built (the window's start, each dlopen), for a
	 * mechanism that finds call sites itself. NULL: the session's walk. */
	int (*set_unwind)(struct cp_mech *m, const struct cp_unwind_table *t, struct cp_error *err);
	/* The clock window opens: counting starts now (the launched command
	 * is still held). NULL: the probes count from when they are placed. */
	int (*start)(struct cp_mech *m, struct cp_error *err);
	/* The self-test, once every probe is live; NULL: the shared one
	 * (selftest.c), which places a probe of the mechanism's kind on fn, a
	 * function of clockprof's own (place_own, remove_own; NULL: a uprobe,
	 * for the mechanisms whose traps are uprobes). */
	int (*prove)(struct cp_mech *m, struct cp_error *err);
	int (*place_own)(struct cp_mech *m, const void *fn);
	void (*remove_own)(struct cp_mech *m);
	/* Adds its own figures to the session's. NULL: none. */
	void (*stats)(const struct cp_mech *m, struct cp_session_stats *st);
	/* The counts as the window reads them: given the session's, adds to
	 * or replaces them (total, by entry, clock and path; call sites).
	 * NULL: the session's are the counts. */
	int (*read)(struct cp_mech *m, struct cp_totals *t);
	/* The clock window closes, before the phase moves on: a mechanism
	 * that counts in the target takes its counts now, at the instant the
	 * program's requests stop, and read gives those. NULL: none. */
	void (*stop)(struct cp_mech *m);
	int (*read_sites)(struct cp_mech *m, struct cp_site_count **sites, size_t *n);
	/* The vDSO patch: the target's counter table (--anatomy reads its
	 * request blocks' logs); NULL or 0: none. */
	uint64_t (*patch_table)(const struct cp_mech *m);
	/* Followed processes the session holds at their exec
	 * (cp_session_hold_execs): each counted in its new image, or let go.
	 * NULL: the mechanism never asks for them to be held. */
	void (*follow_execs)(struct cp_mech *m);
	/* Its own clock probes removed (the counter window), before the
	 * session's; and everything it holds released, before the session
	 * closes (state itself is freed by cp_mech_close after close). NULL:
	 * nothing of its own. */
	void (*detach)(struct cp_mech *m);
	void (*close)(struct cp_mech *m);
};

/* A followed process's reads as a mechanism counted them. */
struct cp_mech_proc {
	uint32_t host_tgid; /* cp_followed's */
	uint64_t reads;
	uint64_t requests, in_requests; /* closed in its own memory (the
					 * vDSO patch's boundary), beside those
					 * the session's program counted */
	bool known;			/* false: its counts could not be had */
	const char *exe;		/* what it runs, when not what its parent ran
				 * (a process attach was given); the
				 * mechanism's until it closes */
};

/* The warnings one mechanism keeps for its window to say. */
#define CP_MECH_WARNINGS 8

/* One mechanism at work on one target, over one session. */
struct cp_mech {
	const struct cp_mechanism_ops *ops;
	struct cp_session *s;
	pid_t pid;
	struct cp_selftest selftest;
	/* How long one thread of the target was stopped to attach and to
	 * detach, in ms, by a mechanism that stops one; -1: never. */
	double pause_ms[2];
	unsigned stops[2]; /* ... and how many times, each */
	/* What the window should say (cp_mech_warn), each whole (allocated:
	 * a warning is never cut), and how many more there were than room
	 * for. */
	char *warnings[CP_MECH_WARNINGS];
	int nwarnings, warnings_dropped;
	char *closing_warning; /* ... of what closing it did (cp_mech_close) */
	/* The followed processes' reads as of the last read, by a mechanism
	 * that counts them (the patch: each in its own copy of the table,
	 * added to the totals); none otherwise. */
	struct cp_mech_proc *procs;
	size_t nprocs;
	void *state; /* the mechanism's own (malloc'd; cp_mech_close frees it) */
};

/* The mechanisms (mechanism.c's table; each defined in its room). */
extern const struct cp_mechanism_ops cp_uprobe_mechanism;
extern const struct cp_mechanism_ops cp_breakpoint_mechanism;
extern const struct cp_mechanism_ops cp_patch_mechanism;

/* Whether mechanism kind can do cap. */
bool cp_mechanism_has(enum cp_mechanism kind, enum cp_mech_cap cap);

/* The window's calls, in the order of a window. */
int cp_mech_configure(enum cp_mechanism kind, struct cp_session_config *cfg, struct cp_error *err);
void cp_mech_await_early(enum cp_mechanism kind);
void cp_mech_drop_early(enum cp_mechanism kind);
int cp_mech_open(struct cp_mech **out, enum cp_mechanism kind, struct cp_session *s,
		 const struct cp_session_config *cfg, struct cp_error *err);
bool cp_mech_has(const struct cp_mech *m, enum cp_mech_cap cap);
int cp_mech_attach_file(struct cp_mech *m, const char *path, const struct cp_clock_points *pts,
			struct cp_error *err);
/* The wrapper rules, to the session and the mechanism. */
int cp_mech_set_unwind(struct cp_mech *m, const struct cp_unwind_table *t, struct cp_error *err);
/* The clock window opens (before the launched command is let go). */
int cp_mech_start(struct cp_mech *m, struct cp_error *err);
/* Every call of a probed function of clockprof's own must be counted
 * (CP_EXIT_PROFILE when not: the run must be refused). */
int cp_mech_prove(struct cp_mech *m, struct cp_error *err);
void cp_mech_selftest(const struct cp_mech *m, struct cp_selftest *st);
void cp_mech_stats(const struct cp_mech *m, struct cp_session_stats *st);
int cp_mech_read(struct cp_mech *m, struct cp_totals *t);
void cp_mech_stop(struct cp_mech *m);
int cp_mech_read_sites(struct cp_mech *m, struct cp_site_count **sites, size_t *n);
/* After the session's events are consumed: the processes held at their
 * exec since, followed into their new image (or let go). */
void cp_mech_follow_execs(struct cp_mech *m);
/* The target's vDSO patch table (ops.patch_table); 0: none. */
uint64_t cp_mech_patch_table(const struct cp_mech *m);
/* Every clock probe removed, the mechanism's and the session's; the
 * request boundary stays. */
void cp_mech_detach(struct cp_mech *m);
/* Releases m (NULL is fine); the session is closed after it. pause_ms
 * and stops (each may be NULL) receive m's pauses (attach, detach) and
 * their number, the last one being made here, and warning (may be NULL)
 * what closing did that the run should say (the caller's to free), NULL
 * nothing. */
void cp_mech_close(struct cp_mech *m, double pause_ms[2], unsigned stops[2], char **warning);

/* A warning for the window to say, whole (each text once; past
 * CP_MECH_WARNINGS, or with no memory for it, only counted). */
void cp_mech_warn(struct cp_mech *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What closing m did that the run should say, whole (cp_mech_close):
 * each said, joined into one warning by "; ". */
void cp_mech_warn_closing(struct cp_mech *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* For mechanisms that see reads at the vDSO: of a file, syscall() only
 * (direct clock syscalls do not pass the vDSO). */
int cp_mech_attach_syscall_only(struct cp_mech *m, const char *path,
				const struct cp_clock_points *pts, struct cp_error *err);

/* --mechanism auto (mech_choice.c). What counts when the patch cannot:
 * uprobes, which fire on every host. */
#define CP_MECH_FALLBACK CP_MECHANISM_UPROBE
/* The mechanism to open for asked: itself, or for auto the patch, or the
 * fallback at once when --stacks needs what the patch cannot do (reason
 * says why; "" when nothing was decided against the patch). */
enum cp_mechanism cp_mech_choose(enum cp_mechanism asked, bool stacks, char *reason, size_t size);
/* Whether kind's refusal err, met before anything was counted, lets the
 * window close everything and open the fallback instead: only for auto,
 * and only for a failure to profile (CP_EXIT_PROFILE). */
bool cp_mech_may_fall_back(enum cp_mechanism asked, enum cp_mechanism kind,
			   const struct cp_error *err);

/* The shared self-test (selftest.c), for a mechanism's prove. */
int cp_mech_selftest_run(struct cp_mech *m, struct cp_error *err);
/* Its verdict on m->selftest.hits of n calls: a count below n refuses
 * the run, saying which probe did not fire (-1 with err). */
int cp_mech_selftest_judge(const struct cp_mech *m, int n, struct cp_error *err);

#endif
