/* vdso_area.S - the code clockprof writes into the zero padding at the end
 * of a target's private copy of its vDSO (lib/probe/patch/vdso_patch.h).
 *
 * Two pieces, both position-independent, copied byte for byte:
 *
 * - The area: a header of data, the stub, and the code every thunk runs.
 *   One thread of the target is sent through the stub (hijack.c) and does,
 *   on its own, everything that changes what other threads execute: it
 *   makes the vDSO writable, maps the counter table (private anonymous
 *   memory) once, switches each patch site with one `lock cmpxchg` of the
 *   aligned 8 bytes that hold it, makes the vDSO read-only again and
 *   returns where it was interrupted. Nothing depends on clockprof once
 *   the thread is sent: a SIGKILL of clockprof at any instant leaves every
 *   site either original or completely patched. cp_vdso_count finds the
 *   calling thread's slot in the table and adds one read; the site
 *   recorder then steps out of the clock wrappers by the rules user space
 *   wrote into the table and counts the read at its call site in the
 *   thread's block. They use only registers that are dead at a patch site
 *   (rax, rcx, rdx, r8-r11 and the flags: the vDSO entries take their
 *   arguments in rdi and rsi) and save what else they use on the stack,
 *   below the entry's stack pointer: the plan chooses sites before which
 *   the entry has stored nothing there.
 *
 * - A thunk's start, copied once per entry (vdso_plan.c): the counter's
 *   index in r10d, the key's entry bits for the recorder in r9, where
 *   the entry's return address is in rax, then the jump to
 *   cp_vdso_count, which comes back through cp_vdso_conts.
 *
 * The header layout is mirrored by struct cp_vdso_area_header
 * (vdso_area.h); keep both in step. */
#include "patch_layout.h"

	.intel_syntax noprefix
	.section .rodata.cp_vdso_area, "a"

/* --- the area: header (data) + stub (code). */
	.balign 16
	.globl cp_vdso_area_start, cp_vdso_area_end, cp_vdso_stub
	.globl cp_vdso_stub_syscall_ips, cp_vdso_stop, cp_vdso_count, cp_vdso_conts
cp_vdso_area_start:
h_magic:	.ascii "clockprof-vdso1\0"
h_table:	.quad 0		/* the counter table, once mapped */
h_table_size:	.quad 0
h_vdso_base:	.quad 0		/* what the stub makes writable, then not */
h_vdso_len:	.quad 0
h_cmd:		.quad 0		/* 1: patch the sites, 2: restore them */
h_gen_req:	.quad 0		/* this request's number ... */
h_gen_done:	.quad 0		/* ... written here when the stub is done */
h_status:	.quad 0		/* 0 ok, 2 mmap failed */
h_errno:	.quad 0		/* the failed syscall's -errno */
h_nsites:	.quad 0
h_table_at:	.quad 0		/* where to map the table; 0: where the kernel likes */
h_give_fs:	.quad 0		/* 1: give the thread a thread pointer (zeros) */
h_sites:	.fill 3 * 4, 8, 0	/* {qword address, original, patched, swapped}, one a clock entry */

/* Entered with rsp 136 bytes below the interrupted rsp (beneath the red
 * zone) and the interrupted rip stored at [rsp]; every register as the
 * thread had it. Leaves them all so and `ret 128` lands on the
 * interrupted rip with the interrupted rsp. */
	.balign 16
cp_vdso_stub:
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
	/* mmap(at, size, RW, PRIVATE|ANON[|FIXED_NOREPLACE], -1, 0) */
	mov	eax, 9
	mov	rdi, [rip + h_table_at]
	mov	rsi, [rip + h_table_size]
	mov	edx, 3
	mov	r10d, 0x22
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
	mov	[rip + h_table], rax
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
	pop	rax
	/* A launched static executable sets its thread pointer after its
	 * entry point: until then it points at zeros past the table (the
	 * thunks read it), and the program's own replaces it. */
	cmp	qword ptr [rip + h_give_fs], 0
	je	.Lsites
	lea	rsi, [rax + 8]
	add	rsi, [rip + h_table_size]
	sub	rsi, 4096
	mov	eax, 158		/* arch_prctl(ARCH_SET_FS, table end - 4088) */
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
	mov	r9, [rdi]
	mov	rax, [rdi + 8]
	mov	rcx, [rdi + 16]
	cmp	r8, 2
	jne	.Lswap
	xchg	rax, rcx
.Lswap:
	lock cmpxchg [r9], rcx
	sete	byte ptr [rdi + 24]
	add	rdi, 32
	dec	rsi
	jmp	.Lsite
.Lmmap_failed:
	mov	qword ptr [rip + h_status], 2
	mov	[rip + h_errno], rax
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

