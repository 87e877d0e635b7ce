/* vdso_count.S - the code that counts a read, which clockprof writes into
 * the code pages of the counter table's mapping in a target (vdso_count.h),
 * within a rel32 jump of the target's vDSO.
 *
 * Why here and not in the vDSO's padding with the stub: a read pays for
 * every instruction the count runs before the vDSO's `lfence; rdtsc`
 * (measured: five fewer on clock_gettime's path, -0.3 ns a read), and the
 * padding had room for one path shared by the three entries only, which
 * sorted them out at run time. Here each entry has a path of its own:
 * its counter word, its key bits and the jump back to its thunk are
 * constants, and the table is found from the code's own address (the code
 * pages follow the table in one mapping: vdso_count.h), with no load.
 *
 * Entered by the jump that replaces the entry's first instruction in the
 * vDSO (vdso_plan.c): each path starts as the thunk's prefix did, which
 * cost a taken jump more (measured: docs/patch.md), loading r9 = the
 * entry's return address by rsp, as the call stored it (measured faster
 * than through another register), rax = where it is (both disp8s the
 * stack depth, written by the copier: cp_vdso_count_depths) and, for
 * clock_gettime, r10d = the counter's index less one (the clock id, 12
 * for ids 12 and up and for negative ones, with no branch). Left where it
 * counted the site at once by the entry's replaced instruction, relocated
 * here, and a jump back past it into the vDSO (a TAIL: the copier writes
 * both), else by a jump back to the entry's thunk in the vDSO, which runs
 * that instruction and jumps back (each CONTINUE's rel32 is listed in
 * cp_vdso_count_conts). Uses only the registers dead at a patch site
 * (rax, rcx, rdx, r8-r11 and the flags: the entries take their arguments
 * in rdi and rsi) and saves what else it uses on the stack, below the
 * entry's stack pointer (the plan chooses sites before which the entry
 * has stored nothing there).
 *
 * A read is counted in the calling thread's slot (found by its key, the
 * thread pointer or Go's goroutine), then at its call site in the slot's
 * block: the return address past the clock wrappers, by the rules user
 * space wrote into the table. The common case falls through with no
 * register saved and nothing written but the two counts: every taken
 * branch costs a read a fetch redirect (measured); the rest is out of
 * line. */
#include "patch_layout.h"

/* vdso_count_anatomy.S assembles these paths again with CP_VDSO_ANATOMY
 * set, under its own names: the same paths, but each read counted at a
 * site also appended to the slot's anatomy log (CP_PB_AN_* in
 * patch_layout.h) while its request is sampled. The copier writes that
 * variant into the code pages' second page; the entries jump to it only
 * with --anatomy. Without it these paths, in the first page, are what
 * runs, byte for byte as before (test_vdso_count). */
#ifdef CP_VDSO_ANATOMY
#define ANATOMY 1
#define cp_vdso_count_start cp_vdso_anatomy_start
#define cp_vdso_count_end cp_vdso_anatomy_end
#define cp_vdso_count_entries cp_vdso_anatomy_entries
#define cp_vdso_count_prefixed cp_vdso_anatomy_prefixed
#define cp_vdso_count_conts cp_vdso_anatomy_conts
#define cp_vdso_count_tails cp_vdso_anatomy_tails
#define cp_vdso_count_depths cp_vdso_anatomy_depths
#define CP_VDSO_COUNT_ROOM (CP_PATCH_AN_CLOSE_OFF - CP_PATCH_AN_CODE_OFF)
#define CP_VDSO_COUNT_AT CP_PATCH_AN_CODE_OFF	/* where it is from the table */
#else
#define ANATOMY 0
#define CP_VDSO_COUNT_ROOM (CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF)
#define CP_VDSO_COUNT_AT CP_PATCH_CODE_OFF
#endif

	.intel_syntax noprefix
	.section .rodata.cp_vdso_count, "a"

