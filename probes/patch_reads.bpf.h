/* patch_reads.bpf.h - the vDSO patch's counts as the boundary program
 * reads them (lib/probe/mech/patch writes them in the target): a thread's
 * (or, in Go, a goroutine's) slot and site block at each boundary, its
 * request kept per goroutine for Go, and the table summed at the
 * target's exit or exec. Part of clockreads.bpf.c, included where the
 * helpers it uses are defined; its own file because it is one mechanism's
 * side of the program. */
#ifndef CP_PATCH_READS_BPF_H
#define CP_PATCH_READS_BPF_H

/* The key the thunk files the current thread's reads under (clockreads.h):
 * its thread pointer, or its goroutine; 0: none. */
static __always_inline __u64 patch_key(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fs = task->thread.fsbase, key = 0;

	if (!fs || bpf_probe_read_user(&key, sizeof(key), (void *)fs))
		return 0;
	if (!key && !bpf_probe_read_user(&key, sizeof(key), (void *)(fs - 8)) && key)
		key |= 1;
	return key;
}

/* A thread's slot in the target's vDSO patch table, as read_patch_slot
 * finds it: its words, and its index (left as it was when no slot is
 * probed). */
struct patch_slot {
	__u64 words[CP_PATCH_SLOT_WORDS];
	__u64 index;
};

/* The current thread's slot words in the target's vDSO patch table, found
 * as the thunk finds them. 1 found; 0 it has none (an empty slot came
 * first: it has read nothing through the vDSO) and words are zero; -1 not
 * known (no key, or every probed slot taken: its reads went to the shared
 * slot). In a followed process (wiped: its table was wiped at its fork) a
 * page that cannot be read is one it never wrote: an empty slot. A global
 * function: the verifier walks its probes once, where inlined they were
 * walked again for each state of each caller (a boundary's program, with
 * processes followed, reached them in dozens). */
__noinline int read_patch_slot(__u64 table, __u64 key, struct patch_slot *s, bool wiped)
{
	__u64 idx = (key * CP_PATCH_HASH) >> CP_PATCH_HASH_SHIFT;

	if (!s)
		return -1;
	__builtin_memset(s->words, 0, sizeof(s->words));
	for (int i = 0; i < CP_PATCH_PROBES && key; i++) {
		__u64 at = table +
			   CP_PATCH_SLOT_WORDS * 8 * (1 + ((idx + i) & (CP_PATCH_SLOTS - 1)));

		if (bpf_probe_read_user(s->words, sizeof(s->words), (void *)at)) {
			if (!wiped)
				break;
			__builtin_memset(s->words, 0, sizeof(s->words));
			s->index = (idx + i) & (CP_PATCH_SLOTS - 1);
			return 0;
		}
		s->index = (idx + i) & (CP_PATCH_SLOTS - 1);
		if (s->words[0] == key)
			return 1;
		if (s->words[0] == 0)
			return 0;
	}
	__builtin_memset(s->words, 0, sizeof(s->words));
	return -1;
}

/* What a boundary found of the thread in the vDSO patch's table. */
struct patch_look {
	__u64 slot;  /* its slot's index; CP_PATCH_SLOTS: none yet */
	__u64 reads; /* its reads since its last boundary, when seen */
	bool seen;   /* the last boundary's figures are this slot's */
};

/* Where add_word_reads is, between two words. */
struct word_reads_walk {
	struct cp_thread *t;
	struct patch_look *pl;
	const __u64 *words;
	const __u64 *last;
	bool syscall;
};

/* Word k + 1's reads since the last boundary join the request (a
 * bpf_loop callback: unrolled, the fifteen words' branches were walked
 * for every state a boundary reached them in, some 7,500 of the 21,700
 * instructions a syscall: boundary under the patch cost every start-up). */
