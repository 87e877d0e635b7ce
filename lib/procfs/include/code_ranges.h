/* code_ranges.h - where a process's code is: the address ranges of its
 * executable mappings, sorted and merged, so that telling a code address
 * from anything else is a binary search. A stack walk that lost its way
 * (a frame-pointer chain through code built without one) reads "return
 * addresses" out of data: stack memory, heap, ASCII text; none of those is
 * in an executable mapping. */
#ifndef CP_CODE_RANGES_H
#define CP_CODE_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc_maps.h"

struct cp_code_range {
	uint64_t start, end; /* [start, end) */
};

struct cp_code_ranges {
	struct cp_code_range *v; /* sorted, disjoint, not adjacent */
	size_t n;
};

/* The executable mappings of maps[0..n) (any order) into *out (malloc'd),
 * but the kernel's [uprobes] page: its trampolines are no code of the
 * target's. -1 when out of memory (*out then empty). */
int cp_code_ranges_from_maps(const struct cp_proc_map *maps, size_t n, struct cp_code_ranges *out);

/* Whether addr is in one of the ranges. */
bool cp_code_ranges_has(const struct cp_code_ranges *r, uint64_t addr);

/* A copy of src into *out; -1 when out of memory (*out then empty). */
int cp_code_ranges_copy(const struct cp_code_ranges *src, struct cp_code_ranges *out);

void cp_code_ranges_free(struct cp_code_ranges *r);

#endif