/* Each CONTINUE's rel32 field, each TAIL's room and each depth's disp8,
 * {offset from the start, entry}: listed here as the paths are
 * assembled, for the copier (vdso_count.h). FIELDS name opens the list
 * cp_vdso_count_<name> in a section of its own; FIELDS_END name puts
 * its end symbol after the last entry. */
	.macro FIELDS name
	.section .rodata.\name, "a"
	.balign 4
	.globl \name, \name\()_end
\name:
	.endm

	.macro FIELDS_END name
	.section .rodata.\name, "a"
\name\()_end:
	.endm

	FIELDS cp_vdso_count_conts
	FIELDS cp_vdso_count_tails
	FIELDS cp_vdso_count_depths

	.section .rodata.cp_vdso_count, "a"
	.balign 64
	.globl cp_vdso_count_start, cp_vdso_count_end, cp_vdso_count_entries
cp_vdso_count_start:
.Lstart:

/* The jump back to entry's thunk: its rel32 listed for the copier. */
	.macro CONTINUE entry
	.byte	0xe9
9:	.long	0
	.pushsection .rodata.cp_vdso_count_conts, "a"
	.long	9b - .Lstart, \entry
	.popsection
	.endm

/* The entry's replaced instruction and the jump back past it, as the
 * copier writes them for the entry's site (CP_VDSO_TAIL_ROOM bytes; else
 * a jump to its thunk). */
	.macro TAIL entry
9:	.fill	CP_VDSO_TAIL_ROOM, 1, 0xcc
	.pushsection .rodata.cp_vdso_count_tails, "a"
	.long	9b - .Lstart, \entry
	.popsection
	.endm

/* A disp8 the copier sets to the entry's stack depth: the byte before. */
	.macro DEPTH entry
8:	.pushsection .rodata.cp_vdso_count_depths, "a"
	.long	8b - 1 - .Lstart, \entry
	.popsection
	.endm

/* Whether the key (r10; pc its pc) sits at its home in the slot's block
 * (rdx): the flags say, [rdx + rcx * 8] is that home. */
	.macro SITE_AT_HOME pc
	lea	ecx, [\pc + \pc]		/* its home in the block, / 8 */
	and	ecx, (CP_PATCH_SITE_ENTRIES - 1) * 2
	cmp	[rdx + rcx * 8], r10
	.endm

/* The read counted there if so (else to miss), then back. */
	.macro COUNT_SITE_AND_CONTINUE entry, miss, pc, sp
	SITE_AT_HOME \pc
	jne	\miss
	inc	qword ptr [rdx + rcx * 8 + 8]
	.if ANATOMY
	\sp
	LOG \entry, edi
	.endif
	TAIL \entry
	.endm

/* The anatomy's variant: the read (key r10, rdx the slot's site block,
 * rax the site's function's stack pointer at its call) logged if its
 * request is sampled, with its clock (entry 0: clock, a 32-bit operand;
 * the others by their entry). Uses rax, rcx, rdx, r8, r9, r10 and 8
 * bytes of stack below the walk's or the entry's (the call). */
	.macro LOG entry, clock
	.if \entry == 0
	movsxd	r8, \clock
	.else
	mov	r8, -\entry		/* CP_ANATOMY_CLOCK_GETTIMEOFDAY, _TIME */
	.endif
	call	.Llog
	.endm

/* The read counted at once if its caller (r9) sits at its home in the
 * slot's block as a direct site (else to miss), then back. */
	.macro DIRECT_SITE entry, miss
	movabs	r10, CP_PATCH_VIA_NONE << 48 | \entry << 60
	add	r10, r9			/* key: pc | via << 48 | entry << 60 */
	COUNT_SITE_AND_CONTINUE \entry, \miss, r9, "lea rax, [rax + 8]"
	.endm

/* One entry's whole path. entry: its CP_ENTRY_* (clockreads.h); word:
 * its counter's index in the slot (CP_PATCH_WORD_*), or 0: r10 + 1
 * (clock_gettime's clock id). */
	.macro ENTRY_PATH entry, word
	.balign 32
