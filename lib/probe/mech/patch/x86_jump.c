/* x86_jump.c - see x86_jump.h. */
#include <string.h>

#include "x86_jump.h"

bool cp_x86_rel32_reaches(uint64_t from_end, uint64_t to)
{
	int64_t d = (int64_t)(to - from_end);

	return d == (int32_t)d;
}

bool cp_x86_rel8_reaches(uint64_t from_end, uint64_t to)
{
	int64_t d = (int64_t)(to - from_end);

	return d >= -128 && d <= 127;
}

unsigned cp_x86_jump_in_word(uint64_t at, unsigned len)
{
	unsigned in = (unsigned)(at & 7);

	if (len >= CP_X86_JMP_LEN && in + CP_X86_JMP_LEN <= 8)
		return CP_X86_JMP_LEN;
	if (len >= CP_X86_JMP_SHORT_LEN && in + CP_X86_JMP_SHORT_LEN <= 8)
		return CP_X86_JMP_SHORT_LEN;
	return 0;
}

void cp_x86_put_rel32(uint8_t *at, uint64_t from_end, uint64_t to)
{
	int32_t rel = (int32_t)(to - from_end);

	memcpy(at, &rel, 4);
}

void cp_x86_put_jmp(uint8_t *at, uint64_t from, uint64_t to)
{
	at[0] = CP_X86_JMP_REL32;
	cp_x86_put_rel32(at + 1, from + CP_X86_JMP_LEN, to);
}

uint64_t cp_x86_word_with_jump(uint64_t word, uint64_t word_at, uint64_t jump_at, unsigned len,
			       uint64_t to)
{
	uint8_t w[8];
	unsigned in = (unsigned)(jump_at - word_at);

	memcpy(w, &word, 8);
	if (len == CP_X86_JMP_LEN) {
		cp_x86_put_jmp(w + in, jump_at, to);
	} else {
		w[in] = CP_X86_JMP_REL8;
		w[in + 1] = (uint8_t)(int8_t)((int64_t)to -
					      (int64_t)(jump_at + CP_X86_JMP_SHORT_LEN));
	}
	memcpy(&word, w, 8);
	return word;
}
