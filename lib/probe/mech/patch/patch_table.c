/* patch_table.c - see patch_table.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "patch_table.h"
#include "procfs.h"
#include "vdso_patch.h"

/* The copy of the last table closed, kept for the next one: a copy's
 * pages would be faulted in by its first read, and in this kind of VM
 * (page tables kept by the hypervisor) the 128 faults of a fresh one cost
 * ~4 ms (process_vm_readv's 3.5 ms, the first sum's 1 ms; later reads
 * 0.2 ms). The self-test's table closes before the target's is read (its
 * mark, as the window opens): the target's first read finds warm pages.
 * A fresh copy is mapped populated: its pages come in one call, at half
 * a fault's cost each (516 KiB: 0.6 ms, against 1.2 ms touched). */
static uint64_t *_Atomic spare_words;

static uint64_t *copy_new(void)
{
	void *w = mmap(NULL, CP_PATCH_TABLE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return w == MAP_FAILED ? NULL : w;
}

static void copy_free(uint64_t *w)
{
	if (w)
		munmap(w, CP_PATCH_TABLE_SIZE);
}

int cp_patch_table_open(struct cp_patch_table *t, pid_t pid, uint64_t addr)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->addr = addr;
	t->words = atomic_exchange(&spare_words, NULL);
	if (!t->words)
		t->words = copy_new();
	return t->words ? 0 : -1;
}

void cp_patch_table_warm(void)
{
	uint64_t *w;

	if (atomic_load(&spare_words) || !(w = copy_new()))
		return;
	copy_free(atomic_exchange(&spare_words, w));
}

/* Every word summed over the slots; threads: slots in use. The sums
 * are kept in locals, the shared slot's taken apart: summed through the
 * pointers, whose stores the compiler had to make at every word (they
 * might have been the same), the 65,000 words took 42-58 us a pass here,
 * 15-22 us so (about ten passes an attach). */
static int sum(struct cp_patch_table *t, uint64_t sums[CP_PATCH_SLOT_WORDS], size_t *threads,
	       uint64_t *shared)
{
	struct iovec local = { t->words, CP_PATCH_TABLE_SIZE };
	struct iovec remote = { (void *)(uintptr_t)t->addr, CP_PATCH_TABLE_SIZE };
	uint64_t acc[CP_PATCH_SLOT_WORDS] = { 0 }, in_shared = 0;
	size_t used = 0;

	if (!t->words ||
	    cp_proc_vm_read(t->pid, &local, 1, &remote, 1) != (ssize_t)CP_PATCH_TABLE_SIZE)
		return -1;
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++)
		in_shared += t->words[i];
	for (size_t s = 0; s <= CP_PATCH_SLOTS; s++) {
		const uint64_t *w = t->words + s * CP_PATCH_SLOT_WORDS;

		for (int i = 0; i < CP_PATCH_SLOT_WORDS; i++)
			acc[i] += w[i];
		used += s > 0 && w[0] != 0;
	}
	acc[0] = 0; /* a slot's key, not a count */
	memcpy(sums, acc, sizeof(acc));
	*threads = used;
	*shared = in_shared;
	return 0;
}

/* The counts, then between (the sites, and whatever else must be of the
 * counts' instant), then the counts again; all again while the counts
 * moved in between (CP_PATCH_INSTANT_TRIES). first: the counts read
 * before between on the last try, sums: after it (the same when they
 * stood still; a target that never pauses leaves the last try's). 0; 1
 * when the counts could not be read again (gone in between); -1 when
 * not at all, or when between failed. */
static int at_one_instant(struct cp_patch_table *t, uint64_t first[CP_PATCH_SLOT_WORDS],
			  uint64_t sums[CP_PATCH_SLOT_WORDS], size_t *threads, uint64_t *shared,
			  cp_patch_table_between between, void *arg)
{
	if (sum(t, sums, threads, shared))
		return -1;
	for (int try = 0; try < CP_PATCH_INSTANT_TRIES; try++) {
		memcpy(first, sums, CP_PATCH_SLOT_WORDS * sizeof(*sums));
		if (between(t, try, arg))
			return -1;
		if (sum(t, sums, threads, shared))
			return 1;
		if (!memcmp(first, sums, CP_PATCH_SLOT_WORDS * sizeof(*sums)))
			break;
	}
	return 0;
}

/* The start's between: the caller's, then the sites' base. */
struct mark_between {
	cp_patch_table_between also;
	void *arg;
};

static int mark_sites(struct cp_patch_table *t, int try, void *arg)
{
	const struct mark_between *mb = arg;

	if (mb->also && mb->also(t, try, mb->arg))
		return -1;
	cp_patch_sites_free(&t->base_sites);
	return cp_patch_sites_read(t->pid, t->addr, t->words, &t->base_sites);
}

int cp_patch_table_mark(struct cp_patch_table *t, cp_patch_table_between also, void *arg)
{
	struct mark_between mb = { also, arg };
	uint64_t after[CP_PATCH_SLOT_WORDS];
	size_t threads;
	uint64_t shared;

	/* The counts before the sites (and the caller's blocks) of the last
	 * try: those never hold a read the counts lack. Gone in between:
	 * nothing to count from. */
	if (at_one_instant(t, t->base, after, &threads, &shared, mark_sites, &mb))
		return -1;
	memcpy(t->last, t->base, sizeof(t->last));
	return 0;
}

