/* vdso_patch.c - see vdso_patch.h: the plan (vdso_plan.c) written into
 * the target, applied and undone by the stub (vdso_area.S) on one held
 * thread (hijack.c), and the counters read back. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <sys/syscall.h>

#include "error.h"
#include "hijack.h"
#include "seccomp_filter.h"
#include "proc_maps.h"
#include "procfs.h"
#include "vdso_area.h"
#include "vdso_patch.h"
#include "vdso_plan.h"

#define STUB_TIMEOUT_S 5.0

struct cp_vdso_patch {
	pid_t pid;
	struct cp_vdso_plan plan;
	uint64_t table;			/* the counter table in the target */
	uint64_t *words;		/* a copy of it */
	uint64_t base[CP_PATCH_SLOT_WORDS];	/* the sums at attach */
	struct cp_vdso_patch_info info;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A line "Key:\tvalue" of /proc/PID/status, copied into val. */
static bool status_field(pid_t pid, const char *key, char *val, size_t size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			snprintf(val, size, "%s", line + klen + 1);
			found = true;
		}
	fclose(f);
	return found;
}

/* What forbids the patch before anything is touched. */
static int refuse_early(pid_t pid, struct cp_error *err)
{
	char val[128], path[64];
	unsigned char ident[EI_NIDENT];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, ident, sizeof(ident));

		close(fd);
		if (n == EI_NIDENT && ident[EI_CLASS] == ELFCLASS32)
			return cp_fail(err, CP_EXIT_PROFILE, "process %d is a 32-bit program", pid);
	}
	if (status_field(pid, "Seccomp", val, sizeof(val)) && atoi(val) == SECCOMP_MODE_STRICT)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d runs in seccomp's strict mode", pid);
	if (status_field(pid, "x86_Thread_features", val, sizeof(val)) && strstr(val, "shstk"))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d uses shadow stacks", pid);
	return 0;
}

/* clockprof's own vDSO: the same kernel's image, never patched. */
static int pristine_image(size_t size, const uint8_t **image, struct cp_error *err)
{
	uint64_t start, end;

	*image = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	if (!*image || cp_proc_maps_find_vdso(getpid(), &start, &end) ||
	    start != (uint64_t)*image)
		return cp_fail(err, CP_EXIT_PROFILE, "clockprof has no vDSO of its own to compare with");
	if (end - start != size)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the target's vDSO is not this kernel's 64-bit one (%zu bytes, not %zu)",
			       size, (size_t)(end - start));
	return 0;
}

/* Writes the plan's bytes that the target's image does not hold yet: the
 * code (never run until a site points at it) and the springboards. Bytes
 * already equal are left alone, so code a leftover patch may be running
 * is never rewritten. */
static int write_code(struct cp_vdso_patch *p, const uint8_t *target)
{
	const struct cp_vdso_plan *plan = &p->plan;

	for (uint64_t i = 0; i < plan->size; i++) {
		uint64_t j = i;

		if (target[i] == plan->bytes[i] ||
		    (i >= plan->area + 16 && i < plan->area + sizeof(struct cp_vdso_area_header)))
			continue;
		while (j < plan->size && target[j] != plan->bytes[j])
			j++;
		if (cp_proc_mem_write(p->pid, plan->base + i, plan->bytes + i, j - i))
			return -1;
		cp_patch_step();
		i = j;
	}
	return 0;
}

/* Reads the target's image, plans the patch from the pristine one and
 * writes the code. */
static int prepare(struct cp_vdso_patch *p, struct cp_error *err)
{
	uint64_t start, end, differs = 0;
	const uint8_t *pristine;
	uint8_t *target;
	char why[256];
	int rc = -1;

	if (cp_proc_maps_find_vdso(p->pid, &start, &end))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no vDSO mapped", p->pid);
	if (pristine_image(end - start, &pristine, err))
		return -1;
	if (!(target = malloc(end - start)) || cp_proc_mem_read(p->pid, start, target, end - start)) {
		free(target);
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the vDSO of process %d", p->pid);
	}
	if (cp_vdso_plan_make(pristine, end - start, start, &p->plan, why, sizeof(why)))
		cp_fail(err, CP_EXIT_PROFILE, "the vDSO cannot be patched: %s", why);
	else if (cp_vdso_plan_classify(&p->plan, pristine, target, &differs) == CP_VDSO_FOREIGN)
		cp_fail(err, CP_EXIT_PROFILE,
			"the vDSO of process %d was changed by another tool (at +0x%llx)", p->pid,
			(unsigned long long)differs);
	else if (write_code(p, target))
		cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d", p->pid);
	else
		rc = 0;
	p->info.reused = !rc && !memcmp(target + p->plan.area, CP_VDSO_AREA_MAGIC, 16);
	free(target);
	return rc;
}

