/* patch_sites.c - see patch_sites.h. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "grow.h"
#include "patch_sites.h"
#include "procfs.h"
#include "unwind_table.h"

#define IOV_BATCH 1024

int cp_patch_rules_from(const struct cp_unwind_table *t, struct cp_patch_rules *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; t && i < t->n; i++) {
		const struct cp_unwind_rule *r = &t->entries[i].rule;

		if (r->via == CP_VIA_NONE)
			continue; /* not a wrapper: the walk stops there */
		/* what the thunk would not follow (vdso_area.S), or cannot hold */
		if (r->via >= CP_PATCH_VIA_KEEP || r->bp_offset < SHRT_MIN ||
		    r->bp_offset > SHRT_MAX ||
		    (r->base_reg == CP_UNWIND_SP &&
		     (r->cfa_offset <= 0 || r->cfa_offset > 0x10000))) {
			out->dropped++;
			continue;
		}
		struct cp_patch_rule rule = {
			.pc = t->entries[i].pc,
			.cfa_offset = r->cfa_offset,
			.bp_offset = (__s16)r->bp_offset,
			.via_base = (__u16)(r->via |
					    (r->base_reg == CP_UNWIND_BP ? CP_PATCH_RULE_BASE_BP :
									   0)),
		};

		if (cp_patch_rules_add(out, &rule)) {
			cp_patch_rules_free(out);
			return -1;
		}
	}
	return 0;
}

int cp_patch_rules_add(struct cp_patch_rules *r, const struct cp_patch_rule *rule)
{
	if (cp_grow(&r->v, &r->cap, r->n + 1, sizeof(*r->v)))
		return -1;
	r->v[r->n++] = *rule;
	return 0;
}

void cp_patch_rules_free(struct cp_patch_rules *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* As the thunk finds it (vdso_area.S): the pc's low bits, a cheap hash
 * the read waits for, good enough for the few hundred rules of a
 * process's wrappers. */
static size_t rule_home(uint64_t pc)
{
	return (size_t)pc & (CP_PATCH_RULES - 1);
}

/* Moves n pieces of 8 bytes between here and there, in batches. */
static int write_words(pid_t pid, struct iovec *local, struct iovec *remote, size_t n)
{
	for (size_t i = 0; i < n; i += IOV_BATCH) {
		size_t k = n - i < IOV_BATCH ? n - i : IOV_BATCH;

		if (cp_proc_vm_write(pid, local + i, k, remote + i, k) != (ssize_t)(8 * k))
			return -1;
	}
	return 0;
}

int cp_patch_rules_merge(const struct cp_patch_rules *first, const struct cp_patch_rules *then,
			 struct cp_patch_rules *out)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->dropped = first->dropped + then->dropped;
	for (size_t i = 0; i < first->n && !rc; i++)
		rc = cp_patch_rules_add(out, &first->v[i]);
	for (size_t i = 0; i < then->n && !rc; i++) {
		size_t j = 0;

		while (j < first->n && first->v[j].pc != then->v[i].pc)
			j++;
		if (j == first->n)
			rc = cp_patch_rules_add(out, &then->v[i]);
	}
	if (rc)
		cp_patch_rules_free(out);
	return rc;
}

/* Where each rule goes in the table as it is (tab): the entry that holds
 * its pc, else an empty one within the probes, taken in tab; its index in
 * at[], or SIZE_MAX when it is there already as it is or finds no room;
 * replaced[i]: it takes the place of another rule for its pc (a module
 * replaced since an earlier clockprof wrote that). */
static size_t place_rules(struct cp_patch_rule *tab, const struct cp_patch_rules *r, size_t *at,
			  bool *replaced)
{
	size_t unplaced = 0;

	for (size_t i = 0; i < r->n; i++) {
		size_t home = rule_home(r->v[i].pc);

		at[i] = SIZE_MAX;
		for (size_t k = 0; k < CP_PATCH_RULE_PROBES; k++) {
			size_t pos = (home + k) & (CP_PATCH_RULES - 1);

			if (tab[pos].pc == r->v[i].pc &&
			    !memcmp(&tab[pos], &r->v[i], sizeof(tab[pos])))
				break; /* there already */
			if (tab[pos].pc == r->v[i].pc || tab[pos].pc == 0) {
				replaced[i] = tab[pos].pc != 0;
				tab[pos] = r->v[i];
				at[i] = pos;
				break;
			}
			if (k == CP_PATCH_RULE_PROBES - 1)
				unplaced++;
		}
	}
	return unplaced;
}

/* One pass of the writes: each placed rule's key (key, or 0 when zero),
 * or its words; for replaced rules only, with only_replaced. */
static int write_pass(pid_t pid, uint64_t addr, const struct cp_patch_rule *tab,
		      const struct cp_patch_rules *r, const size_t *at, const bool *replaced,
		      bool key, bool zero, struct iovec *local, struct iovec *remote)
{
	static const uint64_t nothing;
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++) {
		uint64_t off = at[i] * sizeof(*tab) + (key ? 0 : 8);

		if (at[i] == SIZE_MAX || (zero && !replaced[i]))
			continue;
		local[n] = (struct iovec){ zero ? (void *)&nothing : (char *)tab + off, 8 };
		remote[n++] = (struct iovec){ (void *)(uintptr_t)(addr + CP_PATCH_RULES_OFF + off),
					      8 };
	}
	return write_words(pid, local, remote, n);
}