static long add_word_read(__u32 k, void *ctx)
{
	struct word_reads_walk *w = ctx;
	struct cp_thread *t = w->t;
	__u32 i = k + 1;
	int entry, clock, path;
	__u64 n;

	if (i >= CP_PATCH_SLOT_WORDS)
		return 1;
	n = w->words[i] - w->last[i];
	entry = cp_patch_word_entry(i);
	clock = cp_patch_word_clock(i);
	path = w->syscall ? CP_PATH_SYSCALL :
			    entry_path(entry, clock == CP_CLOCK_OTHER ? -1 : clock);
	w->pl->reads += n;
	if (!n || t->boundary_phase != CP_PHASE_CLOCK || clock < 0 || clock >= CP_CLOCK_SLOTS ||
	    path < 0 || path >= CP_PATH_MAX)
		return 0;
	cp_add(&t->cur.reads, n);
	cp_add(&t->cur.by_entry[entry], n);
	cp_add(&t->cur.by_path[path], n);
	cp_add(&t->cur.by_clock[clock], n);
	return 0;
}

/* The reads in words[1..15] (a slot's layout: cp_patch_word_entry) since
 * last[] join the thread's request (when pl->seen), each word's on its
 * entry's path, or on the syscall path (syscall: the words of its reads
 * through syscall()); last[] then holds words. */
static __always_inline void add_word_reads(struct cp_thread *t, struct patch_look *pl,
					   const __u64 *words, __u64 *last, bool syscall)
{
	struct word_reads_walk w = {
		.t = t, .pl = pl, .words = words, .last = last, .syscall = syscall
	};

	if (pl->seen)
		bpf_loop(CP_PATCH_SLOT_WORDS - 1, add_word_read, &w, 0);
	__builtin_memcpy(last, words, CP_PATCH_SLOT_WORDS * 8);
}

/* The reads the thread made through syscall() since its last boundary
 * (its block's CP_PB_SYSCALLS words, which only grow; words: room for
 * them) join its request. syscall() is counted in the target only where
 * the boundary is closed there (patch_boundary.h); this program closes
 * the requests then only once a syscall: boundary fell back to sys_enter
 * (check_wrapper), and their syscall() reads are here. A block that
 * cannot be read is left for the next boundary. */
static __always_inline void add_patch_syscalls(struct cp_thread *t, struct patch_look *pl,
					       __u64 table, __u64 *words)
{
	__u64 at = table + CP_PATCH_BLOCKS_OFF + (1 + pl->slot) * CP_PATCH_BLOCK +
		   CP_PB_SYSCALLS * 8;

	if (!bpf_probe_read_user(words, CP_PATCH_SLOT_WORDS * 8, (void *)at))
		add_word_reads(t, pl, words, t->patch_sc_last, true);
}

/* With the vDSO patch, the reads the thread made in the target since its
 * last boundary join its request, by entry, clock and path (through
 * syscall() too: add_patch_syscalls). Whether the
 * request is whole: not when its first boundary came before user space
 * handed the table over (a launched command's first ms), nor when either
 * boundary could not find the thread's slot, nor when the two found
 * different keys' slots (a Go thread runs another goroutine now). */
static __always_inline bool add_patch_reads(struct cp_thread *t, __u64 key, struct patch_look *pl,
					    __u64 table, bool wiped)
{
	struct patch_slot ps = { .index = pl->slot };
	int found = read_patch_slot(table, key, &ps, wiped);
	__u64 *words = ps.words;

	pl->slot = ps.index;

	pl->seen = t->patch_valid && key == t->patch_key;
	t->patch_key = key;
	if (found < 0) {
		t->patch_valid = 0; /* not known: this request and the next are not whole */
		return false;
	}
	if (!found)
		pl->slot = CP_PATCH_SLOTS; /* none yet: no sites either */
	t->patch_valid = 1;
	add_word_reads(t, pl, words, t->patch_last, false);
	if (found)
		add_patch_syscalls(t, pl, table, words);
	return pl->seen;
}

/* With the vDSO patch, a Go program's reads are filed by goroutine (the
 * thunk's key, tagged: clockreads.h), and so are its requests: a request
 * is the reads between two boundaries of one goroutine, whichever threads
 * it ran on. Its state is here rather than the thread's (LRU: goroutines
 * come and go). A zeroed element seeds a new one. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CP_GOROUTINES);
	__type(key, __u64);
	__type(value, struct cp_thread);
} goroutines SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_thread);
} no_goroutine SEC(".maps");

/* The state a request at this boundary is kept in: the goroutine's, for a
 * patched Go program, else the thread's (t). NULL: none to be had. */
