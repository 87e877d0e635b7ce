/* read_record.bpf.h - what the program keeps of one clock read: its call
 * site (the walk out of the clock wrappers by their unwind rules, the
 * site's id and count, the sites a request holds until it closes), its
 * whole stack (--stacks: copied for user space to walk), the thread's
 * per-request counter distribution, and the path a vDSO entry takes.
 * Part of clockreads.bpf.c, which includes it after the maps and the
 * helpers it uses. */
#ifndef CP_READ_RECORD_BPF_H
#define CP_READ_RECORD_BPF_H

/* One frame out by a CFI rule: the caller's pc, sp and bp from this
 * frame's. 0, or -1 when the stack cannot be read. */
static __always_inline int cfi_step(const struct cp_unwind_rule *r, __u64 *pc, __u64 *sp, __u64 *bp)
{
	__u64 cfa = (r->base_reg == CP_UNWIND_BP ? *bp : *sp) + (__s64)r->cfa_offset;

	if (r->bp_offset &&
	    bpf_probe_read_user(bp, sizeof(*bp), (void *)(cfa + (__s64)r->bp_offset)))
		return -1;
	if (bpf_probe_read_user(pc, sizeof(*pc), (void *)(cfa - 8)))
		return -1;
	*sp = cfa;
	return 0;
}

/* Where walk_to_call_site is, between two hops. */
struct walk {
	__u64 pc, sp, bp;
	__u16 via;
	bool lost; /* the stack could not be read */
};

/* One hop out of a wrapper, as bpf_loop's callback: the verifier checks it
 * once instead of once per hop (a loop of CP_UNWIND_MAX_HOPS took 4 of the
 * program's 6 ms of verification, at every start-up). 1 ends the walk. */
static long walk_hop(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	struct cp_unwind_rule *r = wrapper_rule(w->pc);

	if (!r || r->via == CP_VIA_NONE)
		return 1;
	if (cfi_step(r, &w->pc, &w->sp, &w->bp)) {
		w->lost = true;
		return 1;
	}
	w->via = r->via;
	return 0;
}

/* Steps out of clock wrappers (see clockreads.h): from the return address
 * pc with the stack and frame pointers sp, bp, to the first return address
 * that is not inside a wrapper: the call site. 0 when the stack could not
 * be read. *via is the last wrapper crossed. */
static __always_inline __u64 walk_to_call_site(__u64 pc, __u64 sp, __u64 bp, __u16 *via)
{
	struct walk w = { .pc = pc, .sp = sp, .bp = bp, .via = *via };

	bpf_loop(CP_UNWIND_MAX_HOPS, walk_hop, &w, 0);
	*via = w.via;
	return w.lost ? 0 : w.pc;
}

/* Where a read returns to, seen at the probed instruction: the return
 * address pc and the stack and frame pointers of the frame it returns to.
 * 0 when the stack cannot be read. */
static __always_inline int read_return(int mode, __u64 sp, __u64 bp, __u64 *pc, __u64 *ret_sp,
				       __u64 *ret_bp)
{
	__u64 fp[2];

	if (mode == CP_SITE_FRAME) {
		/* inside a frame-pointer function that may be on another stack:
		 * its caller's frame is found from rbp alone */
		if (bpf_probe_read_user(fp, sizeof(fp), (void *)bp))
			return -1;
		*pc = fp[1];
		*ret_sp = bp + 16;
		*ret_bp = fp[0];
		return 0;
	}
	if (bpf_probe_read_user(pc, sizeof(*pc), (void *)sp))
		return -1;
	*ret_sp = sp + 8;
	*ret_bp = bp;
	return 0;
}

/* This CPU's scratch in map, a per-CPU array whose value starts with its
 * busy flag (scratch_take), taken; NULL when a preempted run of the
 * program holds it: the read goes without a stack, counted. */
