/* test_redirect_plan.c - where a redirected function's jump goes
 * (redirect_plan.c), on code of the test's making: never its
 * first instruction, never where the flags are live or a branch lands,
 * refused where the bytes are not the file's, a leftover's jump taken
 * for ours; and one plan run for real here, its trampoline calling the
 * close (boundary_close.S) on a table of the test's own. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "patch_table_fixture.h"
#include "redirect_plan.h"
#include "redirect_code.h"
#include "unit.h"

#define FUNC 0x401000ul
#define TRAMP 0x402000ul
#define CLOSE 0x7f0000001000ul

/* push rbp; lea rax, [rip + 0xf8] (at +1, 7 bytes: the site); mov rax,
 * [rax]; pop rbp; ret. The lea's target, +0x100, holds the answer. */
static const uint8_t lea_fn[] = { 0x55, 0x48, 0x8d, 0x05, 0xf8, 0x00, 0x00,
				  0x00, 0x48, 0x8b, 0x00, 0x5d, 0xc3 };

/* The plan of a function of n bytes at func (file: its bytes in the
 * file, live: in memory), its trampoline at tramp. */
static int plan_at(enum cp_redirect_kind kind, const uint8_t *file, const uint8_t *live, size_t n,
		   uint64_t func, uint64_t tramp, uint64_t call,
		   const struct cp_redirect_room *room, struct cp_redirect_plan *p)
{
	struct cp_redirect_fn fn = {
		.file = file, .live = live, .size = n, .func = func, .room = room
	};
	char why[256];

	return cp_redirect_plan_make(kind, &fn, tramp, call, p, why, sizeof(why));
}

static int plan(const uint8_t *file, const uint8_t *live, size_t n, struct cp_redirect_plan *p)
{
	return plan_at(CP_REDIRECT_BOUNDARY, file, live, n, FUNC, TRAMP, CLOSE, NULL, p);
}

/* A Go function as Go 1.17+ compiles it: cmp rsp, [r14 + 0x10]; jbe
 * +0x1f (to its morestack call); push rbp; mov rbp, rsp; sub rsp, 0x18;
 * nop; nop; mov rdx, [rax + 0x100] (at +0x10, 7 bytes: a load that may
 * fault, a nil check); nop; mov [rsp + 0x28], rax (at +0x18, 5 bytes:
 * on the stack); xor eax, eax; add rsp, 0x18; pop rbp; ret; then call
 * morestack; jmp to the entry. */
static const uint8_t go_fn[] = { 0x49, 0x3b, 0x66, 0x10, 0x76, 0x1f, 0x55, 0x48, 0x89, 0xe5, 0x48,
				 0x83, 0xec, 0x18, 0x90, 0x90, 0x48, 0x8b, 0x90, 0x00, 0x01, 0x00,
				 0x00, 0x90, 0x48, 0x89, 0x44, 0x24, 0x28, 0x31, 0xc0, 0x48, 0x83,
				 0xc4, 0x18, 0x5d, 0xc3, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xeb, 0xd4 };

static int plan_go(const uint8_t *code, size_t n, struct cp_redirect_plan *p)
{
	struct cp_redirect_fn fn = {
		.file = code, .live = code, .size = n, .func = FUNC, .go = true
	};
	char why[256];

	return cp_redirect_plan_make(CP_REDIRECT_BOUNDARY, &fn, TRAMP, CLOSE, p, why, sizeof(why));
}

TEST(redirect_plan_of_a_go_function_goes_past_its_stack_check_and_never_where_it_may_fault)
{
	struct cp_redirect_plan p;
	uint8_t fn[sizeof(go_fn)];

	memcpy(fn, go_fn, sizeof(fn));
	CHECK(plan_go(fn, sizeof(fn), &p) == 0);
	CHECK(p.at == FUNC + 0x18 && p.len == 5); /* the stack's store, not the load */
	fn[0x18 + 3] = 0x0c;			  /* mov [rsp + rcx + 0x28], rax: */
						  /* indexed, may fault */
	CHECK(plan_go(fn, sizeof(fn), &p) != 0);
	CHECK(plan(fn, fn, sizeof(fn), &p) != 0); /* as C: the check's flags are live */
}