static __always_inline struct cp_thread *request_state(struct cp_thread *t, __u64 key)
{
	struct cp_thread *g;
	__u32 zero = 0;

	if (!(key & 1))
		return t;
	if ((g = bpf_map_lookup_elem(&goroutines, &key)))
		return g;
	if (!(g = bpf_map_lookup_elem(&no_goroutine, &zero)))
		return NULL;
	bpf_map_update_elem(&goroutines, &key, g, BPF_NOEXIST);
	return bpf_map_lookup_elem(&goroutines, &key);
}

/* A patch site's key (clockreads.h) as the session's call-site key. */
static __always_inline void patch_site_key(__u64 key, struct cp_site_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->pc = cp_patch_site_pc(key);
	k->via = cp_patch_site_via(key);
	k->entry = (__u8)cp_patch_site_entry(key);
	k->direct_syscall = cp_patch_site_direct(key);
}

/* Where add_patch_sites is, between two entries of the block. */
struct patch_sites_walk {
	struct cp_thread *t;
	struct cp_totals *tot;
	bool credit;
	__u32 which;	/* CP_TOTALS_*: in_requests or in_checked */
	__u64 credited; /* reads credited to a site */
};

/* One entry of the thread's site block: its reads since the last
 * boundary, credited to the site's in-request count when the request is
 * whole (a bpf_loop callback). */
static long patch_site_entry(__u32 i, void *ctx)
{
	struct patch_sites_walk *w = ctx;
	struct cp_site_counts *c;
	struct cp_site_key k;
	__u64 key, n, delta;
	__u32 id;

	if (i >= CP_PATCH_SITE_ENTRIES)
		return 1;
	key = w->t->patch_sites_now[2 * i];
	n = w->t->patch_sites_now[2 * i + 1];
	delta = n - w->t->patch_sites_last[i];
	w->t->patch_sites_last[i] = n;
	if (!w->credit || !key || !delta)
		return 0;
	patch_site_key(key, &k);
	id = site_id(&k);
	if (id < CP_MAX_SITES && (c = bpf_map_lookup_elem(&site_counts, &id))) {
		__sync_fetch_and_add(&c->in_requests + (w->which & 1), delta);
		w->credited += delta;
	}
	return 0;
}

/* With the vDSO patch, the thread's reads since its last boundary by call
 * site (its block in the table): credited when the request is whole;
 * those no site holds (its block was full) are said uncredited. Nothing
 * to do when the thread read nothing since. False when the block cannot
 * be read: a thread with a slot has written it, so it is not known. */
static __always_inline bool add_patch_sites(struct cp_thread *t, struct cp_totals *tot,
					    const struct patch_look *pl, bool credit, __u32 which,
					    __u64 table, bool wiped)
{
	struct patch_sites_walk w = {
		.t = t, .tot = tot, .credit = credit && pl->seen, .which = which
	};
	__u64 at = table + CP_PATCH_SITES_OFF + pl->slot * CP_PATCH_SITE_BLOCK;

	if (pl->seen && !pl->reads)
		return true;
	if (pl->slot >= CP_PATCH_SLOTS)
		__builtin_memset(t->patch_sites_now, 0, sizeof(t->patch_sites_now));
	else if (bpf_probe_read_user(t->patch_sites_now, sizeof(t->patch_sites_now), (void *)at)) {
		if (!wiped)
			return false;
		__builtin_memset(t->patch_sites_now, 0, sizeof(t->patch_sites_now));
	}
	bpf_loop(CP_PATCH_SITE_ENTRIES, patch_site_entry, &w, 0);
	if (w.credit && pl->reads > w.credited)
		cp_add(&tot->site_uncredited, pl->reads - w.credited);
	return true;
}

/* The vDSO patch's counts at the target's exit: its memory goes with it,
 * so its last thread sums the table as it exits (where the kernel traces
 * the exit before the memory is let go, as 6.16 and later do; earlier,
 * the read fails and done stays 0), or at an exec. One element. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_patch_exit);
} patch_exit SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_PATCH_EXIT_SITES);
	__type(key, __u64);
	__type(value, struct cp_patch_exit_site);
} patch_exit_sites SEC(".maps");

/* The number of the last pass over the table, and of the last one that
 * read it all (user space reads the sites of that one). */
__u64 patch_exit_gen;
__u64 patch_exit_gen_done;

