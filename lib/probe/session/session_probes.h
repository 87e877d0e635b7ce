/* session_probes.h - what a mechanism (lib/probe/mech/) places through the
 * session beyond session.h: the program hardware breakpoints on the vDSO
 * run, a uprobe on clockprof's own code for the self-test, and the
 * self-test's count, kept by the BPF program. Inside lib/probe only. */
#ifndef CP_SESSION_PROBES_H
#define CP_SESSION_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "clockreads.h"

struct bpf_program;
struct cp_session;

/* The program a breakpoint on a vDSO entry runs (loaded only with
 * cp_session_config.vdso_breakpoints). */
struct bpf_program *cp_session_vdso_program(struct cp_session *s);

/* A uprobe on fn, a function of clockprof's own, counted as a
 * clock_gettime read of clockprof's own (selftest_hits); 0, or -1 with
 * errno set. unprobe removes it in the background where it can, else at
 * cp_session_close. */
int cp_session_probe_own(struct cp_session *s, const void *fn);
void cp_session_unprobe_own(struct cp_session *s);

/* The vDSO patch's counter table in the target (mech/patch): the program
 * adds the reads a thread made there to its request at each boundary. */
void cp_session_set_patch_table(struct cp_session *s, uint64_t addr);
/* The target's table's window (CP_PATCH_WINDOW_* in clockreads.h), moved
 * at the instant its counts are read. */
void cp_session_set_patch_window(struct cp_session *s, uint64_t window);
/* The table summed as the target's last thread exited (its memory is gone
 * after): true when the kernel let the program read it. */
bool cp_session_patch_exit_sums(struct cp_session *s, uint64_t sums[CP_PATCH_SLOT_WORDS]);
/* ... and its call sites (keys as the thunk files them, clockreads.h),
 * each given to each; -1 when no pass over the table read it all. */
int cp_session_patch_exit_sites(struct cp_session *s,
				int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx);

/* The requests a boundary closed in the target, as the same pass summed
 * its request blocks (clockreads.h), and the reads inside them by call
 * site, each given to each; -1 when no pass read them all. */
int cp_session_patch_exit_requests(struct cp_session *s, struct cp_request_sums *out,
				   int (*each)(void *ctx, uint64_t key, uint64_t in_requests),
				   void *ctx);

/* The call sites of the followed processes' threads that exited in the
 * clock window, summed (their counts are in cp_followed's sums), each
 * given to each. */
int cp_session_child_exit_sites(struct cp_session *s,
				int (*each)(void *ctx, uint64_t key, uint64_t count), void *ctx);

/* A process clockprof was given besides the target (attach -p, --tree,
 * --cgroup), followed from now on as the processes the target forks are
 * (its forks too), with CP_PROC_MEMBER: patched on its own, its counter
 * table at table. words (its counters, CP_PATCH_TABLE_SIZE bytes) and
 * blocks (the site blocks of its slots in use, in slot order) are its
 * counts now: where its threads' exits count from; sites: false when its
 * call sites are not to be kept (CP_PROC_NO_SITES). -1 with errno
 * (EOPNOTSUPP: clockprof runs in a pid namespace of its own, and the
 * program keys processes by the host's numbers). */
int cp_session_add_member(struct cp_session *s, pid_t pid, pid_t ppid, uint64_t table,
			  const uint64_t *words, const uint64_t *blocks, bool sites);

/* A followed process that exec()s is held by the program before its new
 * image's first instruction (CP_PROC_EXEC_HELD), for the mechanism to
 * patch that image too: on, before the clock window opens, when the
 * kernel has the hooks and clockprof is in the host's pid namespace (true
 * then), with a guard that lets the held go if clockprof dies
 * (exec_guard.h); off, as the window closes, every process still held let
 * go (CP_PROC_EXEC_LATE: what it read in the window is its sums). */
bool cp_session_hold_execs(struct cp_session *s, bool on);
/* Up to max of the processes held since the last call (host tgids),
 * oldest first, for the mechanism; each must end in reimage or
 * exec_unfollowed. */
size_t cp_session_take_execs(struct cp_session *s, uint32_t *out, size_t max);
/* The held process host_tgid's new image patched, its counter table at
 * table (zeros): followed from now on as a member, its old image's reads
 * kept in its sums (CP_PROC_REIMAGED). The caller lets it go. */
int cp_session_reimage(struct cp_session *s, uint32_t host_tgid, uint64_t table);
/* Whether the process host_tgid is now the one followed under that pid
 * (its start time the same), not one given the pid since it exited. */
bool cp_session_still_followed(const struct cp_session *s, uint32_t host_tgid);
/* ... or not followed from its exec on (CP_PROC_EXECED), and let go. */
void cp_session_exec_unfollowed(struct cp_session *s, uint32_t host_tgid);
/* The target exec()ed and is followed into its new image as a process of
 * the procs map (its pid): its old image's counts are the target's own,
 * and its table there is gone. */
bool cp_session_target_followed_exec(const struct cp_session *s);

/* The calls of clockprof's own the program has counted since reset. */
void cp_session_selftest_reset(struct cp_session *s);
unsigned long cp_session_selftest_hits(const struct cp_session *s);

#endif
