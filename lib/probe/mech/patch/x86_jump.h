/* x86_jump.h - the x86-64 jumps the patch writes, in one place: a jump's
 * rel32 and its reach, a near jump (e9 rel32), and the aligned 8-byte
 * word that is switched whole between a function's own bytes and a jump
 * out of it (near, or short to a springboard). The vDSO's sites
 * (vdso_plan.c) and the redirected functions (redirect_plan.c) are
 * switched the same way; as Frida's gum keeps one x86 writer under every
 * interceptor, neither spells an opcode of its own.
 *
 * Addresses are where the bytes will run (the target's), so that a
 * rel32 is counted from the end of its instruction there. */
#ifndef CP_X86_JUMP_H
#define CP_X86_JUMP_H

#include <stdbool.h>
#include <stdint.h>

#define CP_X86_JMP_REL32 0xe9
#define CP_X86_JMP_REL8 0xeb
#define CP_X86_JMP_LEN 5       /* e9 and its rel32 */
#define CP_X86_JMP_SHORT_LEN 2 /* eb and its rel8 */

/* Whether a rel32 counted from from_end reaches to. */
bool cp_x86_rel32_reaches(uint64_t from_end, uint64_t to);

/* Whether a short jump's rel8, counted from from_end, reaches to. */
bool cp_x86_rel8_reaches(uint64_t from_end, uint64_t to);

/* The jump that an instruction of len bytes at at can be replaced by
 * with its bytes in one aligned word (switched whole, never torn): near
 * (5) where it fits, else short (2: the caller must find a springboard
 * within its reach), else none (0). */
unsigned cp_x86_jump_in_word(uint64_t at, unsigned len);

/* The rel32 from from_end to to, at at (4 bytes, unaligned). */
void cp_x86_put_rel32(uint8_t *at, uint64_t from_end, uint64_t to);

/* A near jump that runs at from, to to, written at at (5 bytes). */
void cp_x86_put_jmp(uint8_t *at, uint64_t from, uint64_t to);

/* word, the aligned 8 bytes at word_at, with a jump written over the
 * bytes at jump_at (within the word): a near jump to to when len is 5, a
 * short one to to (a springboard within 127 bytes) when it is 2. */
uint64_t cp_x86_word_with_jump(uint64_t word, uint64_t word_at, uint64_t jump_at, unsigned len,
			       uint64_t to);

#endif
