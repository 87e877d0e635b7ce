/* vdso_count_build.c - see vdso_count.h: the templates (vdso_count.S,
 * boundary_close.S) copied for one table, the count's jumps back aimed. */
#include <string.h>

#include "redirect_code.h"
#include "vdso_count.h"

static int put_jump(uint8_t *out, uint64_t from_end, uint64_t to)
{
	int64_t rel = (int64_t)(to - from_end);
	int32_t rel32 = (int32_t)rel;

	if (rel != rel32)
		return -1;
	out[-1] = 0xe9;
	memcpy(out, &rel32, 4);
	return 0;
}

/* A TAIL at code + at (in the target; its room at out): the entry's
 * instruction relocated there and a jump past it, else a jump to its
 * thunk (no instruction, or one that cannot be encoded there). */
static int put_tail(uint8_t *out, uint64_t code, uint32_t at, const struct cp_vdso_count_way *w)
{
	uint8_t insn[CP_RELOCATED_MAX];
	size_t n = w->len ? cp_code_relocate(w->insn, w->len, w->at, code + at, insn) : 0;

	if (n && n + 5 <= CP_VDSO_TAIL_ROOM &&
	    !put_jump(out + at + n + 1, code + at + n + 5, w->at + w->len)) {
		memcpy(out + at, insn, n);
		return 0;
	}
	return put_jump(out + at + 1, code + at + 5, w->cont);
}

/* Each field the copier writes in the count's paths. */
static int aim_paths(uint64_t code, const struct cp_vdso_count_way way[CP_ENTRY_MAX], uint8_t *out)
{
	const struct cp_vdso_count_cont *c;

	for (c = cp_vdso_count_conts; c < cp_vdso_count_conts_end; c++)
		if (c->entry >= CP_ENTRY_MAX || c->at + 4 > CP_VDSO_COUNT_SIZE ||
		    put_jump(out + c->at, code + c->at + 4, way[c->entry].cont))
			return -1;
	for (c = cp_vdso_count_tails; c < cp_vdso_count_tails_end; c++)
		if (c->entry >= CP_ENTRY_MAX || c->at + CP_VDSO_TAIL_ROOM > CP_VDSO_COUNT_SIZE ||
		    put_tail(out, code, c->at, &way[c->entry]))
			return -1;
	for (c = cp_vdso_count_depths; c < cp_vdso_count_depths_end; c++) {
		if (c->entry >= CP_ENTRY_MAX || c->at >= CP_VDSO_COUNT_SIZE ||
		    way[c->entry].depth > 0x78)
			return -1;
		out[c->at] = (uint8_t)way[c->entry].depth;
	}
	return 0;
}

int cp_vdso_count_build(uint64_t table, const struct cp_vdso_count_way way[CP_ENTRY_MAX],
			uint8_t *out)
{
	uint64_t code = table + CP_PATCH_CODE_OFF;

	const struct cp_redirect_code *pieces[] = { &cp_boundary_close, &cp_syscall_count };

	if (CP_VDSO_COUNT_SIZE > CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF)
		return -1;
	memset(out, 0, CP_PATCH_CODE_SIZE);
	memcpy(out, cp_vdso_count_start, CP_VDSO_COUNT_SIZE);
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		const struct cp_redirect_code *c = pieces[i];

		if (cp_redirect_code_size(c) > c->room)
			return -1;
		memcpy(out + c->off - CP_PATCH_CODE_OFF, c->start, cp_redirect_code_size(c));
	}
	return aim_paths(code, way, out);
}

/* Where the close's tid offset is in the code pages as built. */
static size_t tid_word(void)
{
	return cp_boundary_close.off - CP_PATCH_CODE_OFF + cp_boundary_close_tid_at;
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
