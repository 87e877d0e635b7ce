/* vdso_area.S - the code clockprof writes into the zero padding at the end
 * of a target's private copy of its vDSO (lib/probe/mech/patch/vdso_patch.h).
 *
 * The area: a header of data and the stub, position-independent, copied
 * byte for byte. One thread of the target is sent through the stub
 * (hijack.c) and does, on its own, everything that changes what other
 * threads execute: it maps the counter table (private anonymous memory,
 * its code pages read-only and executable: vdso_count.S is copied there)
 * once, makes the vDSO writable, switches each of its sites with one
 * `lock cmpxchg` of the aligned 8 bytes that hold it, makes it read-only
 * again, then switches each request boundary's site (in a function's
 * code, with its page made writable for that instant), says its result in
 * the table and returns where it was interrupted. Nothing depends on
 * clockprof once the thread is sent: a SIGKILL of clockprof at any
 * instant leaves every site either original or completely patched.
 *
 * The header layout is mirrored by struct cp_vdso_area_header
 * (vdso_area.h); keep both in step. */
#include "patch_layout.h"

	.intel_syntax noprefix
	.section .rodata.cp_vdso_area, "a"

/* --- the area: header (data) + stub (code). */
	.balign 16
	.globl cp_vdso_area_start, cp_vdso_area_end, cp_vdso_stub
	.globl cp_vdso_stub_syscall_ips, cp_vdso_stop
cp_vdso_area_start:
h_magic:	.ascii "clockprof-vdsoA\0"
h_table:	.quad 0		/* the counter table, once mapped */
h_table_size:	.quad 0
h_vdso_base:	.quad 0		/* what the stub makes writable, then not */
h_vdso_len:	.quad 0
h_cmd:		.quad 0		/* 1: patch the sites, 2: restore them */
h_gen_req:	.quad 0		/* this request's number ... */
h_gen_done:	.quad 0		/* ... written here when the stub is done */
h_status:	.quad 0		/* 2: mmap failed (other results: in the table) */
h_errno:	.quad 0		/* its -errno */
h_nsites:	.quad 0
h_table_at:	.quad 0		/* where to map the table (within a jump of the vDSO) */
h_give_fs:	.quad 0		/* 1: give the thread a thread pointer (zeros) */
h_resume:	.quad 0		/* where cp_vdso_stop sends a held thread on */
h_pause:	.quad 0, 0	/* tests only: a timespec slept in the window */
h_sites:	.fill 9 * 5, 8, 0	/* {qword address, original, patched, spare,
				 * prot}: one a clock entry, six for the
				 * redirected functions (prot: its page's
				 * protection, put back after; 0: a site in
				 * the vDSO) */
h_owner:	.fill 2, 8, 0	/* {pid, start time}: the clockprof that
				 * holds the patch (patch_owner.h); written by
				 * clockprof alone, never by the stub */

/* The vDSO made writable and executable (7) or put back (5): its result
 * in rax; each use's syscall ip follows it, named for seccomp. */
	.macro VDSO_MPROTECT prot
	mov	eax, 10
	mov	rdi, [rip + h_vdso_base]
	mov	rsi, [rip + h_vdso_len]
	mov	edx, \prot
	syscall
	.endm

/* Entered with rsp 136 bytes below the interrupted rsp (beneath the red
 * zone) and the interrupted rip stored at [rsp]; every register as the
 * thread had it. Leaves them all so and `ret 128` lands on the
 * interrupted rip with the interrupted rsp.
 *
 * The table is mapped and made ready first, with the vDSO as it is: the
 * stub's result is written in the table (CP_PATCH_STUB_OFF), so that a
 * process that denies itself writable code (prctl PR_SET_MDWE), where the
 * code pages' mprotect fails, says so at once. The vDSO is writable and
 * executable for its sites' switch alone (a process forked then inherits
 * it so: vdso_stub.c mends those), each redirect's page for its own
 * instant. r10 holds the table throughout. Its stack, at most: the
 * 136 bytes it is entered below, 80 saved, the thread's signal mask's 8,
 * 24 in .Lsite_page: 248, within the CP_HIJACK_STUB_STACK (hijack.h) a
 * held thread is checked for. */
	.balign 16
/* A thread held inside a syscall that is to restart keeps the kernel's own
 * restart (hijack.c): the kernel moves its rip back 2 bytes, the length of
 * a `syscall`, from the stub to here, and the stub then returns to that
 * `syscall` again; where a handler runs first and the call ends in EINTR
 * instead, the rip stays on the stub, which returns past the call with
 * EINTR, as the kernel would have had it. */
	/* (jumps as bytes: their lengths are fixed, 2 each) */