static __always_inline void *take_scratch(void *map)
{
	__u32 zero = 0, *busy = bpf_map_lookup_elem(map, &zero);
	struct cp_totals *tot;

	if (!busy)
		return NULL;
	if (scratch_take(busy))
		return busy;
	if ((tot = get_totals()))
		cp_add(&tot->stacks_preempted, 1);
	return NULL;
}

/* The stack copy being made on this CPU, before it goes to the buffer
 * (busy: take_scratch). */
struct copy_scratch {
	__u32 busy;
	struct cp_stack_copy c;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_scratch);
} stack_copy_scratch SEC(".maps");

/* Whether rbp looks like a frame that piece 0 (from sp) did not take: the
 * saved rbp a little above it and a return address beside it. Code built
 * without frame pointers keeps anything in rbp, often a heap pointer: no
 * second piece for that. */
static __always_inline bool frame_elsewhere(__u64 sp, __u32 len, __u64 bp)
{
	__u64 fp[2];

	if ((bp >= sp && bp < sp + len) || (bp & 7) ||
	    bpf_probe_read_user(fp, sizeof(fp), (void *)bp))
		return false;
	return fp[0] > bp && fp[0] - bp < (1 << 20) && fp[1];
}

/* Copies up to size bytes (whole pages) from `from`: to the end of its
 * page, then a page at a time, stopping at the first that cannot be read,
 * so that a copy reaches the end of the stack's mapping. Returns the bytes
 * copied. */
static __always_inline __u32 copy_pages(__u8 *dst, __u64 from, __u32 size)
{
	__u32 len = 0, chunk = 4096 - (from & 4095);

	for (__u32 i = 0; i <= size / 4096 && len < size; i++) {
		if (chunk > size - len)
			chunk = size - len;
		if (bpf_probe_read_user(dst + len, chunk, (void *)(from + len)))
			break;
		len += chunk;
		chunk = 4096;
	}
	return len;
}

/* Before the rules are in place: the top of the stack, for user space to
 * walk (lib/probe/window/late_stacks.c). A frame-pointer site's frames start at
 * rbp, which may be on another stack than rsp. */
static __always_inline void copy_stack(__u64 ip, int mode, __u64 sp, __u64 bp)
{
	struct copy_scratch *scratch = take_scratch(&stack_copy_scratch);
	struct cp_stack_copy *c;
	struct cp_totals *tot;
	__u32 len, len1 = 0;
	long rc;

	if (!scratch)
		return;
	c = &scratch->c;
	c->ip = ip;
	c->sp = sp;
	c->bp = bp;
	c->mode = (__u32)mode;
	c->base[0] = mode == CP_SITE_FRAME ? bp : sp;
	len = copy_pages(c->bytes, c->base[0], CP_STACK_COPY_BYTES);
	if (len > CP_STACK_COPY_BYTES) /* never: says so to the verifier */
		len = CP_STACK_COPY_BYTES;
	c->base[1] = bp;
	if (mode != CP_SITE_FRAME && frame_elsewhere(sp, len, bp))
		len1 = copy_pages(c->bytes + len, bp, CP_STACK_COPY_FRAME_BYTES);
	if (len1 > CP_STACK_COPY_FRAME_BYTES)
		len1 = CP_STACK_COPY_FRAME_BYTES;
	c->len[0] = len;
	c->len[1] = len1;
	/* User space is woken once an eighth of the buffer is used (and reads
	 * the rest at the window's end): a wake-up per copy cost the target
	 * more than the copy itself, and woken at half it was too late for a
	 * busy server on two busy CPUs (copies found the buffer full). */
	rc = bpf_ringbuf_output(
		&stack_copies, c, offsetof(struct cp_stack_copy, bytes) + len + len1,
		bpf_ringbuf_query(&stack_copies, BPF_RB_AVAIL_DATA) >
				bpf_ringbuf_query(&stack_copies, BPF_RB_RING_SIZE) / 8 ?
			BPF_RB_FORCE_WAKEUP :
			BPF_RB_NO_WAKEUP);
	scratch_give(&scratch->busy);
	if (rc && (tot = get_totals()))
		cp_add(&tot->stack_copy_drops, 1);
}

