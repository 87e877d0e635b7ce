/* vdso_plan.c - see vdso_plan.h. */
#include <Zydis/Zydis.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_names.h"
#include "code_relocate.h"
#include "vdso.h"
#include "vdso_area.h"
#include "vdso_count.h"
#include "vdso_plan.h"
#include "x86_jump.h"

#define MAX_TARGETS 4096
#define THUNK_MAX 64

/* What the whole image tells about its code: where branches land, and
 * which functions branch through a register or memory (their targets
 * are unknown, so no site is chosen in them). */
struct code_facts {
	struct cp_vdso_func *funcs;
	size_t nfuncs;
	uint64_t targets[MAX_TARGETS];
	size_t ntargets;
	bool *indirect; /* per function */
};

struct planner {
	ZydisDecoder dec;
	const uint8_t *image;
	struct cp_vdso_plan *plan;
	struct code_facts facts;
	uint64_t next_code; /* where the next thunk goes */
	char *why;
	size_t whylen;
};

static bool decode(const struct planner *pl, uint64_t off, uint64_t end,
		   ZydisDecodedInstruction *in, ZydisDecodedOperand *ops)
{
	return off < end && end <= pl->plan->size &&
	       ZYAN_SUCCESS(ZydisDecoderDecodeFull(&pl->dec, pl->image + off, end - off, in, ops));
}

static bool is_branch(const ZydisDecodedInstruction *in)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT: return true;
	default: return false;
	}
}

/* One function's instructions, start to end: its branch targets noted. */
static void sweep_function(struct planner *pl, size_t f)
{
	struct code_facts *cf = &pl->facts;
	uint64_t off = cf->funcs[f].off, end = off + cf->funcs[f].size;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	while (decode(pl, off, end, &in, ops)) {
		ZyanU64 to;

		if (in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE) {
			if ((in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
			    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], off, &to))) {
				if (cf->ntargets < MAX_TARGETS)
					cf->targets[cf->ntargets++] = to;
			} else if (in.meta.category != ZYDIS_CATEGORY_RET) {
				cf->indirect[f] = true;
			}
		}
		off += in.length;
	}
	if (off < end)
		cf->indirect[f] = true; /* undecodable: treated as unknown */
}

static bool target_within(const struct code_facts *cf, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < cf->ntargets; i++)
		if (cf->targets[i] >= from && cf->targets[i] < to)
			return true;
	return false;
}

static bool is_scratch(ZydisRegister r)
{
	switch (ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r)) {
	case ZYDIS_REGISTER_RAX:
	case ZYDIS_REGISTER_RCX:
	case ZYDIS_REGISTER_RDX:
	case ZYDIS_REGISTER_R8:
	case ZYDIS_REGISTER_R9:
	case ZYDIS_REGISTER_R10:
	case ZYDIS_REGISTER_R11: return true;
	default: return false;
	}
}

/* Whether the instruction reads (want_write false) or writes a register
 * the thunk uses, or writes the flags, which the thunk changes too. */
static bool touches_scratch(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
			    bool want_write)
{
	ZydisOperandActions mask = want_write ? ZYDIS_OPERAND_ACTION_MASK_WRITE :
						ZYDIS_OPERAND_ACTION_MASK_READ;

	if (want_write && in->cpu_flags &&
	    (in->cpu_flags->modified | in->cpu_flags->set_0 | in->cpu_flags->set_1 |
	     in->cpu_flags->undefined))
		return true;
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER && (op->actions & mask) &&
		    is_scratch(op->reg.value))
			return true;
		if (!want_write && op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (is_scratch(op->mem.base) || is_scratch(op->mem.index)))
			return true;
	}
	return false;
}

static int fail(struct planner *pl, const char *fmt, const char *entry)
{
	snprintf(pl->why, pl->whylen, fmt, entry);
	return -1;
}

/* Where the padding that starts at lo (a function's end) ends, before
 * hi: the run of nop and int3 instructions there. Bytes between two
 * symbols need not be padding (a function without a symbol, a cold
 * part, data), and a springboard written over them would break them. */
static uint64_t padding_end(const struct planner *pl, uint64_t lo, uint64_t hi)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	while (decode(pl, lo, hi, &in, ops) &&
	       (in.mnemonic == ZYDIS_MNEMONIC_NOP || in.mnemonic == ZYDIS_MNEMONIC_INT3))
		lo += in.length;
	return lo;
}

/* A 5-byte place in the padding between two functions, within a short
 * jump of from (the end of the site's 2-byte jump), that no branch
 * reaches and no other site uses. */
