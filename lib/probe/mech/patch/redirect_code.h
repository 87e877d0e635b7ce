/* redirect_code.h - the code a redirected function's trampoline calls
 * inside the target (redirect_plan.h), one piece per kind of redirect: a
 * request boundary's close (boundary_close.S) and syscall()'s count
 * (syscall_count.S), both written on redirect_call.inc's template.
 * cp_vdso_count_build copies each into the counter table's code pages at
 * the offset patch_layout.h gives it; its trampolines call it there. */
#ifndef CP_REDIRECT_CODE_H
#define CP_REDIRECT_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "redirect_plan.h"

struct cp_redirect_code {
	const uint8_t *start, *end; /* its bytes, in clockprof */
	uint64_t off;		    /* where it goes, from the table */
	uint64_t room;		    /* the bytes it may take there */
};

extern const struct cp_redirect_code cp_boundary_close, cp_syscall_count;
/* The anatomy's part of the close (anatomy_close.S), which the close
 * jumps to: not called by a trampoline. */
extern const struct cp_redirect_code cp_anatomy_close;

/* Where the offset of a thread's tid from its thread pointer is in the
 * close's code (a 32-bit word; 0: not known), from its start. */
extern const uint64_t cp_boundary_close_tid_at;

/* The code a redirect of kind calls. */
const struct cp_redirect_code *cp_redirect_code_of(enum cp_redirect_kind kind);

static inline size_t cp_redirect_code_size(const struct cp_redirect_code *c)
{
	return (size_t)(c->end - c->start);
}

/* Where c is in the target, for the table at table. */
static inline uint64_t cp_redirect_code_addr(const struct cp_redirect_code *c, uint64_t table)
{
	return table + c->off;
}

#endif
