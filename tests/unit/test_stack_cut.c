/* test_stack_cut.c - --stacks' stacks end where their walk left the
 * target's code: the executable mappings as sorted ranges
 * (lib/procfs/code_ranges.c), a stack cut at its first frame outside them
 * (cp_stack_depth_in_code), and the named stacks built so
 * (cp_named_stacks_build), with the reads cut counted. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "code_ranges.h"
#include "stacks.h"
#include "symbolize.h"
#include "unit.h"

/* ASCII a frame-pointer walk through redis-server read as return
 * addresses off its stack ("qver *:1", "qver 127"). */
#define ASCII_1 0x313a2a2072657671ull
#define ASCII_2 0x3732312072657671ull

static const char *const MAPS[] = {
	"555555554000-555555556000 r--p 00000000 08:01 100 /srv/app\n",
	"555555556000-55555555a000 r-xp 00002000 08:01 100 /srv/app\n",
	"55555555a000-55555555c000 rw-p 00006000 08:01 100 /srv/app\n",
	"555555560000-555555580000 rw-p 00000000 00:00 0 [heap]\n",
	"7f0000000000-7f0000010000 r-xp 00010000 08:01 200 /lib/libc.so.6\n",
	/* adjacent and overlapping code: one range with libc's */
	"7f0000010000-7f0000020000 r-xp 00000000 00:00 0 \n",
	"7f0000018000-7f0000028000 rwxp 00000000 00:00 0 \n",
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n",
	"7ffc00030000-7ffc00032000 r-xp 00000000 00:00 0 [vdso]\n",
	"7fffffffe000-7ffffffff000 --xp 00000000 00:00 0 [uprobes]\n",
};

static int synthetic_code(struct cp_code_ranges *code)
{
	struct cp_proc_map maps[sizeof(MAPS) / sizeof(MAPS[0])];
	char lines[sizeof(MAPS) / sizeof(MAPS[0])][128];
	size_t n = sizeof(MAPS) / sizeof(MAPS[0]);

	for (size_t i = 0; i < n; i++) {
		snprintf(lines[i], sizeof(lines[i]), "%s", MAPS[i]);
		if (cp_proc_map_parse(lines[i], &maps[i]))
			return -1;
	}
	/* in any order: the vDSO first, in place of the app's rodata */
	maps[0] = maps[n - 2];
	return cp_code_ranges_from_maps(maps, n, code);
}

TEST(code_ranges_are_the_executable_mappings)
{
	struct cp_code_ranges code;

	CHECK_INT(synthetic_code(&code), 0);
	CHECK_INT((int)code.n, 3); /* the app's, libc's and the rest, the vDSO */
	CHECK(cp_code_ranges_has(&code, 0x555555556000));
	CHECK(cp_code_ranges_has(&code, 0x555555559fff));
	CHECK(!cp_code_ranges_has(&code, 0x55555555a000)); /* its data */
	CHECK(!cp_code_ranges_has(&code, 0x555555555000)); /* its rodata */
	CHECK(!cp_code_ranges_has(&code, 0x555555570000)); /* heap */
	CHECK(cp_code_ranges_has(&code, 0x7f0000000000));
	CHECK(cp_code_ranges_has(&code, 0x7f0000015000));
	CHECK(cp_code_ranges_has(&code, 0x7f0000027fff));
	CHECK(!cp_code_ranges_has(&code, 0x7f0000028000));
	CHECK(!cp_code_ranges_has(&code, 0x7ffc00010000)); /* stack */
	CHECK(cp_code_ranges_has(&code, 0x7ffc00030100));  /* vDSO */
	CHECK(!cp_code_ranges_has(&code, 0x7fffffffe000)); /* the kernel's */
	CHECK(!cp_code_ranges_has(&code, ASCII_1));
	CHECK(!cp_code_ranges_has(&code, 0));
	cp_code_ranges_free(&code);
	CHECK(!cp_code_ranges_has(&code, 0x555555556000));
}

