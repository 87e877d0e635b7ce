/* rseq_section.c - see rseq_section.h. */
#include <errno.h>
#include <stddef.h>
#include <sys/ptrace.h>

#include "rseq_section.h"

/* struct rseq's rseq_cs, the pointer to the section the thread is in (or
 * was last in: the kernel clears it lazily), is at offset 8. */
#define RSEQ_CS_AT 8

/* n words of the held thread's memory at addr: 0, else -1. Read through
 * the thread, in the program it runs. */
static int peek_words(pid_t tid, uint64_t addr, uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		errno = 0;
		w[i] = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)(addr + i * 8), 0);
		if (errno)
			return -1;
	}
	return 0;
}

/* The section's checks, the kernel's (rseq_get_rseq_cs, in_rseq_cs):
 * cs = {version | flags << 32, start_ip, post_commit_offset, abort_ip};
 * the 4 bytes before the abort handler its signature. */
static bool section_holds(pid_t tid, const uint64_t *cs, uint32_t signature, uint64_t ip)
{
	uint64_t start = cs[1], len = cs[2], abort_ip = cs[3], before;

	if ((uint32_t)cs[0] != 0 || start + len < start || abort_ip - start < len || abort_ip < 4 ||
	    ip - start >= len)
		return false;
	if (peek_words(tid, abort_ip - 4, &before, 1)) /* (any alignment) */
		return false;
	return (uint32_t)before == signature;
}

bool cp_rseq_abort_ip(pid_t tid, uint64_t ip, uint64_t *abort_ip)
{
	struct __ptrace_rseq_configuration c;
	uint64_t at, cs[4];

	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *)sizeof(c), &c) <= 0 ||
	    !c.rseq_abi_pointer)
		return false;
	if (peek_words(tid, c.rseq_abi_pointer + RSEQ_CS_AT, &at, 1) || !at ||
	    peek_words(tid, at, cs, 4) || !section_holds(tid, cs, c.signature, ip))
		return false;
	*abort_ip = cs[3];
	return true;
}
