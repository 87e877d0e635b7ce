/* test_vdso_count.c - the code clockprof writes into a target's counter
 * table to count a read (vdso_count.S), run here, in this process, on a
 * table of the test's making: entered as a thunk enters an entry's path
 * (rax, r10 set, a jump) and left by that path's jump back, here to a
 * landing that returns to the test. Its rare paths (the key's slot taken
 * by another, every slot it may take taken, a wrapper's rule, a block
 * entry taken) run in a target only by chance; here each runs on
 * purpose. */
#include <stdint.h>

#include "patch_table_fixture.h"
#include "sha256.h"
#include "unit.h"

struct area {
	uint8_t *table; /* the mapping: table, code pages, zeros */
};

static int area_open(struct area *a)
{
	return (a->table = cp_test_table_open()) ? 0 : -1;
}

static void area_close(struct area *a)
{
	cp_test_table_close(a->table);
}

/* One read of entry at counter index, its return address *ret. */
static void read_at(const struct area *a, int entry, unsigned index, const uint64_t *ret)
{
	uint64_t path = cp_vdso_count_prefixed_entry((uint64_t)(uintptr_t)a->table, entry);

	cp_test_read_enter((const void *)(uintptr_t)path, ret, index - 1);
}

static uint64_t thread_key(void)
{
	uint64_t fs0;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(fs0));
	return fs0;
}

static uint64_t *slot(const struct area *a, unsigned i) /* 0: the shared one */
{
	return (uint64_t *)(a->table + (i ? 128 + (size_t)(i - 1) * 128 : 0));
}

/* The key's first slot, as the code hashes it (1-based, as slot()). */
static unsigned home_slot(uint64_t key)
{
	return (unsigned)(((key * CP_PATCH_HASH) >> 45 & (CP_PATCH_SLOTS - 1) * 128) / 128) + 1;
}

/* The count of site key in slot i's block; 0 if the block lacks it. */
static uint64_t site_count(const struct area *a, unsigned i, uint64_t key)
{
	const uint64_t *block = (const uint64_t *)(a->table + CP_PATCH_SITES_OFF +
						   (size_t)(i - 1) * CP_PATCH_SITE_BLOCK);

	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++)
		if (block[2 * e] == key)
			return block[2 * e + 1];
	return 0;
}

static uint64_t site_key(uint64_t pc, unsigned via, int entry)
{
	return pc | (uint64_t)via << 48 | (uint64_t)entry << 60;
}

TEST(vdso_count_claims_the_home_slot_and_counts_by_index_and_site)
{
	struct area a;
	uint64_t ret = 0x401234, key = thread_key();
	unsigned home = home_slot(key);

	CHECK(area_open(&a) == 0);
	for (int i = 0; i < 3; i++)
		read_at(&a, CP_ENTRY_TIME, CP_PATCH_WORD_TIME, &ret);
	read_at(&a, CP_ENTRY_CLOCK_GETTIME, 1 + 1, &ret); /* CLOCK_MONOTONIC */
	CHECK(slot(&a, home)[0] == key);
	CHECK(slot(&a, home)[CP_PATCH_WORD_TIME] == 3);
	CHECK(slot(&a, home)[2] == 1);
	CHECK(site_count(&a, home, site_key(ret, CP_PATCH_VIA_NONE, CP_ENTRY_TIME)) == 3);
	CHECK(site_count(&a, home, site_key(ret, CP_PATCH_VIA_NONE, CP_ENTRY_CLOCK_GETTIME)) == 1);
	CHECK(slot(&a, 0)[CP_PATCH_WORD_TIME] == 0);
	area_close(&a);
}

TEST(vdso_count_takes_the_next_slot_when_another_key_holds_the_home)
{
	struct area a;
	uint64_t ret = 0x401234, key = thread_key();
	unsigned home = home_slot(key), next = home % CP_PATCH_SLOTS + 1;

	CHECK(area_open(&a) == 0);
	slot(&a, home)[0] = key ^ 0x1000; /* another thread's */
	read_at(&a, CP_ENTRY_GETTIMEOFDAY, CP_PATCH_WORD_GETTIMEOFDAY, &ret);
	read_at(&a, CP_ENTRY_GETTIMEOFDAY, CP_PATCH_WORD_GETTIMEOFDAY, &ret);
	CHECK(slot(&a, home)[CP_PATCH_WORD_GETTIMEOFDAY] == 0);
	CHECK(slot(&a, next)[0] == key);
	CHECK(slot(&a, next)[CP_PATCH_WORD_GETTIMEOFDAY] == 2);
	CHECK(site_count(&a, next, site_key(ret, CP_PATCH_VIA_NONE, CP_ENTRY_GETTIMEOFDAY)) == 2);
	area_close(&a);
}

