/* code_relocate.h - one x86-64 instruction moved: decoded where it was and
 * encoded to run at another address, its RIP-relative operand aimed at
 * what it aimed at before (Zydis's decoder and encoder). The vDSO patch's
 * thunks and a request boundary's trampoline each run one instruction
 * that a jump displaced, relocated by this. */
#ifndef CP_CODE_RELOCATE_H
#define CP_CODE_RELOCATE_H

#include <stddef.h>
#include <stdint.h>

#define CP_RELOCATED_MAX 15 /* the longest x86 instruction */

/* The instruction at code (avail bytes readable), which ran at from,
 * encoded into out to run at to. Its length there; 0 when it cannot be
 * decoded or encoded (a relative branch is not relocated: the plans stop
 * before the first one). */
size_t cp_code_relocate(const uint8_t *code, size_t avail, uint64_t from, uint64_t to,
			uint8_t out[CP_RELOCATED_MAX]);

#endif
