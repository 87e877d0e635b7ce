/* patch_requests.h - the requests a `func:` boundary closed inside the
 * target (boundary_close.S), read back from the request blocks of its
 * counter table (layout: CP_PB_* in probes/patch_layout.h) and summed
 * over its thread slots: what the BPF program's boundary counts when the
 * boundary is a uprobe, with no trap. */
#ifndef CP_PATCH_REQUESTS_H
#define CP_PATCH_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "patch_sites.h"

struct cp_patch_requests {
	struct cp_request_sums sums; /* lost: since the mark */
	struct cp_patch_sites sites; /* the reads inside them, by call site */
};

/* A window opens: the table's epoch moves on, so that each thread's
 * requests count from its next boundary, and the reads through syscall()
 * are counted from now (words: the table's counters, as just read).
 * *mark: what to read from. The epoch is written through pin, the
 * patch's (cp_proc_mem_pin): never into a program pid exec()ed since.
 * -1 when the target's memory cannot be read or written. */
struct cp_patch_requests_mark {
	uint64_t epoch, lost;
	uint64_t syscalls[CP_PATCH_SLOT_WORDS]; /* the reads through syscall() then */
};
int cp_patch_requests_mark(pid_t pid, int pin, uint64_t table, const uint64_t *words,
			   struct cp_patch_requests_mark *mark);

/* The requests since the mark, of the slots in use in words (a copy of
 * the table's counters, as last read). -1 when the memory cannot be read. */
int cp_patch_requests_read(pid_t pid, uint64_t table, const struct cp_patch_requests_mark *mark,
			   const uint64_t *words, struct cp_patch_requests *out);
void cp_patch_requests_free(struct cp_patch_requests *r);
/* The same for a table read whole, counted from zero (a forked child's:
 * its table was wiped at the fork, its epoch is 0). */
int cp_patch_requests_read_whole(pid_t pid, uint64_t table, struct cp_patch_requests *out);
/* Reads through syscall() by word (w, less base when not NULL: a slot's
 * words) added to into, all on the syscall path; how many. */
uint64_t cp_patch_syscalls_add(const __u64 *w, const uint64_t *base, struct cp_read_counts *into);
/* The reads inside r's requests. */
uint64_t cp_patch_requests_reads(const struct cp_patch_requests *r);

/* The sums the BPF program took from the request blocks at the target's
 * exit (struct cp_request_sums, its patch_exit_requests), and the reads
 * inside them by call site (taken over: normalized), as r from now on. */
void cp_patch_requests_settle(struct cp_patch_requests *r, const struct cp_request_sums *at_exit,
			      const struct cp_patch_requests_mark *mark,
			      struct cp_patch_sites *sites);

/* r added to a window's totals (hres: cp_session_config.vdso_hres): its
 * requests (unless !requests: the session's program closed them), and
 * every read through syscall() since the mark (path syscall, in the
 * window's reads): how many of those. */
uint64_t cp_patch_requests_add(const struct cp_patch_requests *r,
			       const struct cp_patch_requests_mark *mark, bool hres, bool requests,
			       struct cp_totals *t);

#endif