/* Where record_stack's walk is, between two frames, and what it walks
 * by and into (looked up once per read, not once per frame). */
struct stack_walk {
	__u64 pc, sp, bp;
	struct cp_stack_key *k;
	void *table;
};

/* Frame n + 1 of a stack, as bpf_loop's callback (verified once, not once
 * per frame: the unrolled walk made --stacks' program take ~10 ms longer
 * to load, at every start-up): its return address, then one step out by
 * the function's rule or, where there is none, the frame-pointer chain.
 * 1 ends the walk. */
static long stack_hop(__u32 n, void *ctx)
{
	struct stack_walk *w = ctx;
	__u32 i = n + 1;
	struct cp_unwind_rule *r;
	__u64 fp[2];

	if (!w->pc || i >= CP_STACK_DEPTH)
		return 1;
	w->k->pc[i] = w->pc;
	r = bpf_map_lookup_elem(w->table, &w->pc);
	if (r)
		return cfi_step(r, &w->pc, &w->sp, &w->bp) ? 1 : 0;
	if (!w->bp || bpf_probe_read_user(fp, sizeof(fp), (void *)w->bp) || fp[0] <= w->bp)
		return 1;
	w->pc = fp[1];
	w->sp = w->bp + 16;
	w->bp = fp[0];
	return 0;
}

/* Records the whole stack of a read seen at ip: ip, then one return
 * address per frame from the return address read_return found, stepping by
 * every function's CFI rules and by the frame-pointer chain where there is
 * no rule. lib/symbols/unwind_table.c (cp_unwind_stack) walks a copy the
 * same way. */
static __always_inline void record_stack(__u64 ip, int mode, __u64 sp, __u64 bp)
{
	struct stack_walk w = { .table = stack_rules() };
	struct walk_scratch *scratch;
	struct cp_totals *tot;
	int full;

	if (!w.table) {
		copy_stack(ip, mode, sp, bp);
		return;
	}
	scratch = take_scratch(&stack_scratch);
	if (!scratch)
		return;
	w.k = &scratch->k;
	__builtin_memset(w.k, 0, sizeof(*w.k));
	w.k->pc[0] = ip;
	if (read_return(mode, sp, bp, &w.pc, &w.sp, &w.bp) == 0)
		bpf_loop(CP_STACK_DEPTH - 1, stack_hop, &w, 0);
	full = map_count_one(&stacks, w.k);
	scratch_give(&scratch->busy);
	if (full && (tot = get_totals()))
		cp_add(&tot->stack_drops, 1);
}

/* The call site of a read: from its return address (read_return), out
 * of the clock wrappers. */
static __always_inline void find_site(struct cp_site_key *key, int mode, __u64 sp, __u64 bp,
				      int entry, int direct)
{
	__u64 ret = 0;

	__builtin_memset(key, 0, sizeof(*key));
	key->via = CP_VIA_NONE;
	key->entry = (__u8)entry;
	key->direct_syscall = (__u8)direct;
	if (read_return(mode, sp, bp, &ret, &sp, &bp) == 0)
		key->pc = walk_to_call_site(ret, sp, bp, &key->via);
}

static __always_inline __u32 site_id(const struct cp_site_key *key)
{
	__u32 *id = bpf_map_lookup_elem(&site_ids, key);
	__u32 fresh;

	if (id)
		return *id;
	fresh = __sync_fetch_and_add(&next_site_id, 1);
	if (fresh >= CP_MAX_SITES)
		return CP_MAX_SITES;
	/* A racing CPU may insert the key first: its id wins, ours is unused. */
	bpf_map_update_elem(&site_ids, key, &fresh, BPF_NOEXIST);
	id = bpf_map_lookup_elem(&site_ids, key);
	return id ? *id : CP_MAX_SITES;
}

