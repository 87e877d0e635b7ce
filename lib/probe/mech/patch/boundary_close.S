/* boundary_close.S - a request closed inside the target, with no trap: the
 * code a `func:` boundary's trampoline calls (redirect_plan.h), which
 * clockprof copies into the last code page of the counter table's mapping
 * (CP_PATCH_BOUNDARY_CODE_OFF in probes/patch_layout.h).
 *
 * Why in the target: a uprobe hit costs 9-26 us on these VMs, the request
 * it closes often less. Here a boundary costs the loads and stores below.
 *
 * What it keeps, in the calling thread's request block (patch_layout.h:
 * CP_PB_*), found by the thread's key (in Go, the goroutine's) as the
 * read's count finds its slot (vdso_count.S), the slot claimed if the
 * thread has read nothing yet:
 * the boundaries passed, the reads of each complete request (their
 * histogram and maximum), and the slot's words, its syscall() words
 * (syscall_count.S) and its site counts at the first and at the last
 * boundary, whose differences are the reads inside complete requests by
 * clock, entry, path and call site. A block whose epoch is
 * not block 0's is reset first: clockprof moves the epoch on as a window
 * opens, so a request counts from the first boundary a thread passes in
 * the window, as the BPF boundary counts it. The reset writes every page
 * of the block, which the BPF program reads at the target's exit (it can
 * read no page that was never touched).
 *
 * Entered by `call` from the trampoline, with rsp already 128 bytes below
 * the function's (its red zone kept). Every register is kept but the
 * flags, which the plan finds dead where the trampoline is entered; the
 * direction flag is clear there (the ABI's rule at a call). */
#include "patch_layout.h"

	.intel_syntax noprefix
#include "redirect_call.inc"

/* The slot's words 1-15 (rcx) into the block (rsi) from word dst + 1. */
	.macro COPY_WORDS dst
	.irp	i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	mov	r8, [rcx + \i * 8]
	mov	[rsi + (\dst + \i) * 8], r8
	.endr
	.endm

/* The block's own syscall() words 1-15 to its words from dst + 1. */
	.macro COPY_SYSCALLS dst
	.irp	i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	mov	r8, [rsi + (CP_PB_SYSCALLS + \i) * 8]
	mov	[rsi + (\dst + \i) * 8], r8
	.endr
	.endm

/* The counts of the site block's claimed entries (rdi; CP_PB_SITES_USED
 * says which, set as each is claimed) into the block from word dst (the
 * keys stay in the site block, which never drops one): a thread's reads
 * come from a few sites, and an entry never claimed holds 0. Uses rax,
 * rdx and r8. */
	.macro COPY_SITES dst
	mov	rdx, [rsi + CP_PB_SITES_USED * 8]
	test	rdx, rdx
	jz	2f
1:	bsf	rax, rdx		/* the next claimed entry */
	mov	r8, rax
	shl	r8, 4
	mov	r8, [rdi + r8 + 8]
	mov	[rsi + rax * 8 + \dst * 8], r8
	lea	r8, [rdx - 1]
	and	rdx, r8
	jnz	1b
2:
	.endm

/* A new owner's window: its first words moved on by as much as its last
 * words are behind r8, the word now (rdx: 8 x the word), and its last
 * words made r8. Uses r8 and r10. */
	.macro SHIFT_WINDOW first, last
	mov	r10, r8
	sub	r8, [rsi + rdx + \last * 8]
	add	[rsi + rdx + \first * 8], r8
	mov	[rsi + rdx + \last * 8], r10
	.endm

	REDIRECT_CODE boundary_close
	REDIRECT_TABLE boundary_close, CP_PATCH_BOUNDARY_CODE_OFF
	SLOT_FIND .Llost
	jmp	.Lfound
.Llost:					/* no key or no slot: said in block 0 */
	lock inc qword ptr [r9 + CP_PATCH_BLOCKS_OFF + CP_PB_HITS * 8]
	jmp	.Lout