static uint64_t header_addr(const struct cp_vdso_patch *p)
{
	return p->plan.base + p->plan.area;
}

static int read_header(const struct cp_vdso_patch *p, struct cp_vdso_area_header *h)
{
	return cp_proc_mem_read(p->pid, header_addr(p), h, sizeof(*h));
}

/* The stub's syscalls exactly as the target's seccomp filters will see
 * them: mprotect (writable), mmap (the table), mprotect (back). */
static void stub_syscalls(const struct cp_vdso_patch *p, struct seccomp_data d[3])
{
	static const int nr[3] = { SYS_mprotect, SYS_mmap, SYS_mprotect };
	const uint64_t args[3][6] = {
		{ p->plan.base, p->plan.size, 7 },
		{ 0, CP_PATCH_TABLE_SIZE, 3, 0x22, (uint64_t)-1, 0 },
		{ p->plan.base, p->plan.size, 5 },
	};

	for (int i = 0; i < 3; i++) {
		d[i] = (struct seccomp_data){ .nr = nr[i], .arch = AUDIT_ARCH_X86_64,
			.instruction_pointer = header_addr(p) + cp_vdso_stub_syscall_ips[i] };
		memcpy(d[i].args, args[i], sizeof(d[i].args));
	}
}

/* While a thread is held: it must have a thread pointer (the thunks read
 * fs:0), and the target's seccomp filters must allow the stub. */
static int check_held(void *ctx, pid_t tid, struct cp_error *err)
{
	const struct cp_vdso_patch *p = ctx;
	struct user_regs_struct r;
	struct seccomp_data calls[3];
	char why[160], mode[16];
	int ok;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read thread %d's registers", tid);
	if (!r.fs_base)
		return cp_fail(err, CP_EXIT_PROFILE, "thread %d has no thread pointer (fs)", tid);
	if (!status_field(p->pid, "Seccomp", mode, sizeof(mode)) || atoi(mode) != SECCOMP_MODE_FILTER)
		return 0;
	stub_syscalls(p, calls);
	ok = cp_seccomp_allows(tid, calls, 3, why, sizeof(why));
	if (ok < 0)
		return cp_fail(err, CP_EXIT_PROFILE,
			       "process %d runs under a seccomp filter that cannot be read", p->pid);
	return ok ? 0 : cp_fail(err, CP_EXIT_PROFILE, "process %d: %s", p->pid, why);
}

/* Asks the stub for cmd and waits until it says it is done. */
static int run_stub(struct cp_vdso_patch *p, enum cp_vdso_area_cmd cmd, double *pause_ms,
		    struct cp_error *err)
{
	struct cp_vdso_area_header h;
	struct cp_hijack hj;
	double until;

	if (read_header(p, &h))
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid);
	h.table_size = CP_PATCH_TABLE_SIZE;
	h.vdso_base = p->plan.base;
	h.vdso_len = p->plan.size;
	h.cmd = cmd;
	h.gen_req = h.gen_done + 1;
	h.status = 0;
	h.nsites = (uint64_t)p->plan.nsites;
	for (int i = 0; i < p->plan.nsites; i++)
		h.sites[i] = (struct cp_vdso_area_site){ p->plan.base + p->plan.site[i].qword,
			p->plan.site[i].original, p->plan.site[i].patched, 0 };
	if (cp_proc_mem_write(p->pid, header_addr(p) + 16, (char *)&h + 16, sizeof(h) - 16))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot write into the vDSO of process %d", p->pid);
	cp_patch_step();
	if (cp_hijack_thread(p->pid, header_addr(p) + CP_VDSO_STUB_OFFSET, check_held, p, &hj, err))
		return -1;
	*pause_ms = hj.held_ms;
	p->info.tid = hj.tid;
	p->info.syscall = hj.syscall;
	p->info.eintr |= hj.eintr;
	for (until = now_s() + STUB_TIMEOUT_S; now_s() < until; usleep(200)) {
		struct cp_vdso_area_header now;

		if (read_header(p, &now))
			return cp_fail(err, CP_EXIT_PROFILE, "process %d has exited", p->pid);
		if (now.gen_done != h.gen_req)
			continue;
		cp_patch_step();
		return now.status ? cp_fail(err, CP_EXIT_PROFILE,
					    "the counters could not be mapped in process %d (error %lld)",
					    p->pid, -(long long)now.err) : 0;
	}
	return cp_fail(err, CP_EXIT_PROFILE,
		       "thread %d of process %d did not finish clockprof's stub within %.0f s (its vDSO may not be writable)",
		       hj.tid, p->pid, STUB_TIMEOUT_S);
}