void cp_patch_table_mark_zeros(struct cp_patch_table *t)
{
	memset(t->base, 0, sizeof(t->base));
	memset(t->last, 0, sizeof(t->last));
	cp_patch_sites_free(&t->base_sites);
}

/* The sites now, of the slots in use in the counters just read. A read
 * is counted in its slot before its site: sites read before the counters
 * they are compared with never hold more reads than those (the window's
 * end: read_sites, then sum); counters read before the sites counted
 * from never miss a read those hold (its start: cp_patch_table_mark). */
static int read_sites(struct cp_patch_table *t, int try, void *arg)
{
	struct cp_patch_sites now;

	(void)try;
	(void)arg;
	if (t->on_read) /* first: right after the counts */
		t->on_read(t->on_read_arg);
	if (cp_patch_sites_read(t->pid, t->addr, t->words, &now))
		return 0; /* the last sites read stay */
	cp_patch_sites_free(&t->last_sites);
	t->last_sites = now;
	return 0;
}

int cp_patch_table_read(struct cp_patch_table *t, struct cp_vdso_patch_counts *c)
{
	uint64_t sums[CP_PATCH_SLOT_WORDS], before[CP_PATCH_SLOT_WORDS];
	size_t threads = 0;
	uint64_t shared = 0;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	/* The sites at the counts' instant: a read made as they were read
	 * would be counted with no site (a request that came as the window
	 * closed was said to have none). */
	if (!t->settled)
		rc = at_one_instant(t, before, sums, &threads, &shared, read_sites, NULL);
	if (rc == 0)
		memcpy(t->last, sums, sizeof(sums));
	else if (!t->addr)
		return -1;
	else if (!t->settled)
		rc = 1; /* gone: the last counts read */
	else
		rc = 0;
	cp_patch_counts_between(t->base, t->last, c);
	c->threads = threads;
	c->shared = shared;
	return rc;
}

void cp_patch_counts_between(const uint64_t base[CP_PATCH_SLOT_WORDS],
			     const uint64_t last[CP_PATCH_SLOT_WORDS],
			     struct cp_vdso_patch_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++) {
		uint64_t n = last[i] - (base ? base[i] : 0);

		c->by_entry[cp_patch_word_entry(i)] += n;
		if (cp_patch_word_entry(i) == CP_ENTRY_CLOCK_GETTIME)
			c->by_clock[cp_patch_word_clock(i)] += n;
	}
	for (int e = 0; e < CP_ENTRY_MAX; e++)
		c->total += c->by_entry[e];
}

int cp_patch_table_read_whole(pid_t pid, uint64_t addr, uint64_t sums[CP_PATCH_SLOT_WORDS],
			      struct cp_patch_sites *sites)
{
	struct cp_patch_table t;
	size_t threads;
	uint64_t shared;
	int rc;

	if (cp_patch_table_open(&t, pid, addr))
		return -1;
	/* counters, sites, counters: the sites never hold more than the sums */
	rc = sum(&t, sums, &threads, &shared) || cp_patch_sites_read(pid, addr, t.words, sites) ||
			     sum(&t, sums, &threads, &shared) ?
		     -1 :
		     0;
	cp_patch_table_close(&t);
	return rc;
}

void cp_patch_table_settle(struct cp_patch_table *t, const uint64_t sums[CP_PATCH_SLOT_WORDS],
			   struct cp_patch_sites *sites)
{
	memcpy(t->last, sums, sizeof(t->last));
	t->settled = true;
	if (sites) {
		cp_patch_sites_free(&t->last_sites);
		t->last_sites = *sites;
		memset(sites, 0, sizeof(*sites));
	}
}

int cp_patch_table_sites(const struct cp_patch_table *t, struct cp_patch_sites *out)
{
	return cp_patch_sites_since(&t->last_sites, &t->base_sites, out);
}

void cp_patch_table_close(struct cp_patch_table *t)
{
	if (t->words)
		copy_free(atomic_exchange(&spare_words, t->words));
	t->words = NULL;
	cp_patch_sites_free(&t->base_sites);
	cp_patch_sites_free(&t->last_sites);
}

void cp_patch_counts_add_into(const struct cp_vdso_patch_counts *c, bool hres,
			      struct cp_read_counts *into)
{
	into->reads += c->total;
	for (int e = 0; e < CP_ENTRY_MAX; e++)
		into->by_entry[e] += c->by_entry[e];
	for (int k = 0; k < CP_CLOCK_SLOTS; k++) {
		into->by_clock[k] += c->by_clock[k];
		into->by_path[cp_vdso_entry_path(CP_ENTRY_CLOCK_GETTIME,
						 k == CP_CLOCK_OTHER ? -1 : k, hres)] +=
			c->by_clock[k];
	}
	for (int e = CP_ENTRY_GETTIMEOFDAY; e <= CP_ENTRY_TIME; e++) { /* CLOCK_REALTIME */
		into->by_clock[0] += c->by_entry[e];
		into->by_path[cp_vdso_entry_path(e, 0, hres)] += c->by_entry[e];
	}
}

void cp_patch_counts_add(const struct cp_vdso_patch_counts *c, bool hres, struct cp_totals *t)
{
	cp_patch_counts_add_into(c, hres, &t->all);
}
