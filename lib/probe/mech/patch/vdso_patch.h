/* vdso_patch.h - counting clock reads inside the target, with no trap: its
 * private copy of the vDSO is redirected at each clock entry to a thunk
 * that adds one to the calling thread's counter and runs on (~0.5 ns a
 * read, against 9-26 us for a uprobe hit on these VMs). The vDSO is where
 * every read that does not make the syscall itself passes, whoever the
 * caller: C libraries, static executables, Go, direct vDSO callers,
 * function pointers.
 *
 * How it stays safe for the target (docs/ARCHITECTURE.md has the long
 * form): the code is written into the vDSO's unused end, where no thread
 * runs; one thread is held for an instant and sent through a stub that
 * maps the counters and switches every site with one atomic store, then
 * returns on its own (lib/probe/mech/patch/). Detaching switches the sites
 * back the same way; the code and the counter table stay in the target,
 * inert, so a thread that is still inside a thunk, or a signal frame that
 * returns into one, is always safe. A SIGKILL of clockprof at any instant
 * leaves every site original or completely patched; its restorer
 * (patch_restorer.h) switches them back, and a later attach finds and
 * reuses what an earlier one left. */
#ifndef CP_VDSO_PATCH_H
#define CP_VDSO_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "redirect_plan.h"

struct cp_error;
struct cp_patch_helper;
struct cp_patch_sites;
struct cp_unwind_table;
struct cp_vdso_patch;

/* Reads counted since the patch was applied. */
struct cp_vdso_patch_counts {
	uint64_t total;
	uint64_t by_entry[CP_ENTRY_MAX];
	uint64_t by_clock[CP_CLOCK_SLOTS]; /* clock_gettime's, by clock id */
	size_t threads;			   /* thread slots in use */
	uint64_t shared;		   /* reads of threads that found no slot */
};

struct cp_vdso_patch_info {
	bool reused;		/* an earlier clockprof's code was found and reused */
	pid_t leftover;		/* ... left switched by that clockprof (this
					 * pid), which ended without switching back:
					 * apply switches them back first (known once
					 * it has); 0 none */
	pid_t tid;		/* the thread held to apply it */
	double attach_pause_ms; /* how long that thread was held */
	double detach_pause_ms;
	unsigned attach_stops, detach_stops; /* times a thread was held for them */
	int syscall;			     /* the syscall that thread was in; -1 none */
	bool eintr;			     /* ... which returned EINTR to the target */
	size_t rules, rules_unplaced;	     /* wrapper rules written; without room */
	size_t forks_mended;		     /* processes forked in a stub's window,
					 * sent through it again (vdso_stub.c) */
	size_t forks_unmended;		     /* ... that could not be (stopped, traced,
					 * their own seccomp filter): their vDSO
					 * stays writable and executable */
	pid_t first_unmended;		     /* the first of those; 0 none */
};

/* The steps, for a window that must place them (lib/probe/mech/patch/
 * patch.c): prepare checks what forbids the patch and writes the code into
 * the vDSO's unused end (nothing runs it yet); apply maps the table
 * through one thread held for an instant, and switch (once the wrappers'
 * rules are written: cp_vdso_patch_set_rules) the sites, the same way;
 * arm_held instead redirects a
 * thread clockprof already holds under ptrace (a launched command), which
 * switches them when let go, and confirm then waits for that (1: the
 * target has already exited, nothing to confirm); mark starts
 * the counts (mark_fresh: from the zeros of a table arm_held has just
 * mapped, not read); restore switches the sites back and keeps the last counts
 * (kept);
 * free releases what clockprof holds (never the target's code or table).
 * held: clockprof itself traces the target (a command run launched, a
 * followed process held at its exec). prepare also refuses a process
 * whose cap on its address space or data (RLIMIT_AS, RLIMIT_DATA) is so
 * near its use that a new table, counted against it for the process's
 * life, would crowd it (an earlier attach's table is reused, not weighed). */
int cp_vdso_patch_prepare(pid_t pid, bool held, struct cp_vdso_patch **out, struct cp_error *err);
int cp_vdso_patch_apply(struct cp_vdso_patch *p, struct cp_error *err);
int cp_vdso_patch_switch(struct cp_vdso_patch *p, struct cp_error *err);
int cp_vdso_patch_arm_held(struct cp_vdso_patch *p, pid_t tid, struct cp_error *err);
int cp_vdso_patch_confirm(struct cp_vdso_patch *p, struct cp_error *err);
/* The window opens: the counts' base, the sites' and the requests'
 * epoch, at one instant (cp_patch_table_mark). */
