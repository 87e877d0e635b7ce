/* syscall_count.h - the code that counts a clock read through syscall()
 * inside the target (syscall_count.S), copied into the counter table's
 * last code page by cp_vdso_count_build; a redirected syscall()'s
 * trampoline calls it there. */
#ifndef CP_SYSCALL_COUNT_H
#define CP_SYSCALL_COUNT_H

#include <stddef.h>
#include <stdint.h>

#include "patch_layout.h"

extern const uint8_t cp_syscall_count_start[], cp_syscall_count_end[];

#define CP_SYSCALL_COUNT_SIZE ((size_t)(cp_syscall_count_end - cp_syscall_count_start))

/* Where the count is in the target, for the table at table. */
static inline uint64_t cp_syscall_count_addr(uint64_t table)
{
	return table + CP_PATCH_SYSCALL_CODE_OFF;
}

#endif
