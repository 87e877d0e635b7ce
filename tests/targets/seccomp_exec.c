/* seccomp_exec.c - runs a command under a seccomp filter, inherited by
 * everything it starts: `seccomp_exec clockprof run ...` is clockprof in a
 * service or container so confined (test_mechanism_choice.py). The filter
 * refuses memory both writable and executable (mmap, mprotect,
 * pkey_mprotect with PROT_WRITE|PROT_EXEC: EPERM), as systemd's
 * MemoryDenyWriteExecute=yes does. The vDSO patch cannot be used there:
 * its self-test fails before any target is touched (a tracer under
 * seccomp cannot read its tracee's filters to check the stub's syscalls
 * against them, and the stub makes the vDSO writable for an instant);
 * uprobes count as usual.
 *
 * usage: seccomp_exec CMD [ARG...] */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WX (PROT_WRITE | PROT_EXEC)
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		LOAD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		LOAD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		LOAD(args[2]),	/* prot: its low word (little-endian) */
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, WX),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, WX, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1 /* EPERM */),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };

	if (argc < 2) {
		fprintf(stderr, "usage: seccomp_exec CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror("seccomp_exec: seccomp");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("seccomp_exec: exec");
	return 127;
}