static bool find_springboard(const struct planner *pl, uint64_t from, uint64_t *out)
{
	const struct code_facts *cf = &pl->facts;

	for (size_t i = 0; i + 1 < cf->nfuncs; i++) {
		uint64_t lo = cf->funcs[i].off + cf->funcs[i].size, hi = cf->funcs[i + 1].off;

		hi = lo < hi ? padding_end(pl, lo, hi) : lo;
		for (uint64_t p = lo; p + CP_X86_JMP_LEN <= hi; p++) {
			bool used = false;

			if (!cp_x86_rel8_reaches(from, p) ||
			    target_within(cf, p, p + CP_X86_JMP_LEN))
				continue;
			for (int s = 0; s < pl->plan->nsites; s++)
				used |= pl->plan->site[s].jump_len == 2 &&
					p < pl->plan->site[s].springboard + 5 &&
					pl->plan->site[s].springboard < p + 5;
			if (!used) {
				*out = p;
				return true;
			}
		}
	}
	return false;
}

/* The replaced instruction, encoded to run at its new place (offset to);
 * its length, 0 when Zydis cannot. */
static size_t relocate(const struct planner *pl, uint64_t at, uint64_t to, uint8_t *out)
{
	uint64_t base = pl->plan->base;

	if (at >= pl->plan->size)
		return 0;
	return cp_code_relocate(pl->image + at, pl->plan->size - at, base + at, base + to, out);
}

/* The thunk of one site at pl->next_code: the replaced instruction,
 * relocated, then a jump back; what the count's path (vdso_count.S),
 * which the site jumps to, is given to leave by. */
static int build_thunk(struct planner *pl, struct cp_vdso_site *s)
{
	uint8_t *code = pl->plan->bytes + pl->next_code;
	uint64_t pos = pl->next_code, base = pl->plan->base;
	struct cp_vdso_count_way *w = &pl->plan->way[s->entry];
	uint32_t nrel;

	if (s->depth > 0x78 || pos + THUNK_MAX > pl->plan->size || s->len > sizeof(w->insn))
		return -1;
	nrel = (uint32_t)relocate(pl, s->at, pos, code);
	if (!nrel || nrel + 5 > THUNK_MAX)
		return -1;
	cp_x86_put_jmp(code + nrel, pos + nrel, s->at + s->len);
	s->thunk = pos;
	*w = (struct cp_vdso_count_way){
		.cont = base + pos, .depth = s->depth, .len = s->len, .at = base + s->at
	};
	memcpy(w->insn, pl->image + s->at, s->len);
	pl->next_code = (pos + nrel + 5 + 15) & ~15ul;
	return 0;
}

static bool plan_anatomy;

void cp_vdso_plan_set_anatomy(bool on)
{
	plan_anatomy = on;
}

/* Where the entry's path is in the table's code pages, if a near jump
 * that runs at from (an image offset) reaches it: else 0. */
static uint64_t path_within_reach(const struct cp_vdso_plan *plan, uint64_t from, int entry)
{
	uint64_t path = cp_vdso_count_path(plan->table, entry, plan_anatomy);

	return cp_x86_rel32_reaches(plan->base + from + CP_X86_JMP_LEN, path) ? path : 0;
}

/* The jump a site can take at off (len bytes): 5, 2 with a springboard,
 * or 0. Its bytes must lie in one aligned 8-byte word. */
static unsigned jump_fits(const struct planner *pl, uint64_t off, unsigned len,
			  uint64_t *springboard)
{
	unsigned n = cp_x86_jump_in_word(off, len); /* the image is page-aligned */

	if (n == CP_X86_JMP_SHORT_LEN && !find_springboard(pl, off + n, springboard))
		return 0;
	return n;
}

/* The site's jump to its entry's path written over the word's original
 * bytes; -1 when the path is beyond its reach. */
static int site_words(const struct cp_vdso_plan *plan, struct cp_vdso_site *s)
{
	bool near = s->jump_len == CP_X86_JMP_LEN;
	uint64_t path = path_within_reach(plan, near ? s->at : s->springboard, s->entry);

	if (!path)
		return -1;
	memcpy(&s->original, plan->bytes + s->qword, 8);
	s->patched = cp_x86_word_with_jump(s->original, s->qword, s->at, s->jump_len,
					   near ? path - plan->base : s->springboard);
	if (!near)
		cp_x86_put_jmp(plan->bytes + s->springboard, plan->base + s->springboard, path);
	/* toward the other variant, as a leftover may be: 4 KiB from path */
	path = cp_vdso_count_path(plan->table, s->entry, !plan_anatomy);
	s->other_patched = near ? cp_x86_word_with_jump(s->original, s->qword, s->at, s->jump_len,
							path - plan->base) :
				  s->patched;
	if (!near)
		cp_x86_put_jmp(s->other_board, plan->base + s->springboard, path);
	return 0;
}

