/* The vDSO patch's pieces that need no process: the plan made from this
 * process's own vDSO (a site for every clock entry, each jump inside one
 * aligned word, the replaced instruction relocated), the leftover test
 * (pristine, ours, someone else's), the seccomp interpreter on filters
 * like those the kernel runs, and the processes forked in a stub's
 * window (one forked in it is found, none when only threads were made). */
#include <errno.h>
#include <linux/audit.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_maps.h"
#include "seccomp_filter.h"
#include "stub_forks.h"
#include "unit.h"
#include "vdso_area.h"
#include "vdso_plan.h"

static int own_plan(struct cp_vdso_plan *plan, const uint8_t **image)
{
	uint64_t start, end;
	char why[256];

	*image = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!*image || cp_proc_maps_find_vdso(getpid(), &start, &end))
		return -1;
	return cp_vdso_plan_make(*image, end - start, start, start + (16u << 20), plan, why,
				 sizeof(why));
}

TEST(vdso_plan_has_a_site_for_every_clock_entry)
{
	struct cp_vdso_plan plan;
	const uint8_t *image;
	int seen = 0;

	CHECK(own_plan(&plan, &image) == 0);
	for (int i = 0; i < plan.nsites; i++) {
		const struct cp_vdso_site *s = &plan.site[i];

		seen |= 1 << s->entry;
		CHECK(s->jump_len == 5 || s->jump_len == 2);
		CHECK(s->len >= s->jump_len);
		CHECK(s->at - s->qword + s->jump_len <= 8);
		CHECK(s->original != s->patched);
		CHECK(s->thunk >= plan.area && s->thunk < plan.code_end);
		CHECK(plan.code_end <= plan.size);
	}
	CHECK(seen == (1 << CP_ENTRY_MAX) - 1);
	cp_vdso_plan_free(&plan);
}

TEST(vdso_plan_tells_pristine_ours_and_foreign_apart)
{
	struct cp_vdso_plan plan;
	const uint8_t *image;
	uint8_t *copy;
	uint64_t at = 0;

	CHECK(own_plan(&plan, &image) == 0);
	CHECK(cp_vdso_plan_classify(&plan, image, image, &at) == CP_VDSO_PRISTINE);
	CHECK(cp_vdso_plan_classify(&plan, image, plan.bytes, &at) == CP_VDSO_OURS);
	copy = malloc(plan.size);
	memcpy(copy, plan.bytes, plan.size);
	memcpy(copy + plan.site[0].qword, &plan.site[0].patched, 8);
	CHECK(cp_vdso_plan_classify(&plan, image, copy, &at) == CP_VDSO_OURS);
	copy[plan.site[0].qword + 7] ^= 0xff; /* a byte no patch of ours writes */
	CHECK(cp_vdso_plan_classify(&plan, image, copy, &at) == CP_VDSO_FOREIGN);
	free(copy);
	CHECK(at >= plan.site[0].qword && at < plan.site[0].qword + 8);
	cp_vdso_plan_free(&plan);
}

/* A leftover's switched site is never written as code (only the stub's
 * atomic store may change it), while code it lacks is. */
TEST(vdso_plan_never_writes_a_site_word_as_code)
{
	struct cp_vdso_plan plan;
	const uint8_t *image;
	uint8_t *target;
	uint64_t from = 0, to, thunk;

	CHECK(own_plan(&plan, &image) == 0);
	target = malloc(plan.size);
	memcpy(target, plan.bytes, plan.size);
	memcpy(target + plan.site[0].qword, &plan.site[0].patched, 8);
	thunk = plan.site[1].thunk;
	target[thunk] ^= 0xff; /* a byte of code it lacks */
	CHECK_INT(cp_vdso_plan_next_code(&plan, target, &from, &to), 1);
	CHECK(from == thunk && to == thunk + 1);
	from = to;
	CHECK_INT(cp_vdso_plan_next_code(&plan, target, &from, &to), 0);
	free(target);
	cp_vdso_plan_free(&plan);
}

