/* seccomp_filter.c - see seccomp_filter.h. The interpreter follows the
 * kernel's seccomp checker: loads from struct seccomp_data only, the
 * ALU and jump instructions, scratch memory, RET. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "seccomp_filter.h"

static int alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD: *a += v; break;
	case BPF_SUB: *a -= v; break;
	case BPF_MUL: *a *= v; break;
	case BPF_DIV:
		if (!v)
			return -1;
		*a /= v;
		break;
	case BPF_MOD:
		if (!v)
			return -1;
		*a %= v;
		break;
	case BPF_OR: *a |= v; break;
	case BPF_AND: *a &= v; break;
	case BPF_XOR: *a ^= v; break;
	case BPF_LSH: *a = v < 32 ? *a << v : 0; break;
	case BPF_RSH: *a = v < 32 ? *a >> v : 0; break;
	case BPF_NEG: *a = -*a; break;
	default: return -1;
	}
	return 0;
}

static int jump(uint16_t op, uint32_t a, uint32_t v)
{
	switch (op) {
	case BPF_JEQ: return a == v;
	case BPF_JGT: return a > v;
	case BPF_JGE: return a >= v;
	case BPF_JSET: return (a & v) != 0;
	default: return -1;
	}
}

/* A load: a 32-bit word of seccomp_data, an immediate, scratch memory. */
static int load(const struct sock_filter *f, const struct seccomp_data *d, const uint32_t *mem,
		uint32_t *r)
{
	switch (BPF_MODE(f->code)) {
	case BPF_ABS:
		if (BPF_SIZE(f->code) != BPF_W || f->k % 4 || f->k + 4 > sizeof(*d))
			return -1;
		memcpy(r, (const char *)d + f->k, 4);
		return 0;
	case BPF_LEN: *r = sizeof(*d); return 0;
	case BPF_IMM: *r = f->k; return 0;
	case BPF_MEM:
		if (f->k >= BPF_MEMWORDS)
			return -1;
		*r = mem[f->k];
		return 0;
	default: return -1;
	}
}

uint32_t cp_seccomp_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t v = BPF_SRC(f->code) == BPF_X ? x : f->k;
		int j;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (load(f, d, mem, &a))
				goto bad;
			break;
		case BPF_LDX:
			if (load(f, d, mem, &x))
				goto bad;
			break;
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				goto bad;
			mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			if (alu(BPF_OP(f->code), &a, v))
				goto bad;
			break;
		case BPF_JMP:
			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				break;
			}
			if ((j = jump(BPF_OP(f->code), a, v)) < 0)
				goto bad;
			pc += j ? f->jt : f->jf;
			break;
		case BPF_RET: return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default: goto bad;
		}
	}
bad:
	return SECCOMP_RET_KILL_PROCESS;
}

/* The kernel's precedence: the lowest action value, read as signed,
 * wins (KILL_PROCESS, KILL_THREAD, TRAP, ERRNO, USER_NOTIF, TRACE, LOG,
 * ALLOW). The kernel runs the newest filter first and takes an older
 * one's only when strictly stricter; run oldest first, a newer one takes
 * a tie. */
static int at_least_as_strict(uint32_t a, uint32_t b)
{
	return (int32_t)(a & SECCOMP_RET_ACTION_FULL) <= (int32_t)(b & SECCOMP_RET_ACTION_FULL);
}

/* Filter which (0: the oldest) of n, as a user counts them. */
static void name_filter(size_t which, size_t n, char *out, size_t len)
{
	if (n == 1)
		snprintf(out, len, "its only seccomp filter");
	else if (which + 1 == n)
		snprintf(out, len, "the newest of its %zu seccomp filters", n);
	else if (which == 0)
		snprintf(out, len, "the oldest of its %zu seccomp filters", n);
	else
		snprintf(out, len, "seccomp filter %zu of its %zu (counted from the oldest)",
			 which + 1, n);
}