/* A launched command's thread comes here from the stub when it was sent
 * to map the table only: clockprof, its tracer, sees the trap, writes the
 * rules and sends it on (vdso_patch.c). Never reached otherwise. */
cp_vdso_stop:
	int3

/* Where each entry's thunk goes on once the read is counted: the thunk's
 * replaced instruction, by entry (CP_ENTRY_*; vdso_area.h asserts 3),
 * absolute addresses the plan writes (vdso_plan.c). The thunks jump to
 * the count rather than call it: the call's push and the return's pop
 * cost time() 0.3 ns a read (measured side by side, +2.0 -> +1.7); a
 * jump through this table, whose one target per entry the branch
 * predictor learns, costs a load. */
	.balign 8
cp_vdso_conts:
	.fill 3, 8, 0

/* The read counted at its key (r10; r8 its pc) if the key sits at its
 * home in the slot's block (else walked), then on to the entry's thunk.
 * Written out at the end of each path rather than jumped to: a taken
 * jump is what a read pays most for here. */
	.macro COUNT_SITE_AND_CONTINUE
	lea	ecx, [r8 + r8]		/* its home in the block: 4 x (the */
	and	ecx, (CP_PATCH_SITE_ENTRIES - 1) * 2	/* slot's offset + 16 */
	lea	rcx, [rdx + rcx * 2]	/* x the home) / 4 */
	cmp	[r11 + rcx * 4 + CP_PATCH_SITES_OFF], r10
	jne	.Lwalk
	inc	qword ptr [r11 + rcx * 4 + CP_PATCH_SITES_OFF + 8]
	CONTINUE
	.endm

/* On to the entry's thunk (r9's top 4 bits: the entry). */
	.macro CONTINUE
	shr	r9, 60
	lea	rdx, [rip + cp_vdso_conts]
	jmp	qword ptr [rdx + r9 * 8]
	.endm

/* Jumped to by each thunk (rax, r9, r10 as its prefix leaves them): the
 * read counted in the calling thread's slot of the table, found by its
 * key, then its site (cp_vdso_site_record), then on to the thunk's own
 * continuation in cp_vdso_conts. A slot is the key's alone (a thread, or
 * a goroutine, runs on one CPU at a time and an inc is one instruction,
 * so a signal handler's read on the same thread cannot tear it): no lock.
 * The common path falls through: every branch it takes costs a read a
 * fetch redirect (measured), so the rarer cases are out of line. */
	.balign 16
cp_vdso_count:
	mov	r11, [rip + h_table]
	mov	r8, qword ptr fs:0	/* the thread pointer: a thread's key */
	test	r8, r8
	jz	.Lgoroutine
.Lhash:
	movabs	rdx, CP_PATCH_HASH	/* Fibonacci hash of the key: its top */
	imul	rdx, r8			/* 12 bits pick the slot, here times the */
	shr	rdx, 45			/* slot's 128 bytes: the slot's offset */
	and	edx, (CP_PATCH_SLOTS - 1) * CP_PATCH_SLOT_WORDS * 8
	lea	rcx, [r11 + rdx + 128]
	cmp	[rcx], r8		/* the first slot looked at: the key's */
	jne	.Lnext_slot
.Lslot:
	inc	qword ptr [rcx + r10 * 8 + 8]	/* the key's own: no lock */

/* Fallen into once the read is counted in the thread's own slot: rax holds
 * where the entry's return address is, rdx the slot's offset, r11 the
 * table, r9 the key's high bits (CP_PATCH_VIA_NONE << 48 | entry << 60).
 * Counts the read at {call site, wrapper, entry} in the slot's block.
 *
 * The common reads first, with no register saved and nothing written but
 * the count: a read whose entry was called from the user's code, or from
 * a wrapper whose rule sits at its home and is followed by the stack
 * pointer to a caller with no rule, and whose {site, wrapper, entry} sits
 * at its home in the block. Anything else (a rule's or an entry's
 * collision, a second wrapper, Go's frame-pointer hops, a site not yet in
 * the block) takes the walk below, from the start, which finds the same
 * key. Measured: the walk alone cost 1.8 ns a read, most of it in the
 * wait before the vDSO's lfence; this path leaves about 0.7. */
cp_vdso_site_record:
	mov	r8, [rax]		/* the entry's return address */
	lea	ecx, [r8 + r8]		/* its rule's home, / 8 */
	and	ecx, (CP_PATCH_RULES - 1) * 2
	mov	r10, [r11 + rcx * 8 + CP_PATCH_RULES_OFF]
	cmp	r10, r8
	je	.Lwrapper
	test	r10, r10		/* another's rule at the home: walked */
	jnz	.Lwalk
	lea	r10, [r8 + r9]		/* key: pc | via << 48 | entry << 60 */
	COUNT_SITE_AND_CONTINUE