/* What an instruction before a site may do to the stack: push a register
 * (depth + 8), or leave rsp, rbp and memory alone. The thunk's site
 * recorder uses the stack below the entry's and starts its walk from the
 * entry's rsp and rbp. -1: neither. */
static int stack_effect(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	if (in->mnemonic == ZYDIS_MNEMONIC_PUSH && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER)
		return ops[0].reg.value == ZYDIS_REGISTER_RSP ? -1 : 8;
	for (int i = 0; i < in->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		ZydisRegister r = op->type == ZYDIS_OPERAND_TYPE_REGISTER ?
					  ZydisRegisterGetLargestEnclosing(
						  ZYDIS_MACHINE_MODE_LONG_64, op->reg.value) :
					  ZYDIS_REGISTER_NONE;

		if (!(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY || r == ZYDIS_REGISTER_RSP ||
		    r == ZYDIS_REGISTER_RBP)
			return -1;
	}
	return 0;
}

/* The first instruction of the entry's straight-line start that can be a
 * site: before it nothing writes a register the thunk uses or the flags,
 * nor memory, rsp or rbp but by pushes (stack_effect); it reads none of
 * those registers, is 2 bytes or more, and no branch lands inside it. */
static int choose_site(struct planner *pl, size_t f, struct cp_vdso_site *s)
{
	const struct cp_vdso_func *fn = &pl->facts.funcs[f];
	const char *name = cp_entry_name(fn->entry);
	uint64_t off = fn->off, end = fn->off + fn->size;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	unsigned depth = 0;
	int effect;

	if (pl->facts.indirect[f])
		return fail(
			pl,
			"%s branches through a register or memory: its branch targets are unknown",
			name);
	for (; decode(pl, off, end, &in, ops) && !is_branch(&in); off += in.length) {
		s->entry = fn->entry;
		s->at = off;
		s->len = in.length;
		s->qword = off & ~7ul;
		s->depth = depth;
		if (in.length >= 2 && !touches_scratch(&in, ops, false) &&
		    !target_within(&pl->facts, off + 1, off + in.length) &&
		    (s->jump_len = jump_fits(pl, off, in.length, &s->springboard)))
			return 0;
		if (touches_scratch(&in, ops, true) || (effect = stack_effect(&in, ops)) < 0)
			break;
		depth += (unsigned)effect;
	}
	return fail(pl, "%s: no instruction before its first branch can take a jump", name);
}

/* Where the image's unused end begins: after its last non-zero byte. */
static uint64_t free_space(const uint8_t *image, size_t size)
{
	size_t last = size;

	while (last > 0 && image[last - 1] == 0)
		last--;
	return (last + 15) & ~15ul;
}

static int plan_sites(struct planner *pl)
{
	struct cp_vdso_plan *plan = pl->plan;

	for (size_t f = 0; f < pl->facts.nfuncs; f++) {
		struct cp_vdso_site *s = &plan->site[plan->nsites];

		if (pl->facts.funcs[f].entry < 0)
			continue;
		if (choose_site(pl, f, s))
			return -1;
		if (build_thunk(pl, s))
			return fail(
				pl,
				"%s: its replaced instruction cannot be relocated, or the vDSO has no room",
				cp_entry_name(s->entry));
		if (site_words(plan, s))
			return fail(pl,
				    "%s: the counter table is beyond a jump's reach of the vDSO",
				    cp_entry_name(s->entry));
		plan->nsites++;
	}
	return plan->nsites ? 0 : -1;
}

int cp_vdso_plan_make(const uint8_t *image, size_t size, uint64_t base, uint64_t table,
		      struct cp_vdso_plan *plan, char *why, size_t whylen)
{
	struct planner pl = { .image = image, .plan = plan, .why = why, .whylen = whylen };
	uint8_t *copy = malloc(size);
	int rc = -1;

	memset(plan, 0, sizeof(*plan));
	snprintf(why, whylen, "the vDSO image cannot be read as ELF");
	if (!copy || !(plan->bytes = malloc(size)))
		goto out;
	memcpy(copy, image, size);
	memcpy(plan->bytes, image, size);
	plan->base = base;
	plan->size = size;
	plan->table = table;
	for (int e = 0; e < CP_ENTRY_MAX; e++) /* an entry with no site: never taken */
		plan->way[e] = (struct cp_vdso_count_way){ .cont = cp_vdso_count_entry(table, e) };
	ZydisDecoderInit(&pl.dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (cp_vdso_image_functions((char *)copy, size, &pl.facts.funcs, &pl.facts.nfuncs) ||
	    !(pl.facts.indirect = calloc(pl.facts.nfuncs, sizeof(bool))))
		goto out;
	for (size_t f = 0; f < pl.facts.nfuncs; f++)
		sweep_function(&pl, f);
	plan->area = free_space(image, size);
	pl.next_code = plan->area + CP_VDSO_AREA_SIZE;
	if (pl.next_code > size) {
		snprintf(why, whylen, "the vDSO has no room for clockprof's code");
		goto out;
	}
	memcpy(plan->bytes + plan->area, cp_vdso_area_start, CP_VDSO_AREA_SIZE);
	rc = plan_sites(&pl);
	plan->code_end = pl.next_code;
	if (!rc && (!(plan->count = malloc(CP_PATCH_CODE_SIZE)) ||
		    cp_vdso_count_build(table, plan->way, plan->count))) {
		snprintf(why, whylen, "the counter table is beyond a jump's reach of the vDSO");
		rc = -1;
	}
out:
	free(copy);
	free(pl.facts.funcs);
	free(pl.facts.indirect);
	if (rc)
		cp_vdso_plan_free(plan);
	return rc;
}

void cp_vdso_plan_free(struct cp_vdso_plan *plan)
{
	free(plan->bytes);
	free(plan->count);
	plan->bytes = NULL;
	plan->count = NULL;
}

/* Whether byte i of the image is a springboard's, as the other variant of
 * the paths has it (vdso_plan.h: other_board). */
static bool other_board_byte(const struct cp_vdso_plan *plan, uint64_t i, uint8_t b)
{
	for (int k = 0; k < plan->nsites; k++) {
		const struct cp_vdso_site *s = &plan->site[k];

		if (s->jump_len != CP_X86_JMP_LEN && i >= s->springboard && i < s->springboard + 5)
			return s->other_board[i - s->springboard] == b;
	}
	return false;
}

/* Where a byte of the image is, for the classification. */
static bool in_header_data(const struct cp_vdso_plan *plan, uint64_t i)
{
	return i >= plan->area + 16 && i < plan->area + sizeof(struct cp_vdso_area_header);
}

static const struct cp_vdso_site *site_word_of(const struct cp_vdso_plan *plan, uint64_t i)
{
	for (int s = 0; s < plan->nsites; s++)
		if (i >= plan->site[s].qword && i < plan->site[s].qword + 8)
			return &plan->site[s];
	return NULL;
}

static bool written_as_code(const struct cp_vdso_plan *plan, const uint8_t *target, uint64_t i)
{
	return target[i] != plan->bytes[i] && !site_word_of(plan, i) && !in_header_data(plan, i);
}

/* Whether byte i may be written with the plan's value although the
 * target has it already: rewriting a byte with its own value changes
 * nothing a thread can see, but never a site's word (only the stub's
 * atomic store may) nor the header's data (a leftover's live state). */
static bool same_and_safe(const struct cp_vdso_plan *plan, const uint8_t *target, uint64_t i)
{
	return target[i] == plan->bytes[i] && !site_word_of(plan, i) && !in_header_data(plan, i);
}

int cp_vdso_plan_next_code(const struct cp_vdso_plan *plan, const uint8_t *target, uint64_t *from,
			   uint64_t *to)
{
	uint64_t i = *from, j;

	while (i < plan->size && !written_as_code(plan, target, i))
		i++;
	if (i == plan->size)
		return 0;
	*from = *to = i;
	/* one write for runs apart by bytes that are the same (zeros inside
	 * the code): each write to /proc/PID/mem costs ~0.1 ms */
	for (;;) {
		while (*to < plan->size && written_as_code(plan, target, *to))
			(*to)++;
		for (j = *to; j < plan->size && same_and_safe(plan, target, j) &&
			      !written_as_code(plan, target, j);
		     j++)
			;
		if (j == *to || j == plan->size || !written_as_code(plan, target, j))
			return 1;
		*to = j;
	}
}

enum cp_vdso_state cp_vdso_plan_classify(const struct cp_vdso_plan *plan, const uint8_t *pristine,
					 const uint8_t *target, uint64_t *differs_at)
{
	bool ours = false;

	for (uint64_t i = 0; i < plan->size; i++) {
		const struct cp_vdso_site *s;
		uint64_t word;

		if (target[i] == pristine[i])
			continue;
		if ((s = site_word_of(plan, i))) {
			memcpy(&word, target + s->qword, 8);
			if (word == s->patched || word == s->other_patched) {
				ours = true;
				continue;
			}
		} else if (in_header_data(plan, i) || target[i] == plan->bytes[i] ||
			   other_board_byte(plan, i, target[i])) {
			ours = true;
			continue;
		}
		*differs_at = i;
		return CP_VDSO_FOREIGN;
	}
	return ours ? CP_VDSO_OURS : CP_VDSO_PRISTINE;
}
