/* test_anatomy_log.c - --anatomy's log in the target (CP_PB_AN_* in
 * patch_layout.h), run here on a table of the test's making: the
 * anatomy's variant of the read's paths (vdso_count_anatomy.S) and the
 * close's part (anatomy_close.S), as in test_boundary_close.c. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "patch_table_fixture.h"
#include "tid_offset.h"
#include "unit.h"

/* As cp_test_read_enter, with edi the clock id, as clock_gettime has it. */
void an_enter(const void *path, const uint64_t *ret, uint64_t r10, uint64_t clock);
__asm__(".text\n"
	"an_enter:\n"
	"	mov %rsi, %rax\n"
	"	mov (%rsi), %r9\n"
	"	mov %rdx, %r10\n"
	"	mov %rdi, %r11\n"
	"	mov %ecx, %edi\n"
	"	jmp *%r11\n");

/* The same with rbp set to fp for the read (a frame-pointer chain). */
void an_enter_fp(const void *path, const uint64_t *ret, uint64_t r10, uint64_t clock,
		 const void *fp);
__asm__(".text\n"
	"an_enter_fp:\n"
	"	push %rbp\n"
	"	mov %r8, %rbp\n"
	"	mov %rsi, %rax\n"
	"	mov (%rsi), %r9\n"
	"	mov %rdx, %r10\n"
	"	mov %rdi, %r11\n"
	"	mov %ecx, %edi\n"
	"	call 1f\n"
	"	pop %rbp\n"
	"	ret\n"
	"1:	jmp *%r11\n");

/* n reads of clock (its counter index - 1 is the clock id) from *ret. */
static void an_reads(uint8_t *t, int n, const uint64_t *ret, unsigned clock)
{
	uint64_t path = cp_vdso_anatomy_prefixed_entry((uint64_t)(uintptr_t)t,
						       CP_ENTRY_CLOCK_GETTIME);

	for (int i = 0; i < n; i++)
		an_enter((const void *)(uintptr_t)path, ret, clock, clock);
}

static void an_boundary(uint8_t *t)
{
	void (*close)(void) = (void (*)(void))(
		uintptr_t)cp_redirect_code_addr(&cp_boundary_close, (uint64_t)(uintptr_t)t);

	close();
}

static uint64_t *an_block0(uint8_t *t)
{
	return (uint64_t *)(t + CP_PATCH_BLOCKS_OFF);
}

TEST(anatomy_log_holds_a_sampled_request_s_reads_in_order)
{
	uint8_t *t = cp_test_table_open();
	uint64_t ret1 = 0x401000, ret2 = 0x402000, *b;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	an_block0(t)[CP_PB0_AN_EVERY] = 1;
	an_block0(t)[CP_PB0_AN_ON] = 1;
	an_reads(t, 1, &ret1, 1); /* claims the slot */
	an_boundary(t);		  /* opens the log */
	CHECK(b[CP_PB_AN_STATE] == 1 && b[CP_PB_AN_N] == 0 && b[CP_PB_AN_SEQ] == 1);
	an_reads(t, 2, &ret1, 1); /* CLOCK_MONOTONIC */
	an_reads(t, 1, &ret2, 0); /* CLOCK_REALTIME */
	an_boundary(t);		  /* closes it */
	CHECK(b[CP_PB_AN_STATE] == 2 && b[CP_PB_AN_N] == 3);
	CHECK(b[CP_PB_AN_START] == 0 && b[CP_PB_AN_END] == 0); /* a boundary takes no rdtsc */
	const uint64_t *e = &b[CP_PB_AN_LOG];
	enum { W = CP_PB_AN_ENTRY_WORDS };
	CHECK((e[0] & ((1ull << 48) - 1)) == ret1 && e[2] == 1);
	CHECK((e[W] & ((1ull << 48) - 1)) == ret1 && e[W + 2] == 1);
	CHECK((e[2 * W] & ((1ull << 48) - 1)) == ret2 && e[2 * W + 2] == 0);
	CHECK(e[1] && e[W + 1] >= e[1] && e[2 * W + 1] >= e[W + 1]);
	/* counted as ever, in the slot and the request */
	CHECK(b[CP_PB_HITS] == 2 && b[CP_PB_LAST + 2] - b[CP_PB_FIRST + 2] == 2);
	an_reads(t, 1, &ret1, 1); /* not logged: the log waits for clockprof */
	an_boundary(t);
	CHECK(b[CP_PB_AN_STATE] == 2 && b[CP_PB_AN_N] == 3);
	b[CP_PB_AN_STATE] = 0; /* clockprof read it */
	an_boundary(t);	       /* the next one opens */
	CHECK(b[CP_PB_AN_STATE] == 1 && b[CP_PB_AN_SEQ] == 2 && b[CP_PB_AN_N] == 0);
	cp_test_table_close(t);
}

