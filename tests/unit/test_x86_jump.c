/* test_x86_jump.c - lib/probe/mech/patch/x86_jump: the jumps both plans
 * write (the vDSO's sites, the redirected functions), byte for byte
 * against encodings worked out by hand. */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "x86_jump.h"

static uint64_t word_of(const uint8_t b[8])
{
	uint64_t w;

	memcpy(&w, b, 8);
	return w;
}

TEST(x86_near_jump_and_its_reach)
{
	uint8_t b[5];
	static const uint8_t back[] = { 0xe9, 0xfb, 0xff, 0xff, 0xff }; /* to itself */
	static const uint8_t ahead[] = { 0xe9, 0x0b, 0x01, 0x00, 0x00 };

	cp_x86_put_jmp(b, 0x401000, 0x401000);
	CHECK(!memcmp(b, back, 5));
	cp_x86_put_jmp(b, 0x401000, 0x401110);
	CHECK(!memcmp(b, ahead, 5));
	CHECK(cp_x86_rel32_reaches(0x7f0000000000, 0x7f0000000000 + 0x7fffffff));
	CHECK(!cp_x86_rel32_reaches(0x7f0000000000, 0x7f0000000000 + 0x80000000ull));
	CHECK(cp_x86_rel32_reaches(0x7f0080000000, 0x7f0000000000));
	CHECK(!cp_x86_rel32_reaches(0x7f0080000001, 0x7f0000000000));
	CHECK(cp_x86_rel8_reaches(0x1000, 0x1000 + 127) &&
	      cp_x86_rel8_reaches(0x1000, 0x1000 - 128));
	CHECK(!cp_x86_rel8_reaches(0x1000, 0x1000 + 128) &&
	      !cp_x86_rel8_reaches(0x1000, 0x1000 - 129));
}

TEST(x86_jump_fits_in_one_aligned_word)
{
	CHECK_INT(cp_x86_jump_in_word(0x1000, 5), 5);
	CHECK_INT(cp_x86_jump_in_word(0x1003, 7), 5); /* bytes 3-7 of the word */
	CHECK_INT(cp_x86_jump_in_word(0x1004, 7), 2); /* a near jump would cross it */
	CHECK_INT(cp_x86_jump_in_word(0x1006, 3), 2);
	CHECK_INT(cp_x86_jump_in_word(0x1007, 5), 0); /* not even a short one */
	CHECK_INT(cp_x86_jump_in_word(0x1000, 1), 0); /* one byte holds no jump */
}

TEST(x86_word_switched_whole_keeps_the_other_bytes)
{
	static const uint8_t orig[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t near[8] = { 0x11, 0x22, 0xe9, 0xfb, 0x0f, 0x00, 0x00, 0x88 };
	static const uint8_t shrt[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0xeb, 0x80 };

	/* a near jump at 0x2002 to 0x3002: rel32 0x0ffb, from its end 0x2007 */
	CHECK(cp_x86_word_with_jump(word_of(orig), 0x2000, 0x2002, 5, 0x3002) == word_of(near));
	/* a short one at 0x2006 to a springboard 128 bytes back from its end */
	CHECK(cp_x86_word_with_jump(word_of(orig), 0x2000, 0x2006, 2, 0x2008 - 128) ==
	      word_of(shrt));
}