.Lentry_\entry:
	mov	r9, [rsp + 0x7f]	/* the entry's return address */
	DEPTH \entry
	lea	rax, [rsp + 0x7f]	/* where it is */
	DEPTH \entry
	.if \word == 0
	mov	r10d, 12
	cmp	edi, r10d
	cmovb	r10d, edi		/* the clock id: the index - 1 */
	.endif
.Lprefixed_\entry:
	lea	r11, [rip + .Lstart - CP_VDSO_COUNT_AT]	/* the table */
	.if \word == 0			/* the index's counter, less the slot's */
	lea	r10, [r11 + r10 * 8 + 128 + 8]	/* offset (off the slot's chain) */
	.endif
	mov	r8, qword ptr fs:0	/* the thread pointer: a thread's key */
	test	r8, r8
	jz	.Lgoroutine_\entry
.Lhash_\entry:
	movabs	rdx, CP_PATCH_HASH	/* Fibonacci hash of the key: its top */
	imul	rdx, r8			/* 12 bits pick the slot, here times the */
	shr	rdx, 45			/* slot's 128 bytes: the slot's offset */
	and	edx, (CP_PATCH_SLOTS - 1) * CP_PATCH_SLOT_WORDS * 8
	cmp	[r11 + rdx + 128], r8	/* the first slot looked at: the key's */
	jne	.Lnext_slot_\entry
.Lslot_\entry:				/* (rdx: the key's slot's offset) */
	.if \word
	inc	qword ptr [r11 + rdx + 128 + \word * 8]	/* the key's own: no lock */
	.else
	inc	qword ptr [r10 + rdx]
	.endif
	lea	rdx, [r11 + rdx * 4 + CP_PATCH_SITES_OFF]	/* the slot's block */

	/* The site: the entry's caller, counted at once where the slot's
	 * block holds it at its home as a direct site (no wrapper crossed:
	 * its rule was looked for when it was claimed, so it is not looked
	 * for again; a read after a sleep pays a cold line for each table
	 * line it touches, and the rules' lines are spread over 16 pages);
	 * else a wrapper's caller, one step out by the stack pointer, if the
	 * entry's caller has a rule and its caller none; anything else (a
	 * rule's collision, a second wrapper, Go's frame hops, a site not at
	 * its home, a site not claimed yet) is walked. clock_gettime's
	 * reads come through the C library's wrapper: its path looks for
	 * the rule first, and takes no branch to a wrapper's caller (either
	 * order counts a read as the walk would). */
	.if \entry
	DIRECT_SITE \entry, .Lrule_home_\entry
	.endif
.Lrule_home_\entry:
	lea	ecx, [r9 + r9]		/* its rule's home, / 8 */
	and	ecx, (CP_PATCH_RULES - 1) * 2
	cmp	[r11 + rcx * 8 + CP_PATCH_RULES_OFF], r9
	.if \entry
	jne	.Lwalk_\entry		/* no rule, or another's: walked */
	.else
	jne	.Ldirect_\entry		/* no rule, or another's: a direct site? */
	.endif

.Lwrapper_\entry:
	movzx	r10d, word ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF + 14]
	cmp	r10d, CP_PATCH_VIA_KEEP	/* a frame hop, by rbp: walked */
	jae	.Lwalk_\entry
	movsxd	rcx, dword ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF + 8]
	.if ANATOMY
	lea	r9, [rax + rcx + 8]	/* the caller's stack pointer */
	.endif
	mov	r8, [rax + rcx]		/* at the CFA (0 < its offset <= 64 KiB: */
	lea	ecx, [r8 + r8]		/* clockprof writes no other) - 8: the */
	and	ecx, (CP_PATCH_RULES - 1) * 2	/* caller's return address, */
	cmp	qword ptr [r11 + rcx * 8 + CP_PATCH_RULES_OFF], 0
	jne	.Lwalk_\entry		/* which must have no rule */
	shl	r10, 48			/* key: pc | via << 48 | entry << 60 */
	add	r10, r8
	.if \entry
	bts	r10, 59 + \entry
	.endif
	COUNT_SITE_AND_CONTINUE \entry, .Lwalk_\entry, r8, "mov rax, r9"
	.if \entry == 0
