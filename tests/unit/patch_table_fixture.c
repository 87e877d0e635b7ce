/* patch_table_fixture.c - see patch_table_fixture.h: the way into a read's
 * path past its prefix, as the prefix leaves it (rax: where the return
 * address is, r9: that address, r10 as given), and the landing its jump
 * back reaches, which returns to the caller of cp_test_read_enter (the
 * path leaves rsp as it found it). */
__asm__(".text\n"
	".globl cp_test_read_enter\n"
	"cp_test_read_enter:\n"
	"	mov %rsi, %rax\n"
	"	mov (%rsi), %r9\n"
	"	mov %rdx, %r10\n"
	"	jmp *%rdi\n"
	".globl cp_test_read_landing\n"
	"cp_test_read_landing:\n"
	"	ret\n");