TEST(vdso_count_uses_the_shared_slot_when_every_slot_it_may_take_is_taken)
{
	struct area a;
	uint64_t ret = 0x401234, key = thread_key();
	unsigned s = home_slot(key);

	CHECK(area_open(&a) == 0);
	for (int i = 0; i < CP_PATCH_PROBES; i++, s = s % CP_PATCH_SLOTS + 1)
		slot(&a, s)[0] = key ^ (0x1000 * (uint64_t)(i + 1));
	read_at(&a, CP_ENTRY_TIME, CP_PATCH_WORD_TIME, &ret);
	CHECK(slot(&a, 0)[CP_PATCH_WORD_TIME] == 1); /* counted, with no site */
	CHECK(slot(&a, s)[0] == 0);		     /* the 17th slot looked at is never claimed */
	s = home_slot(key);
	for (int i = 0; i < CP_PATCH_PROBES; i++, s = s % CP_PATCH_SLOTS + 1)
		CHECK(slot(&a, s)[CP_PATCH_WORD_TIME] == 0);
	area_close(&a);
}

/* A rule for a wrapper's return address: the caller's return address
 * sits at offset bytes from where the entry's is. */
static void put_rule(const struct area *a, uint64_t pc, int32_t offset, uint16_t via)
{
	uint8_t *rule = a->table + CP_PATCH_RULES_OFF + (pc & (CP_PATCH_RULES - 1)) * 16;

	memcpy(rule + 8, &offset, 4);
	memset(rule + 12, 0, 2);
	memcpy(rule + 14, &via, 2);
	memcpy(rule, &pc, 8);
}

TEST(vdso_count_steps_out_of_a_wrapper_to_its_caller)
{
	struct area a;
	uint64_t stack[8] = { 0x7f0000001000 /* in the wrapper */, 0, 0,
			      0x401500 /* the user's */ };
	unsigned home = home_slot(thread_key());

	CHECK(area_open(&a) == 0);
	put_rule(&a, stack[0], 24, 3);
	read_at(&a, CP_ENTRY_CLOCK_GETTIME, 1 + 0, stack);
	read_at(&a, CP_ENTRY_CLOCK_GETTIME, 1 + 0, stack);
	CHECK(slot(&a, home)[1] == 2);
	CHECK(site_count(&a, home, site_key(0x401500, 3, CP_ENTRY_CLOCK_GETTIME)) == 2);
	CHECK(site_count(&a, home, site_key(stack[0], CP_PATCH_VIA_NONE, CP_ENTRY_CLOCK_GETTIME)) ==
	      0);
	area_close(&a);
}

TEST(vdso_count_walks_two_wrappers_and_a_taken_block_entry)
{
	struct area a;
	/* entry <- wrapper A <- wrapper B <- the user's code */
	uint64_t stack[16] = { 0x7f0000001010, 0, 0x7f0000002020, 0, 0, 0x401600 };
	unsigned home = home_slot(thread_key());
	uint64_t *block;

	CHECK(area_open(&a) == 0);
	put_rule(&a, stack[0], 16, 3);
	put_rule(&a, stack[2], 24, 4);
	/* another site holds the user's pc's home entry in the block */
	block = (uint64_t *)(a.table + CP_PATCH_SITES_OFF +
			     (size_t)(home - 1) * CP_PATCH_SITE_BLOCK);
	block[2 * (0x401600 & (CP_PATCH_SITE_ENTRIES - 1))] = site_key(0x401600 + 32, 4, 0);
	read_at(&a, CP_ENTRY_CLOCK_GETTIME, 1 + 1, stack);
	read_at(&a, CP_ENTRY_CLOCK_GETTIME, 1 + 1, stack);
	CHECK(slot(&a, home)[2] == 2);
	CHECK(site_count(&a, home, site_key(0x401600, 4, CP_ENTRY_CLOCK_GETTIME)) == 2);
	area_close(&a);
}

/* gettimeofday's and time's paths try the direct site first, then the
 * rule; clock_gettime's the rule first, then the direct site: each entry
 * counts a wrapper's caller and a direct caller alike, as the walk would. */