.Ldirect_\entry:
	DIRECT_SITE \entry, .Lwalk_\entry
	.endif

/* Go's threads keep 0 at fs:0: the running goroutine, g, is the key,
 * tagged; neither: the shared slot. */
.Lgoroutine_\entry:
	mov	r8, qword ptr fs:-8
	test	r8, r8
	jz	.Lshared_\entry
	or	r8, 1			/* tagged: a goroutine, not a thread */
	jmp	.Lhash_\entry

/* The key's slot is not the first looked at: the next ones, claiming an
 * empty one, CP_PATCH_PROBES at most (rbx counts them). */
.Lnext_slot_\entry:
	push	rbx
	lea	rcx, [r11 + rdx + 128]
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
.Lshared_\entry:			/* no key or no slot: the shared one */
	.if \word			/* (and no site) */
	lock inc qword ptr [r11 + \word * 8]
	.else
	lock inc qword ptr [r10 - 128]
	.endif
	CONTINUE \entry
5:	pop	rbx
	jmp	.Lslot_\entry

/* The walk: steps out of the clock wrappers (at most CP_UNWIND_MAX_HOPS
 * rules, as the BPF program's walk does), then finds or claims the key's
 * entry in the block. Its reads of the stack stay within 64 KiB above
 * the entry's frames but for Go's frame hops: where the BPF walk's reads
 * may fail, these run in the target and must not. */
.Lwalk_\entry:
	push	rbx
	push	rsi
	push	rdi
	push	r13
	lea	r8, [rax + 8]		/* above the entry's return address */
	mov	rax, [rax]		/* the entry's return address */
	mov	rsi, rbp		/* the frame pointer, as at the entry */
	mov	r10d, CP_PATCH_VIA_NONE	/* no wrapper crossed yet */
	mov	edi, CP_UNWIND_MAX_HOPS	/* hops at most */
.Lhop_\entry:
	mov	ecx, eax		/* a rule's home: the pc's low 12 bits */
	and	ecx, CP_PATCH_RULES - 1
	shl	ecx, 4
	mov	ebx, CP_PATCH_RULE_PROBES	/* probes at most */
.Lprobe_\entry:
	cmp	[r11 + rcx + CP_PATCH_RULES_OFF], rax
	je	.Lrule_\entry
	cmp	qword ptr [r11 + rcx + CP_PATCH_RULES_OFF], 0
	je	.Lkey_\entry		/* no rule: the call site */
	add	ecx, 16
	and	ecx, (CP_PATCH_RULES - 1) * 16
	dec	ebx
	jnz	.Lprobe_\entry
	jmp	.Lkey_\entry
.Lrule_\entry:
	lea	rcx, [r11 + rcx + CP_PATCH_RULES_OFF]
	movzx	ebx, word ptr [rcx + 14]	/* via | base_bp << 15 */
	movsxd	r13, dword ptr [rcx + 8]
	test	ebx, CP_PATCH_RULE_BASE_BP
	jnz	1f
	add	r8, r13			/* the CFA from sp: above this frame, and */
	cmp	r13, 0x10000		/* near (0 < offset <= 64 KiB); a rule */
	ja	.Lkey_\entry		/* that says otherwise (its module replaced */
	test	r13, r13		/* since it was written) is not followed, */
	jz	.Lkey_\entry		/* and the read's site is the wrapper */
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
	jnz	.Lhop_\entry
.Lkey_\entry:
	/* key: pc | via << 48 | entry << 60 (a user pc has 47 bits) */
	mov	ecx, eax
	shl	r10, 48
	.if \entry
	bts	r10, 59 + \entry
	.endif
	and	ecx, CP_PATCH_SITE_ENTRIES - 1
	mov	rdi, rax
	shl	ecx, 4
	or	rdi, r10			/* (rdx: the slot's block) */
	mov	ebx, CP_PATCH_SITE_ENTRIES
