/* redirect_plan.c - see redirect_plan.h. */
#include <Zydis/Zydis.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_relocate.h"
#include "redirect_plan.h"
#include "x86_jump.h"

#define MAX_TARGETS 4096
#define FLAG_SCAN_MAX 64
#define GO_CHECK_SCAN 6	    /* a Go stack check's instructions, at most */
#define GO_STACKGUARD0 0x10 /* g.stackguard0's offset in g */
#define STATUS_FLAGS \
	(ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF | ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_ZF | \
	 ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF)

struct fn_code {
	ZydisDecoder dec;
	const uint8_t *bytes;
	size_t size, tail; /* tail: cp_redirect_fn's */
	uint64_t func;
	bool go;
	uint64_t targets[MAX_TARGETS]; /* where the function's own branches land */
	size_t ntargets;
};

/* Where syscall()'s number and first argument are before an instruction
 * (bit r of a mask: general register r holds it), and how many bytes the
 * instructions before it pushed; ok: nothing else moved the stack
 * pointer. */
struct args_track {
	uint16_t nr, a1;
	unsigned depth;
	bool ok;
};

static int gpr(ZydisRegister r)
{
	r = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	return r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15 ? (int)(r - ZYDIS_REGISTER_RAX) :
								    -1;
}

/* How many bytes the instruction moves the stack pointer down by when it
 * is `sub rsp, imm` (or `add rsp, -imm`) with imm > 0, else 0: a frame
 * made at once (musl's syscall() starts with sub rsp, 0x58). */
static int64_t frame_made(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	int64_t imm;

	if ((in->mnemonic != ZYDIS_MNEMONIC_SUB && in->mnemonic != ZYDIS_MNEMONIC_ADD) ||
	    in->operand_count_visible != 2 || ops[0].type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ops[0].reg.value != ZYDIS_REGISTER_RSP || ops[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
		return 0;
	imm = ops[1].imm.value.s;
	imm = in->mnemonic == ZYDIS_MNEMONIC_SUB ? imm : -imm;
	return imm > 0 && imm <= 0x10000 ? imm : 0;
}

/* The track after the instruction: a 64-bit register move copies what
 * its source holds; any other write of a register loses it; a push, or
 * a frame made by a subtraction, deepens the stack. */
static void track_insn(struct args_track *t, const ZydisDecodedInstruction *in,
		       const ZydisDecodedOperand *ops)
{
	int64_t frame = frame_made(in, ops);
	int dst = -1, src = -1;

	if (in->mnemonic == ZYDIS_MNEMONIC_PUSH && ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    gpr(ops[0].reg.value) != 4) {
		t->depth += 8;
		return;
	}
	if (frame) {
		t->depth += (unsigned)frame;
		return;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_MOV && in->operand_width == 64 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER) {
		dst = gpr(ops[0].reg.value);
		src = gpr(ops[1].reg.value);
	}
	for (int i = 0; i < in->operand_count; i++) {
		int r = ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER ? gpr(ops[i].reg.value) : -1;

		if (r < 0 || !(ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (r == 4)
			t->ok = false;
		t->nr &= (uint16_t) ~(1u << r);
		t->a1 &= (uint16_t) ~(1u << r);
	}
	if (dst >= 0 && src >= 0) {
		t->nr |= (uint16_t)(((t->nr >> src) & 1) << dst);
		t->a1 |= (uint16_t)(((t->a1 >> src) & 1) << dst);
	}
}

static int lowest(uint16_t mask)
{
	return mask ? __builtin_ctz(mask) : -1;
}

static bool decode(const struct fn_code *f, size_t off, ZydisDecodedInstruction *in,
		   ZydisDecodedOperand *ops)
{
	return off < f->size && ZYAN_SUCCESS(ZydisDecoderDecodeFull(&f->dec, f->bytes + off,
								    f->size - off, in, ops));
}

static bool is_branch(const ZydisDecodedInstruction *in)
{
	return in->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE ||
	       in->meta.category == ZYDIS_CATEGORY_RET ||
	       in->meta.category == ZYDIS_CATEGORY_SYSCALL ||
	       in->meta.category == ZYDIS_CATEGORY_INTERRUPT;
}

/* The targets of the function's relative branches, start to end (the
 * sweep stops at bytes it cannot decode: data, or padding). */
static void sweep(struct fn_code *f)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	for (size_t off = 0; decode(f, off, &in, ops); off += in.length) {
		ZyanU64 to;

		if (in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE &&
		    (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && f->ntargets < MAX_TARGETS &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], f->func + off, &to)))
			f->targets[f->ntargets++] = to;
	}
}

/* How many of the function's branches land in [from, to). */
static size_t landings_within(const struct fn_code *f, uint64_t from, uint64_t to)
{
	size_t n = 0;

	for (size_t i = 0; i < f->ntargets; i++)
		n += f->targets[i] >= from && f->targets[i] < to;
	return n;
}

/* Whether the flags are dead at off: every status flag written before an
 * instruction reads one, or a call or return reached first (the ABI keeps
 * no flag across either). A branch, or the end of what is looked at,
 * before that: live. */
static bool flags_dead(const struct fn_code *f, size_t off)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint32_t written = 0;

	for (int n = 0; n < FLAG_SCAN_MAX && decode(f, off, &in, ops); n++, off += in.length) {
		if (in.cpu_flags && (in.cpu_flags->tested & STATUS_FLAGS & ~written))
			return false;
		if (in.meta.category == ZYDIS_CATEGORY_CALL ||
		    in.meta.category == ZYDIS_CATEGORY_RET)
			return true;
		if (in.meta.category == ZYDIS_CATEGORY_SYSCALL)
			continue; /* the kernel gives the flags back as they were */
		if (in.cpu_flags)
			written |= in.cpu_flags->modified | in.cpu_flags->set_0 |
				   in.cpu_flags->set_1 | in.cpu_flags->undefined;
		if ((written & STATUS_FLAGS) == STATUS_FLAGS)
			return true;
		if (is_branch(&in))
			return false;
	}
	return false;
}

