/* boundary_close.h - the code that closes a request inside the target
 * (boundary_close.S), copied into the counter table's last code page by
 * cp_vdso_count_build; a boundary's trampoline calls it there. */
#ifndef CP_BOUNDARY_CLOSE_H
#define CP_BOUNDARY_CLOSE_H

#include <stddef.h>
#include <stdint.h>

#include "patch_layout.h"

extern const uint8_t cp_boundary_close_start[], cp_boundary_close_end[];
/* Where the offset of a thread's tid from its thread pointer is in the
 * close's code (a 32-bit word; 0: not known), from its start. */
extern const uint64_t cp_boundary_close_tid_at;

#define CP_BOUNDARY_CLOSE_SIZE ((size_t)(cp_boundary_close_end - cp_boundary_close_start))

/* Where the close is in the target, for the table at table. */
static inline uint64_t cp_boundary_close_addr(uint64_t table)
{
	return table + CP_PATCH_BOUNDARY_CODE_OFF;
}

#endif