static struct seccomp_data call(int nr, uint64_t ip)
{
	return (struct seccomp_data){ .nr = nr,
				      .arch = AUDIT_ARCH_X86_64,
				      .instruction_pointer = ip };
}

TEST(seccomp_interpreter_runs_a_deny_list_filter)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct seccomp_data d = call(SYS_mprotect, 0x1000);

	CHECK(cp_seccomp_run(f, 7, &d) == SECCOMP_RET_ALLOW);
	d = call(SYS_mmap, 0x1000);
	CHECK(cp_seccomp_run(f, 7, &d) == (SECCOMP_RET_ERRNO | EPERM));
	d.arch = AUDIT_ARCH_I386;
	CHECK(cp_seccomp_run(f, 7, &d) == SECCOMP_RET_KILL_PROCESS);
}

TEST(seccomp_interpreter_sees_the_instruction_pointer_and_arguments)
{
	/* Allows mprotect only from ip 0x2000 with PROT_EXEC (4) set in arg 2,
	 * using the scratch memory, X and an ALU op on the way. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer)),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 3),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 0x2000),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 4, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct seccomp_data d = call(SYS_mprotect, 0x2000);
	struct sock_filter bad = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 62);

	d.args[2] = 7;
	CHECK(cp_seccomp_run(f, 11, &d) == SECCOMP_RET_ALLOW);
	d.args[2] = 3;
	CHECK(cp_seccomp_run(f, 11, &d) == SECCOMP_RET_KILL_THREAD);
	d.instruction_pointer = 0x3000;
	CHECK(cp_seccomp_run(f, 11, &d) == SECCOMP_RET_TRAP);
	/* A load the kernel would refuse (unaligned): treated as a kill. */
	CHECK(cp_seccomp_run(&bad, 1, &d) == SECCOMP_RET_KILL_PROCESS);
}

/* A synthetic image: this process's vDSO with the bytes where its plan
 * put springboards made code (push %rbp), as a function without a
 * symbol between two others would be: no springboard is placed over
 * them (the plan takes other padding, another site, or gives up). */
TEST(vdso_plan_places_springboards_only_over_padding)
{
	struct cp_vdso_plan plan, again;
	const uint8_t *image;
	uint8_t *synthetic;
	char why[256];
	int springboards = 0;

	CHECK(own_plan(&plan, &image) == 0);
	synthetic = malloc(plan.size);
	memcpy(synthetic, image, plan.size);
	for (int i = 0; i < plan.nsites; i++)
		if (plan.site[i].jump_len == 2) {
			memset(synthetic + plan.site[i].springboard, 0x55, 5);
			springboards++;
		}
	if (!springboards) {
		free(synthetic);
		cp_vdso_plan_free(&plan);
		unit_skip("this kernel's vDSO plan takes no springboard");
		return;
	}
	if (cp_vdso_plan_make(synthetic, plan.size, plan.base, plan.table, &again, why,
			      sizeof(why)) == 0) {
		for (int i = 0; i < again.nsites; i++)
			for (uint64_t b = 0; again.site[i].jump_len == 2 && b < 5; b++)
				CHECK(synthetic[again.site[i].springboard + b] != 0x55);
		cp_vdso_plan_free(&again);
	}
	free(synthetic);
	cp_vdso_plan_free(&plan);
}

static void *nothing(void *arg)
{
	return arg;
}

TEST(stub_window_finds_a_fork_made_in_it_and_none_for_a_thread)
{
	struct cp_stub_window win;
	pthread_t thread;
	pid_t child, *kids = NULL;
	size_t n = 9;

	cp_stub_window_open(&win);
	CHECK(pthread_create(&thread, NULL, nothing, NULL) == 0); /* the pids move on */
	pthread_join(thread, NULL);
	CHECK(cp_stub_window_forks(getpid(), &win, &kids, &n) == 0 && n == 0);
	free(kids);
	if ((child = fork()) == 0) {
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	CHECK(cp_stub_window_forks(getpid(), &win, &kids, &n) == 0 && n == 1 && kids[0] == child);
	free(kids);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}
