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

/* One template of the paths: its bytes, its fields, and where it goes
 * in the code pages. */
struct paths {
	const uint8_t *start, *end;
	const struct cp_vdso_count_cont *conts, *conts_end, *tails, *tails_end, *depths,
		*depths_end;
	uint64_t off; /* from the code pages' start */
	uint64_t room;
};

static const struct paths templates[] = {
	{ cp_vdso_count_start, cp_vdso_count_end, cp_vdso_count_conts, cp_vdso_count_conts_end,
	  cp_vdso_count_tails, cp_vdso_count_tails_end, cp_vdso_count_depths,
	  cp_vdso_count_depths_end, 0, CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF },
	{ cp_vdso_anatomy_start, cp_vdso_anatomy_end, cp_vdso_anatomy_conts,
	  cp_vdso_anatomy_conts_end, cp_vdso_anatomy_tails, cp_vdso_anatomy_tails_end,
	  cp_vdso_anatomy_depths, cp_vdso_anatomy_depths_end,
	  CP_PATCH_AN_CODE_OFF - CP_PATCH_CODE_OFF, CP_PATCH_AN_CLOSE_OFF - CP_PATCH_AN_CODE_OFF },
};

/* Each field the copier writes in one template's paths (at out, in the
 * target at code). */
static int aim_paths(const struct paths *t, uint64_t code,
		     const struct cp_vdso_count_way way[CP_ENTRY_MAX], uint8_t *out)
{
	size_t size = (size_t)(t->end - t->start);
	const struct cp_vdso_count_cont *c;

	for (c = t->conts; c < t->conts_end; c++)
		if (c->entry >= CP_ENTRY_MAX || c->at + 4 > size ||
		    put_jump(out + c->at, code + c->at + 4, way[c->entry].cont))
			return -1;
	for (c = t->tails; c < t->tails_end; c++)
		if (c->entry >= CP_ENTRY_MAX || c->at + CP_VDSO_TAIL_ROOM > size ||
		    put_tail(out, code, c->at, &way[c->entry]))
			return -1;
	for (c = t->depths; c < t->depths_end; c++) {
		if (c->entry >= CP_ENTRY_MAX || c->at >= size || way[c->entry].depth > 0x78)
			return -1;
		out[c->at] = (uint8_t)way[c->entry].depth;
	}
	return 0;
}

int cp_vdso_count_build(uint64_t table, const struct cp_vdso_count_way way[CP_ENTRY_MAX],
			uint8_t *out)
{
	uint64_t code = table + CP_PATCH_CODE_OFF;
	const struct cp_redirect_code *pieces[] = { &cp_boundary_close, &cp_syscall_count,
						    &cp_anatomy_close };

	memset(out, 0, CP_PATCH_CODE_SIZE);
	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		const struct paths *t = &templates[i];

		if ((size_t)(t->end - t->start) > t->room)
			return -1;
		memcpy(out + t->off, t->start, (size_t)(t->end - t->start));
		if (aim_paths(t, code + t->off, way, out + t->off))
			return -1;
	}
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		const struct cp_redirect_code *c = pieces[i];

		if (cp_redirect_code_size(c) > c->room)
			return -1;
		memcpy(out + c->off - CP_PATCH_CODE_OFF, c->start, cp_redirect_code_size(c));
	}
	return 0;
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
	memcpy(out + CP_PATCH_AN_CODE_OFF - CP_PATCH_CODE_OFF + cp_vdso_anatomy_tid_at, &offset,
	       sizeof(offset));
}
