/* The vDSO patch's counter table read back (lib/probe/mech/patch/
 * patch_table.h) from a table mapped in the test's own process: every
 * slot's words summed, the shared slot's apart, the slots in use counted. */
#include <sys/mman.h>
#include <unistd.h>

#include "clockreads.h"
#include "patch_table.h"
#include "unit.h"
#include "vdso_patch.h"

TEST(patch_table_sums_every_slot_and_the_shared_one_apart)
{
	uint64_t *w = mmap(NULL, CP_PATCH_MAP_USED, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct cp_patch_table t;
	struct cp_vdso_patch_counts c;

	CHECK(w != MAP_FAILED);
	if (w == MAP_FAILED)
		return;
	w[1] = 2; /* the shared slot */
	w[CP_PATCH_WORD_GETTIMEOFDAY] = 3;
	w[5 * CP_PATCH_SLOT_WORDS] = 0x1234; /* slot 5's key */
	w[5 * CP_PATCH_SLOT_WORDS + CP_PATCH_WORD_TIME] = 4;
	w[CP_PATCH_SLOTS * CP_PATCH_SLOT_WORDS] = 0x5678; /* the last slot's */
	w[CP_PATCH_SLOTS * CP_PATCH_SLOT_WORDS + 1] = 7;
	w[9 * CP_PATCH_SLOT_WORDS + CP_PATCH_WORD_TIME] = 1; /* no key: not in use */
	CHECK(cp_patch_table_open(&t, getpid(), (uint64_t)(uintptr_t)w) == 0);
	cp_patch_table_mark_zeros(&t);
	CHECK_INT(cp_patch_table_read(&t, &c), 0);
	CHECK_INT(c.total, 17);
	CHECK_INT(c.shared, 5);
	CHECK_INT(c.threads, 2);
	CHECK_INT(c.by_entry[CP_ENTRY_GETTIMEOFDAY], 3);
	CHECK_INT(c.by_entry[CP_ENTRY_TIME], 5);
	CHECK_INT(c.by_entry[CP_ENTRY_CLOCK_GETTIME], 9);
	cp_patch_table_close(&t);
	munmap(w, CP_PATCH_MAP_USED);
}
