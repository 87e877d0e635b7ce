/* patch_layout.h - the numbers of the vDSO patch's table in the target
 * (probes/clockreads.h says what each part holds), as plain #defines: the
 * BPF program, clockprof and the code written into the target
 * (lib/probe/mech/patch/vdso_area.S and vdso_count.S, assembled with this file) read them
 * from here alone. No C types: the assembler includes it.
 *
 * The mapping: the counters (slot 0 shared, then one slot of
 * CP_PATCH_SLOT_WORDS words per thread key), the wrapper rules
 * (CP_PATCH_RULES entries of 16 bytes), one site block per thread slot,
 * one request block per slot (and one for the shared slot, first), a page
 * of zeros (not counted in CP_PATCH_MAP_USED), then the code pages. */
#ifndef CP_PATCH_LAYOUT_H
#define CP_PATCH_LAYOUT_H

/* Layout words, each with its comment in a column, to the end of the
 * file (clang-format would move a comment that goes on over lines off
 * its own line). */
/* clang-format off */
#define CP_PATCH_SLOT_WORDS 16
#define CP_PATCH_SLOTS 4096
#define CP_PATCH_PROBES 16		/* slots a key may look at */
#define CP_PATCH_HASH 0x9E3779B97F4A7C15	/* a key's Fibonacci hash */
#define CP_PATCH_TABLE_SIZE (((CP_PATCH_SLOTS + 1) * CP_PATCH_SLOT_WORDS * 8 + 4095) & ~4095)

#define CP_PATCH_RULES 4096
#define CP_PATCH_RULE_PROBES 8
#define CP_PATCH_RULES_OFF CP_PATCH_TABLE_SIZE
#define CP_PATCH_RULE_BASE_BP 0x8000	/* in a rule's via_base: CFA from rbp */
#define CP_PATCH_VIA_NONE 0xfff		/* no wrapper crossed */
#define CP_PATCH_VIA_KEEP 0xffe		/* a rule that crosses no wrapper (a
					 * frame-pointer hop out of Go's
					 * vDSO caller) */
/* The most frames a call-site walk steps out of, the BPF program's and
 * the thunk's alike. */
#define CP_UNWIND_MAX_HOPS 6

#define CP_PATCH_SITE_ENTRIES 32
#define CP_PATCH_SITE_BLOCK (CP_PATCH_SITE_ENTRIES * 16)
#define CP_PATCH_SITES_OFF (CP_PATCH_RULES_OFF + CP_PATCH_RULES * 16)

/* A thread slot's requests, closed in the target by a request boundary
 * with no trap (boundary_close.S): block 0 is the shared slot's (its hits
 * word: boundaries that found no slot), block 1 + i slot i's. A block is
 * reset when its epoch differs from block 0's, which clockprof moves on
 * as a window opens: a request counts from the first boundary a thread
 * passes in the window. A block is two pages, page-aligned: what every
 * boundary writes (the header, the last boundary's words and site
 * counts, the histogram's first 456 slots) is in the first, so that a
 * request after a sleep pays one page's TLB miss for it (measured: the
 * demo's added CPU per request is mostly such cold misses). Words, then
 * each part's first word: */
#define CP_PB_HITS 0		/* boundaries passed in this epoch */
#define CP_PB_EPOCH 1		/* the epoch the block was reset in, + 1 */
#define CP_PB_LAST_SUM 2	/* the slot's reads at its last boundary */
#define CP_PB_MAX 3		/* the most reads in one request */
#define CP_PB_SC_TOTAL 4	/* its reads through syscall(), all words */
#define CP_PB_SC_TOTAL_LAST 5	/* ... at its last boundary */
#define CP_PB_SITES_USED 6	/* bit e: its site block's entry e is claimed
				 * (set by whoever claims it: vdso_count.S,
				 * syscall_count.S), for the close to copy */
#define CP_PB_OWNER 7		/* the tid of the thread that passed its last
				 * boundary (the C library's copy in its
				 * thread's descriptor: boundary_close.S) */
#define CP_PB_LAST 8		/* the slot's words at its last boundary */
#define CP_PB_SITES_LAST 24	/* its site block's counts at its last */
#define CP_PB_HIST 56		/* requests by reads: CP_PB_HIST_SLOTS words */
#define CP_PB_HIST_SLOTS 512	/* = CP_HIST_SLOTS (clockreads.h) */
#define CP_PB_FIRST 568		/* the slot's words at its first boundary */
#define CP_PB_SITES_FIRST 584	/* its site block's counts at its first */
#define CP_PB_SYSCALLS 616	/* its reads through syscall(), counted by
				 * syscall_count.S: words 1-15 as a slot's */
#define CP_PB_SC_FIRST 632	/* its syscall() words at its first boundary */
#define CP_PB_SC_LAST 648	/* ... and at its last */
#define CP_PB_OPENS 664	/* boundaries that opened a thread's first
				 * request on a slot an exited thread left
				 * (not in HITS: its requests stay HITS - 1) */
/* --anatomy (docs/patch.md, "What --anatomy adds"): a sampled request's reads, logged by the
 * anatomy's variant of the read's paths (vdso_count.S) while its state
 * is 1. The boundary's close (boundary_close.S) opens a log at a
 * boundary when the state is 0 (a free log) and the block's countdown
 * has run out, and closes it at the next (state 2: a finished log, which
 * clockprof reads and frees, back to 0, while the window is open), and
 * only while block 0's CP_PB0_AN_ON says a burst is on. Block
 * 0's CP_PB0_AN_EVERY (in a line every close reads) is 0 without
 * --anatomy: no log is ever opened. */
#define CP_PB0_AN_EVERY 2	/* block 0: open a log every this many requests */
#define CP_PB0_AN_ON 3		/* block 0: 1 while a burst is on (anatomy.bpf.c
				 * attached: docs/anatomy.md, "Bursts"); 0: no
				 * log opens, the open ones close */