/* A thread may make rdtsc fault (PR_SET_TSC): the log takes it only in
 * a read whose vDSO path takes it itself. A coarse clock's read and a
 * CPU clock's are logged in order with no stamp (0); a boundary takes
 * none. Failed before: every logged read and both boundaries took one. */
TEST(anatomy_log_stamps_only_reads_whose_vdso_path_takes_rdtsc)
{
	uint8_t *t = cp_test_table_open();
	uint64_t ret = 0x401000, *b;
	enum { W = CP_PB_AN_ENTRY_WORDS };

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	an_block0(t)[CP_PB0_AN_EVERY] = 1;
	an_block0(t)[CP_PB0_AN_ON] = 1;
	an_reads(t, 1, &ret, 1);
	an_boundary(t);
	an_reads(t, 1, &ret, 6); /* CLOCK_MONOTONIC_COARSE: no rdtsc in the vDSO */
	an_reads(t, 1, &ret, 2); /* CLOCK_PROCESS_CPUTIME_ID: a syscall */
	an_reads(t, 1, &ret, 7); /* CLOCK_BOOTTIME: by the TSC */
	an_boundary(t);
	CHECK(b[CP_PB_AN_STATE] == 2 && b[CP_PB_AN_N] == 3);
	CHECK(b[CP_PB_AN_START] == 0 && b[CP_PB_AN_END] == 0);
	CHECK(b[CP_PB_AN_LOG + 2] == 6 && b[CP_PB_AN_LOG + 1] == 0);
	CHECK(b[CP_PB_AN_LOG + W + 2] == 2 && b[CP_PB_AN_LOG + W + 1] == 0);
	CHECK(b[CP_PB_AN_LOG + 2 * W + 2] == 7 && b[CP_PB_AN_LOG + 2 * W + 1] != 0);
	cp_test_table_close(t);
}

TEST(anatomy_log_is_never_opened_without_anatomy)
{
	uint8_t *t = cp_test_table_open();
	uint64_t ret = 0x401000, *b;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	an_reads(t, 1, &ret, 1);
	an_boundary(t);
	an_reads(t, 1, &ret, 1);
	an_boundary(t);
	CHECK(b[CP_PB_AN_STATE] == 0 && b[CP_PB_AN_N] == 0 && b[CP_PB_AN_SEQ] == 0);
	CHECK(b[CP_PB_HITS] == 2 && b[CP_PB_LAST + 2] - b[CP_PB_FIRST + 2] == 1);
	cp_test_table_close(t);
}

/* Bursts (docs/anatomy.md): outside one (CP_PB0_AN_ON 0) no log opens,
 * and one open when the burst ended still closes, for clockprof to judge
 * by its times. */
TEST(anatomy_log_opens_only_in_a_burst)
{
	uint8_t *t = cp_test_table_open();
	uint64_t ret = 0x401000, *b;

	CHECK(t != NULL);
	b = cp_test_request_block(t, cp_test_home_slot());
	an_block0(t)[CP_PB0_AN_EVERY] = 1;
	an_reads(t, 1, &ret, 1);
	an_boundary(t); /* no burst: no log */
	an_reads(t, 1, &ret, 1);
	an_boundary(t);
	CHECK(b[CP_PB_AN_STATE] == 0 && b[CP_PB_AN_SEQ] == 0);
	an_block0(t)[CP_PB0_AN_ON] = 1;
	an_boundary(t); /* in a burst: opens */
	CHECK(b[CP_PB_AN_STATE] == 1 && b[CP_PB_AN_SEQ] == 1);
	an_block0(t)[CP_PB0_AN_ON] = 0; /* the burst ends */
	an_reads(t, 1, &ret, 1);
	an_boundary(t); /* closes all the same */
	CHECK(b[CP_PB_AN_STATE] == 2 && b[CP_PB_AN_N] == 1);
	b[CP_PB_AN_STATE] = 0; /* clockprof read it */
	an_boundary(t);	       /* and none opens */
	CHECK(b[CP_PB_AN_STATE] == 0 && b[CP_PB_AN_SEQ] == 1);
	cp_test_table_close(t);
}

/* A read's callers: the frame-pointer chain, two frames, each read only
 * within the stack in use: above the site's frame, below the top the
 * request's boundary had, and inside the mapping of the thread's own
 * stack that clockprof wrote in its block (CP_PB_AN_STACK_*), for its
 * tid: none before it did, none for another thread, none when the site
 * is outside it (a coroutine's stack: garbage rbp could point at a gap). */
