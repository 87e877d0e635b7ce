/* anatomy_collect.h - --anatomy's collection (docs/anatomy.md): while the
 * window is open, a thread of clockprof's reads the sampled requests'
 * logs the vDSO patch keeps in the target (CP_PB_AN_* in
 * probes/patch_layout.h), frees each for the next, and takes the
 * syscalls and switches anatomy.bpf.c recorded meanwhile; at the end
 * they are merged by time into the raw samples (anatomy.h), the reads'
 * TSC put on the target's CLOCK_MONOTONIC by a calibration taken at the
 * start and at the end. Inside lib/probe/window only. */
#ifndef CP_ANATOMY_COLLECT_H
#define CP_ANATOMY_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "anatomy.h"
#include "patch_layout.h"

struct cp_anatomy_collect;
struct cp_error;
struct cp_pid_ns;
struct cp_session;

/* Starts collecting from process pid's counter table at table (pid in
 * the pid namespace ns, clockprof's): at most
 * sample requests kept, spread over the window (a reservoir). The BPF
 * program's load failing is said in *why (the samples then have no
 * syscalls: not judged), not an error. -1 with err: out of memory, or
 * the target's memory cannot be reached. */
int cp_anatomy_collect_start(struct cp_anatomy_collect **out, pid_t pid, uint64_t table,
			     unsigned sample, const struct cp_pid_ns *ns, struct cp_error *err);

/* The same where every read traps (uprobes): the requests session s's
 * program records in its ring (cp_session_anatomy_ring), whole, timed by
 * bpf_ktime_get_ns, kept when within one burst of its syscall and switch
 * recording (cp_session_anatomy_links); their gaps said not exact. */
int cp_anatomy_collect_start_traps(struct cp_anatomy_collect **out, pid_t pid, struct cp_session *s,
				   unsigned sample, struct cp_error *err);

/* Without --anatomy: no log is opened in process pid's table at table (a
 * killed --anatomy window's table, reused, may still say to). */
void cp_anatomy_collect_off(pid_t pid, uint64_t table);

/* Stops opening logs, drains the last ones, and hands over what was
 * collected (requests_seen: the window's complete requests); frees c. */
void cp_anatomy_collect_stop(struct cp_anatomy_collect *c, uint64_t requests_seen,
			     struct cp_anatomy_samples *out);

/* The raw pieces, for the tests: one drained log ({key, tsc, clock} a
 * read) and the BPF records of its request, merged into r (reads named
 * into s's reads), with the calibration (tsc0, ns0) - (tsc1, ns1). */
struct cp_anatomy_log_entry { /* CP_PB_AN_ENTRY_WORDS words */
	uint64_t key, tsc;
	int64_t clock;
	uint64_t callers[CP_PB_AN_CALLERS]; /* 0: not known */
};
struct cp_anatomy_raw {
	uint64_t slot, seq, tid;
	uint64_t start_tsc, end_tsc, n; /* n: reads (more than entries: truncated) */
	bool stack_known;		/* its callers could be read (CP_PB_AN_STACK_*) */
	struct cp_anatomy_log_entry *entries;
	size_t nentries;
	struct cp_anatomy_rec *recs;
	size_t nrecs;
};
struct cp_anatomy_rec {
	uint64_t t_ns;
	uint32_t kind, what;
};
struct cp_anatomy_calibration {
	uint64_t tsc[2], ns[2];
};
/* --anatomy's bursts (docs/anatomy.md, "Bursts"): anatomy.bpf.c is
 * attached, and logs are opened, for CP_ANATOMY_BURST_MS of every
 * CP_ANATOMY_PERIOD_MS, the first as the window opens. A burst is its
 * TSC once its links were attached (on) and as they were about to be
 * detached (off; UINT64_MAX while it is on). A log is used only when it
 * began and ended within one: else a syscall of it may be missing. */
#define CP_ANATOMY_BURST_MS 50
#define CP_ANATOMY_PERIOD_MS 500
struct cp_anatomy_burst {
	uint64_t on, off;
};
bool cp_anatomy_in_burst(const struct cp_anatomy_burst *b, size_t n, uint64_t start, uint64_t end);
/* One calibration point (anatomy_merge.c), and a TSC put on
 * CLOCK_MONOTONIC between two. */
void cp_anatomy_calibrate(uint64_t *tsc, uint64_t *ns);
uint64_t cp_anatomy_tsc_ns(const struct cp_anatomy_calibration *c, uint64_t tsc);
int cp_anatomy_merge(const struct cp_anatomy_raw *raw, const struct cp_anatomy_calibration *cal,
		     pid_t pid, struct cp_anatomy_samples *s, struct cp_anatomy_request *r);
/* Tests only: CLOCKPROF_TEST_ANATOMY_DUMP=FILE gets s as JSON. */
void cp_anatomy_samples_dump(const struct cp_anatomy_samples *s);

#endif