/* Where a log's callers may be read (vdso_count.S's .Llog): the memory
 * mapping that holds a thread's own stack, [LO, HI), and the tid of that
 * thread (0: none known; then no caller is read). clockprof writes them
 * (anatomy_collect.c) as it drains the thread's first log, LO and HI
 * before the tid; a read uses them only if its thread's tid is that one,
 * and a new thread on the slot sets the tid to 0 (boundary_close.S): a
 * thread's stack is unmapped only after it exits. */
#define CP_PB_AN_STACK_LO 677
#define CP_PB_AN_STACK_HI 678
#define CP_PB_AN_STACK_TID 679
#define CP_PB_AN_STATE 680	/* 0 free, 1 logging, 2 finished */
#define CP_PB_AN_N 681		/* reads in the log's request (past
				 * CP_PB_AN_ENTRIES: truncated) */
#define CP_PB_AN_START 682	/* unused since a boundary takes no rdtsc: */
#define CP_PB_AN_END 683	/* a log spans its first to last stamp */
#define CP_PB_AN_SKIP 684	/* boundaries before the next log opens */
#define CP_PB_AN_TID 685	/* the thread's tid (0: not known) */
#define CP_PB_AN_SEQ 686	/* logs opened on the slot */
#define CP_PB_AN_TOP 687	/* the stack the opening boundary's function
				 * had, up to its return address (+ 8): a
				 * caller's frame pointer is followed below it
				 * only (vdso_count.S's .Llog) */
/* The clocks whose vDSO path takes rdtsc itself (REALTIME 0, MONOTONIC
 * 1, MONOTONIC_RAW 4, BOOTTIME 7, TAI 11: bit = id), with gettimeofday:
 * only a read of one of them is time-stamped in the log (vdso_count.S's
 * .Llog), since a thread may have made rdtsc fault (PR_SET_TSC), and
 * clockprof must take no rdtsc where the program takes none. The others
 * (time(), the coarse clocks, CPU clocks) are logged with a stamp of 0:
 * untimed, never judged (docs/anatomy.md). */
#define CP_ANATOMY_TSC_CLOCKS 0x893
#define CP_PB_AN_LOG 688	/* {site key, rdtsc, clock, 2 callers} a read */
#define CP_PB_AN_ENTRY_WORDS 5
#define CP_PB_AN_CALLERS 2
#define CP_PB_AN_ENTRIES 67
#define CP_PB_WORDS 1024
#define CP_PATCH_BLOCK (CP_PB_WORDS * 8)
#define CP_PATCH_BLOCKS_OFF (CP_PATCH_SITES_OFF + CP_PATCH_SLOTS * CP_PATCH_SITE_BLOCK)
#define CP_PATCH_MAP_USED \
	((CP_PATCH_BLOCKS_OFF + (CP_PATCH_SLOTS + 1) * CP_PATCH_BLOCK + 4095) & ~4095)

/* After the table and a page of zeros, in the same mapping: the code
 * pages that count a read (lib/probe/mech/patch/vdso_count.S), read-only
 * and executable. The code finds the table at its own address less this. */
#define CP_PATCH_CODE_OFF (CP_PATCH_MAP_USED + 4096)
/* The stub's result (lib/probe/mech/patch/vdso_area.S), four words at
 * the end of the page of zeros (a thread pointer there reads its first
 * words alone): {magic, request number done, status, -errno}. Out of the
 * vDSO page, so that it is said where the vDSO cannot be made writable
 * (memory-deny-write-execute); not wiped at fork, as the header's copy is
 * not, so that a forked copy's numbers agree. */
#define CP_PATCH_STUB_OFF (CP_PATCH_CODE_OFF - 32)
#define CP_PATCH_CODE_SIZE 12288
/* A read's count's exit straight back into the vDSO (vdso_count.S): room
 * for the entry's first instruction, relocated, and a rel32 jump; an
 * instruction longer than 11 bytes there is run by its thunk instead. */
#define CP_VDSO_TAIL_ROOM 16
/* The code the redirected functions' trampolines call, in the first code
 * page with the read's count (a request's reads have its TLB entry warm
 * when its boundary comes; each file's .error says when one outgrows its
 * room): the request boundary's close (boundary_close.S), and syscall()'s
 * count (syscall_count.S). */
#define CP_PATCH_BOUNDARY_CODE_OFF (CP_PATCH_CODE_OFF + 2048)
#define CP_PATCH_SYSCALL_CODE_OFF (CP_PATCH_CODE_OFF + 3712)
/* The second code page: the anatomy's variant of the read's paths
 * (vdso_count_anatomy.S), which the entries jump to only with --anatomy,
 * and the anatomy's part of the close (anatomy_close.S). */
#define CP_PATCH_AN_CODE_OFF (CP_PATCH_CODE_OFF + 4096)
#define CP_PATCH_AN_CLOSE_OFF (CP_PATCH_CODE_OFF + 4096 + 3072)

#endif
