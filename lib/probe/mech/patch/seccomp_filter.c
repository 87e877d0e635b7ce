/* seccomp_filter.c - see seccomp_filter.h. The interpreter follows the
 * kernel's seccomp checker: loads from struct seccomp_data only, the
 * ALU and jump instructions, scratch memory, RET. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "seccomp_filter.h"

#define MAX_INSNS 4096
#define MAX_FILTERS 64

static int alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD: *a += v; break;
	case BPF_SUB: *a -= v; break;
	case BPF_MUL: *a *= v; break;
	case BPF_DIV: if (!v) return -1; *a /= v; break;
	case BPF_MOD: if (!v) return -1; *a %= v; break;
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
static int load(const struct sock_filter *f, const struct seccomp_data *d,
		const uint32_t *mem, uint32_t *r)
{
	switch (BPF_MODE(f->code)) {
	case BPF_ABS:
		if (BPF_SIZE(f->code) != BPF_W || f->k % 4 || f->k + 4 > sizeof(*d))
			return -1;
		memcpy(r, (const char *)d + f->k, 4);
		return 0;
	case BPF_LEN: *r = sizeof(*d); return 0;
	case BPF_IMM: *r = f->k; return 0;
	case BPF_MEM: if (f->k >= BPF_MEMWORDS) return -1; *r = mem[f->k]; return 0;
	default: return -1;
	}
}

uint32_t cp_seccomp_run(const struct sock_filter *prog, size_t n,
			const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t v = BPF_SRC(f->code) == BPF_X ? x : f->k;
		int j;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD: if (load(f, d, mem, &a)) goto bad; break;
		case BPF_LDX: if (load(f, d, mem, &x)) goto bad; break;
		case BPF_ST: case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				goto bad;
			mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU: if (alu(BPF_OP(f->code), &a, v)) goto bad; break;
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
 * wins (KILL_PROCESS first, ALLOW last). */
static uint32_t stricter(uint32_t a, uint32_t b)
{
	return (int32_t)(a & SECCOMP_RET_ACTION_FULL) < (int32_t)(b & SECCOMP_RET_ACTION_FULL) ? a : b;
}

static int run_filter(pid_t tid, unsigned long i, const struct seccomp_data *calls,
		      size_t ncalls, uint32_t *action, size_t *which)
{
	struct sock_filter *prog = calloc(MAX_INSNS, sizeof(*prog));
	long n;

	if (!prog)
		return -1;
	n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, prog);
	if (n > 0)
		for (size_t c = 0; c < ncalls; c++) {
			uint32_t r = cp_seccomp_run(prog, (size_t)n, &calls[c]);

			if (stricter(r, action[c]) == r && r != action[c]) {
				action[c] = r;
				*which = i;
			}
		}
	free(prog);
	return n > 0 ? 0 : (errno == ENOENT ? 1 : -1);
}

/* The first of calls that actions do not allow (ALLOW or LOG), said in
 * why; 1 when every one is allowed. */
static int all_allowed(const struct seccomp_data *calls, const uint32_t *action, size_t ncalls,
		       size_t which, char *why, size_t whylen)
{
	for (size_t c = 0; c < ncalls; c++) {
		uint32_t act = action[c] & SECCOMP_RET_ACTION_FULL;

		if (act != SECCOMP_RET_ALLOW && act != SECCOMP_RET_LOG) {
			snprintf(why, whylen, "its seccomp filter %zu would not allow syscall %d (action 0x%x)",
				 which, calls[c].nr, act);
			return 0;
		}
	}
	return 1;
}

int cp_seccomp_allows(pid_t tid, const struct seccomp_data *calls, size_t ncalls,
		      char *why, size_t whylen)
{
	/* One action per call, however many the stub makes (a fixed 8 read
	 * a redirect's or a launched command's two more as "cannot be
	 * read", and refused a container's allow-list for it). */
	uint32_t *action = calloc(ncalls ? ncalls : 1, sizeof(*action));
	size_t which = 0;
	int rc = 0;

	if (!action)
		return -1;
	for (size_t c = 0; c < ncalls; c++)
		action[c] = SECCOMP_RET_ALLOW;
	for (unsigned long i = 0; i < MAX_FILTERS && rc == 0; i++)
		rc = run_filter(tid, i, calls, ncalls, action, &which);
	if (rc >= 0)
		rc = all_allowed(calls, action, ncalls, which, why, whylen);
	free(action);
	return rc;
}