.Lcontinue:				/* the slower paths' way on (one copy: */
	CONTINUE			/* the area's room is the vDSO's padding) */

/* A wrapper whose rule is at its home called the entry: one step out by
 * the stack pointer, to a caller with no rule. */
.Lwrapper:
	movzx	r10d, word ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF + 14]
	cmp	r10d, CP_PATCH_VIA_KEEP	/* a frame hop, by rbp: walked */
	jae	.Lwalk
	movsxd	rcx, dword ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF + 8]
	mov	r8, [rax + rcx]		/* at the CFA (0 < its offset <= 64 KiB: */
	lea	ecx, [r8 + r8]		/* clockprof writes no other) - 8: the */
	and	ecx, (CP_PATCH_RULES - 1) * 2	/* caller's return address, */
	cmp	qword ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF], 0
	jne	.Lwalk			/* which must have no rule */
	xor	r10d, CP_PATCH_VIA_NONE	/* key: pc | via << 48 | entry << 60, */
	shl	r10, 48			/* the via put in place of r9's none */
	xor	r10, r9
	add	r10, r8
	COUNT_SITE_AND_CONTINUE

/* Go's threads keep 0 at fs:0: the running goroutine, g, is the key,
 * tagged; neither: the shared slot. */
.Lgoroutine:
	mov	r8, qword ptr fs:-8
	test	r8, r8
	jz	.Lshared
	or	r8, 1			/* tagged: a goroutine, not a thread */
	jmp	.Lhash

/* The key's slot is not the first looked at: the next ones, claiming an
 * empty one, CP_PATCH_PROBES at most (rbx counts them). */
.Lnext_slot:
	push	rbx
	mov	ebx, CP_PATCH_PROBES
2:	cmp	[rcx], r8
	je	5f
	cmp	qword ptr [rcx], 0
	jne	3f
	push	rax			/* (where the entry's return address is) */
	xor	eax, eax
	lock cmpxchg [rcx], r8		/* an empty slot: claim it */
	pop	rax
	je	5f
	cmp	[rcx], r8
	je	5f
3:	add	edx, 128		/* the next slot, around the end */
	and	edx, (CP_PATCH_SLOTS - 1) * CP_PATCH_SLOT_WORDS * 8
	lea	rcx, [r11 + rdx + 128]
	dec	ebx
	jnz	2b
	pop	rbx
.Lshared:
	lock inc qword ptr [r11 + r10 * 8 + 8]	/* no key or no slot: the shared */
	jmp	.Lcontinue			/* one (and no site) */
5:	pop	rbx
	jmp	.Lslot

/* The walk: steps out of the clock wrappers (at most CP_UNWIND_MAX_HOPS
 * rules, as the BPF program's walk does), then finds or claims the key's
 * entry in the block. Changes only the registers the thunk may (it saves
 * the others it uses on the stack). Its reads of the stack stay within
 * 64 KiB above the entry's frames but for Go's frame hops: where the BPF
 * walk's reads may fail, these run in the target and must not. */
.Lwalk:
	push	rbx
	push	rsi
	push	rdi
	push	r13
	lea	r8, [rax + 8]		/* above the entry's return address */
	mov	rax, [rax]		/* the entry's return address */
	shr	r9, 60			/* the key's entry bits, ready */
	shl	r9, 60
	mov	rsi, rbp		/* the frame pointer, as at the entry */
	mov	r10d, CP_PATCH_VIA_NONE	/* no wrapper crossed yet */
	mov	edi, CP_UNWIND_MAX_HOPS	/* hops at most */
.Lhop:
	mov	ecx, eax		/* a rule's home: the pc's low 12 bits */
	and	ecx, CP_PATCH_RULES - 1
	shl	ecx, 4
	mov	ebx, CP_PATCH_RULE_PROBES	/* probes at most */
.Lprobe:
	cmp	[r11 + rcx + CP_PATCH_RULES_OFF], rax
	je	.Lrule
	cmp	qword ptr [r11 + rcx + CP_PATCH_RULES_OFF], 0
	je	.Lkey			/* no rule: the call site */
	add	ecx, 16
	and	ecx, (CP_PATCH_RULES - 1) * 16
	dec	ebx
	jnz	.Lprobe
	jmp	.Lkey
.Lrule:
	lea	rcx, [r11 + rcx + CP_PATCH_RULES_OFF]
	movzx	ebx, word ptr [rcx + 14]	/* via | base_bp << 15 */
	movsxd	r13, dword ptr [rcx + 8]
	test	ebx, CP_PATCH_RULE_BASE_BP
	jnz	1f
	add	r8, r13			/* the CFA from sp: above this frame, and */
	cmp	r13, 0x10000		/* near (0 < offset <= 64 KiB); a rule */
	ja	.Lkey			/* that says otherwise (its module replaced */
	test	r13, r13		/* since it was written) is not followed, */
	jz	.Lkey			/* and the read's site is the wrapper */
	jmp	2f
