/* patch_table_fixture.c - see patch_table_fixture.h: the way into a read's
 * path, as a thunk enters it (rax: where the return address is, r9, r10
 * as given), and the landing its jump back reaches, which returns to the
 * caller of cp_test_read_enter (the path leaves rsp as it found it). */
__asm__(".text\n"
	".globl cp_test_read_enter\n"
	"cp_test_read_enter:\n"
	"	mov %rsi, %rax\n"
	"	mov %rdx, %r9\n"
	"	mov %rcx, %r10\n"
	"	jmp *%rdi\n"
	".globl cp_test_read_landing\n"
	"cp_test_read_landing:\n"
	"	ret\n");