.Lfound:				/* rcx: the slot; rdx: its index x 128 */
	SLOT_BLOCK			/* rsi: its request block */
	lea	rdi, [r9 + rdx * 4 + CP_PATCH_SITES_OFF]	/* rdi: its site block */
	mov	rax, [r9 + CP_PATCH_BLOCKS_OFF + CP_PB_EPOCH * 8]
	inc	rax			/* a block keeps its epoch + 1: one never */
	cmp	[rsi + CP_PB_EPOCH * 8], rax	/* written (zeros) is reset too */
	jne	.Lreset
.Lowner:				/* a thread's key (its thread pointer) is */
	test	r8b, 1			/* an exited thread's when the C library */
	jnz	.Lsum			/* gave it that one's cached stack: the */
	mov	eax, [rip + .Ltid_off]	/* slot's owner is told by its tid, the */
	test	eax, eax		/* C library's copy at this offset from */
	jz	.Lsum			/* the thread pointer (0: not known; Go's */
	mov	eax, fs:[rax]		/* goroutines: tagged keys) */
	cmp	eax, [rsi + CP_PB_OWNER * 8]
	jne	.Lnew_owner
.Lsum:					/* the slot's words 1-15 summed and kept */
	mov	rax, [rsi + CP_PB_SC_TOTAL * 8]	/* as the last boundary's, with */
	.irp	i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	mov	r8, [rcx + \i * 8]	/* the reads through syscall() (one */
	add	rax, r8			/* pass: a cold line of code costs */
	mov	[rsi + (CP_PB_LAST + \i) * 8], r8	/* more than the stores) */
	.endr
	cmp	qword ptr [rsi + CP_PB_HITS * 8], 0
	je	.Lfirst
	mov	r8, rax			/* this request's reads */
	sub	r8, [rsi + CP_PB_LAST_SUM * 8]
	jz	.Lnone
	cmp	r8, [rsi + CP_PB_MAX * 8]
	jbe	1f
	mov	[rsi + CP_PB_MAX * 8], r8
1:	cmp	r8, CP_PB_HIST_SLOTS - 1
	jb	2f
	mov	r8d, CP_PB_HIST_SLOTS - 1
2:	inc	qword ptr [rsi + r8 * 8 + CP_PB_HIST * 8]
	mov	[rsi + CP_PB_LAST_SUM * 8], rax
	mov	r8, [rsi + CP_PB_SC_TOTAL * 8]	/* none through syscall() since: */
	cmp	r8, [rsi + CP_PB_SC_TOTAL_LAST * 8]	/* their words are as they were */
	je	3f
	mov	[rsi + CP_PB_SC_TOTAL_LAST * 8], r8
	COPY_SYSCALLS CP_PB_SC_LAST
3:	COPY_SITES CP_PB_SITES_LAST
	/* last: a reader that sees it sees the rest */
	inc	qword ptr [rsi + CP_PB_HITS * 8]
.Ldone:					/* --anatomy: block 0's period, in the */
	cmp	qword ptr [r9 + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_EVERY * 8], 0
	jne	.Lboundary_close_start - CP_PATCH_BOUNDARY_CODE_OFF + CP_PATCH_AN_CLOSE_OFF
				/* line of its epoch, read above: anatomy_close.S */
.Lout:
	RESTORE_REGS
	ret

.Lnone:					/* a request with no read: nothing to copy */
	inc	qword ptr [rsi + CP_PB_HIST * 8]
	inc	qword ptr [rsi + CP_PB_HITS * 8]
	jmp	.Ldone

.Lfirst:				/* the thread's first boundary in the epoch */
	mov	[rsi + CP_PB_LAST_SUM * 8], rax
	COPY_WORDS CP_PB_FIRST
	COPY_SYSCALLS CP_PB_SC_FIRST
	COPY_SYSCALLS CP_PB_SC_LAST
	mov	r8, [rsi + CP_PB_SC_TOTAL * 8]
	mov	[rsi + CP_PB_SC_TOTAL_LAST * 8], r8
	xor	edx, edx		/* the sites, by a loop: once a thread */
