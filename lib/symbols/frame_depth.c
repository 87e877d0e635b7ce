/* frame_depth.c - see frame_depth.h. */
#include <Zydis/Zydis.h>
#include <stdbool.h>
#include <string.h>

#include "frame_depth.h"

struct depth {
	int64_t now, deepest;
	int64_t bp_offset; /* where the caller's rbp is saved, or 0 */
	int64_t pushed_bp; /* where it was pushed, for the cold blocks */
};

static bool is_rsp(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == ZYDIS_REGISTER_RSP;
}

/* Applies one instruction to the depth; -1 when rsp moves another way. */
static int step(struct depth *d, const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	bool imm = in->operand_count_visible == 2 && ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
		d->now += 8;
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[0].reg.value == ZYDIS_REGISTER_RBP)
			d->bp_offset = d->pushed_bp = -(d->now + 8);
		break;
	case ZYDIS_MNEMONIC_POP:
		if (ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    ops[0].reg.value == ZYDIS_REGISTER_RBP)
			d->bp_offset = 0;
		d->now -= 8;
		break;
	case ZYDIS_MNEMONIC_SUB:
	case ZYDIS_MNEMONIC_ADD:
		if (!is_rsp(&ops[0]))
			return 0;
		if (!imm)
			return -1;
		d->now += in->mnemonic == ZYDIS_MNEMONIC_SUB ? ops[1].imm.value.s :
							       -ops[1].imm.value.s;
		break;
	case ZYDIS_MNEMONIC_CALL:
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_RET: /* the frame's end: ends_flow() */ return 0;
	default:
		for (int i = 0; i < in->operand_count; i++)
			if (is_rsp(&ops[i]) && (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
				return -1;
		return 0;
	}
	if (d->now > d->deepest)
		d->deepest = d->now;
	return d->now < 0 ? -1 : 0;
}

static bool ends_flow(const ZydisDecodedInstruction *in)
{
	return in->mnemonic == ZYDIS_MNEMONIC_RET || in->mnemonic == ZYDIS_MNEMONIC_JMP ||
	       in->mnemonic == ZYDIS_MNEMONIC_UD2 || in->mnemonic == ZYDIS_MNEMONIC_HLT;
}

/* One pass over the code; emit NULL: only checks that it can be done. */
static int walk(const uint8_t *code, size_t size,
		void (*emit)(void *arg, size_t ret, const struct cp_unwind_rule *r), void *arg)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct depth d = { 0 };

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t off = 0; off < size; off += in.length) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off, size - off, &in, ops)))
			return -1;
		if (step(&d, &in, ops))
			return -1;
		if ((in.mnemonic == ZYDIS_MNEMONIC_CALL || in.mnemonic == ZYDIS_MNEMONIC_SYSCALL) &&
		    emit) {
			struct cp_unwind_rule r = {
				.cfa_offset = (int32_t)(d.now + 8),
				.bp_offset = (int32_t)d.bp_offset,
				.base_reg = CP_UNWIND_SP,
			};
			emit(arg, off + in.length, &r);
		}
		if (ends_flow(&in)) {
			d.now = d.deepest;
			d.bp_offset = d.pushed_bp;
		}
	}
	return 0;
}

int cp_frame_depth_rules(const uint8_t *code, size_t size,
			 void (*emit)(void *arg, size_t ret, const struct cp_unwind_rule *r),
			 void *arg)
{
	if (walk(code, size, NULL, NULL))
		return -1;
	return walk(code, size, emit, arg);
}