static size_t put(uint8_t *c, size_t pos, const uint8_t *bytes, size_t n)
{
	memcpy(c + pos, bytes, n);
	return pos + n;
}

/* push of general register r */
static size_t put_push(uint8_t *c, size_t pos, int r)
{
	if (r >= 8)
		c[pos++] = 0x41;
	c[pos++] = (uint8_t)(0x50 + (r & 7));
	return pos;
}

/* What syscall()'s count is given on the stack: the call site (at the
 * depth the function has pushed, above the red zone the trampoline
 * skips), the number, the first argument. */
static size_t put_syscall_args(uint8_t *c, size_t pos, const struct args_track *t)
{
	static const uint8_t push_mem[] = { 0xff, 0xb4, 0x24 }; /* push [rsp + disp32] */
	uint32_t disp = 128 + t->depth;

	pos = put(c, pos, push_mem, sizeof(push_mem));
	memcpy(c + pos, &disp, 4);
	pos = put_push(c, pos + 4, lowest(t->nr));
	return put_push(c, pos, lowest(t->a1));
}

/* lea rsp, [rsp - 128]; (syscall(): its arguments pushed); call [rip +
 * the code's address]; lea rsp, [rsp + 128 (+ 24)]; the replaced
 * instruction; jmp back; the code's address. */
