/* vdso_area.S - the code clockprof writes into the zero padding at the end
 * of a target's private copy of its vDSO (lib/probe/patch/vdso_patch.h).
 *
 * Two pieces, both position-independent, copied byte for byte:
 *
 * - The area: a header of data and the stub. One thread of the target is
 *   sent through the stub (hijack.c) and does, on its own, everything
 *   that changes what other threads execute: it makes the vDSO writable,
 *   maps the counter table (private anonymous memory, its code pages
 *   read-only and executable: vdso_count.S is copied there) once,
 *   switches each patch site with one `lock cmpxchg` of the aligned 8
 *   bytes that hold it (a request boundary's site, in a function's code,
 *   with its page made writable for that instant), makes the vDSO
 *   read-only again and returns where it was interrupted. Nothing depends on clockprof once the thread is
 *   sent: a SIGKILL of clockprof at any instant leaves every site either
 *   original or completely patched.
 *
 * - A thunk's start, copied once per entry (vdso_plan.c): where the
 *   entry's return address is in rax, clock_gettime's counter index in
 *   r10d, then the jump to the entry's path in the table's code pages
 *   (vdso_count.S), which comes back to the rest of the thunk.
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
h_magic:	.ascii "clockprof-vdso8\0"
h_table:	.quad 0		/* the counter table, once mapped */
h_table_size:	.quad 0
h_vdso_base:	.quad 0		/* what the stub makes writable, then not */
h_vdso_len:	.quad 0
h_cmd:		.quad 0		/* 1: patch the sites, 2: restore them */
h_gen_req:	.quad 0		/* this request's number ... */
h_gen_done:	.quad 0		/* ... written here when the stub is done */
h_status:	.quad 0		/* 0 ok, 2 mmap failed, 3 the code pages' mprotect */
h_errno:	.quad 0		/* the failed syscall's -errno */
h_nsites:	.quad 0
h_table_at:	.quad 0		/* where to map the table (within a jump of the vDSO) */
h_give_fs:	.quad 0		/* 1: give the thread a thread pointer (zeros) */
h_resume:	.quad 0		/* where cp_vdso_stop sends a held thread on */
h_sites:	.fill 9 * 5, 8, 0	/* {qword address, original, patched, swapped,
				 * prot}: one a clock entry, six for the
				 * redirected functions (prot: its page's
				 * protection, put back after; 0: a site in
				 * the vDSO) */
h_owner:	.fill 2, 8, 0	/* {pid, start time}: the clockprof that
				 * holds the patch (patch_owner.h); written by
				 * clockprof alone, never by the stub */

/* Entered with rsp 136 bytes below the interrupted rsp (beneath the red
 * zone) and the interrupted rip stored at [rsp]; every register as the
 * thread had it. Leaves them all so and `ret 128` lands on the
 * interrupted rip with the interrupted rsp. Its stack, at most: those
 * 136 bytes, 80 saved, 32 in .Lsite_page: 248, within the
 * CP_HIJACK_STUB_STACK (hijack.h) the held thread is checked for. */
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
	mov	eax, 10			/* mprotect(base, len, RWX) */
	mov	rdi, [rip + h_vdso_base]
	mov	rsi, [rip + h_vdso_len]
	mov	edx, 7
	syscall
sc_ip_1:
	test	rax, rax
	jnz	.Lmprotect_failed
	mov	rax, [rip + h_table]
	test	rax, rax
	jnz	.Lsites
	/* mmap(at, size, RW, PRIVATE|ANON|NORESERVE[|FIXED_NOREPLACE], -1,
	 * 0): no commit charge, to the target or to a process it forks,
	 * which copies the mapping (vm.overcommit_memory=2 would charge it
	 * all the same: refused there, refuse_early in vdso_patch.c) */
	mov	eax, 9
	mov	rdi, [rip + h_table_at]
	mov	rsi, [rip + h_table_size]
	mov	edx, 3
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
	mov	rcx, [rip + h_magic]	/* the table's first word: found by it */
	mov	[rax], rcx
	/* madvise(table, counters, MADV_POPULATE_WRITE): the counters are
	 * populated, because the boundary program reads them without faults;
	 * the rules and site blocks are not (a block never written reads as
	 * none). Its result does not matter: a page not populated is one the
	 * program finds no slot in. */
	push	rax
	mov	rdi, rax
	mov	esi, CP_PATCH_TABLE_SIZE
	mov	edx, 23
	mov	eax, 28
	syscall
sc_ip_5:
	/* madvise(counters, MADV_WIPEONFORK) and the same for the site
	 * blocks: a process the target forks counts from zero in its own
	 * copy (the rules and code pages it keeps). Its result does not
	 * matter either: unwiped, a child's counts start at its parent's. */
	mov	rdi, [rsp]
	mov	esi, CP_PATCH_TABLE_SIZE
	mov	edx, 18
	mov	eax, 28
	syscall
