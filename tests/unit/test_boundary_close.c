/* test_boundary_close.c - the code that closes a request inside the target
 * (boundary_close.S), run here, in this process, on a table of the test's
 * making: reads counted by the count's own code (vdso_count.S), the close
 * called as a trampoline calls it. Each of its paths runs on purpose: the
 * first boundary, a request with reads and one without, the histogram's
 * last slot, an epoch moved on, a thread with no slot of its own, a new
 * thread on an exited one's thread pointer. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "patch_table_fixture.h"
#include "tid_offset.h"
#include "unit.h"

/* n reads of CLOCK_MONOTONIC (the slot's word 2) from call site ret. */
static void reads(uint8_t *t, int n, uint64_t ret)
{
	uint64_t path = cp_vdso_count_prefixed_entry((uint64_t)(uintptr_t)t,
						     CP_ENTRY_CLOCK_GETTIME);

	for (int i = 0; i < n; i++)
		cp_test_read_enter((const void *)(uintptr_t)path, &ret, 1);
}

static void boundary(uint8_t *t)
{
	void (*close)(void) = (void (*)(void))(
		uintptr_t)cp_redirect_code_addr(&cp_boundary_close, (uint64_t)(uintptr_t)t);

	close();
}

TEST(boundary_close_keeps_requests_their_reads_and_sites)
{
	uint8_t *t = cp_test_table_open();
	uint64_t *b;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	reads(t, 5, 0x401000); /* before the first boundary: in no request */
	boundary(t);
	CHECK(b[CP_PB_HITS] == 1 && b[CP_PB_LAST_SUM] == 5 && b[CP_PB_FIRST + 2] == 5);
	reads(t, 3, 0x401000);
	reads(t, 1, 0x402000);
	boundary(t);
	boundary(t); /* a request with no read */
	reads(t, 2, 0x402000);
	boundary(t);
	reads(t, 7, 0x401000); /* after the last boundary: in none */
	CHECK(b[CP_PB_HITS] == 4);
	CHECK(b[CP_PB_HIST + 4] == 1 && b[CP_PB_HIST] == 1 && b[CP_PB_HIST + 2] == 1);
	CHECK(b[CP_PB_MAX] == 4);
	CHECK(b[CP_PB_LAST + 2] - b[CP_PB_FIRST + 2] == 6);
	uint64_t in_sites = 0;
	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++)
		in_sites += b[CP_PB_SITES_LAST + e] - b[CP_PB_SITES_FIRST + e];
	CHECK(in_sites == 6);
	/* two sites claimed, each said in the block as the read's count
	 * claimed it (the close copies those only) */
	CHECK(__builtin_popcountll(b[CP_PB_SITES_USED]) == 2);
	cp_test_table_close(t);
}

TEST(boundary_close_puts_long_requests_in_the_last_slot_and_keeps_their_max)
{
	uint8_t *t = cp_test_table_open();
	uint64_t *b;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	boundary(t);
	reads(t, CP_PB_HIST_SLOTS + 40, 0x401000);
	boundary(t);
	CHECK(b[CP_PB_HIST + CP_PB_HIST_SLOTS - 1] == 1);
	CHECK(b[CP_PB_MAX] == CP_PB_HIST_SLOTS + 40);
	cp_test_table_close(t);
}

TEST(boundary_close_starts_over_when_the_epoch_moves_on)
{
	uint8_t *t = cp_test_table_open();
	uint64_t *b, *b0;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	b0 = (uint64_t *)(t + CP_PATCH_BLOCKS_OFF);
	boundary(t);
	reads(t, 3, 0x401000);
	boundary(t);
	b0[CP_PB_EPOCH]++; /* a window opens */
	reads(t, 2, 0x401000);
	boundary(t); /* the request in flight is not the window's */
	CHECK(b[CP_PB_HITS] == 1 && b[CP_PB_HIST + 3] == 0 && b[CP_PB_MAX] == 0);
	CHECK(b[CP_PB_EPOCH] == b0[CP_PB_EPOCH] + 1 && b[CP_PB_FIRST + 2] == 5);
	reads(t, 1, 0x401000);
	boundary(t);
	CHECK(b[CP_PB_HITS] == 2 && b[CP_PB_HIST + 1] == 1);
	cp_test_table_close(t);
}

TEST(boundary_close_claims_a_slot_for_a_thread_that_has_read_nothing)
{
	uint8_t *t = cp_test_table_open();
	uint64_t key;

	CHECK(t != NULL);
	__asm__ volatile("mov %%fs:0, %0" : "=r"(key));
	boundary(t);
	boundary(t);
	CHECK(((uint64_t *)(t + 128 + cp_test_home_slot() * 128))[0] == key);
	CHECK(cp_test_request_block(t, cp_test_home_slot())[CP_PB_HITS] == 2 &&
	      cp_test_request_block(t, cp_test_home_slot())[CP_PB_HIST] == 1);
	cp_test_table_close(t);
}

/* One thread of the next test: 1 read, a boundary, 2 reads, a boundary,
 * 3 reads (its last interval open as it exits); says its key. */
static void *one_request_thread(void *arg)
{
	reads(arg, 1, 0x401000);
	boundary(arg);
	reads(arg, 2, 0x401000);
	boundary(arg);
	reads(arg, 3, 0x401000);
	return cp_test_thread_key();
}

TEST(boundary_close_opens_a_new_threads_first_request_on_an_exited_ones_slot)
{
	uint8_t *t = cp_test_table_open();
	uint32_t off = cp_tid_offset(getpid());
	uint64_t key, *b;

	CHECK(t != NULL && off != 0 && cp_test_table_tid_offset(t, off) == 0);
	if (!(key = cp_test_two_threads(one_request_thread, t))) {
		unit_skip("the C library gave the second thread a thread pointer of its own");
		cp_test_table_close(t);
		return;
	}
	b = cp_test_key_block(t, key);
	CHECK(b != NULL);
	/* two requests of 2 reads: the 3 + 1 between the threads in none */
	CHECK(b[CP_PB_HITS] == 3 && b[CP_PB_OPENS] == 1);
	CHECK(b[CP_PB_HIST + 2] == 2 && b[CP_PB_HIST + 4] == 0 && b[CP_PB_MAX] == 2);
	CHECK(b[CP_PB_LAST + 2] - b[CP_PB_FIRST + 2] == 4);
	cp_test_table_close(t);
}