TEST(redirect_plan_takes_the_second_instruction_never_the_first)
{
	struct cp_redirect_plan p;
	uint8_t live[sizeof(lea_fn)];

	memcpy(live, lea_fn, sizeof(live));
	CHECK(plan(lea_fn, live, sizeof(lea_fn), &p) == 0);
	CHECK(p.at == FUNC + 1 && p.len == 7 && p.qword == FUNC);
	CHECK((p.patched & 0xff) == 0x55);	  /* the first instruction, kept */
	CHECK(((p.patched >> 8) & 0xff) == 0xe9); /* the jump, after it */
	CHECK(cp_redirect_plan_unpatched(&p, p.patched) == p.original);
}

TEST(redirect_plan_refuses_a_function_whose_only_long_instruction_is_its_first)
{
	/* mov edi, 1 (5 bytes, first); push rbp; pop rbp; ret */
	static const uint8_t fn[] = { 0xbf, 0x01, 0x00, 0x00, 0x00, 0x55, 0x5d, 0xc3 };
	struct cp_redirect_plan p;

	CHECK(plan(fn, fn, sizeof(fn), &p) != 0);
}

TEST(redirect_plan_refuses_where_the_flags_are_live)
{
	/* push rbp; lea; jne: the jne reads the flags its caller left (as
	 * if the function tested them first), which the close would change */
	static const uint8_t fn[] = { 0x55, 0x48, 0x8d, 0x05, 0xf8, 0x00,
				      0x00, 0x00, 0x75, 0x00, 0x5d, 0xc3 };
	struct cp_redirect_plan p;

	CHECK(plan(fn, fn, sizeof(fn), &p) != 0);
}

TEST(redirect_plan_refuses_where_a_branch_of_the_function_lands)
{
	/* lea_fn, then a jump back to the lea at +1 */
	static const uint8_t fn[] = { 0x55, 0x48, 0x8d, 0x05, 0xf8, 0x00, 0x00, 0x00,
				      0x48, 0x8b, 0x00, 0x5d, 0xc3, 0xeb, 0xf2 };
	struct cp_redirect_plan p;

	CHECK(plan(fn, fn, sizeof(fn), &p) != 0);
}

TEST(redirect_plan_refuses_bytes_someone_else_wrote_and_keeps_an_entry_uprobe)
{
	struct cp_redirect_plan p;
	uint8_t live[sizeof(lea_fn)];

	memcpy(live, lea_fn, sizeof(live));
	live[3] = 0xcc; /* inside the site: another tool's */
	CHECK(plan(lea_fn, live, sizeof(lea_fn), &p) != 0);
	memcpy(live, lea_fn, sizeof(live));
	live[0] = 0xcc; /* a uprobe at the entry: it coexists */
	CHECK(plan(lea_fn, live, sizeof(lea_fn), &p) == 0);
	CHECK((p.original & 0xff) == 0xcc && (p.patched & 0xff) == 0xcc);
}

TEST(redirect_plan_takes_a_leftover_jump_of_its_own_for_ours)
{
	struct cp_redirect_plan p, again;
	uint8_t live[sizeof(lea_fn)];

	memcpy(live, lea_fn, sizeof(live));
	CHECK(plan(lea_fn, live, sizeof(lea_fn), &p) == 0);
	memcpy(live, &p.patched, 8); /* an earlier clockprof's, left switched */
	CHECK(plan(lea_fn, live, sizeof(lea_fn), &again) == 0);
	CHECK(again.original == p.original && again.patched == p.patched);
}

TEST(redirect_plan_runs_the_function_through_its_trampoline_and_the_close)
{
	uint8_t *t = cp_test_table_open(), *code;
	struct cp_redirect_plan p;
	long (*fn)(void);
	uint64_t answer = 42;

	CHECK(t != NULL);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	CHECK(code != MAP_FAILED);
	memcpy(code, lea_fn, sizeof(lea_fn));
	memcpy(code + 0x100, &answer, 8);
	CHECK(plan_at(CP_REDIRECT_BOUNDARY, lea_fn, code, sizeof(lea_fn), (uint64_t)(uintptr_t)code,
		      (uint64_t)(uintptr_t)code + 0x200,
		      cp_redirect_code_addr(&cp_boundary_close, (uint64_t)(uintptr_t)t), NULL,
		      &p) == 0);
	memcpy(code + 0x200, p.code, sizeof(p.code));
	memcpy(code, &p.patched, 8);
	fn = (long (*)(void))(uintptr_t)code;
	CHECK(fn() == 42 && fn() == 42 && fn() == 42);
	CHECK(cp_test_request_block(t, cp_test_home_slot())[CP_PB_HITS] == 3);
	CHECK(cp_test_request_block(t, cp_test_home_slot())[CP_PB_HIST] == 2);
	munmap(code, 4096);
	cp_test_table_close(t);
}

