/* table_place.h - where the vDSO patch's counter table goes in a target:
 * within a rel32 jump of the vDSO (the thunks jump to the table's code
 * pages and back), clear of what the target itself will map there. */
#ifndef CP_TABLE_PLACE_H
#define CP_TABLE_PLACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc_maps.h"

/* The place for size bytes among maps (n, in address order) nearest to
 * [near, near_end), every byte of it within a rel32 jump of every byte
 * there; stack_limit: the target's soft stack limit in bytes (0:
 * unlimited). 0 when nothing fits. */
uint64_t cp_table_place_in(const struct cp_proc_map *maps, size_t n, uint64_t near,
			   uint64_t near_end, uint64_t size, uint64_t stack_limit);

/* The same for process pid, from its maps and limits; 0 when nothing fits
 * or they cannot be read. */
uint64_t cp_table_place(pid_t pid, uint64_t near, uint64_t near_end, uint64_t size);

#endif
