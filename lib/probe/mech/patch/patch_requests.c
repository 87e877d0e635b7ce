/* patch_requests.c - see patch_requests.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "patch_requests.h"
#include "patch_table.h"
#include "procfs.h"
#include "vdso_patch.h"

static uint64_t block_addr(uint64_t table, size_t block)
{
	return table + CP_PATCH_BLOCKS_OFF + block * CP_PATCH_BLOCK;
}

/* One block's request part added to r when it is of this epoch. */
static void add_block(const uint64_t *b, uint64_t epoch, struct cp_request_sums *r)
{
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		r->syscalls[i] += b[CP_PB_SYSCALLS + i];
	if (b[CP_PB_EPOCH] != epoch + 1 || !b[CP_PB_HITS])
		return;
	r->hits += cp_pb_passed(b[CP_PB_HITS], b[CP_PB_OPENS]);
	r->requests += b[CP_PB_HITS] - 1;
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++) {
		r->in_words[i] += b[CP_PB_LAST + i] - b[CP_PB_FIRST + i];
		r->in_syscalls[i] += b[CP_PB_SC_LAST + i] - b[CP_PB_SC_FIRST + i];
	}
	for (int i = 0; i < CP_HIST_SLOTS; i++)
		r->hist[i] += b[CP_PB_HIST + i];
	if (b[CP_PB_MAX] > r->max)
		r->max = b[CP_PB_MAX];
}

/* One slot's request block and site block, added to out. */
static int add_slot(pid_t pid, uint64_t table, size_t slot, uint64_t epoch, uint64_t *b,
		    uint64_t *sites, struct cp_patch_requests *out)
{
	struct iovec local[2] = { { b, CP_PATCH_BLOCK }, { sites, CP_PATCH_SITE_BLOCK } };
	struct iovec remote[2] = {
		{ (void *)(uintptr_t)block_addr(table, slot + 1), CP_PATCH_BLOCK },
		{ (void *)(uintptr_t)(table + CP_PATCH_SITES_OFF + slot * CP_PATCH_SITE_BLOCK),
		  CP_PATCH_SITE_BLOCK }
	};

	if (cp_proc_vm_read(pid, local, 2, remote, 2) != CP_PATCH_BLOCK + CP_PATCH_SITE_BLOCK)
		return -1;
	add_block(b, epoch, &out->sums);
	if (b[CP_PB_EPOCH] != epoch + 1 || !b[CP_PB_HITS])
		return 0;
	for (int e = 0; e < CP_PATCH_SITE_ENTRIES; e++) {
		uint64_t n = b[CP_PB_SITES_LAST + e] - b[CP_PB_SITES_FIRST + e];

		if (sites[2 * e] && n && cp_patch_sites_add(&out->sites, sites[2 * e], n))
			return -1;
	}
	return 0;
}

/* Every block of the slots in use in words, and block 0, summed into out
 * for epoch (lost: block 0's hits, all of them). */
static int read_blocks(pid_t pid, uint64_t table, uint64_t epoch, const uint64_t *words,
		       struct cp_patch_requests *out)
{
	uint64_t *b = malloc(CP_PATCH_BLOCK), sites[2 * CP_PATCH_SITE_ENTRIES];
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!b || cp_proc_mem_read(pid, block_addr(table, 0), b, CP_PATCH_BLOCK))
		goto out;
	out->sums.lost = b[CP_PB_HITS];
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		out->sums.syscalls[i] += b[CP_PB_SYSCALLS + i];
	rc = 0;
	for (size_t s = 0; s < CP_PATCH_SLOTS && !rc; s++)
		if (words[(s + 1) * CP_PATCH_SLOT_WORDS])
			rc = add_slot(pid, table, s, epoch, b, sites, out);
	cp_patch_sites_normalize(&out->sites);
out:
	free(b);
	if (rc)
		cp_patch_requests_free(out);
	return rc;
}

