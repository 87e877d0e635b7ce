/* anatomy_hooks.bpf.h - --anatomy where every read traps (uprobes): each
 * request of a thread of the target, from its func: boundary to the next,
 * recorded as it happens: its boundaries, its reads with their sites and
 * clocks, its syscalls and switches, with bpf_ktime_get_ns, for user
 * space (lib/probe/window/anatomy_collect.c). Loaded only with --anatomy
 * and a boundary that traps (the patch logs its reads in the target:
 * anatomy.bpf.c). Part of clockreads.bpf.c. */
#ifndef CP_ANATOMY_HOOKS_BPF_H
#define CP_ANATOMY_HOOKS_BPF_H

#include "anatomy_record.h"

/* A thread's request as recorded: its number, whether one is open, and
 * whether a record of it was lost (the ring full). */
struct cp_anatomy_thread {
	__u64 seq, on, lost;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cp_anatomy_thread);
} anatomy_threads SEC(".maps");

/* One page unless --anatomy (user space sizes it before load). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} anatomy_ring SEC(".maps");

static __always_inline void anatomy_emit(struct cp_anatomy_thread *a, __u32 kind, __u32 what,
					 const struct cp_site_key *site, __u64 bp)
{
	struct cp_anatomy_record *r = bpf_ringbuf_reserve(&anatomy_ring, sizeof(*r), 0);

	if (!r) {
		a->lost = 1;
		return;
	}
	r->t_ns = bpf_ktime_get_ns();
	r->seq = a->seq;
	r->slot = 0;
	r->kind = kind;
	r->what = what;
	r->tid = (__u32)current_pid_tgid();
	r->key = r->callers[0] = r->callers[1] = 0;
	/* the callers: by the frame pointer the site's function left (a read
	 * of the stack that fails leaves 0) */
	if (bp && !bpf_probe_read_user(&r->callers[0], 8, (void *)(bp + 8)) &&
	    !bpf_probe_read_user(&bp, 8, (void *)bp) && bp)
		bpf_probe_read_user(&r->callers[1], 8, (void *)(bp + 8));
	if (site)
		r->key = (site->pc & ((1ull << 48) - 1)) | (__u64)(site->entry & 3) << 60 |
			 (__u64)(site->via == CP_VIA_NONE ? CP_PATCH_VIA_NONE : site->via & 0xfff)
				 << 48;
	bpf_ringbuf_submit(r, 0);
}

/* The current thread passed its boundary: its open request ends, the
 * next begins. */
static __always_inline void anatomy_boundary(void)
{
	struct cp_anatomy_thread *a;

	if (!anatomy || !(a = bpf_task_storage_get(&anatomy_threads, bpf_get_current_task_btf(), 0,
						   BPF_LOCAL_STORAGE_GET_F_CREATE)))
		return;
	if (a->on)
		anatomy_emit(a, CP_ANATOMY_REC_END, (__u32)a->lost, NULL, 0);
	a->seq++;
	a->lost = 0;
	a->on = 1;
	anatomy_emit(a, CP_ANATOMY_REC_START, 0, NULL, 0);
}

/* Something in the current thread's open request, if it has one. */
static __always_inline void anatomy_event(__u32 kind, __u32 what, const struct cp_site_key *site,
					  __u64 bp)
{
	struct cp_anatomy_thread *a;

	if (!anatomy ||
	    !(a = bpf_task_storage_get(&anatomy_threads, bpf_get_current_task_btf(), 0, 0)) ||
	    !a->on)
		return;
	anatomy_emit(a, kind, what, site, bp);
}

SEC("raw_tp/sys_enter")
int on_anatomy_syscall(__u64 *ctx)
{
	if (target_tid())
		anatomy_event(CP_ANATOMY_REC_SYSCALL, (__u32)ctx[1], NULL, 0);
	return 0;
}

/* As anatomy.bpf.c's: voluntary when the thread left in a state other
 * than running. */
SEC("raw_tp/sched_switch")
int on_anatomy_sched(__u64 *ctx)
{
	if (target_tid())
		anatomy_event(CP_ANATOMY_REC_SWITCH, !ctx[0] && (__u32)ctx[3] != 0, NULL, 0);
	return 0;
}

#endif