int cp_vdso_patch_mark(struct cp_vdso_patch *p);
/* What moves at each instant its counts are read (cp_patch_table's
 * on_read). */
void cp_vdso_patch_on_read(struct cp_vdso_patch *p, void (*on_read)(void *arg), void *arg);
/* How many times the counts and the sites and request blocks are read again while
 * the counts moved between them, at a window's edges: the paths' totals
 * are then of one instant (a target that never pauses keeps the last). */
#define CP_PATCH_INSTANT_TRIES 8
/* Tests only (test_hook.h): CLOCKPROF_TEST_READ_GAP_MS=N sleeps N ms
 * between the counts and the request blocks at a window's edges (and
 * the sites at its start), in a
 * first try only: the gap that a loaded host opens now and then. */
void cp_vdso_patch_test_gap(int try);
void cp_vdso_patch_mark_fresh(struct cp_vdso_patch *p);
/* kept: the last counts read first, for the reads of p that follow (a
 * window's end reads its counts before: none follows, and the two passes
 * over the table, ~0.3 ms, are spared). */
int cp_vdso_patch_restore(struct cp_vdso_patch *p, bool kept, struct cp_error *err);
/* The patched image is gone (the process exec()ed): nothing to restore. */
void cp_vdso_patch_forget(struct cp_vdso_patch *p);
/* Whether the process undid the switch of p's vDSO sites itself, p
 * switched: a site reads as the kernel's (its vDSO's pages given back to
 * the kernel, madvise(MADV_DONTNEED)), and its reads since count
 * nowhere. */
bool cp_vdso_patch_undone(const struct cp_vdso_patch *p);
void cp_vdso_patch_free(struct cp_vdso_patch *p);
/* Where the area's header is in the vDSO of p's target, as an offset
 * from its start: the same in every process of this kernel's (a fork's
 * copy is there too). */
uint64_t cp_vdso_patch_area_offset(const struct cp_vdso_patch *p);
/* A process forked from a patched one runs its parent's patched vDSO
 * copy: its sites are switched back (its table stays, inert), as
 * restore does for the target; and so are a process's whose holder died
 * (a restorer's). Under the owner lock throughout (patch_owner.h), a
 * live holder's refused. 0 also when there is nothing to do. */
int cp_vdso_patch_restore_copy(pid_t pid, struct cp_error *err);
/* Whether no thread of pid can run now: stopped (SIGSTOP, a terminal
 * stop, a tracer's) or its cgroup frozen. A stub sent into it would run
 * only once it is continued; a restore it refuses can be made then. */
bool cp_vdso_patch_runs_nothing(pid_t pid);
/* The process that traces pid (gdb, strace), 0: none. clockprof cannot
 * hold a thread of it then; a restore it refuses can be made once the
 * tracer has left. */
pid_t cp_vdso_patch_tracer(pid_t pid);

/* Patches pid's vDSO (prepare, apply, mark; fresh: pid has not read the
 * clock since it was prepared, and will not before this returns, as the
 * self-test's child waits: its counts start from zero, its fresh table
 * not read twice for a base of zeros; its memory caps not looked at: the
 * self-test's child, clockprof's own). CP_EXIT_PROFILE with the reason when it cannot or
 * must not be patched (then nothing of the target was changed, or only
 * its vDSO's unused end): the kernel's strict overcommit, 32-bit, a seccomp
 * filter that would not allow the stub's syscalls, shadow stacks, no thread
 * pointer, a vDSO changed by another tool, ptrace refused, another
 * clockprof that holds its patch (patch_owner.h; prepare refuses it). */
int cp_vdso_patch_attach(pid_t pid, bool fresh, struct cp_vdso_patch **out, struct cp_error *err);

/* What was counted since the mark: 0. Once the target cannot be read (it
 * exited), the counts settled at its exit (0) or else the last read (1). */
int cp_vdso_patch_read(struct cp_vdso_patch *p, struct cp_vdso_patch_counts *c);

void cp_vdso_patch_info(const struct cp_vdso_patch *p, struct cp_vdso_patch_info *info);
/* The table's sums at the target's exit, taken by someone who could still
 * read it then: what cp_vdso_patch_read says from now on. */
