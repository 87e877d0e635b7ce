/* test_table_place.c - where the vDSO patch's counter table goes, on
 * address-space layouts of the kinds met: the vDSO among the libraries
 * below the dynamic loader (Linux 6.x), the vDSO above the stack (older
 * kernels), and the gaps that must stay free (the stack's growth, brk). */
#include <stdio.h>
#include <string.h>

#include "table_place.h"
#include "unit.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define SIZE (3 * MIB)

static struct cp_proc_map map(uint64_t start, uint64_t end, const char *path)
{
	return (struct cp_proc_map){ .start = start, .end = end, .path = path };
}

/* Linux 6.x: libc, [vvar], [vdso], ld.so, a wide gap, [stack]. */
static size_t layout_6x(struct cp_proc_map *m, uint64_t stack_at)
{
	size_t n = 0;

	m[n++] = map(0x555555554000, 0x555555556000, "/bin/target");
	m[n++] = map(0x555555560000, 0x555555581000, "[heap]");
	m[n++] = map(0x7ffff7d80000, 0x7ffff7fa0000, "/lib/libc.so.6");
	m[n++] = map(0x7ffff7fc0000, 0x7ffff7fc4000, "[vvar]");
	m[n++] = map(0x7ffff7fc4000, 0x7ffff7fc6000, "[vdso]");
	m[n++] = map(0x7ffff7fc6000, 0x7ffff7ffe000, "/lib/ld-linux-x86-64.so.2");
	m[n++] = map(stack_at, stack_at + 0x21000, "[stack]");
	m[n++] = map(0xffffffffff600000, 0xffffffffff601000, "[vsyscall]");
	return n;
}

TEST(table_place_goes_just_above_the_loader)
{
	struct cp_proc_map m[16];
	size_t n = layout_6x(m, 0x7ffffffde000); /* 128 MiB above the loader */

	CHECK_INT(cp_table_place_in(m, n, 0x7ffff7fc4000, 0x7ffff7fc6000, SIZE, 8 * MIB),
		  0x7ffff7ffe000 + MIB);
}

TEST(table_place_goes_below_when_above_is_the_stacks_room)
{
	struct cp_proc_map m[8];
	size_t n = 0;

	/* the loader 6 MiB under a stack at the top of user space */
	m[n++] = map(0x555555554000, 0x555555556000, "/bin/target");
	m[n++] = map(0x7fffef000000, 0x7fffef200000, "/lib/libc.so.6");
	m[n++] = map(0x7fffef220000, 0x7fffef224000, "[vvar]");
	m[n++] = map(0x7fffef224000, 0x7fffef226000, "[vdso]");
	m[n++] = map(0x7fffef226000, 0x7fffff9de000, "/lib/ld-linux-x86-64.so.2");
	m[n++] = map(0x7ffffffde000, 0x7ffffffff000, "[stack]");
	m[n++] = map(0xffffffffff600000, 0xffffffffff601000, "[vsyscall]");
	/* libc's start, less 1 MiB: the gaps between libc and the vDSO are
	 * too small */
	CHECK_INT(cp_table_place_in(m, n, 0x7fffef224000, 0x7fffef226000, SIZE, 8 * MIB),
		  0x7fffef000000 - MIB - SIZE);
}

TEST(table_place_goes_above_a_vdso_above_the_stack)
{
	struct cp_proc_map m[8];
	size_t n = 0;
	uint64_t at;

	m[n++] = map(0x7f0000000000, 0x7f0000200000, "/lib/libc.so.6");
	m[n++] = map(0x7ffc00000000, 0x7ffc00021000, "[stack]");
	m[n++] = map(0x7ffc00100000, 0x7ffc00104000, "[vvar]");
	m[n++] = map(0x7ffc00104000, 0x7ffc00106000, "[vdso]");
	m[n++] = map(0xffffffffff600000, 0xffffffffff601000, "[vsyscall]");
	at = cp_table_place_in(m, n, 0x7ffc00104000, 0x7ffc00106000, SIZE, 8 * MIB);
	CHECK_INT(at, 0x7ffc00106000 + MIB);
}

TEST(table_place_never_takes_the_stacks_room_to_grow)
{
	struct cp_proc_map m[8];
	size_t n = 0;

	/* only gap in reach: under the stack, 6 MiB of it */
	m[n++] = map(0x7f0000000000, 0x7f0000004000, "[vdso]");
	m[n++] = map(0x7f0000604000, 0x7f0000625000, "[stack]");
	m[n++] = map(0x7f0000625000, 0x7f0080000000, "/big");
	CHECK_INT(cp_table_place_in(m, n, 0x7f0000000000, 0x7f0000004000, SIZE, 8 * MIB), 0);
	/* with the stack unlimited, never under it, however wide */
	m[1] = map(0x7f0100000000, 0x7f0100021000, "[stack]");
	CHECK_INT(cp_table_place_in(m, 2, 0x7f0000000000, 0x7f0000004000, SIZE, 0), 0);
	/* a limit of 1 MiB leaves room */
	CHECK(cp_table_place_in(m, 2, 0x7f0000000000, 0x7f0000004000, SIZE, MIB) ==
	      0x7f0000004000 + MIB);
}

TEST(table_place_leaves_brk_room_above_the_heap)
{
	struct cp_proc_map m[8];
	size_t n = 0;
	uint64_t at;

	m[n++] = map(0x7f0000000000, 0x7f0000004000, "[vdso]");
	m[n++] = map(0x7f0000004000, 0x7f0000005000, "[heap]");
	m[n++] = map(0x7f0040000000, 0x7f0040001000, "/x");
	at = cp_table_place_in(m, n, 0x7f0000000000, 0x7f0000004000, SIZE, 8 * MIB);
	CHECK_INT(at, 0x7f0000005000 + 256 * MIB);
}

TEST(table_place_is_none_beyond_a_jumps_reach)
{
	struct cp_proc_map m[8];
	size_t n = 0;

	m[n++] = map(0x0f0000000000, 0x100000000000, "/huge-below");
	m[n++] = map(0x100000000000, 0x100000004000, "[vdso]");
	m[n++] = map(0x100000004000, 0x100100000000, "/huge-above");
	m[n++] = map(0x100200000000, 0x100200001000, "/far");
	m[n++] = map(0xffffffffff600000, 0xffffffffff601000, "[vsyscall]");
	CHECK_INT(cp_table_place_in(m, n, 0x100000000000, 0x100000004000, SIZE, 8 * MIB), 0);
}
