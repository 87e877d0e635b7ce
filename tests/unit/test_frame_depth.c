/* test_frame_depth.c - lib/symbols/frame_depth: rules for wrappers without
 * CFI, on the code of static musl's wrappers (musl-gcc -O2, as bytes). */
#include <string.h>

#include "frame_depth.h"
#include "unit.h"

struct got {
	size_t ret[8];
	struct cp_unwind_rule rule[8];
	int n;
};

static void keep(void *arg, size_t ret, const struct cp_unwind_rule *r)
{
	struct got *g = arg;

	if (g->n < 8) {
		g->ret[g->n] = ret;
		g->rule[g->n++] = *r;
	}
}

/* musl's timespec_get: an early ret before its frame (shrink-wrapped). */
TEST(frame_after_an_early_return)
{
	static const uint8_t code[] = {
		0x83, 0xfe, 0x01, 0x74, 0x0b, 0x31, 0xc0, 0xc3, /* cmp; je; xor; ret */
		0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* nopl */
		0x48, 0x83, 0xec, 0x08,				/* sub $8,%rsp */
		0x48, 0x89, 0xfe, 0x31, 0xff,			/* mov; xor */
		0xe8, 0x00, 0x00, 0x00, 0x00,			/* call */
		0x48, 0x83, 0xc4, 0x08, 0xc3,			/* add $8,%rsp; ret */
	};
	struct got g = { 0 };

	CHECK(cp_frame_depth_rules(code, sizeof(code), keep, &g) == 0);
	CHECK(g.n == 1);
	CHECK(g.ret[0] == 30);
	CHECK(g.rule[0].cfa_offset == 16 && g.rule[0].bp_offset == 0);
	CHECK(g.rule[0].base_reg == CP_UNWIND_SP);
}

/* musl's __clock_gettime: rbp pushed; a syscall; a cold block after the
 * epilogue's ret runs in the whole frame. */
TEST(cold_block_after_the_epilogue)
{
	static const uint8_t code[] = {
		0x55, 0x53, 0x48, 0x83, 0xec, 0x08,	  /* push rbp; push rbx; sub $8 */
		0xff, 0xd0,				  /* call *%rax */
		0x0f, 0x05,				  /* syscall */
		0x48, 0x83, 0xc4, 0x08, 0x5b, 0x5d, 0xc3, /* add $8; pop; pop; ret */
		0xe8, 0x00, 0x00, 0x00, 0x00,		  /* call (cold) */
	};
	struct got g = { 0 };

	CHECK(cp_frame_depth_rules(code, sizeof(code), keep, &g) == 0);
	CHECK(g.n == 3);
	for (int i = 0; i < g.n; i++)
		CHECK(g.rule[i].cfa_offset == 32 && g.rule[i].bp_offset == -16);
	CHECK(g.ret[0] == 8 && g.ret[1] == 10 && g.ret[2] == 22);
}

/* A frame whose size is not in the code (leave, rsp from rbp): no rule. */
TEST(unknown_frame_size_gives_no_rule)
{
	static const uint8_t code[] = {
		0x55, 0x48, 0x89, 0xe5,	      /* push rbp; mov %rsp,%rbp */
		0xe8, 0x00, 0x00, 0x00, 0x00, /* call */
		0xc9, 0xc3,		      /* leave; ret */
	};
	struct got g = { 0 };

	CHECK(cp_frame_depth_rules(code, sizeof(code), keep, &g) == -1);
	CHECK(g.n == 0);
}
