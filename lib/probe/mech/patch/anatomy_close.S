/* anatomy_close.S - the anatomy's part of a request boundary's close
 * (--anatomy; CP_PB_AN_* in probes/patch_layout.h), in the code pages'
 * second page at CP_PATCH_AN_CLOSE_OFF: boundary_close.S jumps here, its
 * registers saved, when block 0 says the anatomy is on (the close's own
 * page has no room left, and without --anatomy this never runs). Ends as
 * the close does: the registers restored, back to the trampoline. */
#include "patch_layout.h"

	.intel_syntax noprefix
#include "redirect_call.inc"

	.section .rodata.cp_anatomy_close, "a"
	.balign 64
	.globl cp_anatomy_close_start, cp_anatomy_close_end
cp_anatomy_close_start:
/* --anatomy (CP_PB_AN_* in patch_layout.h): the request this boundary
 * closes ends its log, if it had one (a finished log: clockprof reads it
 * and frees it); else, the log free and the countdown run out, the
 * request it opens gets one. rsi: the block; r9: the table. */
	mov	rax, [rsi + CP_PB_AN_STATE * 8]
	cmp	rax, 1
	je	.Lan_close
	test	rax, rax
	jnz	.Lout			/* finished, not read yet */
	cmp	qword ptr [rsi + CP_PB_AN_SKIP * 8], 0
	je	.Lan_open
	dec	qword ptr [rsi + CP_PB_AN_SKIP * 8]
	jmp	.Lout
.Lan_close:				/* no rdtsc: a boundary is no clock */
	mov	qword ptr [rsi + CP_PB_AN_STATE * 8], 2	/* read (CP_ANATOMY_TSC_CLOCKS) */
	jmp	.Lout
.Lan_open:				/* only in a burst (CP_PB0_AN_ON: the */
	cmp	qword ptr [r9 + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_ON * 8], 0
	je	.Lout			/* syscalls are recorded then only) */
	mov	rax, [r9 + CP_PATCH_BLOCKS_OFF + CP_PB0_AN_EVERY * 8]
	dec	rax
	mov	[rsi + CP_PB_AN_SKIP * 8], rax
	mov	qword ptr [rsi + CP_PB_AN_N * 8], 0
	mov	rcx, [rsi + CP_PB_OWNER * 8]	/* its tid, if known */
	mov	[rsi + CP_PB_AN_TID * 8], rcx
	/* The stack in use down from the boundary function's stack pointer
	 * where its redirect is (its return address' place, at its first
	 * instruction): rsp is 64 (the saved registers) + 8 (the
	 * trampoline's call) + 128 (the red zone kept) below it. */
	lea	rcx, [rsp + 64 + 8 + 128 + 8]
	mov	[rsi + CP_PB_AN_TOP * 8], rcx
	inc	qword ptr [rsi + CP_PB_AN_SEQ * 8]
	mov	qword ptr [rsi + CP_PB_AN_STATE * 8], 1	/* last: the log opens */
	jmp	.Lout

.Lout:
	RESTORE_REGS
	ret
	.balign 16
cp_anatomy_close_end:
	.org	cp_anatomy_close_start + CP_PATCH_CODE_OFF + 8192 - CP_PATCH_AN_CLOSE_OFF
	.section .note.GNU-stack, "", @progbits