.Lstub_restart:
	sub	qword ptr [rsp], 2	/* back to the interrupted `syscall` */
	.byte	0xeb, 2			/* jmp cp_vdso_stub */
cp_vdso_stub_restart:
	.byte	0xeb, .Lstub_restart - (. + 1)	/* jmp .Lstub_restart */
cp_vdso_stub:
	.if cp_vdso_stub - .Lstub_restart - 9
	.error "the restart entry must be 2 bytes before the stub"
	.endif
	pushfq
	push	rax
	push	rcx
	push	rdx
	push	rsi
	push	rdi
	push	r8
	push	r9
	push	r10
	push	r11
	/* rt_sigprocmask(SIG_BLOCK, all, &old, 8), the old mask kept in the
	 * slot that held "all" (the kernel reads the new set before it writes
	 * the old): no handler runs inside the stub, where one that left by
	 * siglongjmp abandoned it, its vDSO writable and executable for good.
	 * Its one act before: the saves above, which change nothing (a
	 * thread that leaves there is told by clockprof: stub_left in
	 * vdso_area_io.c). The slot stays -1, never a mask the kernel keeps
	 * (SIGKILL and SIGSTOP cannot be blocked), when the call fails: then
	 * nothing is put back. */
	push	-1
	push	14			/* (push and pop: shorter than a mov) */
	pop	rax
	xor	edi, edi
	mov	rsi, rsp
	mov	rdx, rsp
	push	8
	pop	r10
	syscall
sc_ip_14:
	mov	r10, [rip + h_table]
	test	r10, r10
	jnz	.Lsites
	/* mmap(at, size, NONE, PRIVATE|ANON|NORESERVE[|FIXED_NOREPLACE], -1,
	 * 0): no commit charge, to the target or to a process it forks,
	 * which copies the mapping (vm.overcommit_memory=2 would charge it
	 * all the same: refused there, refuse_early in vdso_prepare.c).
	 * Mapped inaccessible, then unlocked, then made RW: in a process
	 * that locks its future mappings (mlockall(MCL_FUTURE)) a mapping
	 * made accessible and locked is populated whole, 34 MiB resident
	 * and locked where a few hundred KiB are written; an inaccessible
	 * one is not, and once unlocked nothing populates it. */
	mov	eax, 9
	mov	rdi, [rip + h_table_at]
	mov	rsi, [rip + h_table_size]
	xor	edx, edx
	mov	r10d, 0x4022
	test	rdi, rdi
	jz	1f
	or	r10d, 0x100000
1:
	mov	r8, -1
	xor	r9d, r9d
	syscall
sc_ip_2:
	cmp	rax, -4096
	ja	.Lmmap_failed
	mov	r10, rax
	mov	rdi, rax		/* munlock(table, size; rsi kept by */
	mov	eax, 150		/* the syscall): its result does not */
	syscall				/* matter (none locked) */
sc_ip_16:
	push	3			/* mprotect(table, size, RW) */
	pop	rdx
	push	10
	pop	rax
	syscall
sc_ip_17:
	test	rax, rax		/* (left mapped, inaccessible: nothing */
	jnz	.Lmmap_failed		/* in it can hold the result) */
	mov	rcx, [rip + h_magic]	/* the table's first word: found by it */
	mov	[r10], rcx
	/* madvise(table, counters, MADV_POPULATE_WRITE): the counters are
	 * populated, because the boundary program reads them without faults;
	 * the rules and site blocks are not (a block never written reads as
	 * none). Its result does not matter: a page not populated is one the
	 * program finds no slot in. */
	mov	rdi, r10
	mov	esi, CP_PATCH_TABLE_SIZE
	mov	edx, 23
	mov	eax, 28
	syscall
sc_ip_5:
	/* madvise(counters, MADV_WIPEONFORK) and the same for the site
	 * blocks: a process the target forks counts from zero in its own
	 * copy (the rules and code pages it keeps). Its result does not
	 * matter either: unwiped, a child's counts start at its parent's. */
	mov	rdi, r10
	mov	esi, CP_PATCH_TABLE_SIZE
	mov	edx, 18
	mov	eax, 28
	syscall
sc_ip_7:
	lea	rdi, [r10 + CP_PATCH_SITES_OFF]
	mov	esi, CP_PATCH_MAP_USED - CP_PATCH_SITES_OFF
	mov	edx, 18
	mov	eax, 28
	syscall