/* The requests a boundary closed in the target, summed by the same pass
 * (clockreads.h: struct cp_request_sums), and one request block's copy. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_request_sums);
} patch_exit_requests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[CP_PB_WORDS + 2 * CP_PATCH_SITE_ENTRIES]); /* + its site block */
} request_block SEC(".maps");

/* Where a pass over one slot's site block is; requests: its request
 * block (request_block) is the window's. */
struct exit_sites_walk {
	__u64 block, gen;
	bool requests;
};

/* Entry i's reads inside the requests of the slot whose request block
 * request_block holds. */
static __always_inline __u64 site_in_requests(__u32 i)
{
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero);

	if (!b || i >= CP_PATCH_SITE_ENTRIES)
		return 0;
	return b[CP_PB_SITES_LAST + i] - b[CP_PB_SITES_FIRST + i];
}

/* One entry of a site block added to patch_exit_sites (a bpf_loop
 * callback). */
static long sum_patch_site(__u32 i, void *ctx)
{
	struct exit_sites_walk *w = ctx;
	struct cp_patch_exit_site *v, fresh;
	__u64 e[2];

	if (bpf_probe_read_user(e, sizeof(e), (void *)(w->block + (__u64)i * sizeof(e))))
		return 1; /* never written: no sites */
	if (!e[0] || !e[1])
		return 0;
	v = bpf_map_lookup_elem(&patch_exit_sites, &e[0]);
	if (v && v->gen == w->gen) {
		v->count += e[1];
	} else if (v) {
		*v = (struct cp_patch_exit_site){ .count = e[1], .gen = w->gen };
	} else {
		fresh = (struct cp_patch_exit_site){ .count = e[1], .gen = w->gen };
		bpf_map_update_elem(&patch_exit_sites, &e[0], &fresh, BPF_ANY);
		v = bpf_map_lookup_elem(&patch_exit_sites, &e[0]);
	}
	if (v && boundary_in_target && w->requests)
		v->in_requests += site_in_requests(i);
	return 0;
}

/* Where a pass over the table is: epoch, block 0's (the window's). */
struct exit_sum {
	struct cp_patch_exit sums;
	__u64 gen, epoch;
};

/* Word i of the pass's request sums zeroed (a bpf_loop callback: the
 * verifier walks a plain loop turn by turn, and this one's 580 turns were
 * ~17,000 instructions of each program that sums the table, at every
 * start-up). */
static long zero_request_word(__u32 i, void *ctx)
{
	__u32 zero = 0;
	__u64 *w = bpf_map_lookup_elem(&patch_exit_requests, &zero);

	if (!w || i >= sizeof(struct cp_request_sums) / 8)
		return 1;
	w[i] = 0;
	return 0;
}

/* r, patch_exit_requests' element, zeroed for pass gen, unless it is that
 * pass's already. */
static __always_inline void start_request_sums(struct cp_request_sums *r, __u64 gen)
{
	if (r->gen == gen)
		return;
	bpf_loop(sizeof(*r) / 8, zero_request_word, NULL, 0);
	r->gen = gen;
}

/* Histogram slot i of request_block added to the pass's (a bpf_loop
 * callback, for the reason above: ~22,000 instructions, unrolled). */
static long add_hist_slot(__u32 i, void *ctx)
{
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero);
	struct cp_request_sums *r = bpf_map_lookup_elem(&patch_exit_requests, &zero);

	if (!b || !r || i >= CP_HIST_SLOTS)
		return 1;
	r->hist[i] += b[CP_PB_HIST + i];
	return 0;
}

/* Whether the target's request blocks hold counts of the run's: the
 * requests a boundary closed in the target, or the reads through its
 * syscall(), redirected there also when the target is counted alone
 * (patch_boundary.c: syscall_alone, follow_procs unset). Else nothing
 * writes them, and the verifier leaves out their sums. */
static __always_inline bool blocks_count(void)
{
	return boundary_in_target || !follow_procs;
}

/* Table slot i's request block (block i: block 0 is the shared slot's)
 * into request_block, and added to patch_exit_requests when it is
 * the window's. True when it is. */
