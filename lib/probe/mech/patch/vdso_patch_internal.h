/* vdso_patch_internal.h - the engine of the vDSO patch as its files share
 * it: the patch's state (struct cp_vdso_patch), and the steps each file
 * lends the others. vdso_area_io.c reads and writes the area's header in
 * the target and the target's /proc status; vdso_prepare.c makes a patch
 * ready (refusals, the plan, the code written, an earlier patch taken
 * over); vdso_stub.c sends the stub through one held thread and waits for
 * it, its window's forks mended; vdso_patch.c applies, switches, reads
 * and restores (vdso_patch.h). Inside lib/probe/mech/patch only. */
#ifndef CP_VDSO_PATCH_INTERNAL_H
#define CP_VDSO_PATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "hijack.h"
#include "patch_requests.h"
#include "patch_sites.h"
#include "patch_table.h"
#include "redirect_place.h"
#include "stub_forks.h"
#include "vdso_area.h"
#include "vdso_patch.h"
#include "vdso_plan.h"

#define STUB_TIMEOUT_S 5.0

struct cp_vdso_patch {
	pid_t pid;
	int mem_pin; /* the program patched, pinned (cp_proc_mem_pin) */
	struct cp_vdso_plan plan;
	struct cp_patch_table table;
	bool give_fs;		     /* the held thread has no thread pointer yet */
	uint64_t resume;	     /* a round trip's: where the held thread was */
	uint64_t gen;		     /* the stub's request in flight */
	bool patched;		     /* the sites are (or are being) switched */
	bool owned;		     /* its header names this clockprof (patch_owner.h) */
	bool locked;		     /* the owner lock is held by the caller */
	struct cp_patch_rules rules; /* to write once the table is mapped */
	struct cp_patch_rules hops;  /* frame-pointer hops (Go), the same */
	struct cp_redirect_place redirects[CP_VDSO_AREA_MAX_REDIRECTS]; /* functions redirected */
	size_t nredirects;
	struct cp_vdso_area_site inherited[CP_VDSO_AREA_MAX_REDIRECTS]; /* a fork's redirects,
						 * as its parent switched them */
	size_t ninherited;
	struct cp_stub_window window;	/* the last stub sent to a running target */
	bool window_open;		/* ... whose forks are not looked at yet */
	enum cp_vdso_area_cmd last_cmd; /* ... and its request */
	bool last_sites;
	bool mend; /* a fork's copy, mended (mend_forks) */
	struct cp_patch_requests_mark requests_mark;
	struct cp_patch_requests requests; /* as last read, or settled */
	bool requests_known;
	struct cp_vdso_patch_info info;
};

/* vdso_area_io.c */
bool cp_vdso_request_done(pid_t pid, const struct cp_vdso_area_header *h,
			  struct cp_vdso_stub_result *r);
void cp_vdso_adopt_table(pid_t pid, struct cp_vdso_area_header *h);
uint64_t cp_vdso_header_addr(const struct cp_vdso_patch *p);
/* Writes into p's process through p's pin (cp_proc_mem_write_pinned):
 * only the program p was prepared in, never one it exec()ed since. */
int cp_vdso_write(const struct cp_vdso_patch *p, uint64_t at, const void *buf, size_t len);
int cp_vdso_read_header(const struct cp_vdso_patch *p, struct cp_vdso_area_header *h);
/* Whether the thread sent through the stub of the request h posted (the
 * area at area) left it before it ran: a handler that ran as it was let
 * go, before the stub blocked every signal (its first act that changes
 * anything), and that left by siglongjmp. Told by the thread's pc, out
 * of the area, and its sp, above the stub's frame in the frame's own
 * mapping (a handler's frame on that stack lies below; a handler on a
 * signal stack elsewhere is not told from one that left: it may still
 * return into the stub). The stub will never run then. may_stop: a
 * thread that runs all the while may be held an instant to look. */
bool cp_vdso_stub_left(pid_t pid, uint64_t area, const struct cp_vdso_area_header *h,
		       bool may_stop);
bool cp_vdso_stub_may_run(pid_t pid, uint64_t area, const struct cp_vdso_area_header *h);
/* The sites taken out of the request a stub that may still run was
 * given: one that has not reached them switches none when it runs (one
 * past them has switched them all), so that a stopped target continued
 * after clockprof gave up is not left counting where nobody reads. */
void cp_vdso_take_sites_out(const struct cp_vdso_patch *p);
int cp_vdso_refuse_stub_running(const struct cp_vdso_patch *p, const struct cp_vdso_area_header *h,
				struct cp_error *err);
/* Refused (-1, err): p's process cannot be read where it was planned,
 * said as what it is: gone, or alive with other memory (an exec). */
int cp_vdso_refuse_gone(const struct cp_vdso_patch *p, struct cp_error *err);

/* vdso_prepare.c */
/* What every patch's preparation reads of clockprof itself, read ahead
 * (its own vDSO, ~0.7 ms: its maps are long) with a copy for the table's
 * reads: while clockprof waits on something else (the self-test's child
 * starting). */
void cp_vdso_patch_warm(void);
/* Which cap on memory pid's use is so near that a new table would crowd
 * it, in words, and the cap in MiB; NULL none. */
const char *cp_vdso_capped_memory(pid_t pid, unsigned long long *mib);
int cp_vdso_prepare_new(pid_t pid, bool held, bool locked, struct cp_vdso_patch **out,
			struct cp_error *err);
/* Refused (-1, err) when another process shares pid's address space
 * (clone(CLONE_VM) without CLONE_THREAD, not a vfork() child): it would
 * count in pid's table, as pid's. */
int cp_vdso_refuse_shared_memory(pid_t pid, struct cp_error *err);

/* vdso_stub.c */
int cp_vdso_check_held(void *ctx, pid_t tid, struct cp_error *err);
int cp_vdso_post_request(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
			 struct cp_error *err);
void cp_vdso_note_held(struct cp_vdso_patch *p, const struct cp_hijack *hj);
int cp_vdso_wait_stub(struct cp_vdso_patch *p, struct cp_error *err);
bool cp_vdso_sites_read(const struct cp_vdso_patch *p, bool patched);
int cp_vdso_run_stub(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, bool sites,
		     struct cp_error *err);

#endif