1:	lea	r8, [rsi + r13]		/* the CFA from rbp (Go's may be on */
2:	and	ebx, CP_PATCH_VIA_NONE	/* another stack than the read's) */
	cmp	ebx, CP_PATCH_VIA_KEEP
	je	3f			/* a frame hop crosses no wrapper */
	mov	r10d, ebx		/* the wrapper crossed */
3:	movsx	r13, word ptr [rcx + 12]
	test	r13, r13
	jz	4f
	mov	rsi, [r8 + r13]		/* the caller's rbp */
4:	mov	rax, [r8 - 8]		/* the caller's return address */
	dec	edi
	jnz	.Lhop
.Lkey:
	/* key: pc | via << 48 | entry << 60 (a user pc has 47 bits), the
	 * entry's home from the pc's low 5 bits: both from the pc at once,
	 * the wait before the vDSO's lfence kept short */
	mov	ecx, eax
	shl	r10, 48
	or	r10, r9
	and	ecx, CP_PATCH_SITE_ENTRIES - 1
	mov	rdi, rax
	shl	ecx, 4
	or	rdi, r10
	lea	rdx, [r11 + rdx * 4 + CP_PATCH_SITES_OFF]	/* the slot's block */
	mov	ebx, CP_PATCH_SITE_ENTRIES
.Lentry:
	cmp	[rdx + rcx], rdi
	je	.Lcount
	cmp	qword ptr [rdx + rcx], 0
	jne	.Lnext
	xor	eax, eax
	lock cmpxchg [rdx + rcx], rdi	/* an empty entry: claim it (a signal
					 * handler's read may race this one) */
	je	.Lcount
	cmp	rax, rdi
	je	.Lcount
.Lnext:
	add	ecx, 16
	and	ecx, (CP_PATCH_SITE_ENTRIES - 1) * 16
	dec	ebx
	jnz	.Lentry
	jmp	.Ldone			/* the block is full: no site */
.Lcount:
	inc	qword ptr [rdx + rcx + 8]
.Ldone:
	pop	r13
	pop	rdi
	pop	rsi
	pop	rbx
	jmp	.Lcontinue
	.balign 16
cp_vdso_area_end:

/* Where the stub's syscalls return to (seccomp sees these as the
 * instruction pointer), as offsets from the area's start: mprotect, mmap,
 * mprotect, arch_prctl, madvise. */
	.balign 8
cp_vdso_stub_syscall_ips:
	.quad sc_ip_1 - cp_vdso_area_start
	.quad sc_ip_2 - cp_vdso_area_start
	.quad sc_ip_3 - cp_vdso_area_start
	.quad sc_ip_4 - cp_vdso_area_start
	.quad sc_ip_5 - cp_vdso_area_start


/* --- a thunk's start, copied once per entry (vdso_plan.c): rax = where
 * the entry's return address is (the copier sets the load's disp8, the
 * stack depth, at byte 4), r10d = the counter's index in the slot
 * (1..15) less one (the count adds it in its displacement), r9 = the
 * key's high bits (CP_PATCH_VIA_NONE << 48 | entry << 60; the copier sets
 * the imm64 that ends either prefix); then a jump to
 * cp_vdso_count (the copier sets its displacement), and where that comes
 * back to (cp_vdso_conts): the replaced instruction and a jump back.
 * clock_gettime's index is 1 + the clock id, ids 12 and up (and negative
 * ones: CPU-time and fd clocks) in one, with no branch; the copier sets
 * the fixed prefix's index (the imm32 before cp_vdso_prefix_fixed_index). */
	.globl cp_vdso_prefix_clockid, cp_vdso_prefix_clockid_end
	.globl cp_vdso_prefix_fixed, cp_vdso_prefix_fixed_index, cp_vdso_prefix_fixed_end
cp_vdso_prefix_clockid:
	lea	rax, [rsp + 0x7f]	/* where the entry's return address is: disp8 at 4 */
	mov	r10d, 12
	cmp	edi, r10d
	cmovb	r10d, edi		/* the clock id: the index - 1 */
	movabs	r9, 0x7fffffffffffffff
cp_vdso_prefix_clockid_end:
/* gettimeofday, time: a fixed index. */
cp_vdso_prefix_fixed:
	lea	rax, [rsp + 0x7f]
	mov	r10d, 0x7fffffff
cp_vdso_prefix_fixed_index:
	movabs	r9, 0x7fffffffffffffff
cp_vdso_prefix_fixed_end:
	.section .note.GNU-stack, "", @progbits