static __always_inline bool add_slot_requests(__u32 i, const struct exit_sum *e)
{
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero);
	struct cp_request_sums *r = bpf_map_lookup_elem(&patch_exit_requests, &zero);
	__u64 at = patch_table + CP_PATCH_BLOCKS_OFF + (__u64)i * CP_PATCH_BLOCK;

	/* no boundary in the target: its syscall() words alone (128 bytes,
	 * not the block's 8 KiB, at each slot of an exiting target) */
	__u32 from = boundary_in_target ? 0 : CP_PB_SYSCALLS;
	__u32 len = boundary_in_target ? CP_PATCH_BLOCK : CP_PATCH_SLOT_WORDS * 8;

	if (!b || !r || bpf_probe_read_user(b + from, len, (void *)(at + from * 8)))
		return false;
	for (int k = 1; k < CP_PATCH_SLOT_WORDS; k++)
		r->syscalls[k] += b[CP_PB_SYSCALLS + k];
	if (!boundary_in_target || b[CP_PB_EPOCH] != e->epoch + 1 || !b[CP_PB_HITS])
		return false;
	r->hits += cp_pb_passed(b[CP_PB_HITS], b[CP_PB_OPENS]);
	r->requests += b[CP_PB_HITS] - 1;
	if (b[CP_PB_MAX] > r->max)
		r->max = b[CP_PB_MAX];
	for (int k = 1; k < CP_PATCH_SLOT_WORDS; k++) {
		r->in_words[k] += b[CP_PB_LAST + k] - b[CP_PB_FIRST + k];
		r->in_syscalls[k] += b[CP_PB_SC_LAST + k] - b[CP_PB_SC_FIRST + k];
	}
	bpf_loop(CP_HIST_SLOTS, add_hist_slot, NULL, 0);
	return true;
}

/* One slot added to the sums, its sites to patch_exit_sites (a bpf_loop
 * callback; its context lives on the caller's stack, as bpf_loop wants). */
static long sum_patch_slot(__u32 i, void *ctx)
{
	struct exit_sum *e = ctx;
	struct exit_sites_walk sites = { .gen = e->gen };
	__u64 w[CP_PATCH_SLOT_WORDS];

	if (bpf_probe_read_user(w, sizeof(w), (void *)(patch_table + (__u64)i * sizeof(w)))) {
		e->sums.done = 0;
		return 1;
	}
	for (int k = 1; k < CP_PATCH_SLOT_WORDS; k++)
		e->sums.sums[k] += w[k];
	if (i > 0 && w[0]) {
		/* request blocks: requests only where a boundary closed
		 * them in the target (add_slot_requests: none opened) */
		sites.requests = blocks_count() && add_slot_requests(i, e);
		sites.block = patch_table + CP_PATCH_SITES_OFF +
			      (__u64)(i - 1) * CP_PATCH_SITE_BLOCK;
		bpf_loop(CP_PATCH_SITE_ENTRIES, sum_patch_site, &sites, 0);
	}
	return 0;
}

/* The pass's requests (zeroed as it began) made whole with block 0's,
 * the shared slot's: the boundaries passed by threads with no slot, and
 * their reads through syscall(). */
static __always_inline void sum_lost_requests(void)
{
	__u32 zero = 0;
	struct cp_request_sums *r = bpf_map_lookup_elem(&patch_exit_requests, &zero);
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero);

	if (!r || !b ||
	    bpf_probe_read_user(b, (CP_PB_SYSCALLS + CP_PATCH_SLOT_WORDS) * 8,
				(void *)(patch_table + CP_PATCH_BLOCKS_OFF)))
		return; /* never written */
	r->lost = b[CP_PB_HITS];
	for (int k = 1; k < CP_PATCH_SLOT_WORDS; k++)
		r->syscalls[k] += b[CP_PB_SYSCALLS + k];
}

/* The table summed into patch_exit now, while the target's memory still
 * holds it: at its exit, or at an exec. */