TEST(anatomy_log_keeps_two_callers_within_the_stack_in_use)
{
	struct {
		uint64_t ret, pad;
		uint64_t frames[4]; /* {next, return address} twice */
		uint64_t above[2];
	} st = { 0x401000, 0x401000, { 0, 0x402222, 0, 0x403333 }, { 0, 0 } };
	uint8_t *t = cp_test_table_open();
	uint32_t off = cp_tid_offset(getpid());
	uint64_t path, *b, *e;
	const uint64_t want[][2] = { { 0, 0 },	      { 0x402222, 0x403333 },
				     { 0x402222, 0 }, { 0x402222, 0 },
				     { 0, 0 },	      { 0, 0 },
				     { 0, 0 } };

	CHECK(t != NULL && off != 0 && cp_test_table_tid_offset(t, off) == 0);
	path = cp_vdso_anatomy_prefixed_entry((uint64_t)(uintptr_t)t, CP_ENTRY_CLOCK_GETTIME);
	st.frames[0] = (uint64_t)(uintptr_t)&st.frames[2];
	b = cp_test_request_block(t, cp_test_home_slot());
	an_block0(t)[CP_PB0_AN_EVERY] = 1;
	an_block0(t)[CP_PB0_AN_ON] = 1;
	an_reads(t, 1, &st.ret, 1);
	an_boundary(t);
	b[CP_PB_AN_TOP] = (uint64_t)(uintptr_t)&st.above[0]; /* both frames below it */
	/* no bounds yet */
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_STACK_LO] = (uint64_t)(uintptr_t)&st;
	b[CP_PB_AN_STACK_HI] = (uint64_t)(uintptr_t)&st.above[2];
	b[CP_PB_AN_STACK_TID] = (uint64_t)gettid();
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_TOP] = (uint64_t)(uintptr_t)&st.frames[3]; /* the second above it */
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_TOP] = (uint64_t)(uintptr_t)&st.above[0];
	b[CP_PB_AN_STACK_HI] = (uint64_t)(uintptr_t)&st.frames[3]; /* ... past the mapping */
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_STACK_HI] = (uint64_t)(uintptr_t)&st.above[2];
	b[CP_PB_AN_STACK_LO] = (uint64_t)(uintptr_t)&st.frames[0]; /* the site below it */
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_STACK_LO] = (uint64_t)(uintptr_t)&st;
	b[CP_PB_AN_STACK_TID] = (uint64_t)gettid() + 1; /* another thread's */
	an_enter_fp((const void *)(uintptr_t)path, &st.ret, 1, 1, &st.frames[0]);
	b[CP_PB_AN_STACK_TID] = (uint64_t)gettid();
	an_enter_fp((const void *)(uintptr_t)path, &st.pad, 1, 1, &st.ret); /* below its site */
	an_boundary(t);
	CHECK(b[CP_PB_AN_N] == 7);
	e = &b[CP_PB_AN_LOG];
	for (int i = 0; i < 7; i++, e += CP_PB_AN_ENTRY_WORDS)
		CHECK(e[3] == want[i][0] && e[4] == want[i][1]);
	cp_test_table_close(t);
}

static void *open_and_exit(void *arg)
{
	static int calls;
	uint64_t ret = 0x401000, *b;

	an_reads(arg, 1, &ret, 1);
	an_boundary(arg); /* opens a log, left open at the exit */
	an_reads(arg, 2, &ret, 1);
	/* the first thread's stack, as clockprof would say it */
	if (!calls++ && (b = cp_test_key_block(arg, (uint64_t)(uintptr_t)cp_test_thread_key())))
		b[CP_PB_AN_STACK_TID] = (uint64_t)gettid();
	return cp_test_thread_key();
}

/* A thread that exits in a logged request leaves its log open; a new
 * thread on its thread pointer (its slot) drops it at its first
 * boundary, rather than finish it with its own reads, and opens its own;
 * and drops the old thread's stack (CP_PB_AN_STACK_TID 0): its reads
 * read no frame by the old one's bounds. */
TEST(anatomy_log_an_exited_thread_s_open_log_is_dropped)
{
	uint8_t *t = cp_test_table_open();
	uint32_t off = cp_tid_offset(getpid());
	uint64_t key = 0, *b = NULL;

	CHECK(t != NULL && off != 0 && cp_test_table_tid_offset(t, off) == 0);
	an_block0(t)[CP_PB0_AN_EVERY] = 1;
	an_block0(t)[CP_PB0_AN_ON] = 1;
	if ((key = cp_test_two_threads(open_and_exit, t)))
		b = cp_test_key_block(t, key);
	else
		unit_skip("the C library gave the second thread a thread pointer of its own");
	/* the second thread's log: opened at its boundary, its 2 reads since */
	CHECK(!key || (b && b[CP_PB_AN_STATE] == 1 && b[CP_PB_AN_SEQ] == 2 && b[CP_PB_AN_N] == 2 &&
		       b[CP_PB_AN_STACK_TID] == 0));
	cp_test_table_close(t);
}
