/* vdso_count_build.c - see vdso_count.h: the templates (vdso_count.S,
 * boundary_close.S) copied for one table, the count's jumps back aimed. */
#include <string.h>

#include "boundary_close.h"
#include "syscall_count.h"
#include "vdso_count.h"

int cp_vdso_count_build(uint64_t table, const uint64_t cont[CP_ENTRY_MAX], uint8_t *out)
{
	uint64_t code = table + CP_PATCH_CODE_OFF;

	if (CP_VDSO_COUNT_SIZE > CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF ||
	    CP_BOUNDARY_CLOSE_SIZE > CP_PATCH_SYSCALL_CODE_OFF - CP_PATCH_BOUNDARY_CODE_OFF ||
	    CP_SYSCALL_COUNT_SIZE > CP_PATCH_CODE_OFF + CP_PATCH_CODE_SIZE - CP_PATCH_SYSCALL_CODE_OFF)
		return -1;
	memset(out, 0, CP_PATCH_CODE_SIZE);
	memcpy(out, cp_vdso_count_start, CP_VDSO_COUNT_SIZE);
	memcpy(out + CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF, cp_boundary_close_start,
	       CP_BOUNDARY_CLOSE_SIZE);
	memcpy(out + CP_PATCH_SYSCALL_CODE_OFF - CP_PATCH_CODE_OFF, cp_syscall_count_start,
	       CP_SYSCALL_COUNT_SIZE);
	for (const struct cp_vdso_count_cont *c = cp_vdso_count_conts; c < cp_vdso_count_conts_end; c++) {
		int64_t rel = (int64_t)(cont[c->entry] - (code + c->at + 4));
		int32_t rel32 = (int32_t)rel;

		if (c->entry >= CP_ENTRY_MAX || c->at + 4 > CP_VDSO_COUNT_SIZE || rel != rel32)
			return -1;
		memcpy(out + c->at, &rel32, 4);
	}
	return 0;
}

/* Where the close's tid offset is in the code pages as built. */
static size_t tid_word(void)
{
	return CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF + cp_boundary_close_tid_at;
}

uint32_t cp_vdso_count_tid_offset(const uint8_t *code)
{
	uint32_t offset;

	memcpy(&offset, code + tid_word(), sizeof(offset));
	return offset;
}

void cp_vdso_count_set_tid_offset(uint8_t *out, uint32_t offset)
{
	memcpy(out + tid_word(), &offset, sizeof(offset));
}
