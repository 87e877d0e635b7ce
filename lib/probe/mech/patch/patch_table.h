/* patch_table.h - the vDSO patch's counters, read from the target's memory
 * (process_vm_readv: nothing stops) and summed over its thread slots
 * (layout: CP_PATCH_* in probes/clockreads.h). */
#ifndef CP_PATCH_TABLE_H
#define CP_PATCH_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "clockreads.h"
#include "patch_sites.h"

struct cp_vdso_patch_counts;

struct cp_patch_table {
	pid_t pid;
	uint64_t addr;				      /* in the target; 0: none */
	uint64_t *words;			      /* the last copy */
	uint64_t base[CP_PATCH_SLOT_WORDS];	      /* the sums counted from */
	uint64_t last[CP_PATCH_SLOT_WORDS];	      /* the sums at the last read */
	struct cp_patch_sites base_sites, last_sites; /* the same, by call site */
	bool settled;				      /* last holds the sums at the target's exit */
	/* Called between the two reads of the counts at each read's instant
	 * (not the mark's): what must move with them. */
	void (*on_read)(void *arg);
	void *on_read_arg;
};

/* Sets the table up for reading (its copy allocated); -1 out of memory. */
int cp_patch_table_open(struct cp_patch_table *t, pid_t pid, uint64_t addr);
/* A copy allocated ahead for the next table opened (~0.3 ms here), if
 * none is kept: while clockprof waits on something else. */
void cp_patch_table_warm(void);
/* What is read between two reads of the counts, at their instant (try:
 * 0 on the first); -1 when it cannot be. */
typedef int (*cp_patch_table_between)(struct cp_patch_table *t, int try, void *arg);
/* Counts from now on (the window opens): the counts and the sites taken
 * at one instant, with what also reads (NULL: nothing; the requests'
 * blocks, moved to a new epoch), read again while the counts moved
 * (CP_PATCH_INSTANT_TRIES; the window's end reads alike). A target that
 * never pauses keeps the counts before the last try's sites (a read is
 * counted in its slot before its site: the sites' base never holds a
 * read the counts' lacks). -1 when the target cannot be read. */
int cp_patch_table_mark(struct cp_patch_table *t, cp_patch_table_between also, void *arg);
/* ... for a table just mapped, whose counters are zeros: not read. */
void cp_patch_table_mark_zeros(struct cp_patch_table *t);
/* The counts since the base: 0. When the target cannot be read any more
 * (it exited), the last counts read, or those settled: 1 and 0. -1 when
 * there is no table. */
int cp_patch_table_read(struct cp_patch_table *t, struct cp_vdso_patch_counts *c);
/* The sums taken elsewhere when the target exited (the BPF program's):
 * the last counts from now on; sites, when not NULL, the last sites
 * (normalized; taken over). */
void cp_patch_table_settle(struct cp_patch_table *t, const uint64_t sums[CP_PATCH_SLOT_WORDS],
			   struct cp_patch_sites *sites);
/* The reads by call site since the base, as of the last read. */
int cp_patch_table_sites(const struct cp_patch_table *t, struct cp_patch_sites *out);
void cp_patch_table_close(struct cp_patch_table *t);

/* The reads between two sets of sums (base NULL: from zero), by entry and
 * clock (threads and shared left 0). */
void cp_patch_counts_between(const uint64_t base[CP_PATCH_SLOT_WORDS],
			     const uint64_t last[CP_PATCH_SLOT_WORDS],
			     struct cp_vdso_patch_counts *c);
/* Reads counted in a table (c) added to a window's totals, by entry,
 * clock and path (hres: cp_session_config.vdso_hres). */
void cp_patch_counts_add(const struct cp_vdso_patch_counts *c, bool hres, struct cp_totals *t);
/* ... into one set of counts (a window's requests: t->in_requests). */
void cp_patch_counts_add_into(const struct cp_vdso_patch_counts *c, bool hres,
			      struct cp_read_counts *into);
/* A table read once, whole: the sums over its slots and its sites (a
 * followed process's, counted from zero); -1 when it cannot be read (the
 * process is gone). */
int cp_patch_table_read_whole(pid_t pid, uint64_t addr, uint64_t sums[CP_PATCH_SLOT_WORDS],
			      struct cp_patch_sites *sites);

#endif
