/* The vDSO patch's call sites on clockprof's side: the wrapper rules as
 * the thunk finds them (each at its pc's low bits or within the probes
 * after, rules already there never changed, what does not fit counted),
 * and reads by site summed and taken since a base. The thunk's own walk
 * is tested against the uprobes' on every bundled target
 * (tests/integration/test_mechanisms.py). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "patch_sites.h"
#include "unit.h"
#include "unwind_table.h"

#define PC(k) (0x7f0000001000ull + 0x1000ull * (k) + 0x123) /* home 0x123 */

static struct cp_patch_rule *table_rules(uint8_t *table)
{
	return (struct cp_patch_rule *)(table + CP_PATCH_RULES_OFF);
}

TEST(patch_rules_keep_wrappers_only_in_the_thunks_form)
{
	struct cp_unwind_entry e[3] = {
		{ PC(0), { .cfa_offset = 48, .via = 2, .base_reg = CP_UNWIND_SP } },
		{ PC(1),
		  { .cfa_offset = 16, .bp_offset = -16, .via = 5, .base_reg = CP_UNWIND_BP } },
		{ PC(2), { .cfa_offset = 8, .via = CP_VIA_NONE } }, /* not a wrapper */
	};
	struct cp_unwind_table t = { .entries = e, .n = 3 };
	struct cp_patch_rules r;

	CHECK(cp_patch_rules_from(&t, &r) == 0);
	CHECK(r.n == 2 && r.dropped == 0);
	CHECK(r.v[0].pc == PC(0) && r.v[0].cfa_offset == 48 && r.v[0].via_base == 2);
	CHECK(r.v[1].bp_offset == -16 && r.v[1].via_base == (5 | 0x8000));
	cp_patch_rules_free(&r);
}

TEST(patch_rules_go_home_or_just_after_and_replace_only_what_differs)
{
	size_t size = CP_PATCH_RULES_OFF + CP_PATCH_RULES * sizeof(struct cp_patch_rule), unplaced;
	uint8_t *table = calloc(1, size);
	struct cp_patch_rule v[CP_PATCH_RULE_PROBES + 1];
	struct cp_patch_rules r = { .v = v, .n = CP_PATCH_RULE_PROBES + 1 };
	struct cp_patch_rule *tab = table_rules(table);

	for (size_t i = 0; i < r.n; i++)
		v[i] = (struct cp_patch_rule){ .pc = PC(i),
					       .cfa_offset = 8 * (int)i + 8,
					       .via_base = 1 };
	/* an earlier run's rule for PC(0), from a module since replaced */
	tab[0x123] = (struct cp_patch_rule){ .pc = PC(0), .cfa_offset = 99 };
	CHECK(cp_patch_rules_write(getpid(), (uint64_t)(uintptr_t)table, &r, &unplaced) == 0);
	for (size_t k = 0; k < CP_PATCH_RULE_PROBES; k++)
		CHECK(tab[0x123 + k].pc == PC(k) && tab[0x123 + k].cfa_offset == 8 * (int)k + 8 &&
		      tab[0x123 + k].via_base == 1);
	CHECK(unplaced == 1); /* PC(8): no empty entry within the probes */
	CHECK(tab[0x123 + CP_PATCH_RULE_PROBES].pc == 0);
	/* written again: nothing moves */
	CHECK(cp_patch_rules_write(getpid(), (uint64_t)(uintptr_t)table, &r, &unplaced) == 0);
	CHECK(tab[0x123].pc == PC(0) && tab[0x123].cfa_offset == 8 && unplaced == 1);
	free(table);
}

TEST(patch_rules_merge_keeps_the_first_for_a_pc)
{
	struct cp_patch_rule hop = { .pc = PC(1), .cfa_offset = 16, .via_base = CP_PATCH_VIA_KEEP };
	struct cp_patch_rule wrap[2] = { { .pc = PC(1), .cfa_offset = 48, .via_base = 3 },
					 { .pc = PC(2), .cfa_offset = 8, .via_base = 3 } };
	struct cp_patch_rules first = { .v = &hop, .n = 1 }, then = { .v = wrap, .n = 2 }, all;

	CHECK(cp_patch_rules_merge(&first, &then, &all) == 0);
	CHECK(all.n == 2 && all.v[0].via_base == CP_PATCH_VIA_KEEP && all.v[1].pc == PC(2));
	cp_patch_rules_free(&all);
}

TEST(patch_rules_leave_out_what_the_thunk_would_not_follow)
{
	struct cp_unwind_entry e[3] = {
		{ PC(0), { .cfa_offset = 0, .via = 1, .base_reg = CP_UNWIND_SP } },
		{ PC(1), { .cfa_offset = 0x20000, .via = 1, .base_reg = CP_UNWIND_SP } },
		{ PC(2), { .cfa_offset = 0x20000, .via = 1, .base_reg = CP_UNWIND_BP } },
	};
	struct cp_unwind_table t = { .entries = e, .n = 3 };
	struct cp_patch_rules r;

	CHECK(cp_patch_rules_from(&t, &r) == 0);
	CHECK(r.n == 1 && r.v[0].pc == PC(2) && r.dropped == 2);
	cp_patch_rules_free(&r);
}

TEST(patch_sites_sum_by_key_and_count_since_a_base)
{
	struct cp_patch_sites now = { 0 }, base = { 0 }, since;

	CHECK(cp_patch_sites_add(&now, 30, 5) == 0);
	CHECK(cp_patch_sites_add(&now, 10, 1) == 0);
	CHECK(cp_patch_sites_add(&now, 30, 2) == 0); /* another thread's */
	CHECK(cp_patch_sites_add(&now, 20, 4) == 0);
	cp_patch_sites_normalize(&now);
	CHECK(now.n == 3 && now.v[0].key == 10 && now.v[2].key == 30 && now.v[2].count == 7);
	CHECK(cp_patch_sites_add(&base, 20, 4) == 0);
	CHECK(cp_patch_sites_add(&base, 30, 3) == 0);
	CHECK(cp_patch_sites_since(&now, &base, &since) == 0);
	CHECK(since.n == 2 && since.v[0].key == 10 && since.v[0].count == 1);
	CHECK(since.v[1].key == 30 && since.v[1].count == 4);
	cp_patch_sites_free(&now);
	cp_patch_sites_free(&base);
	cp_patch_sites_free(&since);
}

TEST(patch_site_keys_say_pc_wrapper_and_entry)
{
	uint64_t key = 0x5592f9d78759ull | 5ull << 48 | (uint64_t)CP_ENTRY_TIME << 60;

	CHECK(cp_patch_site_pc(key) == 0x5592f9d78759ull);
	CHECK(cp_patch_site_via(key) == 5);
	CHECK(cp_patch_site_entry(key) == CP_ENTRY_TIME);
	CHECK(cp_patch_site_via(0xfffull << 48) == CP_VIA_NONE);
}