static __always_inline void sum_patch_table(void)
{
	struct exit_sum sum = { .sums.done = 1 };
	struct cp_request_sums *r;
	struct cp_patch_exit *e;
	__u32 zero = 0;

	/* One pass at a time. Two at once (threads that call execve together
	 * where the C library's execve is the uprobe that sums, before Linux
	 * 6.10) added into one another's request sums, which are zeroed once
	 * as a pass begins: syscall()'s reads counted twice, or none (user
	 * space finding the sums of another pass than the last done). The
	 * pass under way reads the same table. */
	if (!patch_tables || !(e = bpf_map_lookup_elem(&patch_exit, &zero)) ||
	    __sync_lock_test_and_set(&patch_pass_busy, 1))
		return;
	sum.gen = __sync_fetch_and_add(&patch_exit_gen, 1) + 1;
	bpf_probe_read_user(&sum.epoch, sizeof(sum.epoch),
			    (void *)(patch_table + CP_PATCH_BLOCKS_OFF + CP_PB_EPOCH * 8));
	/* the pass's request sums zeroed once, here: each bpf_loop call the
	 * verifier inlines copies the whole program, ~0.5 ms of every
	 * start-up a call (measured) */
	if (blocks_count() && (r = bpf_map_lookup_elem(&patch_exit_requests, &zero)))
		start_request_sums(r, sum.gen);
	bpf_loop(CP_PATCH_SLOTS + 1, sum_patch_slot, &sum, 0);
	if (sum.sums.done) { /* a table that could not be read keeps the last sums */
		__builtin_memcpy(e, &sum.sums, sizeof(sum.sums));
		if (blocks_count())
			sum_lost_requests();
		patch_exit_gen_done = sum.gen;
	}
	*(volatile __u32 *)&patch_pass_busy = 0;
}

/* A followed process's table (it forked from the target: its copy of the
 * table was wiped at the fork, so it counts from zero) is summed thread
 * by thread as each exits: its own slot and site block, each exit adding
 * what its slot gained since the last one added (glibc gives a new
 * thread a cached stack, and so the key and slot of one that exited);
 * the shared slot at the last thread's exit. A walk of the whole table
 * at the exit would cost each short-lived child a tenth of a millisecond.
 * A live process's table is read whole by user space instead. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4 * CP_MAX_PROCS); /* slots of the processes not yet drained */
	__type(key, struct cp_child_slot_key);
	__type(value, struct cp_child_slot_seen);
} child_slots SEC(".maps");

/* The followed processes' exited threads' reads by call site (keyed as
 * the table keys sites), summed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_PATCH_EXIT_SITES);
	__type(key, __u64);
	__type(value, __u64);
} child_exit_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cp_child_slot_seen);
} child_slot_scratch SEC(".maps");

/* Where a pass over an exiting thread's site block is. */
struct child_sites_walk {
	__u64 block;
	struct cp_child_slot_seen *seen;
};

/* One entry of the block: what it gained since last added (a bpf_loop
 * callback). */
static long add_child_site(__u32 i, void *ctx)
{
	struct child_sites_walk *w = ctx;
	__u64 e[2], gained;

	if (i >= CP_PATCH_SITE_ENTRIES ||
	    bpf_probe_read_user(e, sizeof(e), (void *)(w->block + (__u64)i * sizeof(e))))
		return 1; /* never written: no sites */
	if (!e[0])
		return 0;
	gained = e[1] - w->seen->sites[i];
	w->seen->sites[i] = e[1];
	if (gained)
		map_add(&child_exit_sites, &e[0], gained);
	return 0;
}

/* Adds what slot (0 shared, else index + 1), whose words are w, gained
 * since it was last added to p's sums; its site block too. */
static __always_inline void add_child_slot(struct cp_proc *p, __u32 slot, const __u64 *w)
{
	struct cp_child_slot_key k = { .tgid = bpf_get_current_pid_tgid() >> 32, .slot = slot };
	struct cp_child_slot_seen *seen;
	struct child_sites_walk sites;
	__u32 zero = 0;

	if (!(seen = bpf_map_lookup_elem(&child_slots, &k))) {
		if (!(seen = bpf_map_lookup_elem(&child_slot_scratch, &zero)))
			return;
		__builtin_memset(seen, 0, sizeof(*seen));
		if (bpf_map_update_elem(&child_slots, &k, seen, BPF_NOEXIST) ||
		    !(seen = bpf_map_lookup_elem(&child_slots, &k)))
			return;
	}
	for (int i = 1; i < CP_PATCH_SLOT_WORDS; i++) {
		__sync_fetch_and_add(&p->sums[i], w[i] - seen->words[i]);
		seen->words[i] = w[i];
	}
	if (!slot || (p->flags & CP_PROC_NO_SITES))
		return;
	sites = (struct child_sites_walk){ .block = p->table + CP_PATCH_SITES_OFF +
						    (__u64)(slot - 1) * CP_PATCH_SITE_BLOCK,
					   .seen = seen };
	bpf_loop(CP_PATCH_SITE_ENTRIES, add_child_site, &sites, 0);
}

