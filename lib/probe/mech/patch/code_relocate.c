/* code_relocate.c - see code_relocate.h. */
#include <Zydis/Zydis.h>

#include "code_relocate.h"

size_t cp_code_relocate(const uint8_t *code, size_t avail, uint64_t from, uint64_t to,
			uint8_t out[CP_RELOCATED_MAX])
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisEncoderRequest req;
	ZyanUSize len = CP_RELOCATED_MAX;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, avail, &in, ops)) ||
	    (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE &&
	     in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE) ||
	    !ZYAN_SUCCESS(ZydisEncoderDecodedInstructionToEncoderRequest(
		    &in, ops, in.operand_count_visible, &req)))
		return 0;
	for (int i = 0; i < in.operand_count_visible; i++) {
		ZyanU64 abs;

		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.base == ZYDIS_REGISTER_RIP) {
			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[i], from, &abs)))
				return 0;
			req.operands[i].mem.displacement = (ZyanI64)abs;
		}
	}
	if (!ZYAN_SUCCESS(ZydisEncoderEncodeInstructionAbsolute(&req, out, &len, to)))
		return 0;
	return len;
}
