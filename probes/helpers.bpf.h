/* helpers.bpf.h - the small helpers clockreads.bpf.c's hooks share, apart
 * from what they count (as libbpf-tools keeps bits.bpf.h and maps.bpf.h):
 * log2, one counter in a shared hash map, a maximum raised atomically, a
 * per-CPU scratch's guard, and the current thread's identity (in clockprof's
 * pid namespace) and state.
 * BPF only; include after vmlinux.h and clockreads.h. */
#ifndef CP_HELPERS_BPF_H
#define CP_HELPERS_BPF_H

/* floor(log2(v)) for v > 0, by halving: BPF has no count-leading-zeros
 * (and clang 14 crashes on __builtin_clzll for it). */
static __always_inline __u32 log2_floor(__u64 v)
{
	__u32 e = 0;

	/* The halving's steps, one a row (clang-format would give each four). */
	/* clang-format off */
	if (v >> 32) { v >>= 32; e += 32; }
	if (v >> 16) { v >>= 16; e += 16; }
	if (v >> 8) { v >>= 8; e += 8; }
	if (v >> 4) { v >>= 4; e += 4; }
	if (v >> 2) { v >>= 2; e += 2; }
	if (v >> 1) e += 1;
	/* clang-format on */
	return e;
}

/* Adds n to the __u64 counter at key of a hash map shared by every CPU,
 * creating it when missing. -1 when the map is full. */
static __always_inline int map_add(void *map, const void *key, __u64 n)
{
	__u64 *count = bpf_map_lookup_elem(map, key);

	if (count) {
		__sync_fetch_and_add(count, n);
		return 0;
	}
	if (bpf_map_update_elem(map, key, &n, BPF_NOEXIST) == 0)
		return 0;
	/* Another CPU stored it first, or the map is full. */
	count = bpf_map_lookup_elem(map, key);
	if (!count)
		return -1;
	__sync_fetch_and_add(count, n);
	return 0;
}

static __always_inline int map_count_one(void *map, const void *key)
{
	return map_add(map, key, 1);
}

/* Raises the counter at max to v if v is larger, atomically (see cp_add in
 * clockreads.h): a run of the program that preempted this one may raise it
 * meanwhile. A few tries: each failed one means another run raised it. */
static __always_inline void raise_max(__u64 *max, __u64 v)
{
	__u64 seen = *max;

	for (int i = 0; i < 4 && v > seen; i++) {
		__u64 was = __sync_val_compare_and_swap(max, seen, v);

		if (was == seen)
			break;
		seen = was;
	}
}

/* A per-CPU scratch buffer: taken by one run of the program at a time. A
 * run preempted while holding it keeps it (migration is disabled, so it
 * resumes on this CPU and gives it back); a run that finds it taken does
 * without. */
static __always_inline bool scratch_take(__u32 *busy)
{
	return __sync_lock_test_and_set(busy, 1) == 0;
}

static __always_inline void scratch_give(__u32 *busy)
{
	__asm__ volatile("" ::: "memory");
	*busy = 0; /* a plain store: this CPU's, and held by this run */
}

/* The current task's tgid << 32 | tid in the pid namespace (ns_dev,
 * ns_ino), or in the host's when ns_ino is 0: bpf_get_current_pid_tgid()
 * gives the host's numbers, which differ from those user space knows when
 * clockprof runs in a pid namespace of its own (lib/probe/target/include/pid_namespace.h).
 * 0 for a task outside that namespace: no process has tgid 0. */
static __always_inline __u64 current_pid_tgid_in(__u64 ns_dev, __u64 ns_ino)
{
	struct bpf_pidns_info ns;

	if (!ns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns)))
		return 0;
	return (__u64)ns.tgid << 32 | ns.pid;
}

/* The tid of id (current_pid_tgid_in) when it belongs to process tgid,
 * else 0. */
static __always_inline __u32 tid_in(__u64 id, __u32 tgid)
{
	return (id >> 32) == tgid ? (__u32)id : 0;
}

/* The state of the current thread in threads, a task-storage map: created
 * zeroed on the thread's first hit and freed by the kernel when the thread
 * exits, so a tid the kernel reuses for a new thread starts afresh (its
 * first interval is partial like any other). NULL when the kernel could not
 * allocate it (the read still counts in the totals). */
static __always_inline struct cp_thread *thread_lookup(void *threads)
{
	return bpf_task_storage_get(threads, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

#endif