/* A followed process's requests closed in its own table (a fork of the
 * target runs its redirected boundary; its table was wiped at the fork,
 * so its blocks' epoch is 0 + 1), summed at its last thread's exit, with
 * its reads through syscall(): its requests join the window's, as the
 * BPF boundary would have added them one by one, and its sites' reads
 * inside them are credited; once a syscall: boundary fell back to
 * sys_enter (check_wrapper), which closed them instead, only its reads
 * through syscall(). One slot a bpf_loop callback. */
struct child_requests_walk {
	struct cp_proc *p;
	struct cp_totals *tot;
	bool requests; /* its requests are the window's */
};

/* A slot word's reads (n) inside requests added to the totals' counts. */
static __always_inline void add_in_word(struct cp_totals *tot, int k, __u64 n, bool syscall)
{
	int entry = cp_patch_word_entry(k), clock = cp_patch_word_clock(k);

	if (!n || clock < 0 || clock >= CP_CLOCK_SLOTS)
		return;
	cp_add(&tot->in_requests.reads, n);
	cp_add(&tot->in_requests.by_entry[entry], n);
	cp_add(&tot->in_requests.by_clock[clock], n);
	cp_add(&tot->in_requests
			.by_path[syscall ? CP_PATH_SYSCALL :
					   entry_path(entry, clock == CP_CLOCK_OTHER ? -1 : clock)],
	       n);
}

/* Entry e of the block's sites: its reads inside the block's requests
 * credited (a bpf_loop callback; request_block holds the request block,
 * then the slot's site block, read after it). */
static long credit_block_site(__u32 e, void *ctx)
{
	__u32 zero = 0, id;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero), n, site;
	struct cp_site_counts *c;
	struct cp_site_key k;

	if (!b || e >= CP_PATCH_SITE_ENTRIES)
		return 1;
	n = b[CP_PB_SITES_LAST + e] - b[CP_PB_SITES_FIRST + e];
	site = b[CP_PB_WORDS + 2 * e];
	if (!site || !n)
		return 0;
	patch_site_key(site, &k);
	id = site_id(&k);
	if (id < CP_MAX_SITES && (c = bpf_map_lookup_elem(&site_counts, &id)))
		__sync_fetch_and_add(&c->in_requests, n);
	return 0;
}

/* Histogram slot i of request_block added to the totals' (a bpf_loop
 * callback: unrolled, its 512 turns were walked in each program that sums
 * a followed process's requests). */
static long add_child_hist_slot(__u32 i, void *ctx)
{
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero);
	struct cp_totals *tot = get_totals();

	if (!b || !tot || i >= CP_HIST_SLOTS)
		return 1;
	if (b[CP_PB_HIST + i])
		cp_add(&tot->hist[i], b[CP_PB_HIST + i]);
	return 0;
}

/* Where add_in_words is, between two words. */
struct in_words_walk {
	struct cp_totals *tot;
	__u64 in; /* the reads inside the slot's requests, summed */
};

/* Word j + 1 of request_block: its reads inside the block's requests,
 * through the vDSO and through syscall(), added to the totals' counts (a
 * bpf_loop callback: unrolled, the fifteen words' adds were walked for
 * every state a slot reached them in, ~6,600 instructions of each
 * program that sums a followed process's requests). */
static long add_in_words(__u32 j, void *ctx)
{
	struct in_words_walk *w = ctx;
	__u32 zero = 0, k = j + 1;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero), v, s;

	if (!b || k >= CP_PATCH_SLOT_WORDS)
		return 1;
	v = b[CP_PB_LAST + k] - b[CP_PB_FIRST + k];
	s = b[CP_PB_SC_LAST + k] - b[CP_PB_SC_FIRST + k];
	add_in_word(w->tot, (int)k, v, false);
	add_in_word(w->tot, (int)k, s, true);
	w->in += v + s;
	return 0;
}