/* mov eax, [rip + 0xfa] (first: +0x100 holds the answer); test eax, eax
 * (at +6, 2 bytes: the site, by a short jump); jle +1; ret; xor eax,
 * eax; ret. Padding (nops) from +0x10 to +0x20: the springboard's room. */
static const uint8_t test_fn[] = { 0x8b, 0x05, 0xfa, 0x00, 0x00, 0x00, 0x85,
				   0xc0, 0x7e, 0x01, 0xc3, 0x31, 0xc0, 0xc3 };

TEST(redirect_plan_takes_a_short_instruction_by_a_springboard_in_the_padding)
{
	uint8_t *t = cp_test_table_open(), *code;
	struct cp_redirect_plan p;
	struct cp_redirect_room room = { 0 };
	uint64_t answer = 42;
	long (*fn)(void);

	CHECK(t != NULL);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	CHECK(code != MAP_FAILED);
	memcpy(code, test_fn, sizeof(test_fn));
	memset(code + 0x10, 0x90, 0x10);
	memcpy(code + 0x100, &answer, 8);
	CHECK(plan_at(CP_REDIRECT_BOUNDARY, test_fn, code, sizeof(test_fn),
		      (uint64_t)(uintptr_t)code, (uint64_t)(uintptr_t)code + 0x200,
		      cp_redirect_code_addr(&cp_boundary_close, (uint64_t)(uintptr_t)t), &room,
		      &p) != 0); /* no room: no springboard */
	room.pad[1][0] = (uint64_t)(uintptr_t)code + 0x10;
	room.pad[1][1] = (uint64_t)(uintptr_t)code + 0x20;
	CHECK(plan_at(CP_REDIRECT_BOUNDARY, test_fn, code, sizeof(test_fn),
		      (uint64_t)(uintptr_t)code, (uint64_t)(uintptr_t)code + 0x200,
		      cp_redirect_code_addr(&cp_boundary_close, (uint64_t)(uintptr_t)t), &room,
		      &p) == 0);
	CHECK(p.at == (uint64_t)(uintptr_t)code + 6 && p.jump_len == 2);
	CHECK(p.springboard == (uint64_t)(uintptr_t)code + 0x10);
	memcpy(code + 0x200, p.code, sizeof(p.code));
	memcpy(code + 0x10, p.springboard_code, sizeof(p.springboard_code));
	memcpy(code, &p.patched, 8);
	fn = (long (*)(void))(uintptr_t)code;
	CHECK(fn() == 42 && fn() == 42);
	CHECK(cp_test_request_block(t, cp_test_home_slot())[CP_PB_HITS] == 2);
	munmap(code, 4096);
	cp_test_table_close(t);
}

/* A C library's syscall(), as glibc's: the arguments moved down a
 * register, the number into rax, the seventh from the stack (+0x12, 5
 * bytes: the site), syscall, an error check. */
static const uint8_t syscall_fn[] = { 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6,
				      0x48, 0x89, 0xca, 0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8,
				      0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05, 0x48, 0x3d,
				      0x01, 0xf0, 0xff, 0xff, 0x73, 0x01, 0xc3, 0x48, 0xc7,
				      0xc0, 0xff, 0xff, 0xff, 0xff, 0xc3 };