/* The depth kept of a stack of frames, leaf first. */
static int depth_of(const struct cp_code_ranges *code, const __u64 *pc, size_t n, bool *cut)
{
	struct cp_stack_key key = { 0 };

	for (size_t i = 0; i < n && i < CP_STACK_DEPTH; i++)
		key.pc[i] = pc[i];
	return cp_stack_depth_in_code(&key, code, cut);
}

TEST(stacks_are_cut_at_their_first_frame_outside_code)
{
	const __u64 whole[] = { 0x7ffc00030100, 0x7f0000001234, 0x555555557000, 0x555555556100 };
	const __u64 in_data[] = { 0x7ffc00030100, 0x555555557000, 0x55555555a010, 0x555555556100 };
	const __u64 unmapped[] = { 0x7f0000001234, 0x600000000000, 0x555555556100 };
	const __u64 ascii[] = { 0x7ffc00030100, 0x555555557000, 0x7ffc00010008,
				ASCII_1,	ASCII_2,	0x555555556100 };
	/* a return address at the end of the code: its call is the last
	 * instruction; one at its start: the call is before it, not code */
	const __u64 at_end[] = { 0x555555557000, 0x55555555a000 };
	const __u64 at_start[] = { 0x555555557000, 0x555555556000 };
	const __u64 leaf_out[] = { 0x555555560010, 0x555555557000 };
	struct cp_code_ranges code;
	bool cut;

	CHECK_INT(synthetic_code(&code), 0);
	CHECK_INT(depth_of(&code, whole, 4, &cut), 4);
	CHECK(!cut);
	CHECK_INT(depth_of(&code, in_data, 4, &cut), 2);
	CHECK(cut);
	CHECK_INT(depth_of(&code, unmapped, 3, &cut), 1);
	CHECK(cut);
	CHECK_INT(depth_of(&code, ascii, 6, &cut), 2);
	CHECK(cut);
	CHECK_INT(depth_of(&code, at_end, 2, &cut), 2);
	CHECK(!cut);
	CHECK_INT(depth_of(&code, at_start, 2, &cut), 1);
	CHECK(cut);
	CHECK_INT(depth_of(&code, leaf_out, 2, &cut), 0);
	CHECK(cut);
	/* the code not known: nothing is cut */
	CHECK_INT(depth_of(NULL, ascii, 6, &cut), 6);
	CHECK(!cut);
	cp_code_ranges_free(&code);
}

__attribute__((noinline)) void stack_cut_leaf(void);
__attribute__((noinline)) void stack_cut_caller(void);

__attribute__((noinline)) void stack_cut_leaf(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void stack_cut_caller(void)
{
	stack_cut_leaf();
	__asm__ volatile("");
}

TEST(named_stacks_end_at_their_first_frame_outside_code)
{
	__u64 leaf = (__u64)(uintptr_t)stack_cut_leaf;
	__u64 caller = (__u64)(uintptr_t)stack_cut_caller + 1; /* a return address */
	struct cp_stack_count raw[2] = {
		{ .key = { .pc = { leaf, caller, ASCII_1, caller } }, .count = 5 },
		{ .key = { .pc = { leaf, caller } }, .count = 2 },
	};
	struct cp_named_stacks named = { 0 };
	struct cp_symbolizer *s = cp_symbolizer_open(getpid(), NULL);

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT(cp_named_stacks_build(s, raw, 2, &named), 0);
	/* the cut one is the whole one's path: one stack of 7 reads */
	CHECK_INT((int)named.n, 1);
	CHECK(named.truncated == 5);
	if (named.n == 1 && named.stacks[0].n_frames == 2) {
		CHECK_STR(named.stacks[0].frames[0], "stack_cut_caller");
		CHECK_STR(named.stacks[0].frames[1], "stack_cut_leaf");
		CHECK(named.stacks[0].count == 7);
	} else if (named.n) {
		CHECK_INT((int)named.stacks[0].n_frames, 2);
	}
	cp_named_stacks_free(&named);
	cp_symbolizer_close(s);
}