/* Counts the read at its site now, and remembers it in the thread's
 * request, to be credited to the site's in-request count if the request
 * completes. */
static __always_inline void record_site(struct cp_thread *t, struct cp_totals *tot,
					const struct cp_site_key *key)
{
	__u32 id = site_id(key), n;
	struct cp_site_counts *c;

	if (id >= CP_MAX_SITES) {
		cp_add(&tot->site_unnamed, 1);
		return;
	}
	c = bpf_map_lookup_elem(&site_counts, &id);
	if (c)
		__sync_fetch_and_add(&c->all, 1);
	if (!t)
		return;
	n = t->npending;
	for (__u32 i = 0; i < CP_PENDING_SITES; i++) {
		if (i >= n)
			break;
		if (t->pending_site[i] == id) {
			t->pending_count[i]++;
			return;
		}
	}
	if (n < CP_PENDING_SITES) {
		t->pending_site[n] = id;
		t->pending_count[n] = 1;
		t->npending = n + 1;
	} else {
		t->pending_overflow++;
	}
}

static __always_inline void record_read(int entry, int path, int clock,
					const struct cp_site_key *site)
{
	struct cp_totals *tot = get_totals();
	struct cp_thread *t = get_thread();

	if (!tot)
		return;
	cp_add(&tot->trap_hits, 1); /* a counted read is a hit (in the clock window) */
	count_read(&tot->all, entry, path, clock);
	if (t)
		count_read(&t->cur, entry, path, clock);
	record_site(t, tot, site);
}

/* A request completed: its reads count as in-request at their sites. */
/* which: CP_TOTALS_* (close_request): in_requests, or in_checked. */
static __always_inline void credit_sites(struct cp_thread *t, struct cp_totals *tot, __u32 which)
{
	__u32 n = t->npending;

	for (__u32 i = 0; i < CP_PENDING_SITES; i++) {
		__u32 id;
		struct cp_site_counts *c;

		if (i >= n)
			break;
		id = t->pending_site[i];
		c = bpf_map_lookup_elem(&site_counts, &id);
		if (c)
			__sync_fetch_and_add(&c->in_requests + (which & 1), t->pending_count[i]);
	}
	if (t->pending_overflow)
		cp_add(&tot->site_uncredited, t->pending_overflow);
}

static __always_inline __u32 dist_bucket(__u64 v)
{
	__u32 e;

	if (v < CP_DIST_SUB)
		return (__u32)v;
	e = log2_floor(v); /* 2^e <= v < 2^(e+1), e >= 3 */
	return e * CP_DIST_SUB + (__u32)((v >> (e - 3)) & (CP_DIST_SUB - 1));
}

/* The thread's counter now against its previous boundary. */
static __always_inline void record_dist(__u32 tid, struct cp_thread *t)
{
	struct bpf_perf_event_value v;
	__u32 *slot = bpf_map_lookup_elem(&dist_slots, &tid), zero = 0, b;
	struct cp_dist *d;
	__u64 delta;

	if (!slot || bpf_perf_event_read_value(&dist_events, *slot, &v, sizeof(v)))
		return;
	if (t->dist_valid && v.counter >= t->dist_last && (d = bpf_map_lookup_elem(&dist, &zero))) {
		delta = v.counter - t->dist_last;
		b = dist_bucket(delta);
		if (b < CP_DIST_BUCKETS)
			cp_add(&d->bucket[b], 1);
		cp_add(&d->count, 1);
		cp_add(&d->sum, delta);
		raise_max(&d->max, delta);
	}
	t->dist_last = v.counter;
	t->dist_valid = 1;
}

/* The path a read through one of the vDSO entries takes (clockreads.h). */
static __always_inline int entry_path(int entry, __s64 clock_id)
{
	return cp_vdso_entry_path(entry, clock_id, vdso_hres);
}

#endif
