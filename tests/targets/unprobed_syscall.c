/* unprobed_syscall.c - a library dlopen_target loads whose dl_clock_read
 * reads no clock, and which defines a function named syscall whose first
 * instruction is an int3, which the kernel refuses a uprobe on (ENOTSUPP):
 * a library mapped in the window that cannot be probed. Its syscall is
 * never called. (A library that reads the clock itself is taken for a
 * clock wrapper, whose syscall is not probed.) */
static volatile long sink;

__asm__(".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"\tint3\n"
	"\tret\n"
	".size syscall, .-syscall\n");

void dl_clock_read(void)
{
	sink++;
}