sc_ip_7:
	mov	rdi, [rsp]
	add	rdi, CP_PATCH_SITES_OFF
	mov	esi, CP_PATCH_MAP_USED - CP_PATCH_SITES_OFF
	mov	edx, 18
	mov	eax, 28
	syscall
sc_ip_8:
	/* mprotect(code pages, R-X): vdso_count.S is copied there */
	mov	rdi, [rsp]
	add	rdi, CP_PATCH_CODE_OFF
	mov	esi, CP_PATCH_CODE_SIZE
	mov	edx, 5
	mov	eax, 10
	syscall
sc_ip_6:
	mov	rcx, rax
	pop	rax
	test	rcx, rcx
	jnz	.Lcode_failed
	mov	[rip + h_table], rax	/* said only once its code pages can run */
	/* A launched static executable sets its thread pointer after its
	 * entry point: until then it points at the zeros past the table (the
	 * counting code reads it), and the program's own replaces it. */
	cmp	qword ptr [rip + h_give_fs], 0
	je	.Lsites
	lea	rsi, [rax + CP_PATCH_MAP_USED + 8]
	mov	eax, 158		/* arch_prctl(ARCH_SET_FS, the zeros + 8) */
	mov	edi, 0x1002
	syscall
sc_ip_4:
.Lsites:
	lea	rdi, [rip + h_sites]
	mov	rsi, [rip + h_nsites]
	mov	r8, [rip + h_cmd]
.Lsite:
	test	rsi, rsi
	jz	.Lprotect
	mov	edx, 7			/* a boundary's page: writable (RWX) */
	cmp	qword ptr [rdi + 32], 0
	je	.Lswitch
	call	.Lsite_page
	test	rax, rax
	jnz	.Lsite_next		/* not writable: left as it is */
.Lswitch:
	mov	r9, [rdi]
	mov	rax, [rdi + 8]
	mov	rcx, [rdi + 16]
	cmp	r8, 2
	jne	.Lswap
	xchg	rax, rcx
.Lswap:
	lock cmpxchg [r9], rcx
	sete	byte ptr [rdi + 24]
	mov	rdx, [rdi + 32]		/* and back to what it was */
	test	rdx, rdx
	jz	.Lsite_next
	call	.Lsite_page
.Lsite_next:
	add	rdi, 40
	dec	rsi
	jmp	.Lsite

/* mprotect(the page of site rdi, 4096, rdx), keeping rdi, rsi and r8;
 * its result in rax. */
.Lsite_page:
	push	rdi
	push	rsi
	push	r8
	mov	rdi, [rdi]
	and	rdi, -4096
	mov	esi, 4096
	mov	eax, 10
	syscall
.Lsite_page_syscall:
	pop	r8
	pop	rsi
	pop	rdi
	ret
.Lmmap_failed:
	mov	qword ptr [rip + h_status], 2
	mov	[rip + h_errno], rax
	jmp	.Lprotect
.Lcode_failed:				/* no table said, no site switched (the */
	mov	qword ptr [rip + h_status], 3	/* mapping is left, unused) */
	mov	[rip + h_errno], rcx
	jmp	.Lprotect
.Lmprotect_failed:
	jmp	.Lreturn		/* read-only: nothing can be said; clockprof
					 * times out and leaves the target as it was */
.Lprotect:
	mov	rax, [rip + h_gen_req]	/* done, said while still writable */
	mov	[rip + h_gen_done], rax
	mov	eax, 10			/* mprotect(base, len, R-X) */
	mov	rdi, [rip + h_vdso_base]
	mov	rsi, [rip + h_vdso_len]
	mov	edx, 5
	syscall
sc_ip_3:
.Lreturn:
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
 * twice (wipe on fork), cp_vdso_stop's getpid, and the mprotect of a
 * boundary site's page. */
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


/* --- a thunk's start, copied once per entry (vdso_plan.c): rax = where
 * the entry's return address is (the copier sets the load's disp8, the
 * stack depth, at byte 4); for clock_gettime, r10d = the counter's index
 * in the slot less one: 1 + the clock id, ids 12 and up (and negative
 * ones: CPU-time and fd clocks) in one, with no branch. Then the jump to
 * the entry's path in the table's code pages (vdso_count.S), and where
 * that comes back to: the replaced instruction and a jump back. */
	.globl cp_vdso_prefix_clockid, cp_vdso_prefix_clockid_end
	.globl cp_vdso_prefix_fixed, cp_vdso_prefix_fixed_end
cp_vdso_prefix_clockid:
	lea	rax, [rsp + 0x7f]	/* where the entry's return address is: disp8 at 4 */
	mov	r10d, 12
	cmp	edi, r10d
	cmovb	r10d, edi		/* the clock id: the index - 1 */
cp_vdso_prefix_clockid_end:
/* gettimeofday, time: their index is the path's own. */
cp_vdso_prefix_fixed:
	lea	rax, [rsp + 0x7f]
cp_vdso_prefix_fixed_end:
	.section .note.GNU-stack, "", @progbits
