/* vdso_count.h - the code that counts a read (vdso_count.S), as clockprof
 * copies it into the code pages of a target's counter table: each
 * entry's path, and the jumps back to the entry's thunk in the vDSO that
 * the copy is given. */
#ifndef CP_VDSO_COUNT_H
#define CP_VDSO_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "clockreads.h"

/* Where a CONTINUE's rel32 field is in the template, and for which entry. */
struct cp_vdso_count_cont {
	uint32_t at, entry;
};

extern const uint8_t cp_vdso_count_start[], cp_vdso_count_end[];
extern const uint64_t cp_vdso_count_entries[CP_ENTRY_MAX];
extern const struct cp_vdso_count_cont cp_vdso_count_conts[], cp_vdso_count_conts_end[];

#define CP_VDSO_COUNT_SIZE ((size_t)(cp_vdso_count_end - cp_vdso_count_start))

/* The code pages for the table at table (at table + CP_PATCH_CODE_OFF):
 * each entry's path going back to cont[entry] (addresses in the target),
 * the request boundary's close (boundary_close.h) and syscall()'s count
 * (syscall_count.h), into out
 * (CP_PATCH_CODE_SIZE bytes). -1 when a continuation is beyond a rel32
 * jump's reach, or the code outgrew its page. */
int cp_vdso_count_build(uint64_t table, const uint64_t cont[CP_ENTRY_MAX], uint8_t *out);

/* The offset of a thread's tid from its thread pointer in the target's C
 * library (tid_offset.h; 0: not known) written into code pages out built
 * by cp_vdso_count_build: the request boundary's close tells by it a
 * thread from an exited one whose thread pointer it reuses. */
void cp_vdso_count_set_tid_offset(uint8_t *out, uint32_t offset);
/* ... as code pages hold it (an earlier clockprof's, read back). */
uint32_t cp_vdso_count_tid_offset(const uint8_t *code);

/* Where entry's path starts in the target, for the table at table. */
static inline uint64_t cp_vdso_count_entry(uint64_t table, int entry)
{
	return table + CP_PATCH_CODE_OFF + cp_vdso_count_entries[entry];
}

#endif