.Lsite_entry_\entry:
	cmp	[rdx + rcx], rdi
	je	.Lcount_\entry
	cmp	qword ptr [rdx + rcx], 0
	jne	.Lnext_\entry
	xor	eax, eax
	lock cmpxchg [rdx + rcx], rdi	/* an empty entry: claim it (a signal
					 * handler's read may race this one) */
	je	.Lclaimed_\entry
	cmp	rax, rdi
	je	.Lcount_\entry
.Lnext_\entry:
	add	ecx, 16
	and	ecx, (CP_PATCH_SITE_ENTRIES - 1) * 16
	dec	ebx
	jnz	.Lsite_entry_\entry
	jmp	.Ldone_\entry		/* the block is full: no site */
/* The entry claimed: said in the slot's request block, whose close
 * (boundary_close.S) copies the claimed entries only. */
.Lclaimed_\entry:
	lea	rax, [rdx - CP_PATCH_SITES_OFF]
	sub	rax, r11		/* the slot's index x 512 */
	shr	rax, 2
	imul	rax, rax, CP_PATCH_BLOCK / 128
	mov	ebx, ecx
	shr	ebx, 4			/* the entry */
	lock bts qword ptr [r11 + rax + CP_PATCH_BLOCKS_OFF + CP_PATCH_BLOCK + \
			    CP_PB_SITES_USED * 8], rbx
.Lcount_\entry:
	inc	qword ptr [rdx + rcx + 8]
	.if ANATOMY
	mov	r10, rdi		/* the key */
	mov	rax, r8			/* the site's stack pointer: the CFA */
	LOG \entry, "dword ptr [rsp + 8]"	/* (the entry's rdi, pushed) */
	.endif
.Ldone_\entry:
	pop	r13
	pop	rdi
	pop	rsi
	pop	rbx
	CONTINUE \entry
	.endm

	.if ANATOMY
/* The read logged: key r10, clock r8, rax the site's function's stack
 * pointer at its call, rdx the slot's site block, r11 the table. The
 * slot's request block (its index x 512 from the site block's offset,
 * x 16) says whether its request is sampled (CP_PB_AN_STATE 1); if so
 * the read is appended to its log ({key, rdtsc, clock, 2 callers}), or
 * only counted once the log is full (the request then truncated). The
 * callers: the return addresses in the frame-pointer chain from rbp
 * (the site's function's, if it keeps one), each frame read only where
 * it lies within the stack the thread has in use: at or above the site's
 * stack pointer (the next, above the frame before), less than 64 KiB
 * above it, and below the top of the stack the request's opening
 * boundary had (CP_PB_AN_TOP); else 0, and 0 past it. And only inside
 * the mapping of the thread's own stack, as clockprof found it
 * (CP_PB_AN_STACK_*): none before it did, none for another thread on the
 * slot, none when the site's stack pointer is outside it (a coroutine's
 * stack, a signal's alternate stack: a frame pointer there may point at
 * a gap or a guard page below the top, and rbp may hold any value in
 * code built without frame pointers). Uses rax, rcx, rdx, r8, r9, r10. */
	.balign 16
.Llog:
	mov	r9, rdx
	sub	r9, r11
	shl	r9, 4			/* (the block - the sites' offset x 16) */
	add	r9, r11
	cmp	qword ptr [r9 + CP_PATCH_BLOCKS_OFF + CP_PATCH_BLOCK - CP_PATCH_SITES_OFF * 16 + \
			   CP_PB_AN_STATE * 8], 1
	jne	2f
	lea	r9, [r9 + CP_PATCH_BLOCKS_OFF + CP_PATCH_BLOCK - CP_PATCH_SITES_OFF * 16]
	mov	ecx, 1			/* the entry's index, taken and raised */
	xadd	[r9 + CP_PB_AN_N * 8], rcx	/* at once: a handler's read shares none */
	cmp	rcx, CP_PB_AN_ENTRIES
	jae	2f
	lea	rcx, [rcx + rcx * 4]	/* x CP_PB_AN_ENTRY_WORDS */
	lea	rcx, [r9 + rcx * 8 + CP_PB_AN_LOG * 8]
	mov	[rcx], r10
	mov	[rcx + 16], r8
	xor	r8d, r8d		/* no frame unless on the thread's stack: */
	mov	edx, [r9 + CP_PB_AN_STACK_TID * 8]
	test	edx, edx
	jz	3f			/* not known */
	mov	r10d, [rip + .Ltid_off]
	test	r10d, r10d
	jz	3f
	cmp	edx, fs:[r10]
	jne	3f			/* another thread's */
	cmp	rax, [r9 + CP_PB_AN_STACK_LO * 8]
	jb	3f
	cmp	rax, [r9 + CP_PB_AN_STACK_HI * 8]
	jae	3f			/* the site on another stack */
	mov	r8, rbp			/* the callers, by the frame pointers */