1:	mov	r8, [rdi + rdx * 2 + 8]	/* (rdx: 8 x the entry) */
	mov	[rsi + rdx + CP_PB_SITES_FIRST * 8], r8
	mov	[rsi + rdx + CP_PB_SITES_LAST * 8], r8
	add	edx, 8
	cmp	edx, CP_PATCH_SITE_ENTRIES * 8
	jb	1b
	mov	qword ptr [rsi + CP_PB_HITS * 8], 1
	jmp	.Ldone

.Lreset:				/* a block of an earlier epoch: zeros */
	mov	[rsi + CP_PB_EPOCH * 8], rax
	push	rdi
	push	rcx
	xor	eax, eax
	mov	[rsi + CP_PB_HITS * 8], rax
	mov	[rsi + CP_PB_MAX * 8], rax
	lea	rdi, [rsi + CP_PB_HIST * 8]
	mov	ecx, CP_PB_HIST_SLOTS
	rep stosq
	pop	rcx
	pop	rdi
	jmp	.Lowner

/* Another thread than the last boundary's on the slot (rax: its tid):
 * the slot's last thread has exited and this one has its thread
 * pointer. Its first boundary opens its first request. The reads between
 * the two threads' boundaries (the old one's after its last, the new
 * one's before its first) are in no request: the first words move on by
 * them, as the last words move to now, with no request counted. Loops: a
 * cold path. */
.Lnew_owner:
	mov	[rsi + CP_PB_OWNER * 8], rax
	/* --anatomy: the old thread's stack's bounds dropped (vdso_count.S's
	 * .Llog also reads them for their tid's thread alone) */
	mov	qword ptr [rsi + CP_PB_AN_STACK_TID * 8], 0
	cmp	qword ptr [rsi + CP_PB_HITS * 8], 0
	je	.Lsum			/* no boundary yet: a first one */
	mov	rax, [rsi + CP_PB_SC_TOTAL * 8]
	mov	[rsi + CP_PB_SC_TOTAL_LAST * 8], rax
	mov	edx, 8			/* 8 x the word, 1-15 */
1:	mov	r8, [rcx + rdx]		/* the slot's word now */
	add	rax, r8
	SHIFT_WINDOW CP_PB_FIRST, CP_PB_LAST
	mov	r8, [rsi + rdx + CP_PB_SYSCALLS * 8]
	SHIFT_WINDOW CP_PB_SC_FIRST, CP_PB_SC_LAST
	add	edx, 8
	cmp	edx, CP_PATCH_SLOT_WORDS * 8
	jb	1b
	mov	[rsi + CP_PB_LAST_SUM * 8], rax
	xor	edx, edx		/* the sites (rdx: 8 x the entry) */
2:	mov	r8, [rdi + rdx * 2 + 8]
	SHIFT_WINDOW CP_PB_SITES_FIRST, CP_PB_SITES_LAST
	add	edx, 8
	cmp	edx, CP_PATCH_SITE_ENTRIES * 8
	jb	2b
	inc	qword ptr [rsi + CP_PB_OPENS * 8]
	/* --anatomy: a log the old thread left open is dropped, not
	 * finished with the new one's reads (anatomy_close.S) */
	mov	qword ptr [rsi + CP_PB_AN_STATE * 8], 0
	jmp	.Ldone

/* The offset of a thread's tid from its thread pointer in the target's C
 * library (glibc's _thread_db_pthread_tid), written by clockprof as it
 * copies this code (cp_vdso_count_set_tid_offset); 0: not known. In the
 * code page: a fork keeps it. */
	.balign 4
.Ltid_off:
	.long	0

	REDIRECT_CODE_END boundary_close, (CP_PATCH_SYSCALL_CODE_OFF - CP_PATCH_BOUNDARY_CODE_OFF)

/* Where the tid's offset is, from the start. */
	.balign 8
	.globl cp_boundary_close_tid_at
cp_boundary_close_tid_at:
	.quad	.Ltid_off - .Lboundary_close_start
	.section .note.GNU-stack, "", @progbits