static int build_tramp(const struct fn_code *f, struct cp_redirect_plan *plan,
		       enum cp_redirect_kind kind, const struct args_track *t, uint64_t call)
{
	static const uint8_t below[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };
	static const uint8_t call_ind[] = { 0xff, 0x15 };
	uint8_t above[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
	uint8_t *c = plan->code;
	size_t pos = 0, nrel, addr_at = CP_REDIRECT_TRAMP_SIZE - 8;
	uint64_t off = plan->at - f->func;

	memset(c, 0xcc, CP_REDIRECT_TRAMP_SIZE);
	pos = put(c, pos, below, sizeof(below));
	if (kind == CP_REDIRECT_SYSCALL) {
		pos = put_syscall_args(c, pos, t);
		above[4] = 128 + 24;
	}
	pos = put(c, pos, call_ind, sizeof(call_ind));
	cp_x86_put_rel32(c + pos, plan->tramp + pos + 4, plan->tramp + addr_at);
	pos = put(c, pos + 4, above, sizeof(above));
	nrel = cp_code_relocate(f->bytes + off, f->size - off, plan->at, plan->tramp + pos,
				c + pos);
	if (!nrel || pos + nrel + 5 > addr_at ||
	    !cp_x86_rel32_reaches(plan->tramp + pos + nrel + CP_X86_JMP_LEN, plan->at + plan->len))
		return -1;
	pos += nrel;
	cp_x86_put_jmp(c + pos, plan->tramp + pos, plan->at + plan->len);
	memcpy(c + addr_at, &call, 8);
	return 0;
}

/* The word with the jump over the replaced bytes: to the trampoline, or
 * short, to the springboard. */
static uint64_t with_jump(const struct cp_redirect_plan *plan, uint64_t word)
{
	return cp_x86_word_with_jump(word, plan->qword, plan->at, plan->jump_len,
				     plan->jump_len == CP_X86_JMP_LEN ? plan->tramp :
									plan->springboard);
}

/* A springboard's place in room within a short jump of from (the end of
 * a 2-byte jump): 0 when none. */
static uint64_t springboard_at(const struct cp_redirect_room *room, uint64_t from)
{
	for (int i = 0; room && i < 2; i++)
		for (uint64_t p = room->pad[i][0]; p + CP_X86_JMP_LEN <= room->pad[i][1]; p++)
			if (cp_x86_rel8_reaches(from, p))
				return p;
	return 0;
}

static bool is_stack_register(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RSP || r == ZYDIS_REGISTER_RBP;
}

/* Whether the instruction may touch memory other than the stack (where it
 * cannot fault: the stack check made room), so may fault. */
static bool may_fault(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	for (int i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.type != ZYDIS_MEMOP_TYPE_AGEN &&
		    (!is_stack_register(ops[i].mem.base) ||
		     ops[i].mem.index != ZYDIS_REGISTER_NONE ||
		     ops[i].mem.segment == ZYDIS_REGISTER_FS ||
		     ops[i].mem.segment == ZYDIS_REGISTER_GS))
			return true;
	return false;
}

/* The jump the instruction at off (in) can take: 5, 2 (with a springboard
 * in room), 0 none. */
static unsigned can_take(const struct fn_code *f, size_t off, const ZydisDecodedInstruction *in,
			 const ZydisDecodedOperand *ops, const struct cp_redirect_room *room,
			 uint64_t entry, uint64_t *springboard)
{
	uint64_t at = f->func + off;
	size_t expected = entry == at; /* the taken path's own branch lands there */
	unsigned n;

	if (off + 8 - (at & 7) > f->size + f->tail ||
	    landings_within(f, at, at + in->length) > expected || !flags_dead(f, off) ||
	    (f->go && may_fault(in, ops)))
		return 0;
	n = cp_x86_jump_in_word(at, in->length);
	if (n == CP_X86_JMP_SHORT_LEN && !(*springboard = springboard_at(room, at + n)))
		return 0;
	return n;
}

/* The words of the site: the live word (a leftover's jump taken for ours:
 * the displaced bytes the file's, or exactly our jump). */
static int site_words(const struct fn_code *f, const uint8_t *file, const uint8_t *live,
		      struct cp_redirect_plan *plan)
{
	size_t q = plan->qword - f->func, a = plan->at - plan->qword;
	uint64_t word, from_file;

