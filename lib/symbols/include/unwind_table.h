/* unwind_table.h - how the BPF program steps out of clock "plumbing".
 *
 * A clock read is seen at a vDSO entry (or a syscall); the place worth
 * naming is the first frame in the program's own code, past the C library
 * and standard-library clock wrappers (glibc clock_gettime, libstdc++
 * std::chrono::*::now, Rust std::time::*::now, ...). Debian's libc has no
 * frame pointers, so the BPF program cannot walk out with them. Instead
 * user space computes, from each wrapper's CFI (.eh_frame, present even in
 * stripped libraries), one rule per return address inside a wrapper: where
 * the wrapper's own return address is. The BPF program looks up the return
 * address it holds; a hit says how to hop one frame out, a miss means it has
 * reached the call site.
 *
 * Walk (x86_64), for the vDSO-entry breakpoint:
 *     pc = *(u64 *)regs->sp;  sp = regs->sp + 8;  bp = regs->bp;
 * (for a syscall: pc = regs->ip, sp = regs->sp, bp = regs->bp), then at most
 * CP_UNWIND_MAX_HOPS times:
 *     r = lookup(pc);  if (!r) break;          // pc is the call site
 *     cfa = (r->base_reg == CP_UNWIND_BP ? bp : sp) + r->cfa_offset;
 *     if (r->bp_offset) bp = *(u64 *)(cfa + r->bp_offset);
 *     pc = *(u64 *)(cfa - 8);  sp = cfa;  via = r->via;
 * The call site is pc (symbolize pc - 1); via names the outermost wrapper
 * crossed (the one the program called), or the vDSO entry when none was. */
#ifndef CP_UNWIND_TABLE_H
#define CP_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"

struct cp_error;
struct cp_symbolizer;

/* struct cp_unwind_rule, the value the BPF map holds per return address,
 * is defined in probes/clockreads.h, which both sides include. */

struct cp_unwind_entry {
	uint64_t pc; /* absolute address in the target: a return
				 * address (after a call or syscall) inside a
				 * wrapper */
	struct cp_unwind_rule rule;
};

/* A wrapper function found in the target. */
struct cp_plumbing_range {
	uint64_t start, end; /* absolute, [start, end) */
	uint16_t via;
};

struct cp_unwind_table {
	struct cp_unwind_entry *entries; /* sorted by pc, pcs unique */
	size_t n;
	char **via; /* display names, e.g.
						 * "clock_gettime",
						 * "std::chrono::steady_clock::now" */
	size_t n_via, via_cap;
	struct cp_plumbing_range *ranges; /* sorted by start */
	size_t n_ranges;
	size_t n_unsupported; /* return addresses with a CFA rule the walk
				 * cannot follow: a hop stops there */
	char warning[384];    /* says which, when n_unsupported > 0 */
};

/* Builds the table for live process pid (a convenience that opens and
 * closes a symbolizer), or from an open symbolizer's captured modules. */
int cp_unwind_table_build(pid_t pid, struct cp_unwind_table *out, struct cp_error *err);
int cp_unwind_table_build_from(struct cp_symbolizer *s, struct cp_unwind_table *out,
			       struct cp_error *err);

/* The same, with all_code: also a rule (via CP_VIA_NONE) for every return
 * address in every function of every module, so that --stacks can step
 * through code built without frame pointers. The call-site walk stops at
 * those: they are not wrappers. */
int cp_unwind_table_build_all(struct cp_symbolizer *s, bool all_code, struct cp_unwind_table *out,
			      struct cp_error *err);

/* The rule for return address pc, or NULL (binary search). */
const struct cp_unwind_rule *cp_unwind_table_lookup(const struct cp_unwind_table *t, uint64_t pc);

/* The plumbing range holding pc, or NULL. */
const struct cp_plumbing_range *cp_unwind_table_range(const struct cp_unwind_table *t, uint64_t pc);

/* The walk above, in user space, reading the target through read_u64
 * (returns 0 on success). Returns the call-site return address and sets
 * *via (the outermost wrapper crossed, -1 when none) and *hops; 0 when a
 * read failed. The BPF program must do exactly this. */
uint64_t cp_unwind_walk(const struct cp_unwind_table *t, uint64_t pc, uint64_t sp, uint64_t bp,
			int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val), void *ctx,
			int *via, int *hops);

/* --stacks: the whole stack of a read seen at ip, leaf first, as the BPF
 * program's record_stack walks it (mode: enum cp_site_mode; sp, bp: the
 * registers at ip), by every function's rules in t and the frame-pointer
 * chain where no rule covers a return address, reading the stack through
 * read_u64. Walks what the program copied before the rules were in place
 * (struct cp_stack_copy); the program must do exactly this. */
void cp_unwind_stack(const struct cp_unwind_table *t, uint64_t ip, int mode, uint64_t sp,
		     uint64_t bp, int (*read_u64)(void *ctx, uint64_t addr, uint64_t *val),
		     void *ctx, struct cp_stack_key *key);

void cp_unwind_table_free(struct cp_unwind_table *t);

#endif