TEST(redirect_plan_counts_clock_reads_through_syscall_and_no_other_syscall)
{
	uint8_t *t = cp_test_table_open(), *code;
	struct cp_redirect_plan p;
	struct timespec ts = { 0 };
	struct timeval tv;
	long (*sys)(long, ...);
	uint64_t *b, *sites;
	int found = 0;

	CHECK(t != NULL);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	CHECK(code != MAP_FAILED);
	memcpy(code, syscall_fn, sizeof(syscall_fn));
	CHECK(plan_at(CP_REDIRECT_SYSCALL, syscall_fn, code, sizeof(syscall_fn),
		      (uint64_t)(uintptr_t)code, (uint64_t)(uintptr_t)code + 0x200,
		      cp_redirect_code_addr(&cp_syscall_count, (uint64_t)(uintptr_t)t), NULL,
		      &p) == 0);
	CHECK(p.at == (uint64_t)(uintptr_t)code + 0x12 && p.jump_len == 5);
	memcpy(code + 0x200, p.code, sizeof(p.code));
	memcpy(code + 0x10, &p.patched, 8);
	sys = (long (*)(long, ...))(uintptr_t)code;
	CHECK(sys(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0 && ts.tv_sec > 0);
	CHECK(sys(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0);
	CHECK(sys(SYS_gettimeofday, &tv, NULL) == 0);
	CHECK(sys(SYS_getpid) == getpid());
	b = cp_test_request_block(t, cp_test_home_slot());
	CHECK(b[CP_PB_SYSCALLS + 2] == 2 && b[CP_PB_SYSCALLS + 14] == 1);
	uint64_t all = 0;
	for (int i = 1; i < 16; i++)
		all += b[CP_PB_SYSCALLS + i];
	CHECK(all == 3); /* getpid: not a clock read */
	sites = (uint64_t *)(t + CP_PATCH_SITES_OFF + cp_test_home_slot() * CP_PATCH_SITE_BLOCK);
	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++)
		found += sites[2 * e] && cp_patch_site_direct(sites[2 * e]) ?
				 (int)sites[2 * e + 1] :
				 0;
	CHECK(found == 3);		 /* at their call sites, through syscall() */
	CHECK(b[CP_PB_SITES_USED] != 0); /* claimed: said for the close */
	munmap(code, 4096);
	cp_test_table_close(t);
}

/* musl's syscall(), in short: its frame made first (sub rsp, 0x58), the
 * number into rax, r8 into r10, the first argument stored in the frame
 * (+10, 5 bytes: the site, 0x58 bytes below the return address), the
 * arguments moved down, syscall, the frame let go. */
static const uint8_t musl_syscall_fn[] = { 0x48, 0x83, 0xec, 0x58, 0x48, 0x89, 0xf8, 0x4d,
					   0x89, 0xc2, 0x48, 0x89, 0x74, 0x24, 0x28, 0x48,
					   0x89, 0xf7, 0x48, 0x89, 0xd6, 0x48, 0x89, 0xca,
					   0x0f, 0x05, 0x48, 0x83, 0xc4, 0x58, 0xc3 };

/* Two clock reads and a getpid through sys, from here: their call sites. */
static __attribute__((noinline)) void three_syscalls(long (*sys)(long, ...))
{
	struct timespec ts = { 0 };

	CHECK(sys(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0 && ts.tv_sec > 0);
	CHECK(sys(SYS_clock_gettime, CLOCK_REALTIME, &ts) == 0);
	CHECK(sys(SYS_getpid) == getpid());
}

TEST(redirect_plan_counts_syscall_past_a_frame_made_first_as_musls)
{
	uint8_t *t = cp_test_table_open(), *code;
	uint64_t *b, *sites, from = (uint64_t)(uintptr_t)three_syscalls;
	struct cp_redirect_plan p;
	int found = 0;

	CHECK(t != NULL);
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	CHECK(code != MAP_FAILED);
	memcpy(code, musl_syscall_fn, sizeof(musl_syscall_fn));
	CHECK(plan_at(CP_REDIRECT_SYSCALL, musl_syscall_fn, code, sizeof(musl_syscall_fn),
		      (uint64_t)(uintptr_t)code, (uint64_t)(uintptr_t)code + 0x200,
		      cp_redirect_code_addr(&cp_syscall_count, (uint64_t)(uintptr_t)t), NULL,
		      &p) == 0);
	CHECK(p.at == (uint64_t)(uintptr_t)code + 10 && p.jump_len == 5);
	memcpy(code + 0x200, p.code, sizeof(p.code));
	memcpy(code + (p.qword - (uint64_t)(uintptr_t)code), &p.patched, 8);
	three_syscalls((long (*)(long, ...))(uintptr_t)code);
	b = cp_test_request_block(t, cp_test_home_slot());
	CHECK(b[CP_PB_SYSCALLS + 2] == 1 && b[CP_PB_SYSCALLS + 1] == 1 && b[CP_PB_SC_TOTAL] == 2);
	sites = (uint64_t *)(t + CP_PATCH_SITES_OFF + cp_test_home_slot() * CP_PATCH_SITE_BLOCK);
	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++) {
		uint64_t pc = cp_patch_site_pc(sites[2 * e]);

		/* the call site found above the frame: in three_syscalls */
		found += sites[2 * e] && pc > from && pc < from + 512 ? (int)sites[2 * e + 1] : 0;
	}
	CHECK(found == 2);
	munmap(code, 4096);
	cp_test_table_close(t);
}

/* glibc 2.36's write(), its first 60 bytes: cmp byte [rip + single
 * threaded], 0 (7 bytes); je +0x17 (to +0x20); mov eax, 1 (at +9);
 * syscall; cmp rax, -4096; ja; ret; nop padding; then (+0x20) sub rsp,
 * 0x28; mov [rsp + 0x18], rdx (at +0x24: across an aligned word); mov
 * [rsp + 0x10], rsi (at +0x29); ... call. */
static const uint8_t glibc_write[] = { 0x80, 0x3d, 0x91, 0x32, 0x0e, 0x00, 0x00, 0x74, 0x17, 0xb8,
				       0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0,
				       0xff, 0xff, 0x77, 0x58, 0xc3, 0x0f, 0x1f, 0x80, 0x00, 0x00,
				       0x00, 0x00, 0x48, 0x83, 0xec, 0x28, 0x48, 0x89, 0x54, 0x24,
				       0x18, 0x48, 0x89, 0x74, 0x24, 0x10, 0x89, 0x7c, 0x24, 0x08,
				       0xe8, 0xa9, 0xd4, 0xf8, 0xff, 0x48, 0x8b, 0x54, 0x24, 0x18 };

TEST(redirect_plan_of_a_syscall_wrapper_takes_both_paths_past_its_first_branch)
{
	struct cp_redirect_plan p;
	uint8_t fn[sizeof(glibc_write)];

	memcpy(fn, glibc_write, sizeof(fn));
	/* nothing between the first instruction and the branch */
	CHECK(plan(fn, fn, sizeof(fn), &p) != 0);
	CHECK(plan_at(CP_REDIRECT_BOUNDARY_UNTAKEN, fn, fn, sizeof(fn), FUNC, TRAMP, CLOSE, NULL,
		      &p) == 0);
	CHECK(p.at == FUNC + 9 && p.len == 5); /* mov eax, 1: the flags dead past
							 * the syscall */
	CHECK(plan_at(CP_REDIRECT_BOUNDARY_TAKEN, fn, fn, sizeof(fn), FUNC, TRAMP, CLOSE, NULL,
		      &p) == 0);
	CHECK(p.at == FUNC + 0x29 && p.len == 5);
	fn[0x18] = 0x90; /* ret -> nop: the first path falls */
	CHECK(plan_at(CP_REDIRECT_BOUNDARY_TAKEN, fn, fn, sizeof(fn), FUNC, TRAMP, CLOSE, NULL,
		      &p) != 0); /* into the taken one */
}

TEST(redirect_plan_of_a_taken_path_may_jump_where_its_branch_lands)
{
	/* cmp edi, 3; je +0xb (to 0x10); xor eax, eax; ret; nop padding;
	 * then (0x10) mov eax, 0x16 (5 bytes, where the je lands); ret: the
	 * function ends 2 bytes into the aligned word, whose rest (int3s,
	 * the next function's padding) is read as the tail */
	static const uint8_t code[] = {
		0x83, 0xff, 0x03, 0x74, 0x0b, 0x31, 0xc0, 0xc3, 0x90, 0x90,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xb8, 0x16, 0x00, 0x00,
		0x00, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc
	};
	struct cp_redirect_fn fn = { .file = code, .live = code, .size = 22, .func = FUNC };
	struct cp_redirect_plan p;
	char why[256];

	CHECK(cp_redirect_plan_make(CP_REDIRECT_BOUNDARY_TAKEN, &fn, TRAMP, CLOSE, &p, why,
				    sizeof(why)) != 0); /* the word past the function unknown */
	fn.tail = 8;
	CHECK(cp_redirect_plan_make(CP_REDIRECT_BOUNDARY_TAKEN, &fn, TRAMP, CLOSE, &p, why,
				    sizeof(why)) == 0);
	CHECK(p.at == FUNC + 0x10 && p.len == 5);
}
