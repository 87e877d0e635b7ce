/* patch_sites.h - call sites through the vDSO patch. The thunk in the
 * target steps out of clock wrappers by rules clockprof writes into the
 * table (from the same CFI rules the BPF program walks by,
 * lib/symbols/include/unwind_table.h) and counts each read at its call
 * site in its thread's block (layout: CP_PATCH_* in probes/clockreads.h).
 * This writes the rules and reads the blocks back, summed over threads. */
#ifndef CP_PATCH_SITES_H
#define CP_PATCH_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"

struct cp_unwind_table;

/* One call site: its key (cp_patch_site_pc/via/entry) and reads. */
struct cp_patch_site {
	uint64_t key, count;
};

/* Sites sorted by key, keys unique. */
struct cp_patch_sites {
	struct cp_patch_site *v;
	size_t n, cap;
};

/* The wrapper rules of t in the thunk's form, ready to be written. */
struct cp_patch_rules {
	struct cp_patch_rule *v;
	size_t n, cap;
	size_t dropped; /* rules the thunk cannot hold (BP offset,
				 * wrapper index out of range) */
};

int cp_patch_rules_from(const struct cp_unwind_table *t, struct cp_patch_rules *out);
/* Appends one rule; -1 out of memory. */
int cp_patch_rules_add(struct cp_patch_rules *r, const struct cp_patch_rule *rule);
void cp_patch_rules_free(struct cp_patch_rules *r);

/* first, then the rules of then for other pcs (frame hops before the
 * wrappers' rules: where both have a pc, the walk hops as the uprobes'). */
int cp_patch_rules_merge(const struct cp_patch_rules *first, const struct cp_patch_rules *then,
			 struct cp_patch_rules *out);

/* Writes the rules into the table at addr in pid's memory: each into an
 * empty entry, its words before its key, so that a thread never reads a
 * rule half-written; a rule already there for the same pc stays if it is
 * the same, else its key is cleared before it is rewritten (a reused
 * table whose module was replaced). How many found no room within the
 * probes: said by *unplaced. -1 when the target's memory cannot be read
 * or written. */
int cp_patch_rules_write(pid_t pid, uint64_t addr, const struct cp_patch_rules *r,
			 size_t *unplaced);

/* The sites of every thread slot in use (counters: the table's counter
 * words as last read, telling which slots are), summed by key. -1 when
 * the target's memory cannot be read. */
int cp_patch_sites_read(pid_t pid, uint64_t addr, const uint64_t *counters,
			struct cp_patch_sites *out);
/* The site blocks of the slots in use in counters (a copy of the table's
 * counters), raw, in slot order (*nslots of them, malloc'd). */
int cp_patch_sites_read_blocks(pid_t pid, uint64_t addr, const uint64_t *counters,
			       uint64_t **blocks, size_t *nslots);
/* Adds one key's count (sums taken elsewhere: the BPF program's at exit). */
int cp_patch_sites_add(struct cp_patch_sites *s, uint64_t key, uint64_t count);
/* The same as a callback of the session's (ctx: the struct cp_patch_sites). */
int cp_patch_sites_add_to(void *ctx, uint64_t key, uint64_t count);
/* Sorts by key and merges equal keys. */
void cp_patch_sites_normalize(struct cp_patch_sites *s);
/* now - base, key by key (both normalized); keys with no reads left out. */
int cp_patch_sites_since(const struct cp_patch_sites *now, const struct cp_patch_sites *base,
			 struct cp_patch_sites *out);
void cp_patch_sites_free(struct cp_patch_sites *s);

#endif