int cp_seccomp_judge(const struct cp_seccomp_prog *progs, size_t nprogs,
		     const struct seccomp_data *calls, size_t ncalls, char *why, size_t whylen)
{
	for (size_t c = 0; c < ncalls; c++) {
		uint32_t action = SECCOMP_RET_ALLOW, act;
		size_t which = 0;
		char name[80];

		for (size_t i = 0; i < nprogs; i++) {
			uint32_t r = cp_seccomp_run(progs[i].insns, progs[i].n, &calls[c]);

			if (at_least_as_strict(r, action)) {
				action = r;
				which = i;
			}
		}
		act = action & SECCOMP_RET_ACTION_FULL;
		if (act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG)
			continue;
		name_filter(which, nprogs, name, sizeof(name));
		snprintf(why, whylen, "%s would not allow syscall %d (action 0x%x)", name,
			 calls[c].nr, act);
		return 0;
	}
	return 1;
}

/* Filter i of the held thread tid (0: its oldest, so an index stays the
 * same filter as more are installed): 1 read, 0 there is none (ENOENT:
 * past the newest), -1 it cannot be read. */
static int read_filter(pid_t tid, unsigned long i, struct cp_seccomp_prog *out)
{
	long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);

	if (n < 0)
		return errno == ENOENT ? 0 : -1;
	if (n == 0 || n > BPF_MAXINSNS)
		return -1;
	out->insns = calloc((size_t)n, sizeof(*out->insns));
	if (!out->insns)
		return -1;
	out->n = (size_t)n;
	if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, out->insns) != n) {
		free(out->insns);
		return -1;
	}
	return 1;
}

static void free_filters(struct cp_seccomp_prog *progs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(progs[i].insns);
	free(progs);
}

/* Every filter of tid, oldest first, until the kernel says there is no
 * more: no cap of ours (a thread's filters are bounded only by the
 * kernel's limit on their instructions together, MAX_INSNS_PER_PATH; a
 * cap skipped the newest ones). 0, or -1 when one cannot be read. */
static int read_filters(pid_t tid, struct cp_seccomp_prog **progs, size_t *n)
{
	size_t cap = 0;
	int r = -1;

	*progs = NULL;
	*n = 0;
	for (;;) {
		if (*n == cap) {
			struct cp_seccomp_prog *more = realloc(*progs, (cap ? 2 * cap : 16) *
									       sizeof(*more));

			if (!more)
				break;
			*progs = more;
			cap = cap ? 2 * cap : 16;
		}
		r = read_filter(tid, *n, &(*progs)[*n]);
		if (r <= 0)
			break;
		(*n)++;
	}
	if (r == 0)
		return 0;
	free_filters(*progs, *n);
	return -1;
}

int cp_seccomp_allows(pid_t tid, const struct seccomp_data *calls, size_t ncalls, char *why,
		      size_t whylen)
{
	struct cp_seccomp_prog *progs;
	size_t n;
	int rc;

	if (read_filters(tid, &progs, &n))
		return -1;
	rc = cp_seccomp_judge(progs, n, calls, ncalls, why, whylen);
	free_filters(progs, n);
	return rc;
}

#ifndef PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG
#define PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG 0x4211
#endif

/* The kernel's struct ptrace_sud_config (Linux 6.6). */
struct sud_config {
	uint64_t mode, selector, offset, len;
};

bool cp_syscalls_dispatched(pid_t tid, uint64_t lo, uint64_t hi)
{
	struct sud_config c;
	long sel;

	if (ptrace(PTRACE_GET_SYSCALL_USER_DISPATCH_CONFIG, tid, (void *)sizeof(c), &c) || !c.mode)
		return false;
	/* PR_SYS_DISPATCH_ON (1): calls from [offset, offset + len) are made
	 * whatever the selector says */
	if (c.mode == 1 && lo - c.offset < c.len && hi - c.offset <= c.len)
		return false;
	if (!c.selector)
		return true;
	errno = 0;
	sel = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)c.selector, 0);
	return errno || (unsigned char)sel != 0; /* SYSCALL_DISPATCH_FILTER_ALLOW */
}
