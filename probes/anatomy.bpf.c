// SPDX-License-Identifier: GPL-2.0
/* anatomy.bpf.c - --anatomy's syscalls and switches: on sys_enter and
 * sched_switch, a thread of the target whose current request is sampled
 * (its slot's request block says CP_PB_AN_STATE 1: the vDSO patch logs
 * its reads meanwhile, lib/probe/mech/patch/vdso_count.S) has the
 * syscall's number, or whether it slept or was preempted, recorded with
 * the time (CLOCK_MONOTONIC) for user space to merge with the reads.
 * Apart from the session's program: loaded only with --anatomy, so that
 * without it no host syscall pays for it, and attached only in bursts
 * (CP_ANATOMY_BURST_MS of every CP_ANATOMY_PERIOD_MS, anatomy_collect.h;
 * docs/anatomy.md): while attached, every syscall of every process of
 * the host pays the program's entry and one compare, and the slow path
 * an enabled sys_enter tracepoint puts it on. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "clockreads.h"
#include "helpers.bpf.h"
#include "anatomy_record.h"

/* The target, by its number in clockprof's pid namespace (that
 * namespace's device and inode; 0: the host's, whose numbers the
 * helper gives at once). */
const volatile __u32 target_tgid;
const volatile __u64 pidns_dev, pidns_ino;
const volatile __u64 table; /* the target's counter table */

/* A thread's slot, as last found: by its key (the thread pointer, or in
 * Go the goroutine, tagged), kept in the thread's own storage with the
 * thread pointer register it was found under: while that is the same
 * and the key no goroutine's, the slot is the same, with no read of the
 * thread's memory (a user read is most of what a syscall pays here). */
struct slot_cache {
	__u64 fs, key;
	__u32 slot;
	__u32 found;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct slot_cache);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} records SEC(".maps");

__u64 dropped; /* records the ring had no room for */

/* The key the read's count files the thread under (patch_reads.bpf.h),
 * from its thread pointer fs. */
static __always_inline __u64 thread_key(__u64 fs)
{
	__u64 key = 0;

	if (!fs || bpf_probe_read_user(&key, sizeof(key), (void *)fs))
		return 0;
	if (!key && !bpf_probe_read_user(&key, sizeof(key), (void *)(fs - 8)) && key)
		key |= 1;
	return key;
}

/* The thread's slot, found as the read's count finds it (c: its cache);
 * -1 none yet. */
static __always_inline int find_slot(struct task_struct *task, struct slot_cache *c)
{
	__u64 fs = BPF_CORE_READ(task, thread.fsbase), key, idx, w;

	if (c->found && c->fs == fs && !(c->key & 1))
		return (int)c->slot;
	if (!(key = thread_key(fs)))
		return -1;
	if (c->found && c->key == key)
		return (int)c->slot;
	idx = (key * CP_PATCH_HASH) >> CP_PATCH_HASH_SHIFT;
	for (int i = 0; i < CP_PATCH_PROBES; i++) {
		__u32 s = (idx + i) & (CP_PATCH_SLOTS - 1);

		if (bpf_probe_read_user(&w, sizeof(w),
					(void *)(table + CP_PATCH_SLOT_WORDS * 8 * (1 + s))))
			return -1;
		if (w == key) {
			*c = (struct slot_cache){ .fs = fs, .key = key, .slot = s, .found = 1 };
			return (int)s;
		}
		if (!w)
			return -1;
	}
	return -1;
}

static __always_inline void record(__u64 id, __u32 kind, __u32 what)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 head[7], at;
	struct cp_anatomy_record *r;
	struct slot_cache *c;
	int slot;

	if (!(c = bpf_task_storage_get(&slots, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE)) ||
	    (slot = find_slot(task, c)) < 0)
		return;
	at = table + CP_PATCH_BLOCKS_OFF + (__u64)(slot + 1) * CP_PATCH_BLOCK + CP_PB_AN_STATE * 8;
	if (bpf_probe_read_user(head, sizeof(head), (void *)at) || head[0] != 1)
		return;
	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&dropped, 1);
		return;
	}
	r->t_ns = bpf_ktime_get_ns();
	r->seq = head[CP_PB_AN_SEQ - CP_PB_AN_STATE];
	r->slot = (__u32)slot;
	r->kind = kind;
	r->what = what;
	r->tid = (__u32)id;
	bpf_ringbuf_submit(r, 0);
}

SEC("raw_tp/sys_enter")
int on_anatomy_sys_enter(__u64 *ctx)
{
	__u64 id = current_pid_tgid_in(pidns_dev, pidns_ino);

	if ((id >> 32) == target_tgid)
		record(id, CP_ANATOMY_REC_SYSCALL, (__u32)ctx[1]);
	return 0;
}

/* In the context of the thread switched out (prev): it slept (or blocked)
 * when it left in a state other than running (prev_state, the 4th
 * argument since Linux 5.18); else it was preempted, whether in the
 * kernel (preempt) or on its way back to user space, where the kernel
 * calls schedule() as a sleep would (preempt false, state running). */
SEC("raw_tp/sched_switch")
int on_anatomy_switch(__u64 *ctx)
{
	__u64 id = current_pid_tgid_in(pidns_dev, pidns_ino);

	if ((id >> 32) == target_tgid)
		record(id, CP_ANATOMY_REC_SWITCH, !ctx[0] && (__u32)ctx[3] != 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
