/* syscall_count.S - a clock read through the C library's syscall()
 * counted inside the target, with no trap: the code the trampoline of a
 * redirected syscall() calls (redirect_plan.h), which clockprof copies
 * into the last code page of the counter table's mapping
 * (CP_PATCH_SYSCALL_CODE_OFF in probes/patch_layout.h).
 *
 * Why: syscall(SYS_clock_gettime, ...) passes no vDSO entry, and a uprobe
 * on syscall() traps at every call, whatever the syscall. And a request
 * closed in the target (boundary_close.S) must hold these reads too.
 *
 * A clock_gettime, gettimeofday or time is counted in the calling
 * thread's request block (CP_PB_SYSCALLS: words 1-13 clock_gettime's by
 * clock id, 14 gettimeofday's, 15 time's, as a slot's words), and at its
 * call site in the slot's site block, keyed as the read's count keys a
 * site, with bit 62 set: through syscall(). Any other syscall costs a few
 * compares. The slot is claimed if the thread has none yet; no slot: the
 * shared slot's block (block 0), and no site.
 *
 * Entered by `call` from the trampoline with rsp 128 bytes below the
 * function's (its red zone kept) and, above the return address, the
 * syscall's first argument, its number and syscall()'s return address
 * (the call site). Every register is kept but the flags (the plan finds
 * them dead there). */
#include "patch_layout.h"

	.intel_syntax noprefix
#include "redirect_call.inc"

#define NR_GETTIMEOFDAY 96
#define NR_TIME 201
#define NR_CLOCK_GETTIME 228
#define SITE_DIRECT 62

	REDIRECT_CODE syscall_count
	/* above: 8 saved, the return address; then the argument, the
	 * number, the call site */
	mov	rax, [rsp + 80]		/* the number */
	mov	r10d, 14		/* gettimeofday: word 14, entry 1 */
	cmp	rax, NR_GETTIMEOFDAY
	je	.Lcount
	mov	r10d, 15		/* time: word 15, entry 2 */
	cmp	rax, NR_TIME
	je	.Lcount
	cmp	rax, NR_CLOCK_GETTIME
	jne	.Lout
	mov	eax, [rsp + 72]		/* clock_gettime: 1 + the clock id, ids */
	mov	r10d, 12		/* 12 and up (and negative ones) in one */
	cmp	eax, r10d
	cmovb	r10d, eax
	inc	r10d
.Lcount:				/* r10: the word */
	REDIRECT_TABLE syscall_count, CP_PATCH_SYSCALL_CODE_OFF
	SLOT_FIND .Lshared
	SLOT_BLOCK			/* rsi: the slot's request block */
	inc	qword ptr [rsi + r10 * 8 + CP_PB_SYSCALLS * 8]	/* the thread's own: no lock */
	inc	qword ptr [rsi + CP_PB_SC_TOTAL * 8]	/* the close's shortcut */
	/* the site: the call site | no wrapper << 48 | entry << 60 | 1 << 62 */
	lea	rdi, [r9 + rdx * 4 + CP_PATCH_SITES_OFF]	/* the slot's site block */
	mov	r8, [rsp + 88]		/* the call site */
	movabs	rax, CP_PATCH_VIA_NONE << 48 | 1 << SITE_DIRECT
	or	r8, rax
	cmp	r10d, 14
	jb	1f
	mov	eax, r10d
	sub	eax, 13			/* 14: 1, 15: 2 */
	shl	rax, 60
	or	r8, rax
1:	mov	ecx, r8d		/* its home in the block: the pc's low bits */
	and	ecx, CP_PATCH_SITE_ENTRIES - 1
	shl	ecx, 4
	mov	edx, CP_PATCH_SITE_ENTRIES
2:	cmp	[rdi + rcx], r8
	je	4f
	cmp	qword ptr [rdi + rcx], 0
	jne	3f
	xor	eax, eax
	lock cmpxchg [rdi + rcx], r8	/* an empty entry: claimed (a signal
					 * handler's read may race this one) */
	je	5f
	cmp	rax, r8
	je	4f
3:	add	ecx, 16
	and	ecx, (CP_PATCH_SITE_ENTRIES - 1) * 16
	dec	edx
	jnz	2b
	jmp	.Lout			/* the block is full: no site */
5:	mov	eax, ecx		/* claimed: said for the close */
	shr	eax, 4
	lock bts qword ptr [rsi + CP_PB_SITES_USED * 8], rax
4:	inc	qword ptr [rdi + rcx + 8]
.Lout:
	RESTORE_REGS
	ret

.Lshared:				/* no key or no slot: block 0 */
	lock inc qword ptr [r9 + r10 * 8 + CP_PATCH_BLOCKS_OFF + CP_PB_SYSCALLS * 8]
	lock inc qword ptr [r9 + CP_PATCH_BLOCKS_OFF + CP_PB_SC_TOTAL * 8]
	jmp	.Lout

	REDIRECT_CODE_END syscall_count, (CP_PATCH_CODE_OFF + 4096 - CP_PATCH_SYSCALL_CODE_OFF)
	.section .note.GNU-stack, "", @progbits