3:
	.irp	i, 0, 1
	xor	r10d, r10d		/* none known */
	cmp	r8, rax
	jb	1f			/* below the frame before (or the site's) */
	lea	rdx, [rax + 0x10000]
	cmp	r8, rdx
	jae	1f			/* too far above it */
	lea	rdx, [r8 + 16]
	cmp	rdx, [r9 + CP_PB_AN_TOP * 8]
	ja	1f			/* above the stack in use */
	cmp	rdx, [r9 + CP_PB_AN_STACK_HI * 8]
	ja	1f			/* past the stack's mapping */
	mov	r10, [r8 + 8]		/* its return address */
	lea	rax, [r8 + 16]		/* the next frame lies above this one */
	mov	r8, [r8]
1:	mov	[rcx + 24 + \i * 8], r10
	.endr
	mov	rax, [rcx + 16]		/* the clock: stamped only where the */
	cmp	rax, -1			/* vDSO's own path takes rdtsc, */
	je	4f			/* gettimeofday's and */
	xor	edx, edx
	cmp	rax, 11			/* CP_ANATOMY_TSC_CLOCKS' (unsigned: */
	ja	5f			/* time's -2, CPU clocks' below 0) */
	mov	r10d, CP_ANATOMY_TSC_CLOCKS
	bt	r10d, eax
	jnc	5f			/* else 0: untimed */
4:	rdtsc
	shl	rdx, 32
	or	rdx, rax
5:	mov	[rcx + 8], rdx
2:	ret

/* The offset of a thread's tid from its thread pointer, as the close's
 * (boundary_close.S), written by clockprof with it. */
	.balign 4
.Ltid_off:
	.long	0
	.endif

	ENTRY_PATH 0, 0			/* clock_gettime */
	ENTRY_PATH 1, 14		/* gettimeofday (the words: CP_PATCH_WORD_* in */
	ENTRY_PATH 2, 15		/* time          clockreads.h; test_vdso_count) */
	.balign 16
cp_vdso_count_end:
	/* its room: past it, "attempt to move .org backwards" */
	.org	.Lstart + CP_VDSO_COUNT_ROOM

/* Each entry's path, as offsets from the start, by CP_ENTRY_*; and past
 * its prefix (the unit tests enter there with r9, rax and r10 set). */
	.balign 8
	.globl cp_vdso_count_prefixed
	.if ANATOMY
	.globl cp_vdso_anatomy_tid_at
cp_vdso_anatomy_tid_at:			/* where .Ltid_off is, from the start */
	.quad	.Ltid_off - .Lstart
	.endif
cp_vdso_count_entries:
	.quad	.Lentry_0 - .Lstart
	.quad	.Lentry_1 - .Lstart
	.quad	.Lentry_2 - .Lstart
cp_vdso_count_prefixed:
	.quad	.Lprefixed_0 - .Lstart
	.quad	.Lprefixed_1 - .Lstart
	.quad	.Lprefixed_2 - .Lstart

	FIELDS_END cp_vdso_count_conts
	FIELDS_END cp_vdso_count_tails
	FIELDS_END cp_vdso_count_depths
	.section .note.GNU-stack, "", @progbits
