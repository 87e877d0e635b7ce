/* vdso_count.h - the code that counts a read (vdso_count.S), as clockprof
 * copies it into the code pages of a target's counter table: each
 * entry's path, entered by the jump that replaces the entry's first
 * instruction in the vDSO, left by that instruction (relocated) and a jump
 * back, or by a jump to the entry's thunk in the vDSO, which runs it. */
#ifndef CP_VDSO_COUNT_H
#define CP_VDSO_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"
#include "code_relocate.h"

/* Where a field the copier writes is in the template, and for which
 * entry: a CONTINUE's rel32, a TAIL's room, a depth's disp8. */
struct cp_vdso_count_cont {
	uint32_t at, entry;
};

/* What an entry's path is given, in the target: how it leaves. */
struct cp_vdso_count_way {
	uint64_t cont;			/* its thunk: the instruction, a jump back */
	unsigned depth;			/* bytes pushed before the site */
	uint8_t insn[CP_RELOCATED_MAX]; /* the replaced instruction */
	unsigned len;			/* its length; 0: none (exits to cont) */
	uint64_t at;			/* its address (it goes on at at + len) */
};

extern const uint8_t cp_vdso_count_start[], cp_vdso_count_end[];
extern const uint64_t cp_vdso_count_entries[CP_ENTRY_MAX], cp_vdso_count_prefixed[CP_ENTRY_MAX];
extern const struct cp_vdso_count_cont cp_vdso_count_conts[], cp_vdso_count_conts_end[];
extern const struct cp_vdso_count_cont cp_vdso_count_tails[], cp_vdso_count_tails_end[];
extern const struct cp_vdso_count_cont cp_vdso_count_depths[], cp_vdso_count_depths_end[];

#define CP_VDSO_COUNT_SIZE ((size_t)(cp_vdso_count_end - cp_vdso_count_start))

/* The anatomy's variant of the paths (vdso_count_anatomy.S), in the code
 * pages' second page, and the anatomy's part of the close
 * (anatomy_close.S): written with the rest whether --anatomy is on or
 * not, so that the code pages are one version's; the entries jump to the
 * variant only with --anatomy. */
extern const uint8_t cp_vdso_anatomy_start[], cp_vdso_anatomy_end[];
extern const uint64_t cp_vdso_anatomy_entries[CP_ENTRY_MAX], cp_vdso_anatomy_prefixed[CP_ENTRY_MAX];
extern const struct cp_vdso_count_cont cp_vdso_anatomy_conts[], cp_vdso_anatomy_conts_end[];
extern const struct cp_vdso_count_cont cp_vdso_anatomy_tails[], cp_vdso_anatomy_tails_end[];
extern const struct cp_vdso_count_cont cp_vdso_anatomy_depths[], cp_vdso_anatomy_depths_end[];
extern const uint64_t cp_vdso_anatomy_tid_at; /* its tid offset, from its start */

/* The code pages for the table at table (at table + CP_PATCH_CODE_OFF):
 * each entry's path leaving by way[entry] (a TAIL whose instruction
 * cannot be relocated there jumps to the thunk instead), the request
 * boundary's close and syscall()'s count (redirect_code.h), into out
 * (CP_PATCH_CODE_SIZE bytes). -1 when a jump is beyond a rel32's reach, a
 * depth beyond a disp8's, or the code outgrew its page. */
int cp_vdso_count_build(uint64_t table, const struct cp_vdso_count_way way[CP_ENTRY_MAX],
			uint8_t *out);

/* The offset of a thread's tid from its thread pointer in the target's C
 * library (tid_offset.h; 0: not known) written into code pages out built
 * by cp_vdso_count_build: the request boundary's close tells by it a
 * thread from an exited one whose thread pointer it reuses, and the
 * anatomy's read (vdso_count.S's .Llog) the thread whose stack's bounds
 * its slot holds. */
void cp_vdso_count_set_tid_offset(uint8_t *out, uint32_t offset);
/* ... as code pages hold it (an earlier clockprof's, read back). */
uint32_t cp_vdso_count_tid_offset(const uint8_t *code);

/* Where entry's path starts in the target, for the table at table. */
static inline uint64_t cp_vdso_count_entry(uint64_t table, int entry)
{
	return table + CP_PATCH_CODE_OFF + cp_vdso_count_entries[entry];
}

/* ... and past its prefix, where r9, rax and r10 are set (the tests). */
static inline uint64_t cp_vdso_count_prefixed_entry(uint64_t table, int entry)
{
	return table + CP_PATCH_CODE_OFF + cp_vdso_count_prefixed[entry];
}

/* The same for the anatomy's variant (--anatomy). */
static inline uint64_t cp_vdso_anatomy_entry(uint64_t table, int entry)
{
	return table + CP_PATCH_AN_CODE_OFF + cp_vdso_anatomy_entries[entry];
}

static inline uint64_t cp_vdso_anatomy_prefixed_entry(uint64_t table, int entry)
{
	return table + CP_PATCH_AN_CODE_OFF + cp_vdso_anatomy_prefixed[entry];
}

/* The path entry jumps to: the anatomy's variant or the plain one. */
static inline uint64_t cp_vdso_count_path(uint64_t table, int entry, int anatomy)
{
	return anatomy ? cp_vdso_anatomy_entry(table, entry) : cp_vdso_count_entry(table, entry);
}

#endif
