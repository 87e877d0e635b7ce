/* table_place.c - see table_place.h.
 *
 * Margins: 1 MiB from the mappings either side of the place; below the
 * stack, its limit plus 1 MiB (room for it to grow; none when unlimited:
 * that gap is not used); above the heap, 256 MiB (room for brk). Above
 * the vDSO first: the kernel maps the vDSO from the top of the area where
 * mmap places what it chooses (the dynamic loader above it), so a place
 * below would be the one the loader's next library takes before a
 * launched command's table is mapped. The [vsyscall] page lies above user
 * space and bounds no gap. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "table_place.h"

#define MIB (1ull << 20)
#define USER_END 0x7ffffffff000ull /* x86_64's 4-level user space */
#define REACH ((1ull << 31) - MIB) /* a rel32 jump's, with room to spare */

/* The place for size bytes in the gap [lo, hi) nearest to [near,
 * near_end) on one side, and its distance (the farthest byte pair's); 0:
 * none. */
static uint64_t nearest_in_gap(uint64_t lo, uint64_t hi, uint64_t near, uint64_t near_end,
			       uint64_t size, bool above, uint64_t *dist)
{
	uint64_t x;

	if (lo >= hi || hi - lo < size)
		return 0;
	if (above && lo >= near_end)
		x = (lo + 4095) & ~4095ull;
	else if (!above && hi <= near)
		x = (hi - size) & ~4095ull;
	else
		return 0;
	if (x < lo || x + size > hi)
		return 0;
	*dist = x < near ? near_end - x : x + size - near;
	return x;
}

/* The nearest place on one side of [near, near_end) within reach; 0: none. */
static uint64_t nearest_on_side(const struct cp_proc_map *maps, size_t n, uint64_t near,
				uint64_t near_end, uint64_t size, uint64_t stack_limit, bool above)
{
	uint64_t best = 0, best_dist = REACH + 1;

	for (size_t i = 0; i + 1 < n && maps[i].end < USER_END; i++) {
		bool under_stack = !strcmp(maps[i + 1].path, "[stack]");
		uint64_t lo = maps[i].end + (!strcmp(maps[i].path, "[heap]") ? 256 * MIB : MIB);
		uint64_t hi = maps[i + 1].start < USER_END ? maps[i + 1].start : USER_END;
		uint64_t margin = under_stack ? stack_limit + MIB : MIB, x, dist = 0;

		if ((under_stack && !stack_limit) || hi < margin)
			continue;
		x = nearest_in_gap(lo, hi - margin, near, near_end, size, above, &dist);
		if (x && dist < best_dist) {
			best = x;
			best_dist = dist;
		}
	}
	return best;
}

uint64_t cp_table_place_in(const struct cp_proc_map *maps, size_t n, uint64_t near,
			   uint64_t near_end, uint64_t size, uint64_t stack_limit)
{
	uint64_t x = nearest_on_side(maps, n, near, near_end, size, stack_limit, true);

	return x ? x : nearest_on_side(maps, n, near, near_end, size, stack_limit, false);
}

/* The soft stack limit of pid in bytes; 0 when unlimited or not known. */
static uint64_t stack_limit(pid_t pid)
{
	struct rlimit r;

	if (prlimit(pid, RLIMIT_STACK, NULL, &r) || r.rlim_cur == RLIM_INFINITY)
		return 0;
	return r.rlim_cur;
}

uint64_t cp_table_place(pid_t pid, uint64_t near, uint64_t near_end, uint64_t size)
{
	struct cp_proc_map *maps;
	uint64_t at;
	size_t n;

	if (cp_proc_maps_read(pid, &maps, &n))
		return 0;
	at = cp_table_place_in(maps, n, near, near_end, size, stack_limit(pid));
	free(maps);
	return at;
}