	memcpy(&word, live + q, 8);
	memcpy(&from_file, live + q, 8);
	memcpy((uint8_t *)&from_file + a, file + q + a, plan->jump_len);
	if (!memcmp(live + q + a, file + q + a, plan->len)) {
		plan->original = word;
		plan->patched = with_jump(plan, word);
		return 0;
	}
	if (word != with_jump(plan, from_file) ||
	    memcmp(live + q + a + plan->jump_len, file + q + a + plan->jump_len,
		   plan->len - plan->jump_len))
		return -1;
	plan->original = from_file;
	plan->patched = word;
	return 0;
}

/* Where the near jump to the trampoline ends: at the site, or at the
 * springboard. */
static uint64_t jump_end(const struct cp_redirect_plan *plan)
{
	return plan->jump_len == 5 ? plan->at + 5 : plan->springboard + 5;
}

/* Whether the instruction before which t stands can take syscall()'s
 * jump: the number and first argument in registers, the stack known. */
static bool args_known(enum cp_redirect_kind kind, const struct args_track *t)
{
	return kind != CP_REDIRECT_SYSCALL || (t->ok && t->nr && t->a1 && t->depth <= 0x10000);
}

/* What one pass over the function's straight-line start looks for. */
struct site_search {
	struct fn_code *f;
	enum cp_redirect_kind kind;
	const struct cp_redirect_room *room; /* NULL: near jumps only */
	uint64_t call;
	size_t first;	     /* the second instruction (or the
						 * path's first: _UNTAKEN, _TAKEN) */
	uint64_t entry;	     /* _TAKEN: where the path's branch
						 * lands (the jump may be there) */
	struct args_track t; /* before it */
};

/* The first instruction of the pass's kind that can take the jump, its
 * plan made (but its words): 1, or 0 when none can. */
static int find_site(struct site_search *ss, struct cp_redirect_plan *plan)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	for (size_t off = ss->first; decode(ss->f, off, &in, ops) && !is_branch(&in);
	     track_insn(&ss->t, &in, ops), off += in.length) {
		plan->jump_len = can_take(ss->f, off, &in, ops, ss->room, ss->entry,
					  &plan->springboard);
		if (!args_known(ss->kind, &ss->t) || !plan->jump_len ||
		    (ss->room && plan->jump_len == 5))
			continue;
		plan->at = ss->f->func + off;
		plan->len = in.length;
		plan->qword = plan->at & ~7ul;
		if (!cp_x86_rel32_reaches(jump_end(plan), plan->tramp) ||
		    build_tramp(ss->f, plan, ss->kind, &ss->t, ss->call))
			continue;
		if (plan->jump_len == CP_X86_JMP_SHORT_LEN)
			cp_x86_put_jmp(plan->springboard_code, plan->springboard, plan->tramp);
		return 1;
	}
	return 0;
}

/* Where a Go function's code goes on past its stack check (a compare
 * with g's stack guard, then the conditional jump to the call of
 * morestack; before it, for a large frame, the frame's end computed and
 * checked for wrapping), or 0 when it has none (a function Go marked
 * nosplit). */
static size_t past_go_stack_check(const struct fn_code *f)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool compared = false;
	size_t off = 0;

	for (int n = 0; n < GO_CHECK_SCAN && decode(f, off, &in, ops); n++, off += in.length) {
		if (compared)
			return in.meta.category == ZYDIS_CATEGORY_COND_BR ? off + in.length : 0;
		compared = in.mnemonic == ZYDIS_MNEMONIC_CMP &&
			   ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			   ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			   !is_stack_register(ops[1].mem.base) &&
			   ops[1].mem.disp.value == GO_STACKGUARD0;
	}
	return 0;
}

/* Whether the code from off on falls through to end: what precedes end,
 * but for padding, is not a jump or return. */
static bool falls_into(const struct fn_code *f, size_t off, size_t end)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	bool falls = true;

	for (; off < end; off += in.length) {
		if (!decode(f, off, &in, ops))
			return true;
		if (in.mnemonic == ZYDIS_MNEMONIC_NOP || in.mnemonic == ZYDIS_MNEMONIC_INT3)
			continue;
		falls = !(in.meta.category == ZYDIS_CATEGORY_RET ||
			  in.meta.category == ZYDIS_CATEGORY_UNCOND_BR);
	}
	return off != end || falls;
}

/* A path past the function's first conditional branch (kind _UNTAKEN or
 * _TAKEN): where it starts, or 0 when the branch is not a relative jcc
 * or that path has ways in other than the branch. from: the instruction
 * after the first. */