TEST(vdso_count_each_entry_counts_a_wrapper_s_caller_and_a_direct_one)
{
	static const unsigned words[CP_ENTRY_MAX] = { 1 + 1, CP_PATCH_WORD_GETTIMEOFDAY,
						      CP_PATCH_WORD_TIME };
	struct area a;
	uint64_t stack[8] = { 0x7f0000003000 /* in the wrapper */, 0, 0x401704 /* the user's */ };
	uint64_t direct = 0x401808; /* each at a home of its own */
	unsigned home = home_slot(thread_key());

	CHECK(area_open(&a) == 0);
	put_rule(&a, stack[0], 16, 5);
	for (int e = 0; e < CP_ENTRY_MAX; e++) {
		for (int i = 0; i < 2; i++) {
			read_at(&a, e, words[e], stack);
			read_at(&a, e, words[e], &direct);
		}
		CHECK(slot(&a, home)[words[e]] == 4);
		CHECK(site_count(&a, home, site_key(0x401704, 5, e)) == 2);
		CHECK(site_count(&a, home, site_key(direct, CP_PATCH_VIA_NONE, e)) == 2);
		CHECK(site_count(&a, home, site_key(stack[0], CP_PATCH_VIA_NONE, e)) == 0);
	}
	area_close(&a);
}

/* Each exit that goes straight back into the vDSO runs the entry's first
 * instruction, relocated, and jumps past it; one that cannot be relocated
 * there jumps to its thunk; each depth is the site's. */
TEST(vdso_count_build_puts_the_entry_s_instruction_and_depth_in_its_path)
{
	static const uint8_t mov_rbp_rsp[3] = { 0x48, 0x89, 0xe5 };
	static const uint8_t lea_r10_rip[7] = { 0x4c, 0x8d, 0x15, 0, 0, 0, 0 }; /* lea r10, [rip] */
	uint64_t table = 0x7f0000000000, code = table + CP_PATCH_CODE_OFF, vdso = 0x7f0004000000;
	struct cp_vdso_count_way way[CP_ENTRY_MAX] = { { 0 } };
	static uint8_t out[CP_PATCH_CODE_SIZE];
	int32_t rel;

	for (int e = 0; e < CP_ENTRY_MAX; e++)
		way[e] = (struct cp_vdso_count_way){ .cont = vdso + 0x1000 + 64 * e,
						     .depth = 8 * e,
						     .at = vdso + 0x100 * e };
	memcpy(way[0].insn, mov_rbp_rsp, way[0].len = 3);
	memcpy(way[1].insn, lea_r10_rip, way[1].len = 7);
	way[1].at = table - 0x80000000ull; /* its operand beyond reach
							 * from the table */
	CHECK(cp_vdso_count_build(table, way, out) == 0);
	CHECK(cp_vdso_count_tails_end - cp_vdso_count_tails >= 2 * CP_ENTRY_MAX);
	for (const struct cp_vdso_count_cont *t = cp_vdso_count_tails; t < cp_vdso_count_tails_end;
	     t++) {
		const struct cp_vdso_count_way *w = &way[t->entry];
		unsigned n = t->entry == 0 ? 3 : 0; /* the instruction, then the jump */

		CHECK(!memcmp(out + t->at, w->insn, n));
		CHECK(out[t->at + n] == 0xe9);
		memcpy(&rel, out + t->at + n + 1, 4);
		CHECK(code + t->at + n + 5 + (uint64_t)(int64_t)rel ==
		      (n ? w->at + w->len : w->cont));
	}
	for (const struct cp_vdso_count_cont *d = cp_vdso_count_depths;
	     d < cp_vdso_count_depths_end; d++)
		CHECK(out[d->at] == 8 * d->entry);
	way[2].depth = 0x80; /* beyond the prefix's disp8 */
	CHECK(cp_vdso_count_build(table, way, out) == -1);
}

/* Without --anatomy the read's paths are today's, byte for byte (the
 * per-read cost must not move: docs/patch.md): the digest of the paths
 * built for one table, taken before the anatomy's variant was added. */
TEST(vdso_count_build_without_anatomy_writes_the_same_paths)
{
	uint64_t table = 0x7f0000000000, vdso = 0x7f0004000000;
	struct cp_vdso_count_way way[CP_ENTRY_MAX] = { { 0 } };
	static const uint8_t mov_rbp_rsp[3] = { 0x48, 0x89, 0xe5 };
	static uint8_t out[CP_PATCH_CODE_SIZE];
	char hex[65];

	for (int e = 0; e < CP_ENTRY_MAX; e++)
		way[e] = (struct cp_vdso_count_way){ .cont = vdso + 0x1000 + 64 * e,
						     .depth = 8,
						     .at = vdso + 0x100 * e };
	memcpy(way[0].insn, mov_rbp_rsp, way[0].len = 3);
	CHECK(cp_vdso_count_build(table, way, out) == 0);
	cp_sha256_hex(out, CP_PATCH_BOUNDARY_CODE_OFF - CP_PATCH_CODE_OFF, hex);
	CHECK(!strcmp(hex, "a282c5b5b4186fecdf4d585c788994e12abafea452bcde27413143b2b0c2bcb4"));
}
