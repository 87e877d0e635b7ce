/* rseq_target.c - a thread that stays inside a restartable sequence's
 * critical section (rseq(2), in the area glibc registered for it), the
 * way a per-CPU allocator's fast path runs (tcmalloc): the kernel must
 * send it to the section's abort handler at any preemption, a ptrace
 * stop among them, and the section then starts again. The section
 * loops until the thread's rseq_cs reads 0, which the kernel writes
 * only where it finds the thread outside the section: a thread resumed
 * in the middle of the section without its abort ("broken": a per-CPU
 * commit made on a CPU it no longer owns). The main thread waits on
 * stdin; at its end it prints "broken N aborts N" and exits 0 unless a
 * section was broken (1), or 77 when glibc registered no rseq area. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/rseq.h>
#include <unistd.h>

static atomic_long broken, aborts;

/* 1: left by seeing its rseq_cs cleared; 0: by its abort handler. */
static int in_section(volatile char *rseq_area)
{
	int left = 0;

	__asm__ __volatile__(".pushsection __rseq_cs, \"aw\"\n"
			     ".balign 32\n"
			     "33: .long 0, 0\n"
			     ".quad 1f, (2f - 1f), 4f\n"
			     ".popsection\n"
			     "lea 33b(%%rip), %%rax\n"
			     "mov %%rax, 8(%[rs])\n"
			     "1: cmpq $0, 8(%[rs])\n"
			     "je 5f\n"
			     "jmp 1b\n"
			     "2: .byte 0x0f, 0xb9, 0x3d\n"
			     ".long 0x53053053\n" /* glibc's RSEQ_SIG, before the abort */
			     "4: jmp 6f\n"
			     "5: movl $1, %[left]\n"
			     "6:\n"
			     : [left] "+m"(left)
			     : [rs] "r"(rseq_area)
			     : "rax", "memory", "cc");
	return left;
}

static void *spin(void *arg)
{
	volatile char *rseq_area = (char *)__builtin_thread_pointer() + __rseq_offset;

	(void)arg;
	for (;;)
		atomic_fetch_add(in_section(rseq_area) ? &broken : &aborts, 1);
	return NULL;
}

int main(void)
{
	pthread_t t;
	char c;

	if (!__rseq_size)
		return 77;
	if (pthread_create(&t, NULL, spin, NULL))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	printf("broken %ld aborts %ld\n", atomic_load(&broken), atomic_load(&aborts));
	return atomic_load(&broken) ? 1 : 0;
}