static size_t arm_start(const struct fn_code *f, enum cp_redirect_kind kind, size_t from)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZyanU64 to;
	size_t off = from, after, taken;
	bool decoded;

	while ((decoded = decode(f, off, &in, ops)) && !is_branch(&in))
		off += in.length;
	if (!decoded || in.meta.category != ZYDIS_CATEGORY_COND_BR ||
	    !(in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], f->func + off, &to)) ||
	    to <= f->func + off || to >= f->func + f->size)
		return 0;
	after = off + in.length;
	taken = to - f->func;
	if (kind == CP_REDIRECT_BOUNDARY_UNTAKEN)
		return landings_within(f, f->func + after, f->func + after + 1) ? 0 : after;
	return landings_within(f, to, to + 1) == 1 && !falls_into(f, after, taken) ? taken : 0;
}

/* The plan, f set up for the function's code (its branch targets swept). */
static int plan_in(struct fn_code *f, enum cp_redirect_kind kind, const uint8_t *live,
		   uint64_t call, const struct cp_redirect_room *room,
		   struct cp_redirect_plan *plan, char *why, size_t whylen)
{
	struct site_search ss = { .f = f, .kind = kind, .call = call };
	struct args_track start;
	bool arm = kind == CP_REDIRECT_BOUNDARY_UNTAKEN || kind == CP_REDIRECT_BOUNDARY_TAKEN;
	size_t past;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int found;

	ss.t = (struct args_track){ .nr = 1u << 7, .a1 = 1u << 6, .ok = true }; /* rdi, rsi */
	if (!decode(f, 0, &in, ops) || is_branch(&in)) {
		snprintf(why, whylen, "its first instruction is a branch, or cannot be decoded");
		return -1;
	}
	ss.first = in.length;
	track_insn(&ss.t, &in, ops);
	if (f->go && (past = past_go_stack_check(f)))
		ss.first = past;
	if (arm && !(ss.first = arm_start(f, kind, ss.first))) {
		snprintf(
			why, whylen,
			"its first branch is not a conditional jump forward with one way into each path");
		return -1;
	}
	if (kind == CP_REDIRECT_BOUNDARY_TAKEN)
		ss.entry = f->func + ss.first;
	start = ss.t;
	/* near jumps first (a springboard, though never run, is a change to
	 * the code between two functions that stays), then short ones */
	if (!(found = find_site(&ss, plan)) && room) {
		ss.t = start;
		ss.room = room;
		found = find_site(&ss, plan);
	}
	if (found && arm && landings_within(f, f->func + ss.first + 1, plan->at)) {
		snprintf(why, whylen,
			 "a branch lands on the path between its first branch and the jump");
		return -1;
	}
	if (!found) {
		snprintf(
			why, whylen,
			CP_REDIRECT_NO_ROOM
			" (5 bytes or more, or 2 with padding near for a springboard, within an aligned word; no branch landing there; the flags dead%s)",
			kind == CP_REDIRECT_SYSCALL ?
				"; the syscall's number and argument in registers" :
				"");
		return -1;
	}
	if (site_words(f, f->bytes, live, plan)) {
		snprintf(
			why, whylen,
			"its code at +0x%llx differs from its file's (another tool has written there, or a clockprof killed with its restorer left its redirect)",
			(unsigned long long)(plan->at - f->func));
		return -1;
	}
	return 0;
}

int cp_redirect_plan_make(enum cp_redirect_kind kind, const struct cp_redirect_fn *fn,
			  uint64_t tramp, uint64_t call, struct cp_redirect_plan *plan, char *why,
			  size_t whylen)
{
	struct fn_code *f = calloc(1, sizeof(*f)); /* large: the branch targets */
	int rc;

	memset(plan, 0, sizeof(*plan));
	plan->func = fn->func;
	plan->tramp = tramp;
	if (!f) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	ZydisDecoderInit(&f->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	f->bytes = fn->file;
	f->size = fn->size;
	f->tail = fn->tail;
	f->func = fn->func;
	f->go = fn->go;
	sweep(f);
	rc = plan_in(f, kind, fn->live, call, fn->room, plan, why, whylen);
	free(f);
	return rc;
}

uint64_t cp_redirect_plan_unpatched(const struct cp_redirect_plan *plan, uint64_t live)
{
	unsigned a = (unsigned)(plan->at - plan->qword);

	memcpy((uint8_t *)&live + a, (const uint8_t *)&plan->original + a, plan->jump_len);
	return live;
}