static long sum_child_requests(__u32 i, void *ctx)
{
	struct child_requests_walk *w = ctx;
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&request_block, &zero), key = 0;
	__u64 table = w->p->table, *sites;
	struct in_words_walk words = { 0 };

	if (!b || i >= CP_PATCH_SLOTS ||
	    bpf_probe_read_user(&key, sizeof(key), (void *)(table + 128 * (__u64)(i + 1))) ||
	    !key ||
	    bpf_probe_read_user(
		    b, CP_PATCH_BLOCK,
		    (void *)(table + CP_PATCH_BLOCKS_OFF + (__u64)(i + 1) * CP_PATCH_BLOCK)))
		return 0; /* a page never written: nothing */
	sites = b + CP_PB_WORDS;
	if (bpf_probe_read_user(
		    sites, CP_PATCH_SITE_BLOCK,
		    (void *)(table + CP_PATCH_SITES_OFF + (__u64)i * CP_PATCH_SITE_BLOCK)))
		__builtin_memset(sites, 0, CP_PATCH_SITE_BLOCK);
	for (int k = 1; k < CP_PATCH_SLOT_WORDS; k++)
		__sync_fetch_and_add(&w->p->syscall_sums[k], b[CP_PB_SYSCALLS + k]);
	if (!w->requests || b[CP_PB_EPOCH] != 1 || !b[CP_PB_HITS])
		return 0;
	words.tot = w->tot;
	bpf_loop(CP_PATCH_SLOT_WORDS - 1, add_in_words, &words, 0);
	bpf_loop(CP_HIST_SLOTS, add_child_hist_slot, NULL, 0);
	raise_max(&w->tot->max_reads_per_request, b[CP_PB_MAX]);
	cp_add(&w->tot->requests, b[CP_PB_HITS] - 1);
	cp_add(&w->tot->boundary_hits, cp_pb_passed(b[CP_PB_HITS], b[CP_PB_OPENS]));
	__sync_fetch_and_add(&w->p->requests, b[CP_PB_HITS] - 1);
	__sync_fetch_and_add(&w->p->in_requests, words.in);
	bpf_loop(CP_PATCH_SITE_ENTRIES, credit_block_site, NULL, 0);
	return 0;
}

/* A followed process's thread exits: what its slot gained since the
 * baseline is added (found as its boundaries find it; a forked child's
 * baselines are zeros, a member's were put in child_slots as the window
 * opened), and at the last thread the shared one, if a thread
 * found every slot it may probe taken (only then are reads filed there).
 * A page of the table no thread of the process wrote was wiped at the
 * fork and never touched: it cannot be read here, and holds nothing.
 * The first read of the table from here costs ~7 us on these VMs (a
 * short-lived child pays it once): the shared slot is not read for
 * nothing. With the boundary closed in the target, at the last thread
 * its requests too: a fork's, or a process's followed into the image it
 * exec()ed (its table is that image's, fresh at the exec), not those of
 * a member attach was given (its patch closes none). */
static __always_inline void sum_exiting_thread(struct cp_proc *p, bool last)
{
	struct patch_slot ps = { .index = 0 };
	__u64 *words = ps.words;
	int found;

	if (!patch_tables)
		return;
	found = read_patch_slot(p->table, patch_key(), &ps, !(p->flags & CP_PROC_MEMBER));
	if (found == 1) {
		add_child_slot(p, (__u32)ps.index + 1, words);
		__sync_fetch_and_add(&p->threads_summed, 1);
	} else if (found < 0) {
		__sync_fetch_and_or(&p->flags, CP_PROC_SHARED_SLOT);
	}
	if (last && (p->flags & CP_PROC_SHARED_SLOT) &&
	    !bpf_probe_read_user(words, sizeof(ps.words), (void *)p->table))
		add_child_slot(p, 0, words);
	if (last && boundary_in_target &&
	    (!(p->flags & CP_PROC_MEMBER) || (p->flags & CP_PROC_REIMAGED))) {
		struct child_requests_walk w = { .p = p,
						 .tot = get_totals(),
						 .requests = !wrapper_check.fallback_ns };

		if (w.tot && phase == CP_PHASE_CLOCK)
			bpf_loop(CP_PATCH_SLOTS, sum_child_requests, &w, 0);
	}
}

#endif
