/* patch_table_fixture.h - a vDSO patch's counter table mapped in the test's
 * own process, as the stub maps it in a target, its code pages built
 * (vdso_count.S, boundary_close.S) and made executable: each read's path,
 * entered past its prefix, jumps back to cp_test_read_landing, which returns to the caller of
 * cp_test_read_enter. For the tests that run that code here. */
#ifndef CP_PATCH_TABLE_FIXTURE_H
#define CP_PATCH_TABLE_FIXTURE_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "redirect_code.h"
#include "clockreads.h"
#include "vdso_area.h"
#include "vdso_count.h"

void cp_test_read_enter(const void *path, const uint64_t *ret, uint64_t r10);
void cp_test_read_landing(void);

static inline uint8_t *cp_test_table_open(void)
{
	static const uint8_t jmp_abs[6] = { 0xff, 0x25, 0, 0, 0, 0 }; /* jmp [rip + 0] */
	uint64_t landing = (uint64_t)(uintptr_t)cp_test_read_landing;
	struct cp_vdso_count_way way[CP_ENTRY_MAX] = { { 0 } };
	uint8_t *t = mmap(NULL, CP_VDSO_MAP_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
		*code, *back;

	if (t == MAP_FAILED)
		return NULL;
	code = t + CP_PATCH_CODE_OFF;
	back = code + CP_PATCH_CODE_SIZE - 16;
	for (int e = 0; e < CP_ENTRY_MAX; e++) /* no instruction: each exit jumps back */
		way[e].cont = (uint64_t)(uintptr_t)back;
	if (cp_vdso_count_build((uint64_t)(uintptr_t)t, way, code))
		return NULL;
	memcpy(back, jmp_abs, sizeof(jmp_abs));
	memcpy(back + sizeof(jmp_abs), &landing, 8);
	return mprotect(code, CP_PATCH_CODE_SIZE, PROT_READ | PROT_EXEC) ? NULL : t;
}

static inline void cp_test_table_close(uint8_t *t)
{
	munmap(t, CP_VDSO_MAP_SIZE);
}

/* The calling thread's home slot's index, as the code hashes its key. */
static inline uint64_t cp_test_home_slot(void)
{
	uint64_t key;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(key));
	return ((key * CP_PATCH_HASH) >> 45 & (CP_PATCH_SLOTS - 1) * 128) / 128;
}

/* Slot index's request block (boundary_close.S). */
static inline uint64_t *cp_test_request_block(uint8_t *t, uint64_t slot)
{
	return (uint64_t *)(t + CP_PATCH_BLOCKS_OFF + (slot + 1) * CP_PATCH_BLOCK);
}

/* The offset of a thread's tid from its thread pointer (tid_offset.h)
 * written into t's code pages, as clockprof writes it: the close tells a
 * new thread on an exited one's thread pointer by it. 0, or -1. */
static inline int cp_test_table_tid_offset(uint8_t *t, uint32_t off)
{
	if (mprotect(t + CP_PATCH_CODE_OFF, CP_PATCH_CODE_SIZE, PROT_READ | PROT_WRITE))
		return -1;
	cp_vdso_count_set_tid_offset(t + CP_PATCH_CODE_OFF, off);
	return mprotect(t + CP_PATCH_CODE_OFF, CP_PATCH_CODE_SIZE, PROT_READ | PROT_EXEC);
}

/* The calling thread's key (its thread pointer), as a thread's result. */
static inline void *cp_test_thread_key(void)
{
	uint64_t key;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(key));
	return (void *)(uintptr_t)key;
}

/* fn(t) run by two threads, one after the other (joined: glibc gives the
 * second the first's cached stack, and so its thread pointer); the key
 * both had, each fn's result, or 0 when they differ or one failed. */
static inline uint64_t cp_test_two_threads(void *(*fn)(void *), uint8_t *t)
{
	void *key[2] = { NULL, NULL };

	for (int i = 0; i < 2; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, fn, t) || pthread_join(th, &key[i]))
			return 0;
	}
	return key[0] == key[1] ? (uint64_t)(uintptr_t)key[0] : 0;
}

/* The request block of the slot key holds in t; NULL: none does. */
static inline uint64_t *cp_test_key_block(uint8_t *t, uint64_t key)
{
	uint64_t h = key * CP_PATCH_HASH >> 52;

	for (uint64_t i = 0; i < CP_PATCH_PROBES; i++)
		if (((uint64_t *)(t + 128 * (1 + ((h + i) & (CP_PATCH_SLOTS - 1)))))[0] == key)
			return cp_test_request_block(t, (h + i) & (CP_PATCH_SLOTS - 1));
	return NULL;
}

#endif