sc_ip_8:
	/* mprotect(code pages, R-X): vdso_count.S is copied there. Refused
	 * (EACCES) where the process denies itself writable code. */
	lea	rdi, [r10 + CP_PATCH_CODE_OFF]
	mov	esi, CP_PATCH_CODE_SIZE
	mov	edx, 5
	mov	eax, 10
	syscall
sc_ip_6:
	test	rax, rax
	jnz	.Lcode_failed
	/* A launched static executable sets its thread pointer after its
	 * entry point: until then it points at the zeros past the table (the
	 * counting code reads it), and the program's own replaces it. */
	cmp	qword ptr [rip + h_give_fs], 0
	je	.Lsites
	lea	rsi, [r10 + CP_PATCH_MAP_USED + 8]
	mov	eax, 158		/* arch_prctl(ARCH_SET_FS, the zeros + 8) */
	mov	edi, 0x1002
	syscall
sc_ip_4:
.Lsites:
	xor	eax, eax
	cmp	qword ptr [rip + h_nsites], 0
	je	.Lok
	VDSO_MPROTECT 7		/* mprotect(base, len, RWX) */
sc_ip_1:
	mov	ecx, 4			/* the vDSO stays as it was */
	test	rax, rax
	jnz	.Lsay
	mov	rax, [rip + h_pause]	/* tests only: a fork inside the window */
	or	rax, [rip + h_pause + 8]
	jz	1f
	lea	rdi, [rip + h_pause]	/* nanosleep(h_pause, NULL) */
	xor	esi, esi
	mov	eax, 35
	syscall
sc_ip_10:
1:
	xor	r9d, r9d		/* pass 0: the vDSO's sites; 1: redirects */
.Lpass:
	lea	rdi, [rip + h_sites]
	mov	rsi, [rip + h_nsites]
	mov	r8, [rip + h_cmd]
.Lsite:
	test	rsi, rsi
	jz	.Lpass_end
	mov	rdx, [rdi + 32]
	test	r9, r9
	jnz	.Lredirect
	test	rdx, rdx		/* pass 0: a site in the vDSO */
	jnz	.Lsite_next
	jmp	.Lswitch
.Lredirect:
	test	rdx, rdx		/* pass 1: a boundary's page, writable */
	jz	.Lsite_next		/* (RWX) for the switch */
	mov	edx, 7
	call	.Lsite_page
	test	rax, rax
	jnz	.Lsite_next		/* not writable: left as it is */
.Lswitch:
	mov	r11, [rdi]
	mov	rax, [rdi + 8]
	mov	rcx, [rdi + 16]
	cmp	r8, 2
	jne	.Lswap
	xchg	rax, rcx
.Lswap:
	lock cmpxchg [r11], rcx
	mov	rdx, [rdi + 32]		/* and back to what it was */
	test	rdx, rdx
	jz	.Lsite_next
	call	.Lsite_page
.Lsite_next:
	add	rdi, 40
	dec	rsi
	jmp	.Lsite
.Lpass_end:
	test	r9, r9
	jnz	.Lok
	VDSO_MPROTECT 5		/* mprotect(base, len, R-X) */
sc_ip_3:
	mov	r9d, 1
	jmp	.Lpass

/* mprotect(the page of site rdi, 4096, rdx), keeping rdi and rsi (r8,
 * the request's command, read again); its result in rax. */
.Lsite_page:
	push	rdi
	push	rsi
	mov	rdi, [rdi]
	and	rdi, -4096
	mov	esi, 4096
	mov	eax, 10
	syscall
.Lsite_page_syscall:
	pop	rsi
	pop	rdi
	mov	r8, [rip + h_cmd]
	ret
/* The table could not be mapped: nowhere to say so but the header, the
 * vDSO writable for those three words alone. Where it cannot be made so,
 * nothing is said (clockprof's wait runs out). */
.Lmmap_failed:
	mov	r8, rax			/* (a syscall takes rcx and r11) */
	VDSO_MPROTECT 7		/* mprotect(base, len, RWX) */
sc_ip_11:
	test	rax, rax
	jnz	.Lreturn
	mov	qword ptr [rip + h_status], 2
	mov	[rip + h_errno], r8
	mov	rax, [rip + h_gen_req]
	mov	[rip + h_gen_done], rax
	VDSO_MPROTECT 5		/* mprotect(base, len, R-X) */
sc_ip_12:
	jmp	.Lreturn
/* No site switched: the table's 34 MiB unmapped (munmap), its page of
 * zeros that holds the result and its code pages left, unused. */
