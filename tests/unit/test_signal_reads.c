/* test_signal_reads.c - a signal handler that reads the clock while the
 * thread it interrupted was inside a read's path (a SIGPROF handler
 * timing itself, say): both reads counted, each at its site, and under
 * --anatomy both logged. The path runs here on a table of the test's
 * making (patch_table_fixture.h), one instruction at a time (the trap
 * flag), and a handler's read is made before each of its instructions in
 * turn: every place a signal can land is tried, not the few a timer
 * would hit. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>

#include "patch_table_fixture.h"
#include "unit.h"

#define TRAP_FLAG 0x100

/* As the thunk enters a path (rax, r9, r10 and edi, the clock id, set),
 * with the trap flag raised: the first trap comes at the path's first
 * instruction, one at each after it. */
void step_enter(const void *path, const uint64_t *ret, uint64_t r10, uint64_t clock);
__asm__(".text\n"
	"step_enter:\n"
	"	mov %rsi, %rax\n"
	"	mov (%rsi), %r9\n"
	"	mov %rdx, %r10\n"
	"	mov %rdi, %r11\n"
	"	mov %ecx, %edi\n"
	"	pushfq\n"
	"	orq $0x100, (%rsp)\n"
	"	popfq\n"
	"	jmp *%r11\n");

static struct {
	uint64_t code_lo, code_hi; /* the table's code pages */
	uint64_t nested_path;	   /* the path the handler's read takes */
	const uint64_t *nested_ret;
	int steps, read_at; /* the instructions trapped; before which one the handler reads */
} step;

/* Each instruction of the path: the handler's read before the chosen
 * one (a signal handler runs with the trap flag cleared, the
 * interrupted code gets it back); past the path, no more traps. */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)si;
	if (rip < step.code_lo || rip >= step.code_hi) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
		return;
	}
	if (++step.steps == step.read_at)
		cp_test_read_enter((const void *)(uintptr_t)step.nested_path, step.nested_ret,
				   1); /* CLOCK_MONOTONIC, as the stepped read */
}

/* The path of clock_gettime's reads in t: the plain one, or --anatomy's. */
static uint64_t read_path(const uint8_t *t, bool anatomy)
{
	uint64_t at = (uint64_t)(uintptr_t)t;

	return anatomy ? cp_vdso_anatomy_prefixed_entry(at, CP_ENTRY_CLOCK_GETTIME) :
			 cp_vdso_count_prefixed_entry(at, CP_ENTRY_CLOCK_GETTIME);
}

/* The thread's slot claimed by a first read (of ret) and, for anatomy,
 * a log opened in its request block by a boundary. */
static void claim_and_open(uint8_t *t, uint64_t path, const uint64_t *ret, bool anatomy)
{
	uint64_t *block0 = (uint64_t *)(t + CP_PATCH_BLOCKS_OFF);

	block0[CP_PB0_AN_EVERY] = anatomy;
	block0[CP_PB0_AN_ON] = anatomy;
	cp_test_read_enter((const void *)(uintptr_t)path, ret, 1);
	((void (*)(void))(uintptr_t)cp_redirect_code_addr(&cp_boundary_close,
							  (uint64_t)(uintptr_t)t))();
}

static uint64_t site_count(const uint8_t *t, uint64_t slot, uint64_t pc)
{
	const uint64_t *block = (const uint64_t *)(t + CP_PATCH_SITES_OFF +
						   (size_t)slot * CP_PATCH_SITE_BLOCK);
	uint64_t key = pc | (uint64_t)CP_PATCH_VIA_NONE << 48 |
		       (uint64_t)CP_ENTRY_CLOCK_GETTIME << 60;

	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++)
		if (block[2 * e] == key)
			return block[2 * e + 1];
	return 0;
}

/* Whether the request's log holds the pcs' reads, one entry each. */
static bool logged(const uint64_t *b, const uint64_t *pcs, uint64_t n)
{
	const uint64_t mask = (1ull << 48) - 1, *e = &b[CP_PB_AN_LOG];

	if (b[CP_PB_AN_N] != n)
		return false;
	for (uint64_t i = 0; i < n; i++) {
		bool found = false;

		for (uint64_t j = 0; j < n; j++)
			found |= (e[j * CP_PB_AN_ENTRY_WORDS] & mask) == pcs[i];
		if (!found)
			return false;
	}
	return true;
}

/* One read run an instruction at a time, the handler's read made before
 * its instruction at (0: none): 1 when every read was counted, at its
 * site, and under anatomy logged; 0 when not; -1 when the read ran fewer
 * instructions than at (the handler never read). *steps: how many it ran. */
static int both_kept(bool anatomy, int at, int *steps)
{
	static const uint64_t ret = 0x401000, nested_ret = 0x402000;
	const uint64_t pcs[2] = { ret, nested_ret }, slot = cp_test_home_slot();
	uint8_t *t = cp_test_table_open();
	uint64_t path, nested, *counts;
	int ok;

	if (!t)
		return 0;
	path = read_path(t, anatomy);
	claim_and_open(t, path, &ret, anatomy);
	step = (typeof(step)){ .code_lo = (uint64_t)(uintptr_t)t + CP_PATCH_CODE_OFF,
			       .nested_path = path,
			       .nested_ret = &nested_ret,
			       .read_at = at };
	step.code_hi = step.code_lo + CP_PATCH_CODE_SIZE;
	step_enter((const void *)(uintptr_t)path, &ret, 1, 1);
	*steps = step.steps;
	nested = at && step.steps >= at;
	counts = (uint64_t *)(t + 128 + slot * 128);
	ok = counts[2] == 2 + nested && site_count(t, slot, ret) == 2 &&
	     site_count(t, slot, nested_ret) == nested &&
	     (!anatomy || logged(cp_test_request_block(t, slot), pcs, 1 + nested));
	cp_test_table_close(t);
	return at && !nested ? -1 : ok;
}

/* Every instruction of a read's path tried, plain and --anatomy's. Under
 * --anatomy it failed before the log's index was taken and raised in one
 * instruction (vdso_count.S, .Llog): a handler's read landing between the
 * load and the increment was written over by the interrupted read, whose
 * own entry was then followed by an empty one. */
TEST(signal_reads_a_handler_s_read_inside_a_read_is_counted_and_logged)
{
	struct sigaction trap = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO }, old;

	CHECK(sigaction(SIGTRAP, &trap, &old) == 0);
	for (int anatomy = 0; anatomy < 2; anatomy++) {
		int n = 0, ran, bad = 0;

		CHECK(both_kept(anatomy, 0, &n) == 1 && n > 10);
		for (int at = 1; at <= n && !bad; at++)
			if (both_kept(anatomy, at, &ran) == 0)
				bad = at;
		if (bad)
			fprintf(stderr,
				"  %s path: a handler's read before its instruction %d of %d\n",
				anatomy ? "--anatomy's" : "the plain", bad, n);
		CHECK_INT(bad, 0);
	}
	sigaction(SIGTRAP, &old, NULL);
}