int cp_patch_requests_mark(pid_t pid, int pin, uint64_t table, const uint64_t *words,
			   struct cp_patch_requests_mark *mark)
{
	struct cp_patch_requests now;
	uint64_t epoch;

	if (cp_proc_mem_read(pid, block_addr(table, 0) + CP_PB_EPOCH * 8, &epoch, sizeof(epoch)) ||
	    read_blocks(pid, table, epoch, words, &now))
		return -1;
	mark->lost = now.sums.lost;
	memcpy(mark->syscalls, now.sums.syscalls, sizeof(mark->syscalls));
	cp_patch_requests_free(&now);
	mark->epoch = epoch + 1;
	return cp_proc_mem_write_pinned(pin, pid, block_addr(table, 0) + CP_PB_EPOCH * 8,
					&mark->epoch, 8);
}

int cp_patch_requests_read(pid_t pid, uint64_t table, const struct cp_patch_requests_mark *mark,
			   const uint64_t *words, struct cp_patch_requests *out)
{
	if (read_blocks(pid, table, mark->epoch, words, out))
		return -1;
	out->sums.lost -= out->sums.lost >= mark->lost ? mark->lost : out->sums.lost;
	return 0;
}

void cp_patch_requests_free(struct cp_patch_requests *r)
{
	cp_patch_sites_free(&r->sites);
}

uint64_t cp_patch_syscalls_add(const __u64 *w, const uint64_t *base, struct cp_read_counts *into)
{
	uint64_t all = 0;

	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++) {
		uint64_t n = w[i] - (base ? base[i] : 0);

		into->reads += n;
		into->by_entry[cp_patch_word_entry(i)] += n;
		into->by_clock[cp_patch_word_clock(i)] += n;
		into->by_path[CP_PATH_SYSCALL] += n;
		all += n;
	}
	return all;
}

uint64_t cp_patch_requests_reads(const struct cp_patch_requests *r)
{
	uint64_t n = 0;

	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		n += r->sums.in_words[i] + r->sums.in_syscalls[i];
	return n;
}

int cp_patch_requests_read_whole(pid_t pid, uint64_t table, struct cp_patch_requests *out)
{
	uint64_t *words = malloc(CP_PATCH_TABLE_SIZE);
	int rc = -1;

	if (words && cp_proc_mem_read(pid, table, words, CP_PATCH_TABLE_SIZE) == 0)
		rc = read_blocks(pid, table, 0, words, out);
	free(words);
	return rc;
}

uint64_t cp_patch_requests_add(const struct cp_patch_requests *r,
			       const struct cp_patch_requests_mark *mark, bool hres, bool requests,
			       struct cp_totals *t)
{
	const struct cp_request_sums *s = &r->sums;
	struct cp_vdso_patch_counts c;
	uint64_t syscalls = cp_patch_syscalls_add(s->syscalls, mark->syscalls, &t->all);

	if (!requests || (!s->hits && !s->lost))
		return syscalls; /* no boundary in the target: no request */
	cp_patch_counts_between(NULL, (const uint64_t *)s->in_words, &c);
	cp_patch_counts_add_into(&c, hres, &t->in_requests);
	cp_patch_syscalls_add(s->in_syscalls, NULL, &t->in_requests);
	t->requests += s->requests;
	t->boundary_hits += s->hits + s->lost;
	for (int i = 0; i < CP_HIST_SLOTS; i++)
		t->hist[i] += s->hist[i];
	if (s->max > t->max_reads_per_request)
		t->max_reads_per_request = s->max;
	return syscalls;
}

void cp_patch_requests_settle(struct cp_patch_requests *r, const struct cp_request_sums *at_exit,
			      const struct cp_patch_requests_mark *mark,
			      struct cp_patch_sites *sites)
{
	cp_patch_requests_free(r);
	r->sums = *at_exit;
	r->sums.lost -= at_exit->lost >= mark->lost ? mark->lost : at_exit->lost;
	if (sites) {
		r->sites = *sites;
		memset(sites, 0, sizeof(*sites));
	}
}
