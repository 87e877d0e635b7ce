/* patch_layout.h - the numbers of the vDSO patch's table in the target
 * (probes/clockreads.h says what each part holds), as plain #defines: the
 * BPF program, clockprof and the code written into the target
 * (lib/probe/mech/patch/vdso_area.S and vdso_count.S, assembled with this file) read them
 * from here alone. No C types: the assembler includes it.
 *
 * The mapping: the counters (slot 0 shared, then one slot of
 * CP_PATCH_SLOT_WORDS words per thread key), the wrapper rules
 * (CP_PATCH_RULES entries of 16 bytes), one site block per thread slot,
 * a page of zeros (not counted in CP_PATCH_MAP_USED), then the code pages. */
#ifndef CP_PATCH_LAYOUT_H
#define CP_PATCH_LAYOUT_H

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
#define CP_PATCH_MAP_USED (CP_PATCH_SITES_OFF + CP_PATCH_SLOTS * CP_PATCH_SITE_BLOCK)

/* After the table and a page of zeros, in the same mapping: the code
 * pages that count a read (lib/probe/mech/patch/vdso_count.S), read-only
 * and executable. The code finds the table at its own address less this. */
#define CP_PATCH_CODE_OFF (CP_PATCH_MAP_USED + 4096)
#define CP_PATCH_CODE_SIZE 8192

#endif