void cp_vdso_patch_settle(struct cp_vdso_patch *p, const uint64_t sums[CP_PATCH_SLOT_WORDS],
			  struct cp_patch_sites *sites);
/* The rules for stepping out of t's clock wrappers, for the thunks' call
 * sites: written into the table as soon as it is mapped (now, if it is),
 * before the sites are switched (a thread's site first read before its
 * wrapper's rule stays at the wrapper); later calls add the rules not
 * there yet.
 * A launched command is sent through the stub twice for them: once to
 * map the table, then to switch the sites (cp_vdso_patch_arm_held). */
int cp_vdso_patch_set_rules(struct cp_vdso_patch *p, const struct cp_unwind_table *t,
			    struct cp_error *err);
/* Return addresses after which the caller is found from the frame
 * pointer alone (Go's runtime calls the vDSO on another stack from a
 * function that keeps one): a hop there crosses no wrapper. Added to
 * the rules, written as they are. */
int cp_vdso_patch_add_frame_hops(struct cp_vdso_patch *p, const uint64_t *pcs, size_t n,
				 struct cp_error *err);
/* The reads by call site since the mark, as of the last read (keys:
 * cp_patch_site_pc/via/entry in probes/clockreads.h). */
int cp_vdso_patch_sites(const struct cp_vdso_patch *p, struct cp_patch_sites *out);
/* The counter table's address in the target (0 until confirmed). */
uint64_t cp_vdso_patch_table(const struct cp_vdso_patch *p);
/* The table's counters as the last read (or the mark) copied them:
 * CP_PATCH_TABLE_SIZE bytes, slot 0 the shared one. */
const uint64_t *cp_vdso_patch_marked(const struct cp_vdso_patch *p);

/* A function redirected to code in the target, with no trap
 * (redirect_plan.h): a `func:` request boundary's, closing the request
 * there, or the C library's syscall(), counting a clock read through it.
 * The function at file offset off (size bytes) of the file at path is
 * planned now and its trampoline written; its site is switched with the
 * vDSO's (switch, arm_held) and back (restore). 0, or -1 with why:
 * the session's uprobe stays. */
int cp_vdso_patch_add_redirect(struct cp_vdso_patch *p, enum cp_redirect_kind kind,
			       const char *path, uint64_t off, uint64_t size, char *why,
			       size_t whylen);
/* The requests the boundary closed since the mark, and the reads
 * through syscall() (their blocks: patch_requests.h), read now: read
 * before the counts (cp_vdso_patch_read), they hold no read the counts
 * lack. -1: none to read (no redirect, or the target is gone). */
int cp_vdso_patch_read_requests(struct cp_vdso_patch *p);
/* ... as last read (or settled); NULL: never read. */
struct cp_patch_requests;
struct cp_request_sums;
const struct cp_patch_requests *cp_vdso_patch_requests(const struct cp_vdso_patch *p);
/* ... added to a window's totals (cp_patch_requests_add). */
void cp_vdso_patch_add_requests(const struct cp_vdso_patch *p, bool hres, bool requests,
				struct cp_totals *t);
/* The request blocks' sums at the target's exit, taken by the BPF program
 * (sites: the reads inside them by call site, taken over; NULL none). */
void cp_vdso_patch_settle_requests(struct cp_vdso_patch *p, const struct cp_request_sums *at_exit,
				   struct cp_patch_sites *sites);

/* Restores and frees p (NULL is fine). A target that has exited needs
 * nothing. */
int cp_vdso_patch_detach(struct cp_vdso_patch *p, struct cp_error *err);

/* Keeps a copy of this process's own vDSO, the image every plan is made
 * from, before the self-test patches it: the self-test's child, made the
 * restorer, plans from it then. False when it cannot (no vDSO, no
 * memory): that child must not start. */
bool cp_vdso_patch_keep_pristine(void);

/* The self-test (vdso_selftest.c): a child of clockprof's own patched,
 * 200 reads made, every one counted; c says what was. CP_EXIT_PROFILE
 * with the reason when the patch cannot be used on this host. keep: on
 * success the child, when it is the helper (patch_restorer.h), is kept
 * there for the restorer (else its pid is 0); NULL: it always ends. */
int cp_vdso_patch_selftest(struct cp_vdso_patch_counts *c, struct cp_patch_helper *keep,
			   struct cp_error *err);

#endif