int cp_patch_rules_write(pid_t pid, uint64_t addr, const struct cp_patch_rules *r, size_t *unplaced)
{
	size_t size = CP_PATCH_RULES * sizeof(struct cp_patch_rule);
	struct cp_patch_rule *tab = malloc(size);
	size_t *at = calloc(r->n + 1, sizeof(*at));
	bool *replaced = calloc(r->n + 1, sizeof(*replaced));
	struct iovec *local = calloc(r->n + 1, sizeof(*local));
	struct iovec *remote = calloc(r->n + 1, sizeof(*remote));
	struct iovec whole = { tab, size };
	struct iovec there = { (void *)(uintptr_t)(addr + CP_PATCH_RULES_OFF), size };
	int rc = -1;

	*unplaced = 0;
	if (!tab || !at || !replaced || !local || !remote ||
	    cp_proc_vm_read(pid, &whole, 1, &there, 1) != (ssize_t)size)
		goto out;
	*unplaced = place_rules(tab, r, at, replaced);
	/* A replaced rule's key cleared first; then every rule's words; then
	 * (each its own call, in order) its key. */
	if (write_pass(pid, addr, tab, r, at, replaced, true, true, local, remote) ||
	    write_pass(pid, addr, tab, r, at, replaced, false, false, local, remote) ||
	    write_pass(pid, addr, tab, r, at, replaced, true, false, local, remote))
		goto out;
	rc = 0;
out:
	free(tab);
	free(at);
	free(replaced);
	free(local);
	free(remote);
	return rc;
}

int cp_patch_sites_add_to(void *ctx, uint64_t key, uint64_t count)
{
	return cp_patch_sites_add(ctx, key, count);
}

int cp_patch_sites_add(struct cp_patch_sites *s, uint64_t key, uint64_t count)
{
	if (cp_grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -1;
	s->v[s->n++] = (struct cp_patch_site){ key, count };
	return 0;
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = ((const struct cp_patch_site *)a)->key;
	uint64_t y = ((const struct cp_patch_site *)b)->key;

	return x < y ? -1 : x > y;
}

void cp_patch_sites_normalize(struct cp_patch_sites *s)
{
	size_t w = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), by_key);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].key == s->v[w].key)
			s->v[w].count += s->v[i].count;
		else
			s->v[++w] = s->v[i];
	}
	s->n = w + 1;
}

/* The blocks of the slots in use, copied into blocks (nslots of them). */
static int read_blocks(pid_t pid, uint64_t addr, const uint64_t *counters, uint64_t *blocks,
		       size_t *nslots)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t n = 0, k = 0;

	for (size_t slot = 0; slot <= CP_PATCH_SLOTS; slot++) {
		bool in_use = slot < CP_PATCH_SLOTS && counters[(slot + 1) * CP_PATCH_SLOT_WORDS];

		if (in_use) {
			local[k] = (struct iovec){ blocks + n * 2 * CP_PATCH_SITE_ENTRIES,
						   CP_PATCH_SITE_BLOCK };
			remote[k++] =
				(struct iovec){ (void *)(uintptr_t)(addr + CP_PATCH_SITES_OFF +
								    slot * CP_PATCH_SITE_BLOCK),
						CP_PATCH_SITE_BLOCK };
			n++;
		}
		if (k == IOV_BATCH || (k && slot == CP_PATCH_SLOTS)) {
			if (cp_proc_vm_read(pid, local, k, remote, k) !=
			    (ssize_t)(k * CP_PATCH_SITE_BLOCK))
				return -1;
			k = 0;
		}
	}
	*nslots = n;
	return 0;
}

/* How many slots the counters show in use (read_blocks' test). */
static size_t slots_in_use(const uint64_t *counters)
{
	size_t n = 0;

	for (size_t slot = 0; slot < CP_PATCH_SLOTS; slot++)
		n += counters[(slot + 1) * CP_PATCH_SLOT_WORDS] != 0;
	return n;
}

int cp_patch_sites_read_blocks(pid_t pid, uint64_t addr, const uint64_t *counters,
			       uint64_t **blocks, size_t *nslots)
{
	/* Room for the slots in use alone: a block for every slot (2 MiB)
	 * was mapped and unmapped again at each read. */
	size_t used = slots_in_use(counters);

	*nslots = 0;
	/* Zeroed: gcc -fanalyzer cannot see cp_proc_vm_read fill them. */
	if (!(*blocks = calloc(used ? used : 1, CP_PATCH_SITE_BLOCK)))
		return -1;
	if (read_blocks(pid, addr, counters, *blocks, nslots) == 0)
		return 0;
	free(*blocks);
	*blocks = NULL;
	return -1;
}

int cp_patch_sites_read(pid_t pid, uint64_t addr, const uint64_t *counters,
			struct cp_patch_sites *out)
{
	uint64_t *blocks;
	size_t nslots = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (cp_patch_sites_read_blocks(pid, addr, counters, &blocks, &nslots))
		return -1;
	for (size_t i = 0; i < nslots * CP_PATCH_SITE_ENTRIES && !rc; i++)
		if (blocks[2 * i] && blocks[2 * i + 1])
			rc = cp_patch_sites_add(out, blocks[2 * i], blocks[2 * i + 1]);
	cp_patch_sites_normalize(out);
	free(blocks);
	if (rc)
		cp_patch_sites_free(out);
	return rc;
}

int cp_patch_sites_since(const struct cp_patch_sites *now, const struct cp_patch_sites *base,
			 struct cp_patch_sites *out)
{
	size_t j = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < now->n; i++) {
		uint64_t before = 0;

		while (j < base->n && base->v[j].key < now->v[i].key)
			j++;
		if (j < base->n && base->v[j].key == now->v[i].key)
			before = base->v[j].count;
		if (now->v[i].count > before &&
		    cp_patch_sites_add(out, now->v[i].key, now->v[i].count - before)) {
			cp_patch_sites_free(out);
			return -1;
		}
	}
	return 0;
}

void cp_patch_sites_free(struct cp_patch_sites *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