.Lcode_failed:
	mov	r8, rax
	mov	rdi, r10
	mov	esi, CP_PATCH_MAP_USED
	mov	eax, 11
	syscall
sc_ip_13:
	mov	rax, r8
	mov	ecx, 3
	jmp	.Lsay
.Lok:
	xor	ecx, ecx
	xor	eax, eax
/* The result in the table: the magic's first 8 bytes, status ecx, the
 * failed call's -errno rax, and the request's number last (what
 * clockprof waits for). */
.Lsay:
	mov	r11, [rip + h_magic]
	mov	[r10 + CP_PATCH_STUB_OFF], r11
	mov	[r10 + CP_PATCH_STUB_OFF + 16], rcx
	mov	[r10 + CP_PATCH_STUB_OFF + 24], rax
	mov	rax, [rip + h_gen_req]
	mov	[r10 + CP_PATCH_STUB_OFF + 8], rax
/* The thread's own mask put back, the stub's last act: a signal that
 * came meanwhile is handled here, the stub's work done (a handler that
 * leaves by siglongjmp leaves nothing half made). */
.Lreturn:
	cmp	qword ptr [rsp], -1
	je	1f
	push	14			/* rt_sigprocmask(SIG_SETMASK, &old, NULL, 8) */
	pop	rax
	push	2
	pop	rdi
	mov	rsi, rsp
	xor	edx, edx
	push	8
	pop	r10
	syscall
sc_ip_15:
1:
	pop	rcx			/* the slot (rcx is put back below) */
	pop	r11
	pop	r10
	pop	r9
	pop	r8
	pop	rdi
	pop	rsi
	pop	rdx
	pop	rcx
	pop	rax
	popfq
	ret	128

/* A thread clockprof holds (a launched command's, or a followed process
 * just after its exec) comes here from the stub when it was sent to map
 * the table only, its own resume address kept in h_resume. It stops at the
 * entry of a getpid, where clockprof, its tracer (PTRACE_SYSCALL), takes
 * it back, writes the code and rules, and sends it through the stub
 * again. If clockprof is gone by then, nothing waits: the getpid runs,
 * and the thread goes on where it was interrupted with every register as
 * it was (the table mapped, no site switched). Never reached otherwise. */
cp_vdso_stop:
	lea	rsp, [rsp - 128]	/* the interrupted red zone, kept */
	push	rax			/* the syscall takes rax, rcx and r11 */
	push	rcx
	push	r11
	mov	eax, 39			/* getpid */
	syscall
sc_ip_9:
	pop	r11
	pop	rcx
	pop	rax
	lea	rsp, [rsp + 128]
	jmp	[rip + h_resume]

	.balign 16
cp_vdso_area_end:

/* Where the stub's syscalls return to (seccomp sees these as the
 * instruction pointer), as offsets from the area's start: mprotect, mmap,
 * mprotect, arch_prctl, madvise, mprotect (the code pages), madvise
 * twice (wipe on fork), cp_vdso_stop's getpid, the mprotect of a
 * boundary site's page, the tests' nanosleep, the mprotects of a
 * failed mmap's report, the munmap after the code pages' mprotect
 * failed, the rt_sigprocmask that blocks every signal and the one
 * that puts the thread's mask back, and the new table's munlock and its
 * mprotect (RW). */
	.balign 8
cp_vdso_stub_syscall_ips:
	.quad sc_ip_1 - cp_vdso_area_start
	.quad sc_ip_2 - cp_vdso_area_start
	.quad sc_ip_3 - cp_vdso_area_start
	.quad sc_ip_4 - cp_vdso_area_start
	.quad sc_ip_5 - cp_vdso_area_start
	.quad sc_ip_6 - cp_vdso_area_start
	.quad sc_ip_7 - cp_vdso_area_start
	.quad sc_ip_8 - cp_vdso_area_start
	.quad sc_ip_9 - cp_vdso_area_start
	.quad .Lsite_page_syscall - cp_vdso_area_start
	.quad sc_ip_10 - cp_vdso_area_start
	.quad sc_ip_11 - cp_vdso_area_start
	.quad sc_ip_12 - cp_vdso_area_start
	.quad sc_ip_13 - cp_vdso_area_start
	.quad sc_ip_14 - cp_vdso_area_start
	.quad sc_ip_15 - cp_vdso_area_start
	.quad sc_ip_16 - cp_vdso_area_start
	.quad sc_ip_17 - cp_vdso_area_start

	.section .note.GNU-stack, "", @progbits
