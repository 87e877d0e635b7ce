/* deep_stack_target.c - --stacks' reference target for stacks that go
 * deep and stacks whose walk loses its way.
 *
 * usage: deep_stack_target [REQUESTS [RATE]] (callsites_common.h)
 * Per request (handle_request), by construction:
 *   recurse, DEPTH calls deep (past CP_STACK_DEPTH and past the 8 KiB a
 *     stack copy holds), then read_deep: 1 clock_gettime, every frame of
 *     its stack in the program's code;
 *   lost_read: 1 clock_gettime from a function with no CFI whose rbp
 *     points at ASCII text on its own stack, as code built without frame
 *     pointers leaves rbp holding anything: a walk can only follow rbp,
 *     and reads the text as a saved rbp and a return address. The stack's
 *     frames past lost_read are not the program's code.
 * = 2 reads. */
#include <time.h>

#include "callsites_common.h"

#define DEPTH 64

static volatile long sink;

/* No .cfi_* directives: .eh_frame has nothing for it. 16 bytes of text
 * ("qver 127qver *:1", as redis's stack held) where rbp points; the
 * timespec below them. */
__asm__(".text\n"
	".globl lost_read\n"
	".type lost_read, @function\n"
	"lost_read:\n"
	"	push %rbp\n"
	"	sub $48, %rsp\n"
	"	movabs $0x3732312072657671, %rax\n"
	"	mov %rax, 16(%rsp)\n"
	"	movabs $0x313a2a2072657671, %rax\n"
	"	mov %rax, 24(%rsp)\n"
	"	lea 16(%rsp), %rbp\n"
	"	mov $1, %edi\n"
	"	mov %rsp, %rsi\n"
	"	call clock_gettime@PLT\n"
	"	add $48, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size lost_read, .-lost_read\n");

void lost_read(void);

NOINLINE void read_deep(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
}

/* 192 bytes of frame a level: DEPTH levels are some 12 KiB of stack. */
NOINLINE void recurse(int depth)
{
	volatile char pad[160];

	pad[depth % sizeof(pad)] = (char)depth;
	if (depth)
		recurse(depth - 1);
	else
		read_deep();
	sink += pad[depth % sizeof(pad)];	/* no tail call */
}

NOINLINE void handle_request(long i)
{
	recurse(DEPTH);
	lost_read();
	sink += i;
}

int main(int argc, char **argv)
{
	return callsites_main(argc, argv, handle_request);
}