/* Whether every site's word reads as want (patched or original). */
static bool sites_read(const struct cp_vdso_patch *p, bool patched)
{
	for (int i = 0; i < p->plan.nsites; i++) {
		const struct cp_vdso_site *s = &p->plan.site[i];
		uint64_t word;

		if (cp_proc_mem_read(p->pid, p->plan.base + s->qword, &word, sizeof(word)) ||
		    word != (patched ? s->patched : s->original))
			return false;
	}
	return true;
}

/* The table's words summed over every slot, and the slots in use. */
static int sum_table(struct cp_vdso_patch *p, uint64_t sums[CP_PATCH_SLOT_WORDS],
		     size_t *threads, uint64_t *shared)
{
	struct iovec local = { p->words, CP_PATCH_TABLE_SIZE };
	struct iovec remote = { (void *)p->table, CP_PATCH_TABLE_SIZE };

	if (process_vm_readv(p->pid, &local, 1, &remote, 1, 0) != (ssize_t)CP_PATCH_TABLE_SIZE)
		return -1;
	memset(sums, 0, CP_PATCH_SLOT_WORDS * sizeof(*sums));
	*threads = 0;
	*shared = 0;
	for (size_t s = 0; s <= CP_PATCH_SLOTS; s++) {
		const uint64_t *w = p->words + s * CP_PATCH_SLOT_WORDS;

		for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++) {
			sums[i] += w[i];
			if (s == 0)
				*shared += w[i];
		}
		*threads += s > 0 && w[0] != 0;
	}
	return 0;
}

int cp_vdso_patch_read(struct cp_vdso_patch *p, struct cp_vdso_patch_counts *c)
{
	uint64_t sums[CP_PATCH_SLOT_WORDS];

	memset(c, 0, sizeof(*c));
	if (sum_table(p, sums, &c->threads, &c->shared))
		return -1;
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		sums[i] -= p->base[i];
	for (int k = 0; k < CP_CLOCK_SLOTS; k++) {
		c->by_clock[k] = sums[1 + k];
		c->by_entry[CP_ENTRY_CLOCK_GETTIME] += sums[1 + k];
	}
	c->by_entry[CP_ENTRY_GETTIMEOFDAY] = sums[CP_PATCH_WORD_GETTIMEOFDAY];
	c->by_entry[CP_ENTRY_TIME] = sums[CP_PATCH_WORD_TIME];
	for (int e = 0; e < CP_ENTRY_MAX; e++)
		c->total += c->by_entry[e];
	return 0;
}

void cp_vdso_patch_info(const struct cp_vdso_patch *p, struct cp_vdso_patch_info *info)
{
	*info = p->info;
}

/* The patch applied: the sites verified, the table found, the counts so
 * far taken as the baseline. */
static int apply(struct cp_vdso_patch *p, struct cp_error *err)
{
	struct cp_vdso_area_header h;
	size_t threads;
	uint64_t shared;

	if (run_stub(p, CP_VDSO_CMD_PATCH, &p->info.attach_pause_ms, err))
		return -1;
	if (read_header(p, &h) || !h.table)
		return cp_fail(err, CP_EXIT_PROFILE, "process %d has no counter table", p->pid);
	p->table = h.table;
	if (!sites_read(p, true))
		return cp_fail(err, CP_EXIT_PROFILE,
			       "the vDSO of process %d changed while it was patched (another tool?)", p->pid);
	if (!(p->words = malloc(CP_PATCH_TABLE_SIZE)) ||
	    sum_table(p, p->base, &threads, &shared))
		return cp_fail(err, CP_EXIT_PROFILE, "cannot read the counters of process %d", p->pid);
	return 0;
}

int cp_vdso_patch_attach(pid_t pid, struct cp_vdso_patch **out, struct cp_error *err)
{
	struct cp_vdso_patch *p = calloc(1, sizeof(*p));
	struct cp_error ignored;

	*out = NULL;
	if (!p)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory");
	p->pid = pid;
	p->info.syscall = -1;
	if (refuse_early(pid, err) || prepare(p, err)) {
		cp_vdso_plan_free(&p->plan);
		free(p);
		return -1;
	}
	if (apply(p, err)) {
		cp_vdso_patch_detach(p, &ignored);
		return -1;
	}
	*out = p;
	return 0;
}

int cp_vdso_patch_detach(struct cp_vdso_patch *p, struct cp_error *err)
{
	int rc = 0;

	if (!p)
		return 0;
	if (kill(p->pid, 0) == 0 && !sites_read(p, false)) {
		rc = run_stub(p, CP_VDSO_CMD_RESTORE, &p->info.detach_pause_ms, err);
		if (!rc && !sites_read(p, false) && kill(p->pid, 0) == 0)
			rc = cp_fail(err, CP_EXIT_PROFILE,
				     "the vDSO of process %d could not be restored", p->pid);
	}
	cp_vdso_plan_free(&p->plan);
	free(p->words);
	free(p);
	return rc;
}
